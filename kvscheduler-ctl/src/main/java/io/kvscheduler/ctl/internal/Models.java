package io.kvscheduler.ctl.internal;

import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ModelRegistry;
import java.util.ServiceLoader;

/** The models of the plugins on the class path (as the agent finds them), without running them. */
public final class Models {
  private Models() {}

  public static ModelRegistry ofPlugins() {
    ModelRegistry models = new ModelRegistry();
    for (AgentPlugin p : ServiceLoader.load(AgentPlugin.class)) {
      p.registerModels(models);
    }
    return models;
  }
}
