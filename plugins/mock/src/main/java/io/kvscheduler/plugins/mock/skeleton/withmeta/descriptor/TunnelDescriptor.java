package io.kvscheduler.plugins.mock.skeleton.withmeta.descriptor;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.SbTunnel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.TunnelApi;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.Tunnel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.TunnelAddress;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.TunnelModel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelIndex;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelMetadata;
import io.kvscheduler.plugins.mock.util.Ipv4;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Teaches the scheduler to configure tunnels — a descriptor with metadata.
 *
 * <ul>
 *   <li>Keys {@code config/skeleton/v1/tunnel/<name>}, label: the name.
 *   <li>Metadata {@link TunnelMetadata} (the SB handle), kept in the metadata map {@value #NAME}
 *       with the secondary indexes {@link TunnelIndex#BY_HANDLE} and {@link TunnelIndex#BY_VNI}.
 *   <li>Validate: name matches the key, remote address, VNI range, MTU range, address syntax.
 *   <li>Update changes the MTU in place; another remote address or VNI re-creates the tunnel; MTU 0
 *       and {@link Tunnel#DEFAULT_MTU} are equivalent; the address list is ignored by the
 *       comparison because every address is a derived value ({@link TunnelAddressDescriptor}).
 *   <li>Retrieve correlates the nameless SB tunnels with the expected values: by handle when the
 *       scheduler knows the metadata, else by remote address and VNI.
 * </ul>
 */
public final class TunnelDescriptor {
  /** Descriptor name, also the name of its metadata map. */
  public static final String NAME = "skeleton-tunnel";

  /** Prefix of the name Retrieve gives to SB tunnels that match no expected value. */
  public static final String UNKNOWN_NAME_PREFIX = "unknown-";

  /** Largest VNI (24 bits). */
  public static final int MAX_VNI = 0xFFFFFF;

  private final TunnelApi sb;

  private TunnelDescriptor(TunnelApi sb) {
    this.sb = sb;
  }

  /** The descriptor working over {@code sb}. */
  public static KVDescriptor<Tunnel, TunnelMetadata> create(TunnelApi sb) {
    TunnelDescriptor d = new TunnelDescriptor(sb);
    return KVDescriptor.builder(NAME, Tunnel.class)
        // metadata first: it fixes the metadata type of the callbacks set below
        .withMetadata(TunnelMetadata.class)
        .metadataIndex(TunnelIndex.BY_HANDLE, TunnelIndex::handleKeys)
        .metadataIndex(TunnelIndex.BY_VNI, TunnelIndex::vniKeys)
        .valueTypeName(TunnelModel.TYPE_NAME)
        .nbKeyPrefix(TunnelModel.KEY_PREFIX)
        .keySelector(TunnelModel::isKey)
        .keyLabel(TunnelModel::name) // labels of the metadata map: tunnel names
        .equivalence(TunnelDescriptor::equivalent)
        .validate(TunnelDescriptor::validate)
        .derivedValues(TunnelDescriptor::derivedValues)
        .create(d::create)
        .update(d::update)
        .updateWithRecreate(TunnelDescriptor::needsRecreate)
        .delete(d::delete)
        .retrieve(d::retrieve)
        .build();
  }

  /**
   * Equivalence: MTU 0 is the default MTU; addresses are not compared because each address is a
   * derived value that the scheduler adds and removes on its own (comparing them here would only
   * cause useless Update calls).
   */
  static boolean equivalent(String key, Tunnel oldT, Tunnel newT) {
    return oldT.name().equals(newT.name())
        && oldT.remoteAddress().equals(newT.remoteAddress())
        && oldT.vni() == newT.vni()
        && oldT.effectiveMtu() == newT.effectiveMtu();
  }

  /**
   * Validate: rejects impossible values before any southbound call; the value becomes INVALID with
   * the named fields as status details. Also checks that the value matches its key — the northbound
   * could write a tunnel under another tunnel's key.
   */
  static void validate(String key, Tunnel t) {
    List<String> fields = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    if (!TunnelModel.key(t).equals(key)) {
      fields.add("name");
      reasons.add("name '" + Excerpt.quote(t.name()) + "' does not match the key");
    }
    if (!Ipv4.isAddress(t.remoteAddress())) {
      fields.add("remote_address");
      reasons.add(
          "remote address '" + Excerpt.quote(t.remoteAddress()) + "' is not an IPv4 address");
    }
    if (t.vni() < 1 || t.vni() > MAX_VNI) {
      fields.add("vni");
      reasons.add("VNI " + t.vni() + " out of range 1.." + MAX_VNI);
    }
    if (t.mtu() != 0 && (t.mtu() < 576 || t.mtu() > 9216)) {
      fields.add("mtu");
      reasons.add("MTU " + t.mtu() + " out of range 576..9216");
    }
    for (String a : t.addresses()) {
      if (!Ipv4.isPrefix(a)) {
        fields.add("addresses");
        reasons.add("address '" + Excerpt.quote(a) + "' is not an IPv4 prefix");
        break;
      }
    }
    if (!fields.isEmpty()) {
      throw new InvalidValueException(String.join("; ", reasons), fields);
    }
  }

  /**
   * DerivedValues: splits the tunnel into pieces the scheduler manages separately. Each address
   * becomes a value of its own (handled by {@link TunnelAddressDescriptor}), created after the
   * tunnel and deleted before it; a change of the list only adds and removes addresses. A derived
   * key no descriptor selects would be a plain property: no calls, but other values can depend on
   * it.
   */
  static List<KeyValuePair> derivedValues(String key, Tunnel t) {
    List<KeyValuePair> out = new ArrayList<>(t.addresses().size());
    for (String a : t.addresses()) {
      out.add(KeyValuePair.of(TunnelModel.addressKey(t.name(), a), new TunnelAddress(t.name(), a)));
    }
    return out;
  }

  /**
   * Create: creates the tunnel and returns its metadata; the scheduler stores it in the metadata
   * map under the key's label, where the derived addresses (and other plugins) find the handle.
   * Replace the body with your southbound call.
   */
  private TunnelMetadata create(String key, Tunnel t) {
    int handle = sb.createTunnel(t.remoteAddress(), t.vni(), t.effectiveMtu());
    return new TunnelMetadata(handle, t.vni());
  }

  /**
   * Update: applies what can change in place (the MTU) using the handle from {@code meta}, and
   * returns the metadata to keep (here unchanged: the handle and VNI stay). Replace the body with
   * your southbound call.
   */
  private TunnelMetadata update(String key, Tunnel oldT, Tunnel newT, TunnelMetadata meta) {
    if (oldT.effectiveMtu() != newT.effectiveMtu()) {
      sb.setTunnelMtu(meta.handle(), newT.effectiveMtu());
    }
    return meta;
  }

  /** UpdateWithRecreate: a tunnel cannot change its far end or VNI in place. */
  static boolean needsRecreate(String key, Tunnel oldT, Tunnel newT, TunnelMetadata meta) {
    return !oldT.remoteAddress().equals(newT.remoteAddress()) || oldT.vni() != newT.vni();
  }

  /**
   * Delete: removes the tunnel, identified by the handle in its metadata. Its derived addresses
   * were deleted just before. The scheduler drops the metadata afterwards. Replace the body with
   * your southbound call.
   */
  private void delete(String key, Tunnel t, TunnelMetadata meta) {
    sb.deleteTunnel(meta.handle());
  }

  /**
   * Retrieve: reads every tunnel and gives each a key. The southbound does not know names, so each
   * SB tunnel is matched with an expected value from {@code correlate}: by handle when the expected
   * value carries metadata (the scheduler's cached values at a run-time resync), else by remote
   * address and VNI (the NB values at the first resync). A tunnel matching nothing is named {@value
   * #UNKNOWN_NAME_PREFIX}{@code <handle>}; as it is not desired, a full resync deletes it. The
   * metadata returned here replaces what the map held. Replace the dump with your southbound call.
   */
  private List<KVWithMetadata<Tunnel, TunnelMetadata>> retrieve(
      List<KVWithMetadata<Tunnel, TunnelMetadata>> correlate) {
    Map<Integer, Tunnel> byHandle = new HashMap<>();
    // by remote address and VNI, in the order given: each tunnel found is matched in O(1), not by
    // a scan of every expected tunnel (which would make a retrieve quadratic)
    Map<List<Object>, ArrayDeque<Tunnel>> withoutMetadata = new HashMap<>();
    for (KVWithMetadata<Tunnel, TunnelMetadata> kv : correlate) {
      if (kv.metadata() != null) {
        byHandle.put(kv.metadata().handle(), kv.value());
      } else {
        withoutMetadata
            .computeIfAbsent(
                List.of(kv.value().remoteAddress(), kv.value().vni()), k -> new ArrayDeque<>())
            .add(kv.value());
      }
    }
    List<KVWithMetadata<Tunnel, TunnelMetadata>> out = new ArrayList<>();
    for (Map.Entry<Integer, SbTunnel> e : sb.dumpTunnels().entrySet()) {
      int handle = e.getKey();
      SbTunnel sbT = e.getValue();
      Tunnel expected = byHandle.get(handle);
      if (expected == null) {
        expected = takeMatching(withoutMetadata, sbT);
      }
      String name = expected != null ? expected.name() : UNKNOWN_NAME_PREFIX + handle;
      Tunnel found = new Tunnel(name, sbT.remoteAddress(), sbT.vni(), sbT.mtu(), sbT.addresses());
      out.add(
          new KVWithMetadata<>(
              TunnelModel.key(name),
              found,
              new TunnelMetadata(handle, sbT.vni()),
              ValueOrigin.FROM_NB));
    }
    return out;
  }

  private static Tunnel takeMatching(
      Map<List<Object>, ArrayDeque<Tunnel>> candidates, SbTunnel sbT) {
    ArrayDeque<Tunnel> same = candidates.get(List.of(sbT.remoteAddress(), sbT.vni()));
    return same == null ? null : same.poll();
  }
}
