package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.List;

/**
 * A network link as the kernel reports it.
 *
 * @param namespace the namespace it is in as {@link LinuxCalls} names it (a name, a file), "" for
 *     the agent's own
 * @param index the kernel's interface index
 * @param name the host name
 * @param kind the link kind ({@code veth}, {@code dummy}, {@code loopback}, ... or "")
 * @param alias the link alias ("" when none)
 * @param up administratively up
 * @param mtu the MTU
 * @param mac the hardware address, lower case
 * @param addresses the addresses with prefix length ({@code 10.0.0.1/24}); the kernel's own (IPv6
 *     link-local, the loopback's 127.0.0.1/8 and ::1/128) left out
 * @param group the device group ({@code 0} the default group; {@code -1} a group known to the
 *     system by a name only)
 */
public record Link(
    String namespace,
    int index,
    String name,
    String kind,
    String alias,
    boolean up,
    int mtu,
    String mac,
    List<String> addresses,
    int group) {
  public Link {
    addresses = List.copyOf(addresses);
  }

  /** A link of the default device group. */
  public Link(
      String namespace,
      int index,
      String name,
      String kind,
      String alias,
      boolean up,
      int mtu,
      String mac,
      List<String> addresses) {
    this(namespace, index, name, kind, alias, up, mtu, mac, addresses, 0);
  }
}
