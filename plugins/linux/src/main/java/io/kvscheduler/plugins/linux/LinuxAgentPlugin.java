package io.kvscheduler.plugins.linux;

import com.google.protobuf.Descriptors.FileDescriptor;
import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.grpc.proto.linux.Notification;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * The Linux plugin as an agent plugin: registers the Linux models and descriptors over iproute2 in
 * the namespace the agent runs in, and follows the kernel's link events, publishing the interface
 * state changes into the agent's notification sink ({@code ligato.linux.Notification}). Off unless
 * the agent is told to enable it ({@code --linux}), so that a default agent never touches the
 * host's network.
 */
public final class LinuxAgentPlugin implements AgentPlugin {
  /** Limit of one {@code ip} command. */
  private static final Duration CALL_LIMIT = Duration.ofSeconds(10);

  private final LinuxCalls calls;

  /** Made by this plugin (closed with it), not handed in. */
  private final IpRoute2Calls ownCalls;

  private volatile LinuxPlugin plugin;
  private volatile AutoCloseable notifying;

  /** The plugin over iproute2 in the namespace the agent runs in (found by ServiceLoader). */
  public LinuxAgentPlugin() {
    this.ownCalls = new IpRoute2Calls(CALL_LIMIT);
    this.calls = ownCalls;
  }

  /**
   * The plugin over {@code calls}, e.g. iproute2 inside a {@link
   * io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox}.
   */
  public LinuxAgentPlugin(LinuxCalls calls) {
    this.calls = calls;
    this.ownCalls = null;
  }

  @Override
  public String name() {
    return "linux";
  }

  @Override
  public boolean enabledByDefault() {
    return false;
  }

  /** The Linux models (interfaces, routes, ARP entries, rule chains), also for tools that write. */
  @Override
  public void registerModels(ModelRegistry models) {
    LinuxModels.registerAll(models);
  }

  /** {@code ligato/linux/linux.proto}: the Linux domain's values and notifications. */
  @Override
  public List<FileDescriptor> protoFiles() {
    return List.of(Notification.getDescriptor().getFile());
  }

  @Override
  public void init(AgentContext ctx) {
    registerModels(ctx.models());
    plugin = LinuxPlugin.register(ctx.scheduler(), calls, "/vnf-agent/" + ctx.label() + "/");
  }

  @Override
  public void afterInit(AgentContext ctx) throws Exception {
    notifying =
        plugin.onLinks(new LinuxNotifications(ctx.notifications()::publish, Clock.systemUTC()));
    plugin.startWatching();
  }

  /** The registered plugin (after init). */
  public LinuxPlugin plugin() {
    return plugin;
  }

  @Override
  public void close() throws Exception {
    if (notifying != null) {
      notifying.close();
    }
    if (plugin != null) {
      plugin.close();
    }
    if (ownCalls != null) {
      ownCalls.close();
    }
  }
}
