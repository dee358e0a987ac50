package io.kvscheduler.plugins.mock.skeleton.withmeta;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.mock.skeleton.withmeta.descriptor.TunnelAddressDescriptor;
import io.kvscheduler.plugins.mock.skeleton.withmeta.descriptor.TunnelDescriptor;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.InMemoryTunnelHandler;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.SbTunnel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.TunnelApi;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.Tunnel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelIndex;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelMetadata;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.SortedMap;

/**
 * The tunnel plugin (skeleton with metadata): registers the tunnel descriptor, obtains its metadata
 * map from the scheduler, registers the address descriptor (which reads handles from that map) and
 * exposes the map read-only as its API.
 */
public final class TunnelPlugin {
  private final TunnelApi southbound;
  private final TunnelIndex index;

  private TunnelPlugin(TunnelApi southbound, TunnelIndex index) {
    this.southbound = southbound;
    this.index = index;
  }

  /** Registers the tunnel descriptors on {@code scheduler} over {@code southbound}. */
  public static TunnelPlugin register(KVScheduler scheduler, TunnelApi southbound) {
    KVDescriptor<Tunnel, TunnelMetadata> tunnels = TunnelDescriptor.create(southbound);
    scheduler.registerDescriptors(tunnels);
    // the metadata map exists once its descriptor is registered
    TunnelIndex index = new TunnelIndex(scheduler.metadataMap(tunnels));
    scheduler.registerDescriptors(TunnelAddressDescriptor.create(southbound, index));
    return new TunnelPlugin(southbound, index);
  }

  /** Registers the descriptors over a fresh in-memory southbound printing to {@code printer}. */
  public static TunnelPlugin register(KVScheduler scheduler, SbPrinter printer) {
    return register(scheduler, new InMemoryTunnelHandler(printer));
  }

  /** The plugin's API: read-only metadata of configured tunnels, by name, handle or VNI. */
  public TunnelIndex tunnelIndex() {
    return index;
  }

  /** What the southbound holds now, by handle. */
  public SortedMap<Integer, SbTunnel> southboundState() {
    return southbound.dumpTunnels();
  }
}
