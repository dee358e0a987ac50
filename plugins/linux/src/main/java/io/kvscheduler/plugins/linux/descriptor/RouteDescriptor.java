package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfIndex;
import io.kvscheduler.plugins.linux.ifaceidx.LinuxIfMetadata;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.linuxcalls.RouteEntry;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.l3.Route;
import io.kvscheduler.plugins.linux.netalloc.AllocRef;
import io.kvscheduler.plugins.linux.netalloc.IpAllocations;
import io.kvscheduler.plugins.linux.netalloc.NetallocKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code linux-route}: static routes through a configured interface. A route waits until its
 * interface is up and has an address, and, with a gateway, until the gateway is reachable: an
 * address of the interface or a link-local route of the interface whose network holds it. A
 * LINK-scope route derives the property {@code linux/link-local-route/<iface>/dest-address/<dst>}
 * other routes' gateways can rely on. A change is a route replace in place; a new metric, which the
 * kernel keys routes by, adds the route with its new metric and deletes the old one in the same
 * exchange (one update, never two routes left). The {@code table} extension puts a route into
 * another table than main; it is part of the key, and Retrieve reads every table.
 *
 * <p>A gateway may be a reference to an allocated gateway ({@code alloc:<network>/GW}, the
 * allocation of the outgoing interface in that network): the route then depends on the allocation,
 * on the gateway being a neighbour of the allocated address ({@code
 * netalloc/neigh-gw/network/<net>/interface/<iface>}) and on the interface holding an address
 * referenced from that network; its calls read the allocated gateway. A changed allocation is
 * re-created, which deletes the route and creates it again with the new gateway.
 *
 * <p>A destination may be a reference to an interface's allocated address ({@code
 * alloc:<network>/<interface>}, as in vpp-agent): the route goes to the network of that address
 * (10.0.3.7/24 gives 10.0.3.0/24), depends on the allocation, and its key keeps the reference.
 * Retrieve reports a kernel route to the network allocated now as that reference.
 */
public final class RouteDescriptor {
  /** Descriptor name. */
  public static final String NAME = "linux-route";

  private final LinuxCalls calls;
  private final LinuxIfIndex interfaces;
  private final IpAllocations allocations;

  private RouteDescriptor(LinuxCalls calls, LinuxIfIndex interfaces, IpAllocations allocations) {
    this.calls = calls;
    this.interfaces = interfaces;
    this.allocations = allocations;
  }

  /** The descriptor over {@code calls}, finding links through {@code interfaces}. */
  public static KVDescriptor<Route, Void> create(LinuxCalls calls, LinuxIfIndex interfaces) {
    return create(calls, interfaces, new IpAllocations(null));
  }

  /**
   * The descriptor over {@code calls}, finding links through {@code interfaces} and the gateways
   * {@code alloc:} references name through {@code allocations}.
   */
  public static KVDescriptor<Route, Void> create(
      LinuxCalls calls, LinuxIfIndex interfaces, IpAllocations allocations) {
    RouteDescriptor d = new RouteDescriptor(calls, interfaces, allocations);
    return KVDescriptor.builder(NAME, Route.class)
        .maxConcurrency(LinuxPlugin.MAX_CONCURRENCY)
        .valueTypeName(Route.getDescriptor().getFullName())
        .nbKeyPrefix(LinuxKeys.ROUTE_PREFIX)
        .keyLabel(k -> k.substring(LinuxKeys.ROUTE_PREFIX.length()))
        .equivalence(RouteDescriptor::equivalent)
        .validate(RouteDescriptor::validate)
        .dependencies(RouteDescriptor::dependencies)
        .derivedValues(RouteDescriptor::derived)
        .create(d::create)
        .update(d::update)
        .delete(d::delete)
        .retrieve(d::retrieve)
        .retrieveDependencies(
            InterfaceDescriptor.NAME, LinkDescriptor.NAME, IpAllocationDescriptor.NAME)
        .isRetriableFailure(InterfaceDescriptor::isRetriable)
        // safe to call concurrently: yes, each route is one kernel route, ordered after its link
        .build();
  }

  /** The number of the kernel's main table, which the model spells 0. */
  static final int MAIN_TABLE = 254;

  /** The number of the kernel's local table, which holds the routes of its own addresses. */
  static final int LOCAL_TABLE = 255;

  /**
   * Whether {@code r} is an IPv6 route: its destination, or for a destination reference its
   * gateway, is written in IPv6 (a reference to an IPv6 network without a literal gateway counts as
   * IPv4 here; {@link #entry} and Retrieve use the allocated network itself).
   */
  private static boolean v6(Route r) {
    if (AllocRef.isRef(r.getDstNetwork())) {
      return !AllocRef.isRef(r.getGwAddr()) && r.getGwAddr().contains(":");
    }
    return r.getDstNetwork().contains(":");
  }

