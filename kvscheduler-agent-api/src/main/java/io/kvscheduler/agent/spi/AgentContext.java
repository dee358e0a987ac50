package io.kvscheduler.agent.spi;

import io.kvscheduler.api.KVScheduler;
import java.util.Optional;

/** What the agent gives its plugins. */
public interface AgentContext {

  /** The agent's scheduler. */
  KVScheduler scheduler();

  /** The model registry. */
  ModelRegistry models();

  /** Where NB configuration is delivered. */
  Northbound northbound();

  /** The agent's microservice label (e.g. {@code vpp1}). */
  String label();

  /**
   * Where the plugin publishes its notifications, for the transports that stream them (see {@link
   * NotificationSink}). A context without such transports drops them.
   */
  default NotificationSink notifications() {
    return notification -> {};
  }

  /** Another plugin, by class (initialised before this one if declared in dependsOn). */
  <P extends AgentPlugin> Optional<P> plugin(Class<P> type);
}
