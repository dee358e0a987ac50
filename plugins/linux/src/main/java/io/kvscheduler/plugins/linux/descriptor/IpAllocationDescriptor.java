package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.grpc.proto.netalloc.IPAllocation;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.netalloc.AllocatedIp;
import io.kvscheduler.plugins.linux.netalloc.NetallocKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * {@code netalloc-ip-address}: IP address allocations ({@code
 * config/netalloc/v1/ip/network/<net>/interface/<iface>}). Nothing is written to the kernel: Create
 * validates and parses the allocation into its metadata ({@link AllocatedIp}), which the users of
 * {@code alloc:} references read when they are applied. An allocation whose gateway lies in its
 * address's network derives {@code netalloc/neigh-gw/network/<net>/interface/<iface>}.
 *
 * <p>There is no Update: a changed allocation is re-created, and the scheduler deletes its users
 * (addresses, routes) before and creates them again after, so each is applied anew with the new
 * address. Retrieve hands back the allocations it is given: they live in the agent only.
 */
public final class IpAllocationDescriptor {
  /** Descriptor name. */
  public static final String NAME = "netalloc-ip-address";

  private IpAllocationDescriptor() {}

  /** The descriptor. */
  public static KVDescriptor<IPAllocation, AllocatedIp> create() {
    return KVDescriptor.builder(NAME, IPAllocation.class)
        .withMetadata(AllocatedIp.class)
        .valueTypeName(IPAllocation.getDescriptor().getFullName())
        .nbKeyPrefix(NetallocKeys.IP_PREFIX)
        .keyLabel(k -> k.substring(NetallocKeys.IP_PREFIX.length()))
        .equivalence(IpAllocationDescriptor::equivalent)
        .validate(IpAllocationDescriptor::validate)
        .derivedValues(IpAllocationDescriptor::derived)
        .create((k, v) -> parse(v).orElseThrow())
        .delete((k, v, m) -> {})
        .retrieve(IpAllocationDescriptor::retrieve)
        .build();
  }

  /** The address {@code s}, with the default prefix length (all ones) when it has none. */
  static Optional<IpNet> address(String s) {
    if (s.contains("/")) {
      return IpNet.parse(s);
    }
    return IpNet.parseAddress(s).map(a -> new IpNet(a, a.length * 8));
  }

  /** The gateway {@code s} for {@code address}, and whether it lies in the address's network. */
  static Optional<AllocatedIp> parse(IPAllocation v) {
    Optional<IpNet> address = address(v.getAddress());
    if (address.isEmpty()) {
      return Optional.empty();
    }
    IpNet a = address.get();
    if (v.getGw().isEmpty()) {
      return Optional.of(new AllocatedIp(a, null, false));
    }
    if (v.getGw().contains("/")) {
      return IpNet.parse(v.getGw())
          .filter(g -> g.address().length == a.address().length)
          .map(g -> new AllocatedIp(a, g, a.contains(g.address())));
    }
    return IpNet.parseAddress(v.getGw())
        .filter(g -> g.length == a.address().length)
        .map(
            g ->
                a.contains(g)
                    ? new AllocatedIp(a, new IpNet(g, a.prefix()), true)
                    : new AllocatedIp(a, new IpNet(g, g.length * 8), false));
  }

  static void validate(String key, IPAllocation v) {
    Invalid bad = new Invalid();
    name(bad, v.getNetworkName(), "network", "network_name");
    name(bad, v.getInterfaceName(), "interface", "interface_name");
    Optional<IpNet> a = address(v.getAddress());
    if (a.isEmpty()) {
      bad.add(
          Invalid.quote(v.getAddress()) + " is not an IP address (e.g. 10.0.0.1 or 10.0.0.1/24)",
          "address");
    }
    if (!v.getGw().isEmpty()) {
      Optional<IpNet> g = address(v.getGw());
      if (g.isEmpty()) {
        bad.add(
            Invalid.quote(v.getGw()) + " is not an IP address (e.g. 10.0.0.254 or 10.0.0.254/24)",
            "gw");
      } else if (a.isPresent() && a.get().address().length != g.get().address().length) {
        bad.add("the gateway and the address are of different IP versions", "gw");
      }
    }
    bad.throwIfAny();
  }

  private static void name(Invalid bad, String name, String what, String field) {
    if (name.isEmpty()) {
      bad.add("an allocation needs its " + what + " name", field);
    } else if (name.contains("/")) {
      bad.add(
          "the " + what + " name " + Invalid.quote(name) + " contains '/', which keys forbid",
          field);
    } else if (name.codePoints().anyMatch(Character::isISOControl)) {
      bad.add("the " + what + " name " + Invalid.quote(name) + " holds a control character", field);
    }
  }

  static boolean equivalent(String key, IPAllocation a, IPAllocation b) {
    return a.getNetworkName().equals(b.getNetworkName())
        && a.getInterfaceName().equals(b.getInterfaceName())
        && Objects.equals(parse(a), parse(b));
  }

  static List<KeyValuePair> derived(String key, IPAllocation v) {
    return parse(v)
        .filter(AllocatedIp::gwIsNeighbour)
        .map(
            p ->
                List.of(
                    new KeyValuePair(
                        NetallocKeys.neighGwKey(v.getNetworkName(), v.getInterfaceName()),
                        Empty.getDefaultInstance())))
        .orElse(List.of());
  }

  static List<KVWithMetadata<IPAllocation, AllocatedIp>> retrieve(
      List<KVWithMetadata<IPAllocation, AllocatedIp>> correlate) {
    List<KVWithMetadata<IPAllocation, AllocatedIp>> out = new ArrayList<>();
    for (KVWithMetadata<IPAllocation, AllocatedIp> kv : correlate) {
      parse(kv.value())
          .ifPresent(
              p -> out.add(new KVWithMetadata<>(kv.key(), kv.value(), p, ValueOrigin.FROM_NB)));
    }
    return out;
  }
}
