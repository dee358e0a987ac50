package io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls;

import java.util.List;

/**
 * A tunnel as the southbound reports it. It has no name: the southbound knows tunnels by handle
 * only, so Retrieve must correlate them with the values the scheduler expects.
 *
 * @param remoteAddress far end
 * @param vni virtual network identifier
 * @param mtu the applied MTU (never 0)
 * @param addresses assigned prefixes, in the order they were added
 */
public record SbTunnel(String remoteAddress, int vni, int mtu, List<String> addresses) {
  public SbTunnel {
    addresses = List.copyOf(addresses);
  }
}
