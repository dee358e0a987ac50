package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.confirm.CommitConfirmer;
import io.kvscheduler.agent.internal.confirm.ProbeRunner;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import io.kvscheduler.agent.internal.etcd.LabelClaim;
import io.kvscheduler.agent.internal.logging.LogTail;
import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.internal.northbound.DocumentsAhead;
import io.kvscheduler.agent.internal.northbound.NorthboundProblems;
import io.kvscheduler.agent.internal.northbound.NorthboundSource;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.northbound.StateStore;
import io.kvscheduler.agent.internal.rest.ProbeRoutes;
import io.kvscheduler.agent.internal.web.StatusEvents;
import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.agent.spi.NotificationHub;
import io.kvscheduler.agent.spi.NotificationSink;
import io.kvscheduler.api.KVScheduler;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running agent: a scheduler, the plugins found with ServiceLoader (initialised in dependency
 * order; a plugin that is off by default only when the settings enable it), and the NB sources the
 * configuration enables.
 *
 * <p>Lifecycle: {@link #start} → with etcd, the claim of the label (see {@link LabelClaim}) → the
 * state store opened ({@code --state-dir}; a store that cannot be read stops the start) → plugins
 * {@code init} → plugins {@code afterInit} → what REST and gRPC pushed before read back from the
 * store (committed with a resync of its own when neither files nor etcd give a first resync) → NB
 * sources start (each does its first full resync) → running → {@link #close} (NB sources, so that
 * no configuration is read after the stop, then plugins in reverse order, then the scheduler).
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

  /** Confirmed commits over REST and gRPC: their deadlines, their probes. */
  private final CommitConfirmer confirmations;

  private final ScheduledExecutorService confirmTimer = daemonScheduler("kvs-confirm");
  private final ExecutorService probeExecutor =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "kvs-probes");
            t.setDaemon(true);
            return t;
          });

  /** The recent log, for bug reports ({@code GET /info/log}). */
  private final LogTail logTail = new LogTail(LOG_TAIL_LINES);

  /** The input the northbound sources rejected or ignored, as it stands now. */
  private final NorthboundProblems problems = new NorthboundProblems();

  /** When the agent started, and whether it is running (every source started) or stopping. */
  private final Instant startTime = Instant.now();

  private volatile boolean running;

  /** When {@link #running} last changed. */
  private volatile Instant stateChanged = startTime;

  /** Status changes for the web page's live view. */
  private final StatusEvents statusEvents;

  /** The orchestrator, counted by the metrics: what the sources and plugins deliver to. */
  private final Northbound northbound;

  private final List<AgentPlugin> plugins;
  private final List<NorthboundSource> sources = new ArrayList<>();
  private final List<AgentPlugin> initialised = new ArrayList<>();
  private StateStore stateStore;

  /** The config files parsed while the agent starts, for the file northbound; null without. */
  private DocumentsAhead documentsAhead;

  private boolean closed;

  /** With etcd: this agent's claim on its label; null without etcd. */
  private volatile LabelClaim labelClaim;

  /** Polled while a standby waits for its label: true stops the start. */
  private BooleanSupplier stopRequested = () -> false;

  /**
   * When the label, not claimed at start for want of an answer from etcd, turns out to be held by
   * another agent: by default logged (the agent applies nothing from etcd and keeps trying); {@code
   * kvs-agent run} exits with 1.
   */
  private Consumer<LabelClaim.HeldException> onHeldLater =
      e -> LOG.error("etcd: {}; this agent applies nothing from etcd", e.getMessage());

  private Agent(AgentConfig config, List<AgentPlugin> plugins) {
    this.config = config;
    var builder =
        KVScheduler.builder()
            .printTxnSummary(config.printTxnSummary())
            .valueFormatter(ModelRegistry::text)
            .valueSizeEstimator(ModelRegistry::sizeEstimate)
            .txnLogMaxItems(config.txnLogMaxOps())
            .txnLogMoreHint(seq -> "see /scheduler/txn-history?seq-num=" + seq)
            .threadName("kvs-engine")
            .parallelism(config.parallelism());
    if (config.operationTimeout() != null) {
      builder.operationTimeout(config.operationTimeout());
    }
    this.metrics = new AgentMetrics(Clock.systemUTC());
    builder.operationListener(metrics.operationListener()); // times the southbound calls
    this.kvs = builder.build();
    metrics.attach(kvs);
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
    this.northbound = metrics.northbound(orchestrator);
    metrics.northboundProblems(problems);
    this.plugins = PluginOrder.order(enabled);
    this.statusEvents = new StatusEvents(kvs, Duration.ofMillis(100));
    this.confirmations =
        new CommitConfirmer(
            orchestrator,
            Clock.systemUTC(),
            (delay, task) -> {
              ScheduledFuture<?> f =
                  confirmTimer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
              return () -> f.cancel(false);
            },
            config.probes(),
            ProbeRunner.system(),
            probeExecutor,
            List.of(new ConfirmationsKept()));
    metrics.commitPending(() -> confirmations.pending().isPresent());
    logTail.attach();
  }

  private static ScheduledExecutorService daemonScheduler(String name) {
    return Executors.newSingleThreadScheduledExecutor(
        r -> {
          Thread t = new Thread(r, name);
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * Notes a pending confirmed commit in the state store (for the next start to tell it was never
   * confirmed) and counts the ended ones.
   */
  private final class ConfirmationsKept implements CommitConfirmer.Listener {
    @Override
    public void pending(ConfirmedCommits.Pending pending) {
      StateStore store = stateStore;
      if (store != null) {
        store.markUnconfirmed(pending.describe());
      }
    }

    @Override
    public void confirmed(ConfirmedCommits.Pending pending, String how) {
      ended("confirmed");
    }

    @Override
    public void rolledBack(
        ConfirmedCommits.Pending pending, String description, CompletableFuture<Long> rollback) {
      ended("rolled_back");
    }

    private void ended(String outcome) {
      metrics.commitEnded(outcome);
      StateStore store = stateStore;
      if (store != null) {
        store.clearUnconfirmed();
      }
    }
  }

  /** Starts an agent with the plugins found by ServiceLoader. */
  public static Agent start(AgentConfig config) throws Exception {
    List<AgentPlugin> found = new ArrayList<>();
    ServiceLoader.load(AgentPlugin.class).forEach(found::add);
    return start(config, found);
  }

  /**
   * Starts an agent with the given plugins.
   *
   * @throws LabelClaim.HeldException with etcd, when another agent holds the label and this one is
   *     not a standby (nothing was applied)
   * @throws InterruptedException when a standby was stopped while waiting for its label
   */
  public static Agent start(AgentConfig config, List<AgentPlugin> plugins) throws Exception {
    return start(config, plugins, () -> false);
  }

  /**
   * {@link #start(AgentConfig)}, a standby giving up its wait once {@code stopRequested}, and
   * {@code onHeldLater} told when the label turns out to be held by another agent after the start
   * (when etcd did not answer the claim at start).
   */
  static Agent start(
      AgentConfig config,
      BooleanSupplier stopRequested,
      Consumer<LabelClaim.HeldException> onHeldLater)
      throws Exception {
    List<AgentPlugin> found = new ArrayList<>();
    ServiceLoader.load(AgentPlugin.class).forEach(found::add);
    Agent agent = new Agent(config, found);
    agent.stopRequested = stopRequested;
    agent.onHeldLater = onHeldLater;
    return start(agent);
  }

  private static Agent start(
      AgentConfig config, List<AgentPlugin> plugins, BooleanSupplier stopRequested)
      throws Exception {
    Agent agent = new Agent(config, plugins);
    agent.stopRequested = stopRequested;
    return start(agent);
  }

  private static Agent start(Agent agent) throws Exception {
    try {
      agent.run();
    } catch (Exception | Error e) {
      agent.close();
      throw e;
    }
    return agent;
  }

  private void run() throws Exception {
    // a probe that cannot run would roll back every confirmed commit: refused before anything
    ProbeRunner.checkPrograms(config.probes(), System.getenv());
    if (config.configDir() != null && Files.isDirectory(config.configDir())) {
      // parsed while the plugins and REST start; the file northbound takes what is unchanged
      documentsAhead = DocumentsAhead.start(config.configDir(), config.followExternalLinks());
    }
    claimLabel();
    if (config.stateDir() == null) {
      LOG.info(
          "state directory off (--state-dir off): what REST and gRPC push is kept in memory"
              + " only, and a restart's resync removes it from the southbound");
    } else {
      stateStore = StateStore.open(config.stateDir(), config.label(), models);
    }
    AgentContext ctx = context();
    for (AgentPlugin p : plugins) {
      LOG.info("init plugin {}", p.name());
      p.init(ctx);
      initialised.add(p);
    }
    for (AgentPlugin p : plugins) {
      p.afterInit(ctx);
    }
    if (stateStore != null) {
      restorePushed();
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
    running = true;
    stateChanged = Instant.now();
    LOG.info(
        "agent '{}' started with plugins {} and northbound {}",
        config.label(),
        plugins.stream().map(AgentPlugin::name).toList(),
        sources.stream().map(NorthboundSource::name).toList());
  }

  /**
   * Takes back what REST and gRPC pushed before the restart, before any source's first resync; when
   * no file or etcd source gives one, commits a resync of it here.
   */
  private void restorePushed() throws Exception {
    StateStore.Restored restored = stateStore.read();
    Optional<String> unconfirmed = stateStore.unconfirmed();
    unconfirmed.ifPresent(
        what ->
            LOG.warn(
                "rollback: not confirmed before the agent stopped: {}; the configuration before it"
                    + " is restored",
                what));
    orchestrator.keep(stateStore, restored.bySource(), restored.labels());
    LOG.info(
        "state store {}: {} value(s) pushed over REST and gRPC restored {}",
        stateStore.file(),
        restored.values(),
        restored.bySource().entrySet().stream()
            .map(e -> e.getKey() + " " + e.getValue().size())
            .toList());
    boolean firstResyncFromSources =
        config.configDir() != null || !config.etcdEndpoints().isEmpty();
    if (!restored.bySource().isEmpty() && !firstResyncFromSources) {
      try {
        orchestrator
            .resyncAll(
                unconfirmed.isPresent()
                    ? "resync from the state store (rollback: not confirmed before the agent"
                        + " stopped)"
                    : "resync from the state store")
            .get();
      } catch (ExecutionException e) {
        // values that failed stay desired and are retried, as after any resync
        LOG.warn("the resync from the state store failed: {}", e.getCause().getMessage());
      }
    }
    if (unconfirmed.isPresent()) {
      stateStore.clearUnconfirmed();
      metrics.commitEnded("rolled_back");
    }
  }

  /**
   * With etcd, claims the label before anything is applied: another agent holding it stops the
   * start (or, with standby, makes it wait). When etcd cannot be reached or refuses the claim, the
   * agent starts and its etcd northbound applies nothing until it has claimed the label.
   */
  private void claimLabel() throws Exception {
    if (config.etcdEndpoints().isEmpty()) {
      return;
    }
    LabelClaim claim = new LabelClaim(config.label(), config.etcdEndpoints(), config.etcd());
    labelClaim = claim;
    // a first request of a new client may be slow (connection, TLS): an attempt without an
    // answer is tried again while dial-timeout + operation-timeout allows (a standby: until etcd
    // answers)
    long deadline =
        System.nanoTime()
            + config.etcd().dialTimeout().plus(config.etcd().requestTimeout()).toNanos();
    LabelClaim.Holder holder;
    while (true) {
      try {
        holder = claim.tryClaim();
        break;
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        // a standby waits anyway: it starts only once etcd has answered
        if (noAnswer(e) && (config.standby() || System.nanoTime() < deadline)) {
          if (stopRequested.getAsBoolean()) {
            throw new InterruptedException("stopped while waiting for etcd");
          }
          Thread.sleep(200);
          continue;
        }
        claim.failed(e);
        if (!config.standby()) {
          // when etcd answers later and another agent holds the label, this one gives up
          claim.onHeldBeforeClaimed(onHeldLater);
        }
        LOG.warn(
            "etcd: cannot claim label '{}' yet ({}); nothing from etcd is applied until it is"
                + " claimed",
            config.label(),
            EtcdClients.explain(e, config.etcd(), config.agentPrefix()));
        return;
      }
    }
    if (holder == null) {
      return;
    }
    if (!config.standby()) {
      throw new LabelClaim.HeldException(config.label(), claim.key(), holder, true);
    }
    claim.awaitClaim(holder, stopRequested);
  }

  /** Whether etcd gave no answer (none in time, or no endpoint reachable), as opposed to a no. */
  private static boolean noAnswer(Exception e) {
    Throwable c = EtcdClients.unwrap(e);
    if (c instanceof java.util.concurrent.TimeoutException) {
      return true;
    }
    io.grpc.StatusRuntimeException s = EtcdClients.find(c, io.grpc.StatusRuntimeException.class);
    return (s != null && s.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE)
        || String.valueOf(c.getMessage()).contains("UNAVAILABLE");
  }

  /** With etcd, this agent's claim on its label (its state for the REST API); else null. */
  LabelClaim labelClaim() {
    return labelClaim;
  }

  private AgentContext context() {
    return new AgentContext() {
      @Override
      public KVScheduler scheduler() {
        return kvs;
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

  /** Confirmed commits: pending, confirm, roll back. */
  public ConfirmedCommits confirmations() {
    return confirmations;
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

  /** The input the northbound sources rejected or ignored, as it stands now. */
  public NorthboundProblems problems() {
    return problems;
  }

  /** The config files parsed while the agent started, or null (see {@link DocumentsAhead}). */
  DocumentsAhead documentsAhead() {
    return documentsAhead;
  }

  /** When the agent started. */
  public Instant startTime() {
    return startTime;
  }

  /** Whether every source has started and the agent is not stopping. */
  public boolean running() {
    return running;
  }

  /**
   * What {@code GET /readiness} and {@code /liveness} report: OK once every plugin and source has
   * started, INIT while starting and stopping.
   */
  ProbeRoutes.Health health() {
    ProbeRoutes.State state = running ? ProbeRoutes.State.OK : ProbeRoutes.State.INIT;
    Map<String, ProbeRoutes.State> parts = new LinkedHashMap<>();
    // both lists are complete before the REST API (the first source) starts
    plugins.forEach(p -> parts.put(p.name(), state));
    List.copyOf(sources).forEach(s -> parts.put(s.name(), state));
    return new ProbeRoutes.Health(state, startTime, stateChanged, parts);
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
    running = false;
    stateChanged = Instant.now();
    LOG.info(
        "agent '{}' stopping: northbound {} first, then plugins and the scheduler",
        config.label(),
        sources.stream().map(NorthboundSource::name).toList());
    if (documentsAhead != null) {
      documentsAhead.close();
    }
    for (int i = sources.size() - 1; i >= 0; i--) {
      try {
        sources.get(i).close();
      } catch (RuntimeException e) {
        LOG.error("closing {} northbound failed", sources.get(i).name(), e);
      }
    }
    // a pending confirmed commit stays unconfirmed: the next start applies what came before it
    confirmTimer.shutdownNow();
    probeExecutor.shutdownNow();
    for (int i = initialised.size() - 1; i >= 0; i--) {
      try {
        initialised.get(i).close();
      } catch (Exception e) {
        LOG.error("closing plugin {} failed", initialised.get(i).name(), e);
      }
    }
    if (stateStore != null) {
      stateStore.close();
    }
    statusEvents.close();
    metrics.close();
    kvs.close();
    LabelClaim claim = labelClaim;
    if (claim != null) {
      // last: a standby takes over only once this agent no longer changes anything
      claim.close();
    }
    LOG.info("agent '{}' stopped", config.label());
    logTail.detach();
  }
}
