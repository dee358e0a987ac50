package io.kvscheduler.plugins.linux.netalloc;

/** Keys of the allocations and of the properties they derive, as vpp-agent spells them. */
public final class NetallocKeys {
  private NetallocKeys() {}

  /** NB prefix of IP address allocations. */
  public static final String IP_PREFIX = "config/netalloc/v1/ip/";

  /** The instance name of the allocation of {@code iface} in {@code network}. */
  public static String allocationName(String network, String iface) {
    return "network/" + network + "/interface/" + iface;
  }

  /** Key of the allocation of {@code iface} in {@code network}. */
  public static String allocationKey(String network, String iface) {
    return IP_PREFIX + allocationName(network, iface);
  }

  /**
   * The property an allocation derives when its gateway lies in the network of its address: the
   * gateway is a neighbour of the interface.
   */
  public static String neighGwKey(String network, String iface) {
    return "netalloc/neigh-gw/network/" + network + "/interface/" + iface;
  }
}
