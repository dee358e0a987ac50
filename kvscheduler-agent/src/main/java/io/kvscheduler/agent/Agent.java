package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.logging.LogTail;
import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.internal.northbound.NorthboundSource;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.web.StatusEvents;
import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.agent.spi.NotificationHub;
import io.kvscheduler.agent.spi.NotificationSink;
import io.kvscheduler.api.KVScheduler;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent: a scheduler, the plugins found with ServiceLoader (initialised in dependency
 * order; a plugin that is off by default only when the settings enable it), and the NB sources the
 * configuration enables.
 *
 * <p>Lifecycle: {@link #start} → plugins {@code init} → plugins {@code afterInit} → NB sources
 * start (each does its first full resync) → running → {@link #close} (NB sources, so that no
 * configuration is read after the stop, then plugins in reverse order, then the scheduler).
 */
public final class Agent implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  /** Lines of the recent log kept in memory. */
  static final int LOG_TAIL_LINES = 2000;

  private final AgentConfig config;
  private final KVScheduler kvs;
  private final ModelRegistry models = new ModelRegistry();
  private final NotificationHub notifications = new NotificationHub();
  private final Orchestrator orchestrator;
  private final AgentMetrics metrics;

  /** The recent log, for bug reports ({@code GET /info/log}). */
  private final LogTail logTail = new LogTail(LOG_TAIL_LINES);

  /** Status changes for the web page's live view. */
  private final StatusEvents statusEvents;

  /** The orchestrator, counted by the metrics: what the sources and plugins deliver to. */
  private final Northbound northbound;

  private final List<AgentPlugin> plugins;
  private final List<NorthboundSource> sources = new ArrayList<>();
  private final List<AgentPlugin> initialised = new ArrayList<>();
  private boolean closed;

  private Agent(AgentConfig config, List<AgentPlugin> plugins) {
    this.config = config;
    var builder =
        KVScheduler.builder()
            .printTxnSummary(config.printTxnSummary())
            .valueFormatter(ModelRegistry::text)
            .valueSizeEstimator(ModelRegistry::sizeEstimate)
            .txnLogMaxItems(config.txnLogMaxOps())
            .threadName("kvs-engine")
            .parallelism(config.parallelism());
    if (config.operationTimeout() != null) {
      builder.operationTimeout(config.operationTimeout());
    }
    this.kvs = builder.build();
    // a REST client is told when the queue is full (503); files and etcd wait for room
    this.orchestrator = new Orchestrator(kvs, Set.of(RestNorthbound.SOURCE));
    List<AgentPlugin> enabled = new ArrayList<>();
    for (AgentPlugin p : plugins) {
      if (p.enabledByDefault() || config.enabledPlugins().contains(p.name())) {
        enabled.add(p);
      } else {
        LOG.info("plugin {} is off (enable it in the settings)", p.name());
      }
    }
    this.metrics = new AgentMetrics(kvs, Clock.systemUTC());
    this.northbound = metrics.northbound(orchestrator);
    this.plugins = PluginOrder.order(enabled);
    this.statusEvents = new StatusEvents(kvs, Duration.ofMillis(100));
    logTail.attach();
  }

  /** Starts an agent with the plugins found by ServiceLoader. */
  public static Agent start(AgentConfig config) throws Exception {
    List<AgentPlugin> found = new ArrayList<>();
    ServiceLoader.load(AgentPlugin.class).forEach(found::add);
    return start(config, found);
  }

  /** Starts an agent with the given plugins. */
  public static Agent start(AgentConfig config, List<AgentPlugin> plugins) throws Exception {
    Agent agent = new Agent(config, plugins);
    try {
      agent.run();
    } catch (Exception | Error e) {
      agent.close();
      throw e;
    }
    return agent;
  }

  private void run() throws Exception {
    AgentContext ctx = context();
    for (AgentPlugin p : plugins) {
      LOG.info("init plugin {}", p.name());
      p.init(ctx);
      initialised.add(p);
    }
    for (AgentPlugin p : plugins) {
      p.afterInit(ctx);
    }
    sources.addAll(AgentSources.create(this));
    for (NorthboundSource s : sources) {
      LOG.info("starting {} northbound", s.name());
      s.start();
    }
    List<String> names = sources.stream().map(NorthboundSource::name).toList();
    if (!names.contains("file") && !names.contains("etcd")) {
      // a new user should not wonder why nothing happens
      LOG.warn(
          "agent '{}' has no configuration source (neither --config-dir nor --etcd): {}",
          config.label(),
          names.contains("rest")
              ? "only what is pushed with PUT /configuration is applied"
              : "and REST is off, so nothing will be configured");
    }
    LOG.info(
        "agent '{}' started with plugins {} and northbound {}",
        config.label(),
        plugins.stream().map(AgentPlugin::name).toList(),
        sources.stream().map(NorthboundSource::name).toList());
  }

  private AgentContext context() {
    KVScheduler timed = metrics.timing(kvs);
    return new AgentContext() {
      @Override
      public KVScheduler scheduler() {
        return timed;
      }

      @Override
      public ModelRegistry models() {
        return models;
      }

      @Override
      public Northbound northbound() {
        return northbound;
      }

      @Override
      public String label() {
        return config.label();
      }

      @Override
      public NotificationSink notifications() {
        return notifications;
      }

      @Override
      public <P extends AgentPlugin> Optional<P> plugin(Class<P> type) {
        return plugins.stream().filter(type::isInstance).map(type::cast).findFirst();
      }
    };
  }

  public AgentConfig config() {
    return config;
  }

  /** Where the plugins publish their notifications, and transports subscribe to them. */
  public NotificationHub notifications() {
    return notifications;
  }

  public KVScheduler scheduler() {
    return kvs;
  }

  public ModelRegistry models() {
    return models;
  }

  public Northbound northbound() {
    return northbound;
  }

  /** The agent's metrics (served at {@code GET /metrics}). */
  AgentMetrics metrics() {
    return metrics;
  }

  /** The running plugins, in initialisation order. */
  public List<AgentPlugin> plugins() {
    return List.copyOf(plugins);
  }

  /** The recent log. */
  LogTail logTail() {
    return logTail;
  }

  /** Status changes, for live clients. */
  StatusEvents statusEvents() {
    return statusEvents;
  }

  /** Names of the plugins, in initialisation order. */
  public List<String> pluginNames() {
    return plugins.stream().map(AgentPlugin::name).toList();
  }

  /** The running NB sources. */
  public List<NorthboundSource> sources() {
    return Collections.unmodifiableList(sources);
  }

  /**
   * Stops the NB sources first (once each returned, it reads and delivers no more configuration:
   * nothing read after the stop is applied), then the plugins (reverse order), then the scheduler
   * (which fails what is still queued); errors are logged. Logs one line when stopping starts and
   * one when everything stopped.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    LOG.info(
        "agent '{}' stopping: northbound {} first, then plugins and the scheduler",
        config.label(),
        sources.stream().map(NorthboundSource::name).toList());
    for (int i = sources.size() - 1; i >= 0; i--) {
      try {
        sources.get(i).close();
      } catch (RuntimeException e) {
        LOG.error("closing {} northbound failed", sources.get(i).name(), e);
      }
    }
    for (int i = initialised.size() - 1; i >= 0; i--) {
      try {
        initialised.get(i).close();
      } catch (Exception e) {
        LOG.error("closing plugin {} failed", initialised.get(i).name(), e);
      }
    }
    statusEvents.close();
    metrics.close();
    kvs.close();
    LOG.info("agent '{}' stopped", config.label());
    logTail.detach();
  }
}
