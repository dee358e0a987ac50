package io.kvscheduler.plugins.linux.netalloc;

import io.kvscheduler.plugins.linux.model.IpNet;
import java.util.Optional;

/**
 * The parsed content of an allocation: its metadata in the scheduler.
 *
 * @param address the interface's address with its prefix length
 * @param gw the gateway with its prefix length, or null
 * @param gwIsNeighbour whether the gateway lies in the address's network
 */
public record AllocatedIp(IpNet address, IpNet gw, boolean gwIsNeighbour) {
  /** The gateway, when the allocation has one. */
  public Optional<IpNet> gateway() {
    return Optional.ofNullable(gw);
  }
}
