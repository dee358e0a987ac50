package io.kvscheduler.plugins.mock.skeleton.withmeta.descriptor;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.TunnelApi;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.TunnelAddress;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.TunnelModel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelIndex;
import io.kvscheduler.plugins.mock.util.MockSbException;

/**
 * Teaches the scheduler to assign an address to a tunnel. Its values are derived from tunnels
 * ({@code skeleton/tunnel/<name>/address/<prefix>}), never written by the northbound: hence no NB
 * key prefix, a key selector instead. A derived value implicitly depends on its base, so Create
 * always finds the tunnel's handle in the tunnel metadata map, and Delete runs before the tunnel's.
 * No Update (the key names the address, so the value never changes) and no Retrieve (addresses come
 * back as part of the retrieved tunnels).
 */
public final class TunnelAddressDescriptor {
  /** Descriptor name. */
  public static final String NAME = "skeleton-tunnel-address";

  private final TunnelApi sb;
  private final TunnelIndex tunnels;

  private TunnelAddressDescriptor(TunnelApi sb, TunnelIndex tunnels) {
    this.sb = sb;
    this.tunnels = tunnels;
  }

  /** The descriptor working over {@code sb}, finding tunnel handles in {@code tunnels}. */
  public static KVDescriptor<TunnelAddress, Void> create(TunnelApi sb, TunnelIndex tunnels) {
    TunnelAddressDescriptor d = new TunnelAddressDescriptor(sb, tunnels);
    return KVDescriptor.builder(NAME, TunnelAddress.class)
        .valueTypeName(TunnelModel.ADDRESS_TYPE_NAME)
        .keySelector(TunnelModel::isAddressKey)
        .create(d::create)
        .delete(d::delete)
        .build();
  }

  /** Create: assigns the address. Replace the body with your southbound call. */
  private Void create(String key, TunnelAddress a) {
    sb.addTunnelAddress(handle(a.tunnel()), a.address());
    return null;
  }

  /** Delete: removes the address. Replace the body with your southbound call. */
  private void delete(String key, TunnelAddress a, Void metadata) {
    sb.deleteTunnelAddress(handle(a.tunnel()), a.address());
  }

  private int handle(String tunnel) {
    return tunnels
        .lookupByName(tunnel)
        .orElseThrow(() -> new MockSbException("no metadata for tunnel " + tunnel))
        .handle();
  }
}
