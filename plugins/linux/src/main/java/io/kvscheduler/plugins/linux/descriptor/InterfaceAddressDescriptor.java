package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressKey;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.util.List;

/**
 * {@code linux-interface-address}: one derived value per address of an interface, keyed {@code
 * linux/interface/<name>/address/<source>/<address>}, added after the link exists and removed
 * before it goes. An address of source {@code existing} (an EXISTING interface that only waits for
 * its addresses) is never added: it waits for the watcher to report it on the host link. The values
 * are read back through the interface's Retrieve, so this descriptor has none.
 */
public final class InterfaceAddressDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-interface-address";

  private final LinuxCalls calls;
  private final LinuxIfIndex interfaces;

  private InterfaceAddressDescriptor(LinuxCalls calls, LinuxIfIndex interfaces) {
    this.calls = calls;
    this.interfaces = interfaces;
  }

  /** The descriptor over {@code calls}, finding links through {@code interfaces}. */
  public static KVDescriptor<Interface, Void> create(LinuxCalls calls, LinuxIfIndex interfaces) {
    InterfaceAddressDescriptor d = new InterfaceAddressDescriptor(calls, interfaces);
    return KVDescriptor.builder(NAME, Interface.class)
        .maxConcurrency(LinuxPlugin.MAX_CONCURRENCY)
        .keySelector(k -> LinuxKeys.parseAddressKey(k).isPresent())
        .equivalence((k, a, b) -> true) // the key says it all
        .validate(InterfaceAddressDescriptor::validate)
        .dependencies(InterfaceAddressDescriptor::dependencies)
        .create(d::create)
        .delete(d::delete)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: yes, each address is one kernel address of one link
        .build();
  }

  private static AddressKey parse(String key) {
    return LinuxKeys.parseAddressKey(key).orElseThrow();
  }

  static void validate(String key, Interface value) {
    AddressKey k = parse(key);
    Invalid bad = new Invalid();
    if (k.source() == AddressSource.ALLOC_REF) {
      bad.add(
          "address references ("
              + Invalid.quote(k.address())
              + ") need the netalloc plugin, which this"
              + " agent does not have",
          "ip_addresses");
    } else if (IpNet.parse(k.address()).isEmpty()) {
      bad.add(
          Invalid.quote(k.address())
              + " is not an IP address with a prefix length (e.g."
              + " 10.0.0.1/24)",
          "ip_addresses");
    }
    bad.throwIfAny();
  }

  static List<Dependency> dependencies(String key, Interface value) {
    AddressKey k = parse(key);
    if (!value.getVrfMasterInterface().isEmpty() && k.source() != AddressSource.EXISTING) {
      // enslaving a link to a VRF moves its routes: the address comes after
      return List.of(
          Dependency.onKey(
              "interface-assigned-to-vrf",
              LinuxKeys.vrfKey(k.iface(), value.getVrfMasterInterface())));
    }
    if (k.source() == AddressSource.EXISTING) {
      return List.of(
          Dependency.onKey(
              "address-assigned-to-interface",
              LinuxKeys.hostAddressKey(value.getHostIfName(), k.address())));
    }
    return List.of();
  }

  private LinuxIfMetadata link(AddressKey k) throws LinuxCallException {
    return interfaces
        .lookup(k.iface())
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "address " + Invalid.quote(k.address()),
                    1,
                    "interface " + Invalid.quote(k.iface()) + " is not configured"));
  }

  Void create(String key, Interface value) throws LinuxCallException {
    AddressKey k = parse(key);
    if (k.source() == AddressSource.EXISTING) {
      return null; // present already: the dependency says so
    }
    LinuxIfMetadata m = link(k);
    try {
      calls.addAddress(
          m.namespace(), m.hostIfName(), IpNet.parse(k.address()).orElseThrow().toString());
    } catch (LinuxCallException e) {
      if (!e.exists()) {
        throw e;
      }
    }
    return null;
  }

  void delete(String key, Interface value, Void unused) throws LinuxCallException {
    AddressKey k = parse(key);
    if (k.source() == AddressSource.EXISTING) {
      return;
    }
    LinuxIfMetadata m = link(k);
    try {
      calls.deleteAddress(
          m.namespace(), m.hostIfName(), IpNet.parse(k.address()).orElseThrow().toString());
    } catch (LinuxCallException e) {
      if (!e.notFound()
          && !(e.getMessage() != null && e.getMessage().contains("Address not found"))) {
        throw e;
      }
    }
  }
}
