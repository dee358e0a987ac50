package io.kvscheduler.agent.internal.northbound;

import static io.kvscheduler.agent.internal.etcd.EtcdClients.await;
import static io.kvscheduler.agent.internal.etcd.EtcdClients.bytes;
import static io.kvscheduler.agent.internal.etcd.EtcdClients.describe;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.kvscheduler.agent.EtcdSettings;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import io.kvscheduler.agent.internal.etcd.EtcdStatusPublisher;
import io.kvscheduler.agent.internal.etcd.LabelClaim;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd northbound (vpp-agent's kvdbsync over etcd), with jetcd.
 *
 * <ul>
 *   <li>Keys are read under the agent prefix {@code /vnf-agent/<label>/}; the watched prefixes are
 *       {@code <agent prefix><class>/} for every class of the registered models (normally just
 *       {@code config/}), so the keys the agent writes back ({@code config-status/…}, {@code
 *       check/…}) are never read. Keys are handed to the scheduler relative to the agent prefix.
 *   <li>Startup: one consistent read at revision R (the first prefix's read fixes R, the others
 *       read at R), every key of a registered model is decoded, and one {@link Northbound#resync}
 *       with source {@code etcd} is delivered; then a watch from R+1, so no event is lost or
 *       applied twice.
 *   <li>Each watch event becomes one {@link Northbound#change} (PUT = decoded value, DELETE =
 *       null).
 *   <li>A value that cannot be decoded (malformed JSON, unknown field, key/value mismatch) or a key
 *       of no model is logged as an error naming the key and the cause and skipped; the rest is
 *       applied. Rejected keys are listed by {@link #rejected()} until they are fixed or deleted.
 *   <li>At rest, nothing is read: etcd's answers to the lease keep-alives of the status publisher
 *       (every third of the TTL) and the watch events tell that it is there. The connection is
 *       probed with a read (tried on up to 3 endpoints) only when there is doubt: a watch ended, a
 *       write or the keep-alive stream of the status publisher failed (etcd out of reach, the
 *       credentials refused), or etcd has not answered for a keep-alive interval plus the request
 *       timeout (a silent partition). A watch that ends while etcd still answers (its member died,
 *       its connection was cut) is resumed from the revision after the last event delivered:
 *       nothing is lost or applied twice, and no resync is needed. When etcd does not answer, or
 *       compacted the history a watch needs to resume, the watches are cancelled and, once etcd
 *       answers again (retried with back-off), one full resync is done and the watches restart from
 *       its revision.
 *   <li>If etcd cannot be reached at start, the agent starts anyway and keeps retrying in the
 *       background (vpp-agent's {@code allow-delayed-start}).
 *   <li>The connection follows {@link EtcdSettings}: TLS with a CA and a client certificate,
 *       username and password, dial and request timeouts (every request and probe is bounded by the
 *       request timeout, so an endpoint that accepts connections and never answers cannot hang the
 *       agent). A refused password or an untrusted certificate is logged naming the cause and the
 *       settings to check; the agent keeps what it applied and keeps retrying.
 * </ul>
 *
 * With a {@link LabelClaim} ({@link #claim}), nothing is read or written under the prefix while
 * this agent does not hold its label: every resync first claims it, and a lost claim cancels the
 * watches (no change is delivered after it) and pauses the status keys until a resync has claimed
 * the label again.
 *
 * <p>Also writes back, when enabled, the value statuses ({@code config-status/…}) and always the
 * agent status ({@code check/status/v1/agent}), under the agent's lease: see {@link
 * EtcdStatusPublisher}.
 *
 * <p>Why one class of this size: the first read, the resyncs, the watches and the connection loop
 * share one lock and one generation counter, which is what guarantees that no event of an older
 * watch is delivered after a newer resync; splitting them would spread that invariant.
 *
 * <p>Threads: jetcd calls the watch listeners on its event loop, which also completes every request
 * of the client, and it calls them while holding a lock of its own (closing a watch calls {@code
 * onCompleted} inside it). A listener therefore never waits: it hands the event to one thread of
 * this source ({@code etcd-watch-<label>}), which delivers events in the order they came, under the
 * lock. Taking the lock on the event loop would let a thread that holds it and closes a watch, or
 * waits for a read, wait for the event loop for ever.
 */
public final class EtcdNorthbound implements NorthboundSource {
  private static final Logger LOG = LoggerFactory.getLogger(EtcdNorthbound.class);

  /** Source label in the orchestrator. */
  public static final String SOURCE = "etcd";

  /** How often the worker looks whether etcd has been quiet for too long (no request). */
  private static final Duration CHECK_INTERVAL = Duration.ofSeconds(1);

  /** A resumed watch that ends again sooner than this counts as an outage. */
  private static final Duration WATCH_FLAP = Duration.ofSeconds(1);

  /** Slack added to the keep-alive interval and the request timeout before etcd counts as quiet. */
  private static final Duration QUIET_SLACK = Duration.ofSeconds(1);

  private static final Duration INITIAL_RESYNC_WAIT = Duration.ofSeconds(30);
  private static final long BACKOFF_MIN_MS = 100;
  private static final long BACKOFF_MAX_MS = 2000;

  /**
   * During an outage the client is replaced this often: gRPC's own reconnection back-off grows to
   * minutes, a new client tries at once, so etcd is found within seconds of coming back.
   */
  private static final Duration RENEW_CLIENT_EVERY = Duration.ofSeconds(5);

  private final String label;
  private final String agentPrefix;
  private final List<String> endpoints;
  private final EtcdSettings settings;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final KVScheduler kvs;
  private final boolean statusPublishing;

  /** Guards the generation, the watchers, delivery of events and resyncs. */
  private final Object lock = new Object();

  private long generation;
  private final Map<String, PrefixWatch> watches = new HashMap<>();
  private final Map<String, String> rejected = Collections.synchronizedMap(new TreeMap<>());
  private final BlockingQueue<WatchEnd> troubles = new LinkedBlockingQueue<>();

  /** In {@link #troubles}: a write or keep-alive of the status publisher failed: probe etcd. */
  private static final WatchEnd CHECK = new WatchEnd(-2, null, 0, null, 0, false);

  /** {@link System#nanoTime} of etcd's last answer seen here: a probe, a resync, a watch event. */
  private volatile long lastAnswer = System.nanoTime();

  /** Probes of the connection done (read by tests: none while etcd answers and all is quiet). */
  private volatile long probeCount;

  /** {@link System#nanoTime} of the last probe's start (the worker's only). */
  private long lastProbe = System.nanoTime() - CHECK_INTERVAL.toNanos();

  private final CountDownLatch stopped = new CountDownLatch(1);

  /** Delivers the watch listeners' events in order, off jetcd's event loop. */
  private final ExecutorService watchEvents;

  private volatile Client client;
  private volatile EtcdStatusPublisher publisher;
  private volatile Thread worker;
  private volatile boolean closed;
  private volatile long revision;
  private volatile long resyncCount;
  private volatile long resumedCount;
  private volatile List<String> pluginNames = List.of();
  private volatile NorthboundProblems problems;
  private volatile SourceEvents events = SourceEvents.NONE;
  private volatile LabelClaim claim;

  /** Set when the claim of the label was lost, until a resync claimed it again. */
  private volatile boolean claimLost;

  /** The value last accepted for each key (by resync or watch): kept when an update is rejected. */
  private final Map<String, Object> accepted = new HashMap<>();

  /**
   * @param label microservice label (agent prefix {@code /vnf-agent/<label>/})
   * @param endpoints etcd endpoints, {@code host:port} or URLs
   * @param settings TLS, credentials, timeouts and lease TTL
   * @param models the registered models (read when the source starts)
   * @param northbound where values are delivered
   * @param kvs the scheduler, whose value statuses are published
   * @param statusPublishing whether {@code config-status/…} keys are written
   */
  public EtcdNorthbound(
      String label,
      List<String> endpoints,
      EtcdSettings settings,
      ModelRegistry models,
      Northbound northbound,
      KVScheduler kvs,
      boolean statusPublishing) {
    this.label = Objects.requireNonNull(label, "label");
    this.agentPrefix = "/vnf-agent/" + label + "/";
    this.endpoints = List.copyOf(endpoints);
    this.settings = Objects.requireNonNull(settings, "settings");
    if (this.endpoints.isEmpty()) {
      throw new IllegalArgumentException("no etcd endpoints");
    }
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    this.kvs = Objects.requireNonNull(kvs, "kvs");
    this.statusPublishing = statusPublishing;
    this.watchEvents =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "etcd-watch-" + label);
              t.setDaemon(true);
              return t;
            });
  }

  @Override
  public String name() {
    return SOURCE;
  }

  /** The agent prefix, {@code /vnf-agent/<label>/}. */
  public String agentPrefix() {
    return agentPrefix;
  }

  /** The etcd revision of the last full resync (0 before the first); read by tests. */
  long resyncRevision() {
    return revision;
  }

  /** How many full resyncs were delivered (1 after a normal start, +1 per reconnection). */
  public long resyncCount() {
    return resyncCount;
  }

  /** How many times a watch that ended was resumed where it stopped, without a resync. */
  public long resumedCount() {
    return resumedCount;
  }

  /** Keys (relative to the agent prefix) whose current etcd value was rejected, with the cause. */
  public Map<String, String> rejected() {
    synchronized (rejected) {
      return Map.copyOf(rejected);
    }
  }

  /** Names of the agent's plugins, listed in {@code check/status/v1/agent}; call before start. */
  public EtcdNorthbound pluginNames(List<String> names) {
    this.pluginNames = List.copyOf(names);
    return this;
  }

  /**
   * Where the keys whose value is rejected now are listed (cleared when fixed or deleted), and
   * whence status publishing writes them to etcd; call before start.
   */
  public EtcdNorthbound problems(NorthboundProblems problems) {
    this.problems = Objects.requireNonNull(problems, "problems");
    return this;
  }

  /** The claim of the label that gates what is read and written; call before start. */
  public EtcdNorthbound claim(LabelClaim labelClaim) {
    this.claim = labelClaim;
    return this;
  }

  /** Where rejected values and reconnects are reported; call before start. */
  public EtcdNorthbound events(SourceEvents events) {
    this.events = Objects.requireNonNull(events, "events");
    return this;
  }

  /**
   * Connects (in the background if etcd does not answer) and does the first resync.
   *
   * @throws IllegalArgumentException when the TLS files cannot be used (naming the file)
   */
  @Override
  public void start() {
    client = EtcdClients.create(endpoints, settings);
    EtcdStatusPublisher pub =
        new EtcdStatusPublisher(
            client,
            label,
            agentPrefix,
            kvs,
            statusPublishing,
            pluginNames,
            settings.requestTimeout(),
            settings.leaseTtl());
    if (problems != null) {
      NorthboundProblems registry = problems;
      pub.publishProblems(registry::json, registry::listen);
      pub.publishNotes(registry::note, registry::keptKeys, registry::listen);
    }
    pub.onTrouble(() -> troubles.add(CHECK));
    publisher = pub;
    LabelClaim c = claim;
    if (c != null) {
      if (!c.isOwner()) {
        pub.pause(true); // nothing is written before the label is claimed
      }
      c.onLost(this::claimLost);
    }
    pub.start();

    boolean synced = false;
    try {
      CompletableFuture<Long> txn = sync();
      synced = true;
      try {
        txn.get(INITIAL_RESYNC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        LOG.error("etcd: the resync transaction failed: {}", e.getCause().getMessage());
      } catch (TimeoutException e) {
        LOG.warn("etcd: the resync transaction did not finish within {}", INITIAL_RESYNC_WAIT);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      LOG.warn(
          "etcd: cannot read {} from {} ({}); the agent starts without it and keeps" + " retrying",
          agentPrefix,
          endpoints,
          whyNotSynced(e));
    }
    boolean initiallySynced = synced;
    Thread t = new Thread(() -> loop(initiallySynced), "etcd-nb-" + label);
    t.setDaemon(true);
    worker = t;
    t.start();
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Thread t = worker;
    if (t != null) {
      t.interrupt();
      try {
        stopped.await(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    synchronized (lock) {
      generation++;
      cancelWatchersLocked();
    }
    watchEvents.shutdown();
    EtcdStatusPublisher pub = publisher;
    if (pub != null) {
      pub.close();
    }
    Client c = client;
    if (c != null) {
      c.close();
    }
    LOG.info("etcd northbound of {} closed", agentPrefix);
  }

  // --- worker -------------------------------------------------------------------------------

  private void loop(boolean synced) {
    long backoff = BACKOFF_MIN_MS;
    boolean outageLogged = false;
    String lastWhy = null;
    long renewedAt = System.nanoTime();
    try {
      while (!closed) {
        if (!synced) {
          try {
            sync();
            synced = true;
            // the failures of the status publisher during the outage are answered by the resync
            troubles.removeIf(t -> t == CHECK);
            backoff = BACKOFF_MIN_MS;
            if (outageLogged) {
              LOG.info("etcd: {} answers again; resynced at revision {}", endpoints, revision);
            }
            outageLogged = false;
            lastWhy = null;
            publisher.reconnected();
            events.reconnected(SOURCE);
          } catch (InterruptedException e) {
            return;
          } catch (Exception e) {
            if (closed) {
              return;
            }
            String why = whyNotSynced(e);
            if (!outageLogged || !why.equals(lastWhy)) {
              LOG.warn("etcd: cannot resync from {} ({}); retrying", endpoints, why);
              outageLogged = true;
              lastWhy = why;
            }
            if (System.nanoTime() - renewedAt > RENEW_CLIENT_EVERY.toNanos()) {
              renewClient();
              renewedAt = System.nanoTime();
            }
            Thread.sleep(backoff);
            backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
            continue;
          }
        }
        WatchEnd end = troubles.poll(CHECK_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
        String why = null;
        try {
          if (end == CHECK) {
            // a publisher that fails again and again (a user who may read but not write)
            // costs one probe per CHECK_INTERVAL at most
            why = System.nanoTime() - lastProbe < CHECK_INTERVAL.toNanos() ? null : probe();
          } else if (end == null && quiet()) {
            why = probe();
          } else if (end != null && end.prefix() == null) {
            // unless a resync since (after an outage) claimed the label again
            why =
                claimLost
                    ? "the claim of label '" + label + "' was lost: etcd changes are not applied"
                    : null;
          } else if (end != null && end.generation() == currentGeneration()) {
            why = resume(end);
          }
        } catch (RuntimeException e) {
          // the client refused the request (closed, shutting down): the worker lives on and
          // starts again from a full resync
          why = "watching " + agentPrefix + " failed (" + explain(e) + ")";
        }
        if (why != null && !closed) {
          LOG.warn("etcd: {}; full resync when etcd answers", why);
          outageLogged = true;
          synchronized (lock) {
            generation++;
            cancelWatchersLocked();
          }
          synced = false;
          renewedAt = System.nanoTime();
        }
      }
    } catch (InterruptedException e) {
      // closing
    } finally {
      stopped.countDown();
    }
  }

  /** Why a resync failed: the label held by another agent, or what went wrong talking to etcd. */
  private String whyNotSynced(Throwable t) {
    Throwable c = EtcdClients.unwrap(t);
    if (c instanceof LabelClaim.HeldException held) {
      return held.getMessage() + "; nothing from etcd is applied until this agent holds it";
    }
    return explain(c);
  }

  /**
   * The claim was lost (on a thread of the claim or of jetcd: no lock is taken here): changes stop
   * being delivered at once, statuses are no longer written, and the worker resyncs once the label
   * is claimed again.
   */
  private void claimLost() {
    claimLost = true;
    EtcdStatusPublisher pub = publisher;
    if (pub != null) {
      pub.pause(true);
    }
    troubles.add(new WatchEnd(-1, null, 0, null, System.nanoTime(), false));
  }

  /** What went wrong talking to etcd (see {@link EtcdClients#explain}). */
  private String explain(Throwable t) {
    return EtcdClients.explain(t, settings, agentPrefix);
  }

  /** Replaces the client by a new one with the same settings (during an outage). */
  private void renewClient() {
    Client old = client;
    Client fresh;
    try {
      fresh = EtcdClients.create(endpoints, settings);
    } catch (RuntimeException e) {
      LOG.warn("etcd: cannot create a new client ({}); keeping the old one", e.getMessage());
      return;
    }
    client = fresh;
    publisher.useClient(fresh);
    try {
      old.close();
    } catch (RuntimeException e) {
      LOG.debug("etcd: closing the old client failed ({})", describe(e));
    }
    LOG.debug("etcd: new client for {} (the outage goes on)", endpoints);
  }

  private long currentGeneration() {
    synchronized (lock) {
      return generation;
    }
  }

  /**
   * Whether etcd has not answered for longer than it does at rest: the status publisher's lease is
   * kept alive every third of the TTL, so no answer (keep-alive, write, watch event, probe) for
   * that long plus the request timeout means etcd may be out of reach, and is probed.
   */
  private boolean quiet() {
    EtcdStatusPublisher pub = publisher;
    long last = Math.max(lastAnswer, pub == null ? lastAnswer : pub.lastAnswer());
    Duration limit =
        (pub == null ? Duration.ofSeconds(1) : pub.answerInterval())
            .plus(settings.requestTimeout())
            .plus(QUIET_SLACK);
    return System.nanoTime() - last > limit.toNanos();
  }

  /** How many times the connection was probed (read by tests). */
  long probeCount() {
    return probeCount;
  }

  /**
   * Null when etcd answers a (linearizable) read within the request timeout, else what went wrong.
   * Tried once per endpoint (at most 3): requests go round the endpoints, so one member that cannot
   * answer (just restarted, cut off from the others) does not count as an outage.
   */
  private String probe() throws InterruptedException {
    String why = null;
    probeCount++;
    lastProbe = System.nanoTime();
    for (int attempt = 0; attempt < Math.min(3, endpoints.size()) && !closed; attempt++) {
      CompletableFuture<GetResponse> f =
          client
              .getKVClient()
              .get(bytes(agentPrefix), GetOption.builder().withCountOnly(true).build());
      try {
        f.get(settings.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        lastAnswer = System.nanoTime();
        return null;
      } catch (ExecutionException e) {
        f.cancel(true);
        why = "connection to " + endpoints + " lost: etcd does not answer (" + explain(e) + ")";
      } catch (TimeoutException e) {
        f.cancel(true);
        why =
            "connection to "
                + endpoints
                + " lost: etcd does not answer within"
                + " operation-timeout "
                + settings.requestTimeout().toMillis()
                + " ms";
      }
    }
    return why;
  }

  /**
   * A watch ended: resumes it where it stopped when etcd still answers and still has the history
   * from there. Returns null when resumed, else why a full resync is needed: etcd does not answer,
   * the history was compacted past the watch's revision, or the watch ends again and again.
   */
  private String resume(WatchEnd end) throws InterruptedException {
    CompactedException compacted = EtcdClients.find(end.cause(), CompactedException.class);
    if (compacted != null) {
      return "the watch of "
          + end.prefix()
          + " cannot resume from revision "
          + end.resumeFrom()
          + ": etcd compacted its history up to revision "
          + compacted.getCompactedRevision();
    }
    String cause = end.cause() == null ? "the watch was closed by etcd" : explain(end.cause());
    long now = System.nanoTime();
    if (end.wasResumed() && now - end.started() < WATCH_FLAP.toNanos()) {
      return "the watch of " + end.prefix() + " ended again right after it started (" + cause + ")";
    }
    String down = probe();
    if (down != null) {
      return down + " (the watch of " + end.prefix() + " ended: " + cause + ")";
    }
    synchronized (lock) {
      if (end.generation() != generation || closed) {
        return null;
      }
      PrefixWatch old = watches.remove(end.prefix());
      if (old != null) {
        old.cancel();
      }
      watches.put(
          end.prefix(), new PrefixWatch(end.generation(), end.prefix(), end.resumeFrom(), true));
    }
    resumedCount++;
    LOG.info(
        "etcd: watch of {} resumed from revision {} ({})", end.prefix(), end.resumeFrom(), cause);
    return null;
  }

  /**
   * One consistent read of every watched prefix, one resync, and watches from the next revision;
   * all under the lock so that no event of an older watch is delivered in between.
   */
  private CompletableFuture<Long> sync() throws Exception {
    LabelClaim c = claim;
    if (c != null) {
      c.ensureOwner(); // throws when another agent holds the label
      claimLost = false;
      publisher.pause(false);
    }
    List<String> prefixes = watchedPrefixes();
    synchronized (lock) {
      generation++;
      cancelWatchersLocked();
      long gen = generation;
      long rev = 0;
      Map<String, Object> values = new TreeMap<>();
      Map<String, String> bad = new TreeMap<>();
      for (String prefix : prefixes) {
        GetOption.Builder opt = GetOption.builder().isPrefix(true);
        if (rev > 0) {
          opt.withRevision(rev);
        }
        GetResponse resp =
            await(client.getKVClient().get(bytes(prefix), opt.build()), settings.requestTimeout());
        if (rev == 0) {
          rev = resp.getHeader().getRevision();
        }
        for (KeyValue kv : resp.getKvs()) {
          String key = relative(kv.getKey());
          try {
            values.put(key, decode(key, kv.getValue()));
          } catch (ModelException e) {
            bad.put(key, e.getMessage());
          }
        }
      }
      synchronized (rejected) {
        rejected.clear();
        rejected.putAll(bad);
      }
      // a rejected key keeps the value last accepted for it, as a rejected change does: the
      // same etcd content gives the same configuration whether it came by watch or by resync
      synchronized (accepted) {
        bad.forEach(
            (key, msg) -> {
              events.valueRejected(SOURCE, SourceEvents.reasonFor(models, key));
              Object kept = accepted.get(key);
              if (kept != null) {
                values.put(key, kept);
                LOG.error(
                    "etcd: skipping {}{} (the value accepted before stays)", agentPrefix, msg);
              } else {
                LOG.error("etcd: skipping {}{}", agentPrefix, msg);
              }
            });
        accepted.clear();
        accepted.putAll(values);
      }
      LOG.info(
          "etcd: resync of {} value(s) from {} at revision {}{}",
          values.size(),
          agentPrefix,
          rev,
          bad.isEmpty() ? "" : " (" + bad.size() + " rejected)");
      CompletableFuture<Long> txn = northbound.resync(SOURCE, values);
      publishProblems();
      Set<String> touched = new TreeSet<>(values.keySet());
      touched.addAll(bad.keySet());
      markApplied(txn, rev, touched);
      revision = rev;
      resyncCount++;
      lastAnswer = System.nanoTime();
      for (String prefix : prefixes) {
        watches.put(prefix, new PrefixWatch(gen, prefix, rev + 1, false));
      }
      return txn;
    }
  }

  /**
   * Lists the keys whose etcd value is rejected now in the problems registry; a key whose value
   * accepted before stays applied says so, and that a restart would not apply it.
   */
  private void publishProblems() {
    NorthboundProblems registry = problems;
    if (registry == null) {
      return;
    }
    Map<String, String> now;
    synchronized (rejected) {
      now = new TreeMap<>(rejected);
    }
    List<NorthboundProblems.Problem> list = new ArrayList<>();
    synchronized (accepted) {
      now.forEach(
          (key, msg) -> {
            boolean kept = accepted.containsKey(key);
            String message =
                msg
                    + (kept
                        ? " (the value accepted before stays applied; a restart would not apply"
                            + " it until the value in etcd is fixed)"
                        : " (not applied)");
            NorthboundProblems.Problem p =
                NorthboundProblems.Problem.of(SOURCE, null, key, 0, 0, message);
            list.add(kept ? p.keeping(Set.of(key)) : p);
          });
    }
    registry.replace(SOURCE, list);
  }

  /**
   * Decodes the value stored under {@code key} (relative to the agent prefix): a leading byte order
   * mark is skipped, a key with an empty name is called that.
   */
  private Object decode(String key, ByteSequence value) throws ModelException {
    ConfigFormat.checkKey(models, key);
    return models.decode(key, ConfigDocument.withoutBom(value.toString(StandardCharsets.UTF_8)));
  }

  /** A watch that ended: of which generation and prefix, from where it can resume, why. */
  private record WatchEnd(
      long generation,
      String prefix,
      long resumeFrom,
      Throwable cause,
      long started,
      boolean wasResumed) {}

  /**
   * The watch of one prefix from a revision on (created under the lock). Events at or below the
   * last delivered revision are dropped (a replay); once it ends or is cancelled it delivers
   * nothing more, and its end is reported once with the revision to resume from.
   */
  private final class PrefixWatch implements Watch.Listener {
    private final long gen;
    private final String prefix;
    private final long started = System.nanoTime();
    private final boolean resumed;
    private final Watch.Watcher watcher;
    private long delivered; // guarded by lock
    private boolean active = true; // guarded by lock

    PrefixWatch(long gen, String prefix, long fromRevision, boolean resumed) {
      this.gen = gen;
      this.resumed = resumed;
      this.prefix = prefix;
      this.delivered = fromRevision - 1;
      WatchOption opt = WatchOption.builder().isPrefix(true).withRevision(fromRevision).build();
      this.watcher = client.getWatchClient().watch(bytes(prefix), opt, this);
    }

    @Override
    public void onNext(WatchResponse response) {
      lastAnswer = System.nanoTime();
      later(
          () -> {
            synchronized (lock) {
              if (active) {
                delivered = deliver(gen, response, delivered);
              }
            }
          });
    }

    @Override
    public void onError(Throwable t) {
      later(() -> ended(t));
    }

    @Override
    public void onCompleted() {
      later(() -> ended(null));
    }

    /** Runs {@code event} on the source's event thread (nothing once the source is closed). */
    private void later(Runnable event) {
      try {
        watchEvents.execute(
            () -> {
              try {
                event.run();
              } catch (RuntimeException e) {
                LOG.error("etcd: delivering a watch event of {} failed", prefix, e);
              }
            });
      } catch (RejectedExecutionException e) {
        LOG.debug("etcd: watch event of {} after close dropped", prefix);
      }
    }

    private void ended(Throwable t) {
      synchronized (lock) {
        if (!active || gen != generation || closed) {
          return;
        }
        active = false;
        LOG.warn(
            "etcd: watch of {} ended at revision {}: {}",
            prefix,
            delivered,
            t == null ? "closed by etcd" : explain(t));
        troubles.add(new WatchEnd(gen, prefix, delivered + 1, t, started, resumed));
      }
    }

    /** Stops delivering and closes the jetcd watch (under the lock). */
    void cancel() {
      active = false;
      try {
        watcher.close();
      } catch (RuntimeException e) {
        LOG.debug("etcd: closing a watch failed", e);
      }
    }
  }

  /** Delivers the events of a response (under the lock); returns the last revision delivered. */
  private long deliver(long gen, WatchResponse response, long delivered) {
    synchronized (lock) {
      if (gen != generation || closed || claimLost) {
        return delivered;
      }
      long last = delivered;
      List<CompletableFuture<Long>> txns = new ArrayList<>();
      Set<String> touched = new TreeSet<>();
      for (WatchEvent ev : response.getEvents()) {
        long rev = ev.getKeyValue().getModRevision();
        if (rev <= delivered) {
          LOG.debug("etcd: dropping replayed event at revision {}", rev);
          continue;
        }
        last = Math.max(last, rev);
        String key = relative(ev.getKeyValue().getKey());
        touched.add(key);
        Map<String, Object> change = new HashMap<>(2);
        switch (ev.getEventType()) {
          case PUT -> {
            try {
              Object value = decode(key, ev.getKeyValue().getValue());
              change.put(key, value);
              rejected.remove(key);
              synchronized (accepted) {
                accepted.put(key, value);
              }
            } catch (ModelException e) {
              rejected.put(key, e.getMessage());
              events.valueRejected(SOURCE, SourceEvents.reasonFor(models, key));
              LOG.error("etcd: skipping change of {}{}", agentPrefix, e.getMessage());
              continue;
            }
          }
          case DELETE -> {
            boolean wasRejected = rejected.remove(key) != null;
            if (models.forKey(key).isEmpty()) {
              if (!wasRejected) {
                LOG.debug("etcd: ignoring delete of {} (no model)", key);
              }
              continue;
            }
            change.put(key, null);
            synchronized (accepted) {
              accepted.remove(key);
            }
          }
          default -> {
            continue;
          }
        }
        txns.add(northbound.change(SOURCE, change));
      }
      publishProblems();
      if (last > delivered) {
        markApplied(CompletableFuture.allOf(txns.toArray(CompletableFuture[]::new)), last, touched);
      }
      return last;
    }
  }

  /**
   * Once {@code txn} has ended, tells the status publisher that the configuration is applied up to
   * {@code revision} (its marker is written after the statuses of {@code keys}).
   */
  private void markApplied(CompletableFuture<?> txn, long revision, Set<String> keys) {
    EtcdStatusPublisher pub = publisher;
    if (pub == null) {
      return;
    }
    // also when the transaction ended in an error (a value INVALID or FAILED): the statuses
    // say what became of each value
    txn.whenComplete(
        (r, err) -> {
          try {
            pub.applied(revision, keys);
          } catch (RuntimeException e) {
            LOG.warn("etcd: cannot note revision {} as applied ({})", revision, e.toString());
          }
        });
  }

  private void cancelWatchersLocked() {
    watches.values().forEach(PrefixWatch::cancel);
    watches.clear();
  }

  /** {@code <agent prefix><class>/} for each class of the registered models, sorted. */
  List<String> watchedPrefixes() {
    Set<String> out = new LinkedHashSet<>();
    models.models().stream()
        .map(Model::modelClass)
        .sorted()
        .forEach(c -> out.add(agentPrefix + c + "/"));
    return List.copyOf(out);
  }

  private String relative(ByteSequence key) {
    String k = key.toString(StandardCharsets.UTF_8);
    return k.startsWith(agentPrefix) ? k.substring(agentPrefix.length()) : k;
  }
}
