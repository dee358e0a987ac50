package io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls;

import java.util.SortedMap;

/**
 * The calls the tunnel descriptors make into the southbound. Tunnels are addressed by the handle
 * the southbound returns from {@link #createTunnel}. Every method throws {@link
 * io.kvscheduler.plugins.mock.util.MockSbException} when the handle is unknown.
 */
public interface TunnelApi {

  /** Creates a tunnel; returns its handle. */
  int createTunnel(String remoteAddress, int vni, int mtu);

  /** Deletes a tunnel with its addresses. */
  void deleteTunnel(int handle);

  /** Changes the MTU of a tunnel. */
  void setTunnelMtu(int handle, int mtu);

  /** Assigns an address to a tunnel. */
  void addTunnelAddress(int handle, String address);

  /** Removes an address from a tunnel. */
  void deleteTunnelAddress(int handle, String address);

  /** Every tunnel of the southbound by handle, handles ascending. */
  SortedMap<Integer, SbTunnel> dumpTunnels();
}
