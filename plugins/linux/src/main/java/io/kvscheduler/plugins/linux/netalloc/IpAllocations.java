package io.kvscheduler.plugins.linux.netalloc;

import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.plugins.linux.model.IpNet;
import java.util.Optional;

/**
 * Read-only view of the allocations the scheduler holds (the metadata map of {@code
 * netalloc-ip-address}), resolving references to addresses. A user of a reference depends on the
 * allocation's key, so its Create, Update and Delete run while the allocation is there and read the
 * allocation's current address here.
 */
public final class IpAllocations {
  private final NamedMapping<AllocatedIp> mapping;

  /** A view of {@code mapping} (null: no allocations, every reference unresolved). */
  public IpAllocations(NamedMapping<AllocatedIp> mapping) {
    this.mapping = mapping;
  }

  /** The allocation of {@code iface} in {@code network}. */
  public Optional<AllocatedIp> lookup(String network, String iface) {
    return mapping == null
        ? Optional.empty()
        : mapping.lookup(NetallocKeys.allocationName(network, iface));
  }

  /** The address (with prefix length) {@code ref} names now, when it is allocated. */
  public Optional<IpNet> resolve(AllocRef ref) {
    Optional<AllocatedIp> a = lookup(ref.network(), ref.iface());
    return ref.gw() ? a.flatMap(AllocatedIp::gateway) : a.map(AllocatedIp::address);
  }
}
