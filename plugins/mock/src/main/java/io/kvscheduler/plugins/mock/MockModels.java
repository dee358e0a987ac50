package io.kvscheduler.plugins.mock;

import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import java.util.List;

/** The mock plugins' models as the agent registers them (keys as in vpp-agent's example). */
public final class MockModels {
  private MockModels() {}

  /** {@code mock.interfaces}: {@code config/mock/v1/interfaces/<name>}. */
  public static final Model<Interface> INTERFACE =
      Model.builder("mock", "v1", "interfaces", Interface.class)
          .protoName(InterfaceModel.PROTO_NAME)
          .name(Interface::name, "{{.Name}}")
          .build();

  /** {@code mock.bridge-domain}: {@code config/mock/v1/bridge-domain/<name>}. */
  public static final Model<BridgeDomain> BRIDGE_DOMAIN =
      Model.builder("mock", "v1", "bridge-domain", BridgeDomain.class)
          .protoName(L2Model.BD_PROTO_NAME)
          .name(BridgeDomain::name, "{{.Name}}")
          .build();

  /** {@code mock.fib}: {@code config/mock/v1/fib/<bd>/mac/<mac>}. */
  public static final Model<FibEntry> FIB =
      Model.builder("mock", "v1", "fib", FibEntry.class)
          .protoName(L2Model.FIB_PROTO_NAME)
          .name(
              f -> f.bridgeDomain() + "/mac/" + f.physAddress(),
              "{{.BridgeDomain}}/mac/{{.PhysAddress}}")
          .build();

  /** The three models. */
  public static List<Model<?>> all() {
    return List.of(INTERFACE, BRIDGE_DOMAIN, FIB);
  }

  /** Registers the three models. */
  public static void registerAll(ModelRegistry registry) {
    all().forEach(registry::register);
  }
}
