package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinkDetails;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.links.Port;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code linux-port}: an interface or link made a port of a bridge (or a member of a bond, or
 * enslaved to a VRF device): {@code ip link set dev PORT master MASTER}, undone with {@code
 * nomaster}, in the namespace both were made in (any kind of namespace reference: the port follows
 * its link). Waits for the port (an interface or link of that logical name, up or down) and for its
 * master (a {@code kvscheduler.linux.links.Link}); a new master is set in place. Retrieve reads the
 * master of every configured interface and link: a port whose master is a configured link is
 * returned (a port taken out behind the agent's back is put back by the next resync).
 */
public final class PortDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-port";

  private final LinuxCalls calls;
  private final Supplier<LinuxIfIndex> interfaces;

  private PortDescriptor(LinuxCalls calls, Supplier<LinuxIfIndex> interfaces) {
    this.calls = calls;
    this.interfaces = interfaces;
  }

  /** The descriptor over {@code calls}, finding ports and masters through {@code interfaces}. */
  public static KVDescriptor<Port, Void> create(
      LinuxCalls calls, Supplier<LinuxIfIndex> interfaces) {
    PortDescriptor d = new PortDescriptor(calls, interfaces);
    return KVDescriptor.builder(NAME, Port.class)
        .valueTypeName(Port.getDescriptor().getFullName())
        .nbKeyPrefix(LinuxKeys.PORT_PREFIX)
        .keyLabel(k -> k.substring(LinuxKeys.PORT_PREFIX.length()))
        .validate(PortDescriptor::validate)
        .dependencies(PortDescriptor::dependencies)
        .create(d::create)
        .update(d::update)
        .delete(d::delete)
        .retrieve(d::retrieve)
        .retrieveDependencies(InterfaceDescriptor.NAME, LinkDescriptor.NAME)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: no, ports of one bridge change one kernel object
        .build();
  }

  static void validate(String key, Port p) {
    Invalid bad = new Invalid();
    if (p.getInterface().isEmpty()) {
      bad.add("a port needs its interface", "interface");
    } else if (!LinuxKeys.portKey(p.getInterface()).equals(key)) {
      bad.add(
          "interface " + Invalid.quote(p.getInterface()) + " does not match the key", "interface");
    }
    Invalid.textProblem(p.getInterface())
        .ifPresent(
            e -> bad.add("interface " + Invalid.quote(p.getInterface()) + ": " + e, "interface"));
    if (p.getMaster().isEmpty()) {
      bad.add("a port needs its master (a bridge, bond or VRF link)", "master");
    } else if (p.getMaster().equals(p.getInterface())) {
      bad.add("a link cannot be its own master", "master");
    }
    Invalid.textProblem(p.getMaster())
        .ifPresent(e -> bad.add("master " + Invalid.quote(p.getMaster()) + ": " + e, "master"));
    bad.throwIfAny();
  }

  static List<Dependency> dependencies(String key, Port p) {
    return List.of(
        Dependency.anyOfPrefixes("port-exists", LinuxKeys.STATE_PREFIX + p.getInterface() + "/"),
        Dependency.onKey("master-exists", LinuxKeys.linkKey(p.getMaster())));
  }

  private LinuxIfMetadata lookup(Port p, String name, String field) throws LinuxCallException {
    return interfaces
        .get()
        .lookup(name)
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "port " + Invalid.quote(p.getInterface()),
                    1,
                    field + " " + Invalid.quote(name) + " is not configured"));
  }

  private void setMaster(Port p) throws LinuxCallException {
    LinuxIfMetadata port = lookup(p, p.getInterface(), "interface");
    LinuxIfMetadata master = lookup(p, p.getMaster(), "master");
    if (!port.namespace().equals(master.namespace())) {
      throw new LinuxCallException(
          "port " + Invalid.quote(p.getInterface()),
          1,
          "the port is in namespace '"
              + port.namespace()
              + "', its master in '"
              + master.namespace()
              + "': they must share one");
    }
    calls.linkRequests(
        port.namespace(),
        List.of(List.of("link", "set", "dev", port.hostIfName(), "master", master.hostIfName())));
  }

  Void create(String key, Port p) throws LinuxCallException {
    setMaster(p);
    return null;
  }

  Void update(String key, Port a, Port b, Void m) throws LinuxCallException {
    setMaster(b);
    return null;
  }

  void delete(String key, Port p, Void m) throws LinuxCallException {
    LinuxIfMetadata port = interfaces.get().lookup(p.getInterface()).orElse(null);
    if (port == null) {
      return; // gone with its link
    }
    try {
      calls.linkRequests(
          port.namespace(), List.of(List.of("link", "set", "dev", port.hostIfName(), "nomaster")));
    } catch (LinuxCallException e) {
      if (!e.notFound()) {
        throw e;
      }
    }
  }

  List<KVWithMetadata<Port, Void>> retrieve(List<KVWithMetadata<Port, Void>> correlate)
      throws LinuxCallException {
    LinuxIfIndex index = interfaces.get();
    // logical names by namespace and host name
    Map<String, Map<String, String>> byHost = new HashMap<>();
    for (String n : index.names()) {
      index
          .lookup(n)
          .ifPresent(
              m ->
                  byHost
                      .computeIfAbsent(m.namespace(), x -> new HashMap<>())
                      .put(m.hostIfName(), n));
    }
    Set<String> masters = new LinkedHashSet<>();
    for (String n : index.names()) {
      if (index.isLink(n)) {
        masters.add(n);
      }
    }
    List<KVWithMetadata<Port, Void>> out = new ArrayList<>();
    for (Map.Entry<String, Map<String, String>> ns : byHost.entrySet()) {
      List<LinkDetails> there;
      try {
        there = calls.linkDetails(ns.getKey());
      } catch (LinuxCallException e) {
        if (!ns.getKey().startsWith("/") || !e.notFound()) {
          throw e;
        }
        continue; // a process's namespace, gone since: its values wait for it
      }
      for (LinkDetails d : there) {
        String port = ns.getValue().get(d.link().name());
        String master = ns.getValue().get(d.master());
        if (port == null || master == null || !masters.contains(master)) {
          continue;
        }
        Port p = Port.newBuilder().setInterface(port).setMaster(master).build();
        out.add(new KVWithMetadata<>(LinuxKeys.portKey(port), p, null, ValueOrigin.FROM_NB));
      }
    }
    return out;
  }
}
