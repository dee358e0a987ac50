package io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls;

import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The in-memory tunnel southbound: tunnels by handle, handles allocated from 0 and never reused.
 * Prints every operation (e.g. {@code Created tunnel to 192.0.2.1 vni 10 mtu 1500 (handle 0)}).
 * Thread-safe, so tests may read it while the scheduler works.
 */
public final class InMemoryTunnelHandler implements TunnelApi {
  private final SbPrinter printer;
  private final TreeMap<Integer, SbTunnel> tunnels = new TreeMap<>();
  private int nextHandle;

  public InMemoryTunnelHandler(SbPrinter printer) {
    this.printer = printer;
  }

  @Override
  public synchronized int createTunnel(String remoteAddress, int vni, int mtu) {
    int handle = nextHandle++;
    tunnels.put(handle, new SbTunnel(remoteAddress, vni, mtu, List.of()));
    printer.print(
        "Created tunnel to "
            + remoteAddress
            + " vni "
            + vni
            + " mtu "
            + mtu
            + " (handle "
            + handle
            + ")");
    return handle;
  }

  @Override
  public synchronized void deleteTunnel(int handle) {
    get(handle);
    tunnels.remove(handle);
    printer.print("Deleted tunnel " + handle);
  }

  @Override
  public synchronized void setTunnelMtu(int handle, int mtu) {
    SbTunnel t = get(handle);
    tunnels.put(handle, new SbTunnel(t.remoteAddress(), t.vni(), mtu, t.addresses()));
    printer.print("Set MTU of tunnel " + handle + " to " + mtu);
  }

  /**
   * Costs O(a) for the a addresses of this one tunnel (a copy of its list, so that a dumped {@link
   * SbTunnel} never changes): a tunnel has a handful of addresses, and the cost does not grow with
   * the number of tunnels.
   */
  @Override
  public synchronized void addTunnelAddress(int handle, String address) {
    SbTunnel t = get(handle);
    if (t.addresses().contains(address)) {
      throw new MockSbException("tunnel " + handle + " already has address " + address);
    }
    List<String> addresses = new ArrayList<>(t.addresses());
    addresses.add(address);
    tunnels.put(handle, new SbTunnel(t.remoteAddress(), t.vni(), t.mtu(), addresses));
    printer.print("Added address " + address + " to tunnel " + handle);
  }

  /** Costs O(a) for the a addresses of this one tunnel, as {@link #addTunnelAddress}. */
  @Override
  public synchronized void deleteTunnelAddress(int handle, String address) {
    SbTunnel t = get(handle);
    List<String> addresses = new ArrayList<>(t.addresses());
    if (!addresses.remove(address)) {
      throw new MockSbException("tunnel " + handle + " has no address " + address);
    }
    tunnels.put(handle, new SbTunnel(t.remoteAddress(), t.vni(), t.mtu(), addresses));
    printer.print("Deleted address " + address + " from tunnel " + handle);
  }

  @Override
  public synchronized SortedMap<Integer, SbTunnel> dumpTunnels() {
    return Collections.unmodifiableSortedMap(new TreeMap<>(tunnels));
  }

  private SbTunnel get(int handle) {
    SbTunnel t = tunnels.get(handle);
    if (t == null) {
      throw new MockSbException("cannot find tunnel with handle: " + handle);
    }
    return t;
  }
}
