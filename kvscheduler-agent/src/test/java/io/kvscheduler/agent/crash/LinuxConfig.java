package io.kvscheduler.agent.crash;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A configuration of the Linux plugin for the crash test: veth pairs (one end in the agent's
 * namespace, the other there too or in a named namespace), an address on each end, static routes
 * through the ends. {@link #yaml()} is the file the agent reads (vpp-agent's {@code linuxConfig}
 * format); {@link #objects()} is what the kernel must then hold, in the shape {@link KernelState}
 * reads it.
 *
 * @param interfaces by logical name (also the kernel name)
 * @param routes by destination and interface
 */
record LinuxConfig(Map<String, Iface> interfaces, List<Route> routes) {

  /** One veth end. {@code ns} is "" for the agent's namespace. */
  record Iface(String name, String peer, String ns, String mac, boolean up, String ip) {}

  /** A route through {@code iface} (metric 0 = none). */
  record Route(String iface, String dst, String gw, int metric) {}

  /** Configuration A: pairs 0 to {@code pairs - 1}. */
  static LinuxConfig a(int pairs) {
    return make(0, pairs, pairs, false);
  }

  /**
   * Configuration B: a third of A's pairs gone, a third changed (addresses, MAC addresses, up or
   * down, routes, one end moved to another namespace: re-created), a third kept, new pairs.
   */
  static LinuxConfig b(int pairs) {
    return make(pairs / 3, pairs + pairs / 3, pairs, true);
  }

  private static LinuxConfig make(int from, int to, int pairs, boolean other) {
    Map<String, Iface> ifaces = new TreeMap<>();
    List<Route> routes = new ArrayList<>();
    for (int i = from; i < to; i++) {
      boolean changed = other && i < 2 * pairs / 3;
      String net = "10." + (changed ? 101 : 100) + "." + i;
      String a = "a" + i;
      String b = "b" + i;
      boolean aUp = !changed || i % 2 == 0;
      String bNs = i % 3 == 0 ? "ns" + (1 + i % 2) : (changed && i % 3 == 1 ? "ns1" : "");
      String mac = String.format("02:aa:00:%02x:%02x:", changed && i % 4 < 2 ? 1 : 0, i);
      ifaces.put(a, new Iface(a, b, "", mac + "01", aUp, net + ".1/24"));
      ifaces.put(b, new Iface(b, a, bNs, mac + "02", true, net + ".2/24"));
      if (aUp) { // a route needs its interface up
        routes.add(new Route(a, "10.200." + i + ".0/24", net + ".2", 0));
      }
      if (!bNs.isEmpty()) {
        routes.add(new Route(b, "10.210." + i + ".0/24", net + ".1", changed ? 50 : 0));
      }
    }
    return new LinuxConfig(ifaces, routes);
  }

  /** The configuration file. */
  String yaml() {
    StringBuilder y = new StringBuilder("linuxConfig:\n  interfaces:\n");
    for (Iface i : interfaces.values()) {
      y.append("  - name: ").append(i.name()).append("\n    type: VETH\n");
      if (!i.ns().isEmpty()) {
        y.append("    namespace: {type: NSID, reference: ").append(i.ns()).append("}\n");
      }
      y.append("    enabled: ").append(i.up()).append('\n');
      y.append("    ipAddresses: [").append(i.ip()).append("]\n");
      y.append("    physAddress: \"").append(i.mac()).append("\"\n");
      y.append("    veth: {peerIfName: ").append(i.peer()).append("}\n");
    }
    y.append("  routes:\n");
    for (Route r : routes) {
      y.append("  - outgoingInterface: ").append(r.iface()).append('\n');
      y.append("    dstNetwork: ").append(r.dst()).append('\n');
      y.append("    gwAddr: ").append(r.gw()).append('\n');
      if (r.metric() != 0) {
        y.append("    metric: ").append(r.metric()).append('\n');
      }
    }
    return y.toString();
  }

  /** The NB keys of the configuration. */
  List<String> keys() {
    List<String> keys = new ArrayList<>();
    interfaces.keySet().forEach(n -> keys.add("config/linux/interfaces/v2/interface/" + n));
    routes.forEach(r -> keys.add("config/linux/l3/v2/route/" + r.dst() + "/" + r.iface()));
    return keys;
  }

  /** What the kernel must hold: object → its attributes (see {@link KernelState}). */
  Map<String, String> objects() {
    Map<String, String> out = new TreeMap<>();
    for (Iface i : interfaces.values()) {
      out.put(
          KernelState.link(i.name()),
          KernelState.linkAttributes(i.ns(), i.name(), i.mac(), i.up(), i.peer(), true));
      out.put(KernelState.address(i.name(), i.ip()), KernelState.ns(i.ns()));
    }
    for (Route r : routes) {
      out.put(
          KernelState.route(r.dst(), r.iface()),
          KernelState.routeAttributes(interfaces.get(r.iface()).ns(), r.gw(), r.metric()));
    }
    return out;
  }
}