  static int effectiveMetric(Route r) {
    return v6(r) && r.getMetric() == 0 ? 1024 : r.getMetric();
  }

  private static boolean hasGateway(Route r) {
    return !r.getGwAddr().isEmpty()
        && !IpNet.parseAddress(r.getGwAddr())
            .map(a -> Arrays.equals(a, new byte[a.length]))
            .orElse(false);
  }

  static Route.Scope effectiveScope(Route r) {
    if (v6(r)) {
      return Route.Scope.UNDEFINED; // scope applies to IPv4 only
    }
    if (r.getScope() == Route.Scope.UNDEFINED) {
      return hasGateway(r) ? Route.Scope.GLOBAL : Route.Scope.LINK;
    }
    return r.getScope();
  }

  static void validate(String key, Route r) {
    Invalid bad = new Invalid();
    if (r.getOutgoingInterface().isEmpty()) {
      bad.add("a route needs its outgoing interface", "outgoing_interface");
    }
    Optional<IpNet> dst = Optional.empty();
    if (AllocRef.isRef(r.getDstNetwork())) {
      try {
        if (AllocRef.parse(r.getDstNetwork(), "").orElseThrow().gw()) {
          bad.add(
              Invalid.quote(r.getDstNetwork())
                  + " names a gateway: a destination reference names an interface's allocated"
                  + " address, whose network is the destination (alloc:<network>/<interface>)",
              "dst_network");
        }
      } catch (IllegalArgumentException e) {
        bad.add(
            Invalid.quote(r.getDstNetwork())
                + " is not a destination reference (alloc:<network>/<interface>): "
                + e.getMessage(),
            "dst_network");
      }
    } else if ((dst = IpNet.parse(r.getDstNetwork())).isEmpty()) {
      bad.add(
          Invalid.quote(r.getDstNetwork())
              + " is not a network with a prefix length (e.g."
              + " 10.0.2.0/24)",
          "dst_network");
    }
    if (AllocRef.isRef(r.getGwAddr())) {
      try {
        if (!AllocRef.parse(r.getGwAddr(), r.getOutgoingInterface()).orElseThrow().gw()) {
          bad.add(
              Invalid.quote(r.getGwAddr())
                  + " names an interface's address: a gateway reference ends with /GW"
                  + " (alloc:<network>/GW)",
              "gw_addr");
        }
      } catch (IllegalArgumentException e) {
        bad.add(
            Invalid.quote(r.getGwAddr()) + " is not a gateway reference: " + e.getMessage(),
            "gw_addr");
      }
    } else if (!r.getGwAddr().isEmpty()) {
      Optional<byte[]> gw = IpNet.parseAddress(r.getGwAddr());
      if (gw.isEmpty()) {
        bad.add(Invalid.quote(r.getGwAddr()) + " is not an IP address", "gw_addr");
      } else if (dst.isPresent() && gw.get().length != dst.get().address().length) {
        bad.add("the gateway and the destination are of different IP versions", "gw_addr");
      }
    }
    if (r.getScope() == Route.Scope.LINK && hasGateway(r)) {
      bad.add("a LINK-scope route takes no gateway", "scope", "gw_addr");
    }
    if (r.getScope() == Route.Scope.UNRECOGNIZED) {
      bad.add("unknown scope", "scope");
    }
    if (r.getTable() == MAIN_TABLE) {
      bad.add("table 254 is the main table: leave table unset (0) for it", "table");
    } else if (r.getTable() == LOCAL_TABLE) {
      bad.add("table 255 is the kernel's own local table", "table");
    }
    bad.throwIfAny();
  }

