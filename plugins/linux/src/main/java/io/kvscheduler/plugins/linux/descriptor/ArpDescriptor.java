package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.linuxcalls.Neighbour;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code linux-arp}: permanent neighbour entries on a configured interface, waiting until the
 * interface is up and has an address. A change replaces the entry.
 */
public final class ArpDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-arp";

  private final LinuxCalls calls;
  private final LinuxIfIndex interfaces;

  private ArpDescriptor(LinuxCalls calls, LinuxIfIndex interfaces) {
    this.calls = calls;
    this.interfaces = interfaces;
  }

  /** The descriptor over {@code calls}, finding links through {@code interfaces}. */
  public static KVDescriptor<ARPEntry, Void> create(LinuxCalls calls, LinuxIfIndex interfaces) {
    ArpDescriptor d = new ArpDescriptor(calls, interfaces);
    return KVDescriptor.builder(NAME, ARPEntry.class)
        .maxConcurrency(LinuxPlugin.MAX_CONCURRENCY)
        .valueTypeName(ARPEntry.getDescriptor().getFullName())
        .nbKeyPrefix(LinuxKeys.ARP_PREFIX)
        .keyLabel(k -> k.substring(LinuxKeys.ARP_PREFIX.length()))
        .equivalence((k, a, b) -> a.getHwAddress().equalsIgnoreCase(b.getHwAddress()))
        .validate(ArpDescriptor::validate)
        .dependencies(
            (k, a) ->
                List.of(
                    Dependency.onKey("interface-is-up", LinuxKeys.stateKey(a.getInterface(), true)),
                    Dependency.anyOfPrefixes(
                        "interface-has-ip-address", LinuxKeys.addressPrefix(a.getInterface()))))
        .create(d::create)
        .update((k, a, b, m) -> d.create(k, b))
        .delete(d::delete)
        .retrieve(d::retrieve)
        .retrieveDependencies(InterfaceDescriptor.NAME, LinkDescriptor.NAME)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: yes, each entry is one kernel neighbour of one link
        .build();
  }

  static void validate(String key, ARPEntry a) {
    Invalid bad = new Invalid();
    if (a.getInterface().isEmpty()) {
      bad.add("an ARP entry needs its interface", "interface");
    }
    if (IpNet.parseAddress(a.getIpAddress()).isEmpty()) {
      bad.add(Invalid.quote(a.getIpAddress()) + " is not an IP address", "ip_address");
    }
    if (!Invalid.isMac(a.getHwAddress())) {
      bad.add(Invalid.quote(a.getHwAddress()) + " is not a MAC address", "hw_address");
    }
    bad.throwIfAny();
  }

  private Neighbour neighbour(ARPEntry a) throws LinuxCallException {
    LinuxIfMetadata m =
        interfaces
            .lookup(a.getInterface())
            .orElseThrow(
                () ->
                    new LinuxCallException(
                        "neighbour " + Invalid.quote(a.getIpAddress()),
                        1,
                        "interface " + Invalid.quote(a.getInterface()) + " is not configured"));
    return new Neighbour(m.namespace(), m.hostIfName(), a.getIpAddress(), a.getHwAddress());
  }

  Void create(String key, ARPEntry a) throws LinuxCallException {
    calls.replaceNeighbour(neighbour(a));
    return null;
  }

  void delete(String key, ARPEntry a, Void m) throws LinuxCallException {
    try {
      calls.deleteNeighbour(neighbour(a));
    } catch (LinuxCallException e) {
      if (!e.notFound()) {
        throw e;
      }
    }
  }

  List<KVWithMetadata<ARPEntry, Void>> retrieve(List<KVWithMetadata<ARPEntry, Void>> correlate)
      throws LinuxCallException {
    List<ARPEntry> all = new ArrayList<>();
    correlate.forEach(kv -> all.add(kv.value()));
    List<KVWithMetadata<ARPEntry, Void>> out = new ArrayList<>();
    for (String iface : interfaces.names()) {
      LinuxIfMetadata m = interfaces.lookup(iface).orElse(null);
      if (m == null) {
        continue;
      }
      for (Neighbour n : calls.neighbours(m.namespace(), m.hostIfName())) {
        ARPEntry found =
            ARPEntry.newBuilder()
                .setInterface(iface)
                .setIpAddress(n.ip())
                .setHwAddress(n.mac())
                .build();
        for (ARPEntry e : all) {
          if (e.getInterface().equals(iface)
              && IpNet.sameAddress(e.getIpAddress(), n.ip())
              && e.getHwAddress().equalsIgnoreCase(n.mac())) {
            found = e; // as configured
          }
        }
        out.add(
            new KVWithMetadata<>(
                LinuxKeys.arpKey(found),
                found,
                null,
                ValueOrigin.UNKNOWN)); // the scheduler's own entries, or someone else's (OBTAINED)
      }
    }
    return out;
  }
}
