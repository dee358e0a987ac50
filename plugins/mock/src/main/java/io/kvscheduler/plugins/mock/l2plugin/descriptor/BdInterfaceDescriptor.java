package io.kvscheduler.plugins.mock.l2plugin.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockBdApi;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbIndex;
import java.util.List;

/**
 * Teaches the scheduler to put an interface into a bridge domain. Its values are derived from
 * bridge domains ({@code mock/bd/<bd>/interface/<iface>}); each depends on its interface (label
 * {@value #INTERFACE_DEP}), so some members of a bridge domain may wait as PENDING while the domain
 * and its other members are configured. No Retrieve: the bindings are part of the retrieved bridge
 * domains.
 */
public final class BdInterfaceDescriptor {
  /** Descriptor name. */
  public static final String NAME = "mock-bd-interface";

  /** Label of the dependency on the bound interface. */
  public static final String INTERFACE_DEP = "interface-exists";

  private final MockBdApi sb;
  private final NamedMapping<SbIndex> bdIndex;

  private BdInterfaceDescriptor(MockBdApi sb, NamedMapping<SbIndex> bdIndex) {
    this.sb = sb;
    this.bdIndex = bdIndex;
  }

  /**
   * The descriptor working over {@code sb}; {@code bdIndex} is the metadata map of {@link
   * BridgeDomainDescriptor}, which translates bridge-domain names into SB handles.
   */
  public static KVDescriptor<BridgeDomain.Interface, Void> create(
      MockBdApi sb, NamedMapping<SbIndex> bdIndex) {
    BdInterfaceDescriptor d = new BdInterfaceDescriptor(sb, bdIndex);
    return KVDescriptor.builder(NAME, BridgeDomain.Interface.class)
        .valueTypeName(L2Model.BD_INTERFACE_PROTO_NAME)
        .keySelector(key -> L2Model.parseBdInterfaceKey(key).isPresent())
        .create(
            (key, member) -> {
              d.sb.addInterfaceToBridgeDomain(
                  d.handle(key), member.name(), member.bridgedVirtualInterface());
              return null;
            })
        .delete(
            (key, member, meta) ->
                d.sb.deleteInterfaceFromBridgeDomain(d.handle(key), member.name()))
        .dependencies(
            (key, member) ->
                List.of(Dependency.onKey(INTERFACE_DEP, InterfaceModel.key(member.name()))))
        .build();
  }

  private int handle(String key) {
    String bd = L2Model.parseBdInterfaceKey(key).orElseThrow().bridgeDomain();
    return bdIndex
        .lookup(bd)
        .orElseThrow(() -> new MockSbException("failed to obtain metadata for bridge domain " + bd))
        .index();
  }
}