  static List<Dependency> dependencies(String key, Route r) {
    String iface = r.getOutgoingInterface();
    List<Dependency> out = new ArrayList<>();
    out.add(Dependency.onKey("outgoing-interface-is-up", LinuxKeys.stateKey(iface, true)));
    dstRef(r)
        .ifPresent(
            a -> out.add(Dependency.onKey("dst_network-" + r.getDstNetwork(), a.allocationKey())));
    out.add(
        Dependency.anyOfPrefixes(
            "outgoing-interface-has-ip-address", LinuxKeys.addressPrefix(iface)));
    Optional<AllocRef> ref = gatewayRef(r);
    if (ref.isPresent()) {
      AllocRef a = ref.get();
      out.add(Dependency.onKey("gw_addr-" + r.getGwAddr(), a.allocationKey()));
      // the gateway is a neighbour of the allocated address, which the interface holds
      out.add(Dependency.onKey("gw-reachable", NetallocKeys.neighGwKey(a.network(), a.iface())));
      out.add(
          Dependency.anyOf(
              "allocated-addr-attached",
              List.of(LinuxKeys.addressPrefix(iface) + AddressSource.ALLOC_REF.keyword() + "/"),
              k ->
                  LinuxKeys.parseAddressKey(k)
                      .flatMap(x -> refOf(x.address(), iface))
                      .filter(x -> !x.gw() && x.network().equals(a.network()))
                      .isPresent()));
      return out;
    }
    Optional<byte[]> gw = IpNet.parseAddress(r.getGwAddr());
    if (hasGateway(r) && gw.isPresent()) {
      byte[] ip = gw.get();
      String linkLocal = LinuxKeys.LINK_LOCAL_ROUTE_PREFIX + iface + "/";
      out.add(
          Dependency.anyOf(
              "gw-reachable",
              List.of(LinuxKeys.addressPrefix(iface), linkLocal),
              k -> {
                if (k.startsWith(linkLocal)) {
                  String dst = k.substring(k.indexOf("/dest-address/") + "/dest-address/".length());
                  return IpNet.parse(dst).map(n -> n.contains(ip)).orElse(false);
                }
                return LinuxKeys.parseAddressKey(k)
                    .filter(a -> a.source() != LinuxKeys.AddressSource.ALLOC_REF)
                    .flatMap(a -> IpNet.parse(a.address()))
                    .map(n -> n.contains(ip))
                    .orElse(false);
              }));
    }
    return out;
  }

