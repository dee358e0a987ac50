package io.kvscheduler.agent.spi;

import com.google.protobuf.Descriptors.FileDescriptor;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A plugin of the kvscheduler agent, discovered with {@link java.util.ServiceLoader} (list the
 * class in {@code META-INF/services/io.kvscheduler.agent.spi.AgentPlugin}). The agent orders
 * plugins by their declared dependencies, then calls {@link #init} on each in that order (register
 * models and descriptors here), then {@link #afterInit} on each (start work that needs every plugin
 * initialised), and {@link #close} in reverse order on shutdown.
 */
public interface AgentPlugin {

  /** Unique plugin name. */
  String name();

  /** Names of plugins that must be initialised before this one. */
  default Set<String> dependsOn() {
    return Set.of();
  }

  /**
   * Whether the agent starts this plugin without being told to. A plugin that touches the host
   * (such as the Linux networking plugin) answers false: the agent then starts it only when its
   * settings enable the plugin by name (see the agent's settings).
   */
  default boolean enabledByDefault() {
    return true;
  }

  /** Registers models and descriptors. */
  void init(AgentContext ctx) throws Exception;

  /**
   * Registers the plugin's models only, without descriptors or a scheduler: for tools that read and
   * write configuration (such as the command-line client writing values into etcd) without running
   * the plugin. A plugin with models overrides this and calls it from {@link #init}.
   */
  default void registerModels(ModelRegistry models) {}

  /**
   * The proto files that define this plugin's messages: its models' values and its notifications.
   * Transports that describe messages to clients (gRPC server reflection, the generic manager's
   * model list) learn them from here, so they need no compile-time knowledge of the plugin. A
   * file's imports come with it.
   */
  default List<FileDescriptor> protoFiles() {
    return List.of();
  }

  /**
   * The field this plugin adds to the configurator's whole configuration ({@code
   * ligato.configurator.Config}) for its values, if any: its number and its message (see {@link
   * ConfigDomain}). A plugin whose models sit in one of ligato's domains (such as the Linux plugin
   * in {@code linux_config}) has none. Declare the message's file in {@link #protoFiles} too.
   */
  default Optional<ConfigDomain> configDomain() {
    return Optional.empty();
  }

  /** Called once every plugin is initialised. */
  default void afterInit(AgentContext ctx) throws Exception {}

  /** Releases resources; called in reverse initialisation order. */
  default void close() throws Exception {}
}
