package io.kvscheduler.plugins.mock;

import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.util.SbPrinter;

/**
 * The mock plugins as an agent plugin: registers the three mock models and the interface and L2
 * plugins' descriptors; the mock southbound logs every operation (logger {@code
 * io.kvscheduler.plugins.mock.sb}).
 */
public final class MockAgentPlugin implements AgentPlugin {
  private volatile MockPlugins plugins;

  @Override
  public String name() {
    return "mock";
  }

  @Override
  public void init(AgentContext ctx) {
    registerModels(ctx.models());
    plugins = MockPlugins.register(ctx.scheduler(), SbPrinter.logging());
  }

  @Override
  public void registerModels(ModelRegistry models) {
    MockModels.registerAll(models);
  }

  /** The registered plugins (after init). */
  public MockPlugins plugins() {
    return plugins;
  }
}