  /** The reference {@code s} written for {@code iface}; empty when it is none or malformed. */
  private static Optional<AllocRef> refOf(String s, String iface) {
    try {
      return AllocRef.parse(s, iface);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The destination reference of {@code r}, when its destination is one (and well formed). */
  static Optional<AllocRef> dstRef(Route r) {
    return refOf(r.getDstNetwork(), "").filter(a -> !a.gw());
  }

  /**
   * The destination network of {@code r}: as written, or the network of the address allocated now
   * for a reference.
   */
  private IpNet destination(Route r) throws LinuxCallException {
    Optional<AllocRef> ref = dstRef(r);
    if (ref.isEmpty()) {
      return IpNet.parse(r.getDstNetwork()).orElseThrow().network();
    }
    return allocations
        .resolve(ref.get())
        .map(IpNet::network)
        .orElseThrow(
            () ->
                new LinuxCallException(
                    "route " + Invalid.quote(r.getDstNetwork()),
                    1,
                    "destination "
                        + Invalid.quote(r.getDstNetwork())
                        + " is not allocated (allocation "
                        + Invalid.quote(ref.get().allocationKey())
                        + ")"));
  }

  /** The gateway reference of {@code r}, when its gateway is one (and well formed). */
  static Optional<AllocRef> gatewayRef(Route r) {
    return refOf(r.getGwAddr(), r.getOutgoingInterface()).filter(AllocRef::gw);
  }

  /** The gateway address of {@code r}: as written, or as allocated now for a reference. */
  private String gateway(Route r) throws LinuxCallException {
    if (!hasGateway(r)) {
      return "";
    }
    Optional<AllocRef> ref = gatewayRef(r);
    if (ref.isEmpty()) {
      return r.getGwAddr();
    }
    IpNet gw =
        allocations
            .resolve(ref.get())
            .orElseThrow(
                () ->
                    new LinuxCallException(
                        "route " + Invalid.quote(r.getDstNetwork()),
                        1,
                        "gateway "
                            + Invalid.quote(r.getGwAddr())
                            + " is not allocated (allocation "
                            + Invalid.quote(ref.get().allocationKey())
                            + " without gw)"));
    if (gw.v6() != v6(r)) {
      throw new LinuxCallException(
          "route " + Invalid.quote(r.getDstNetwork()),
          1,
          "gateway "
              + Invalid.quote(r.getGwAddr())
              + " is allocated as "
              + gw.addressText()
              + ", of another IP version than the destination");
    }
    return gw.addressText();
  }

  static List<KeyValuePair> derived(String key, Route r) {
    if (r.getScope() == Route.Scope.LINK) {
      return List.of(
          new KeyValuePair(
              LinuxKeys.linkLocalRouteKey(r.getOutgoingInterface(), r.getDstNetwork()),
              Empty.getDefaultInstance()));
    }
    return List.of();
  }

  static boolean equivalent(String key, Route a, Route b) {
    boolean sameGw =
        a.getGwAddr().equals(b.getGwAddr())
            || (!hasGateway(a) && !hasGateway(b))
            || IpNet.sameAddress(a.getGwAddr(), b.getGwAddr());
    return sameGw
        && effectiveMetric(a) == effectiveMetric(b)
        && effectiveScope(a) == effectiveScope(b);
  }

  private RouteEntry entry(Route r) throws LinuxCallException {
    LinuxIfMetadata m =
        interfaces
            .lookup(r.getOutgoingInterface())
            .orElseThrow(
                () ->
                    new LinuxCallException(
                        "route " + Invalid.quote(r.getDstNetwork()),
                        1,
                        "interface "
                            + Invalid.quote(r.getOutgoingInterface())
                            + " is not configured"));
    String scope =
        switch (r.getScope()) {
          case GLOBAL -> "global";
          case SITE -> "site";
          case LINK -> "link";
          case HOST -> "host";
          default -> "";
        };
    IpNet dst = destination(r);
    int metric = dst.v6() && r.getMetric() == 0 ? 1024 : r.getMetric();
    return new RouteEntry(
        m.namespace(),
        m.hostIfName(),
        dst.toString(),
        gateway(r),
        metric, // a metric an IPv6 route without one gets: deleted by its own
        scope,
        true,
        r.getTable());
  }

  Void create(String key, Route r) throws LinuxCallException {
    calls.addRoute(entry(r));
    return null;
  }

  Void update(String key, Route a, Route b, Void m) throws LinuxCallException {
    calls.changeRoute(entry(a), entry(b));
    return null;
  }

  void delete(String key, Route r, Void m) throws LinuxCallException {
    try {
      calls.deleteRoute(entry(r));
    } catch (LinuxCallException e) {
      if (!e.notFound()) {
        throw e;
      }
    }
  }

  List<KVWithMetadata<Route, Void>> retrieve(List<KVWithMetadata<Route, Void>> correlate)
      throws LinuxCallException {
    Map<String, Route> expected = new HashMap<>();
    correlate.forEach(kv -> expected.put(kv.key(), kv.value()));
    // the configured routes whose destination is a reference, by the network allocated now
    Map<String, String> referred = new HashMap<>();
    for (Map.Entry<String, Route> x : expected.entrySet()) {
      Route r = x.getValue();
      Optional<AllocRef> ref = dstRef(r);
      if (ref.isPresent()) {
        allocations
            .resolve(ref.get())
            .ifPresent(
                n ->
                    referred.put(
                        r.getOutgoingInterface()
                            + " "
                            + r.getTable()
                            + " "
                            + n.network().toString(),
                        x.getKey()));
      }
    }
    List<KVWithMetadata<Route, Void>> out = new ArrayList<>();
    for (String iface : interfaces.names()) {
      LinuxIfMetadata m = interfaces.lookup(iface).orElse(null);
      if (m == null) {
        continue;
      }
      for (RouteEntry e : calls.routes(m.namespace(), m.hostIfName())) {
        if (e.table() < 0) {
          continue; // a table known by a name only: not one a value can name
        }
        Route.Builder b =
            Route.newBuilder()
                .setOutgoingInterface(iface)
                .setDstNetwork(e.destination())
                .setGwAddr(e.gateway())
                .setMetric(e.metric())
                .setTable(e.table());
        if (!e.destination().contains(":")) {
          b.setScope(
              switch (e.scope()) {
                case "link" -> Route.Scope.LINK;
                case "host" -> Route.Scope.HOST;
                case "site" -> Route.Scope.SITE;
                default -> Route.Scope.GLOBAL;
              });
        }
        Route found = b.build();
        String key = LinuxKeys.routeKey(found);
        String byRef =
            IpNet.parse(e.destination())
                .map(n -> referred.get(iface + " " + e.table() + " " + n.network().toString()))
                .orElse(null);
        if (!expected.containsKey(key) && byRef != null) {
          // the network allocated to the reference the route was given
          Route r = expected.get(byRef);
          Route.Builder asRef = found.toBuilder().setDstNetwork(r.getDstNetwork());
          if (e.destination().contains(":") && r.getMetric() == 0 && e.metric() == 1024) {
            asRef.setMetric(0); // the kernel's metric of an IPv6 route without one
          }
          found = asRef.build();
          key = byRef;
        }
        Route exp = expected.get(key);
        if (exp != null && gatewayRef(exp).isPresent()) {
          // a gateway allocated as the kernel has it is the reference the route was given
          Optional<IpNet> allocated = allocations.resolve(gatewayRef(exp).get());
          if (allocated.isPresent()
              && IpNet.sameAddress(allocated.get().addressText(), e.gateway())) {
            found = found.toBuilder().setGwAddr(exp.getGwAddr()).build();
          }
        }
        // a route with the plugin's protocol number is the northbound's (a resync deletes it
        // when it is no longer configured); other routes are left to the scheduler: those it
        // configured are the northbound's, those someone else put on the link are OBTAINED
        out.add(
            new KVWithMetadata<>(
                key,
                exp != null && equivalent(key, found, exp) ? exp : found,
                null,
                e.ours() ? ValueOrigin.FROM_NB : ValueOrigin.UNKNOWN));
      }
    }
    return out;
  }
}
