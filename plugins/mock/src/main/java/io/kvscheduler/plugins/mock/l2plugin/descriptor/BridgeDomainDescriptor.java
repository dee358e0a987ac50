package io.kvscheduler.plugins.mock.l2plugin.descriptor;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.mock.ifplugin.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockBdApi;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.util.SbIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Teaches the scheduler to configure mock bridge domains.
 *
 * <ul>
 *   <li>Keys {@code config/mock/v1/bridge-domain/<name>}; metadata {@link SbIndex} in the map
 *       {@value #NAME}.
 *   <li>Validate: name set, at most one BVI.
 *   <li>Create and Delete only. There is no Update and every two revisions are equivalent: the
 *       members are derived values ({@code mock/bd/<bd>/interface/<iface>}, handled by {@link
 *       BdInterfaceDescriptor}), so a change of the member list adds and removes bindings while the
 *       bridge domain itself is never touched, and never waits for its interfaces.
 *   <li>Retrieve: every bridge domain of the SB; interfaces are retrieved first.
 * </ul>
 */
public final class BridgeDomainDescriptor {
  /** Descriptor name, also the name of its metadata map. */
  public static final String NAME = "mock-bridge-domain";

  private final MockBdApi sb;

  private BridgeDomainDescriptor(MockBdApi sb) {
    this.sb = sb;
  }

  /** The descriptor working over {@code sb}. */
  public static KVDescriptor<BridgeDomain, SbIndex> create(MockBdApi sb) {
    BridgeDomainDescriptor d = new BridgeDomainDescriptor(sb);
    return KVDescriptor.builder(NAME, BridgeDomain.class)
        .withMetadata(SbIndex.class)
        .valueTypeName(L2Model.BD_PROTO_NAME)
        .nbKeyPrefix(L2Model.BD_KEY_PREFIX)
        .keySelector(L2Model::isBridgeDomainKey)
        .keyLabel(L2Model::label)
        .equivalence((key, oldBd, newBd) -> true)
        .validate(BridgeDomainDescriptor::validate)
        .create((key, bd) -> new SbIndex(d.sb.createBridgeDomain(bd.name())))
        .delete((key, bd, meta) -> d.sb.deleteBridgeDomain(meta.index()))
        .retrieve(d::retrieve)
        .derivedValues(BridgeDomainDescriptor::derivedValues)
        .retrieveDependencies(InterfaceDescriptor.NAME)
        .build();
  }

  static void validate(String key, BridgeDomain bd) {
    if (bd.name().isEmpty()) {
      throw new InvalidValueException("mock bridge domain defined without logical name", "name");
    }
    boolean hasBvi = false;
    for (BridgeDomain.Interface member : bd.interfaces()) {
      if (member.bridgedVirtualInterface()) {
        if (hasBvi) {
          // the reference's wording, typo included, so logs and tools compare equal
          throw new InvalidValueException(
              "mock bridge domain defined with mutliple BVIs",
              "interfaces.bridged_virtual_interface");
        }
        hasBvi = true;
      }
    }
  }

  static List<KeyValuePair> derivedValues(String key, BridgeDomain bd) {
    List<KeyValuePair> out = new ArrayList<>(bd.interfaces().size());
    for (BridgeDomain.Interface member : bd.interfaces()) {
      out.add(new KeyValuePair(L2Model.bdInterfaceKey(bd.name(), member.name()), member));
    }
    return out;
  }

  private List<KVWithMetadata<BridgeDomain, SbIndex>> retrieve(
      List<KVWithMetadata<BridgeDomain, SbIndex>> correlate) {
    List<KVWithMetadata<BridgeDomain, SbIndex>> out = new ArrayList<>();
    for (Map.Entry<Integer, BridgeDomain> e : sb.dumpBridgeDomains().entrySet()) {
      out.add(
          new KVWithMetadata<>(
              L2Model.key(e.getValue()),
              e.getValue(),
              new SbIndex(e.getKey()),
              ValueOrigin.FROM_NB));
    }
    return out;
  }
}
