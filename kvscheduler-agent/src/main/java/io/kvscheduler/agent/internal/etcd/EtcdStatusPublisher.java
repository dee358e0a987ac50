package io.kvscheduler.agent.internal.etcd;

import static io.kvscheduler.agent.internal.etcd.EtcdClients.await;
import static io.kvscheduler.agent.internal.etcd.EtcdClients.bytes;
import static io.kvscheduler.agent.internal.etcd.EtcdClients.describe;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the agent's state back into etcd, as vpp-agent does (keys relative to the agent prefix):
 *
 * <ul>
 *   <li>{@code check/status/v1/agent}: the agent status ({@code status.AgentStatus} as protojson
 *       with proto names: {@code build_version}, {@code state} {@code OK}, {@code start_time},
 *       {@code last_change}, {@code last_update} as strings of unix seconds); always written when
 *       etcd is used (cn-infra's statuscheck). Written when it changes: on start, and again with
 *       every new lease (after a lost lease or a new client), {@code last_update} saying when. It
 *       is not rewritten at rest (vpp-agent rewrites it every 10 s as a heartbeat): it is written
 *       under the agent's lease, kept alive by keep-alives, so it vanishes when the agent dies, and
 *       the lease tells a reader that the agent is alive. On a clean shutdown it is rewritten as
 *       stopping ({@code state} {@code INIT}, every plugin {@code INIT} with {@code error} {@code
 *       "agent stopping"}: {@code OperationalState} has no stopping state, and INIT keeps it
 *       readable by vpp-agent's tools and means "not ready, not failed"), then the lease is revoked
 *       and the key is gone.
 *   <li>{@code config-status/<rest of the value key after the first "config/">}: the status of each
 *       base value ({@code ligato.kvscheduler.ValueStatus}: {@code key}, {@code state}, {@code
 *       error}, {@code last_operation}, {@code details}; zero values left out), only when status
 *       publishing is on. A value kept from before a rejected edit has the line naming the edit
 *       among its {@code details}, as in {@code GET /scheduler/status}. Written with a lease kept
 *       alive for the client's lifetime, so the keys vanish when the agent dies; deleted when the
 *       value is removed.
 *   <li>{@code check/status/v1/northbound-problems}: the input the northbound sources rejected or
 *       ignored (a JSON array of {@code GET /northbound/problems}' objects), only when status
 *       publishing is on and while there are problems; deleted when the last one is fixed.
 *   <li>{@code check/status/v1/applied}: ours, with status publishing only: {@code {"revision":
 *       R}}, the etcd revision up to which the agent has applied its configuration (a resync at R,
 *       or the changes of every event up to R committed). It is written after the statuses of the
 *       values those changes touched, so a reader that sees revision R or later and then reads
 *       {@code config-status/...} reads statuses no older than those changes (the rollout of {@code
 *       kvsctl fleet rollout} waits on it: a changed value whose status stays CONFIGURED writes no
 *       new status).
 * </ul>
 *
 * One thread does all writes, up to 64 keys per etcd transaction in the order they changed; what is
 * to be written is kept per key, so during an outage only the latest status of each key is
 * remembered and, after reconnection, every status is rewritten and stale ones deleted.
 */
public final class EtcdStatusPublisher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EtcdStatusPublisher.class);

  public static final String AGENT_STATUS_KEY = "check/status/v1/agent";
  public static final String STATUS_PREFIX = "config-status/";

  /** The etcd revision applied (see the class comment), written with status publishing. */
  public static final String APPLIED_KEY = "check/status/v1/applied";

  /** The northbound problems (a JSON array), written with status publishing while there are any. */
  public static final String PROBLEMS_KEY = "check/status/v1/northbound-problems";

  /** The {@code error} of every plugin in the agent status written on a clean shutdown. */
  public static final String STOPPING = "agent stopping";

  private static final long RETRY_MS = 500;

  /** Status keys written per etcd transaction (etcd allows 128 operations by default). */
  private static final int BATCH = 64;

  private volatile Client client;
  private final String label;
  private final String agentPrefix;
  private final KVScheduler kvs;
  private final boolean valueStatuses;
  private final ObjectMapper json = new ObjectMapper();
  private final long startTime = Instant.now().getEpochSecond();
  private final Duration requestTimeout;
  private final long leaseTtlSeconds;

  // guarded by this
  private final Map<String, String> desired = new HashMap<>();
  private final Set<String> dirty = new LinkedHashSet<>();
  private boolean reconcile = true;
  private boolean leaseLost = true;
  private boolean closed;
  private boolean paused;
  private long appliedRevision;

  private volatile long leaseId;
  private volatile CloseableClient keepAlive;

  /** {@link System#nanoTime} of etcd's last answer to this publisher (keep-alive or write). */
  private volatile long lastAnswer = System.nanoTime();

  /** Told when a write or the keep-alive stream fails (see {@link #onTrouble}). */
  private volatile Runnable onTrouble = () -> {};

  private volatile Subscription subscription;
  private volatile AutoCloseable problemsListener;
  private volatile AutoCloseable notesListener;

  /** The line added to a value's details (null for none); see {@link #publishNotes}. */
  private volatile Function<String, String> notes = key -> null;

  /** The value keys whose published status carries a note. Guarded by this. */
  private final Set<String> noted = new HashSet<>();

  private volatile Thread thread;

  private final List<String> plugins;

  public EtcdStatusPublisher(
      Client client,
      String label,
      String agentPrefix,
      KVScheduler kvs,
      boolean valueStatuses,
      List<String> plugins,
      Duration requestTimeout,
      Duration leaseTtl) {
    this.plugins = List.copyOf(plugins);
    this.requestTimeout = requestTimeout;
    this.leaseTtlSeconds = Math.max(1, leaseTtl.toSeconds());
    this.client = client;
    this.label = label;
    this.agentPrefix = agentPrefix;
    this.kvs = kvs;
    this.valueStatuses = valueStatuses;
  }

  public void start() {
    synchronized (this) {
      putAgentStatus();
    }
    if (valueStatuses) {
      subscription = kvs.watchValueStatus(KeySelector.any(), this::onStatus);
      kvs.valueStatuses().forEach(this::onStatus);
    }
    Thread t = new Thread(this::run, "etcd-status-" + label);
    t.setDaemon(true);
    thread = t;
    t.start();
  }

  /**
   * When etcd last answered this publisher ({@link System#nanoTime}): a keep-alive of its lease
   * (every third of the TTL while it holds one), a lease granted, or a write. Without an answer for
   * longer than {@link #answerInterval()} (plus the request timeout) etcd may be out of reach.
   */
  public long lastAnswer() {
    return lastAnswer;
  }

  /** How often etcd answers at rest: one keep-alive every third of the lease TTL. */
  public Duration answerInterval() {
    return Duration.ofMillis(leaseTtlSeconds * 1000 / 3);
  }

  /**
   * Called when etcd fails this publisher: a write or a lease grant fails (etcd out of reach, the
   * credentials refused), or the keep-alive stream of the lease fails (a connection cut). Called on
   * the publisher's thread or a thread of jetcd: {@code action} must not block. Call before start.
   */
  public void onTrouble(Runnable action) {
    this.onTrouble = Objects.requireNonNull(action, "action");
  }

  private void trouble() {
    try {
      onTrouble.run();
    } catch (RuntimeException e) {
      LOG.warn("etcd: reacting to a failure of the status publisher failed", e);
    }
  }

  /**
   * From now on, writes go through {@code c} (a new client after a long outage): the lease kept
   * alive by the old one is taken as lost, so a new one is granted and every status rewritten.
   */
  public synchronized void useClient(Client c) {
    client = c;
    leaseLost = true;
    notifyAll();
  }

  /**
   * Writes the northbound problems under {@link #PROBLEMS_KEY} while there are any (with status
   * publishing only); call before start.
   *
   * @param current the problems as JSON objects
   * @param listen registers a listener called after every change of the problems
   */
  public void publishProblems(
      Supplier<List<Map<String, Object>>> current, Function<Runnable, AutoCloseable> listen) {
    if (!valueStatuses) {
      return;
    }
    Runnable update =
        () -> {
          List<Map<String, Object>> list = current.get();
          String value;
          try {
            value = list.isEmpty() ? null : json.writeValueAsString(list);
          } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write the northbound problems as JSON", e);
          }
          synchronized (this) {
            if (Objects.equals(desired.get(PROBLEMS_KEY), value)) {
              return;
            }
            if (value == null) {
              desired.remove(PROBLEMS_KEY);
            } else {
              desired.put(PROBLEMS_KEY, value);
            }
            dirty.add(PROBLEMS_KEY);
            notifyAll();
          }
        };
    problemsListener = listen.apply(update);
    update.run();
  }

  /**
   * Adds {@code notes} to the details of the statuses written (with status publishing only), as
   * {@code GET /scheduler/status} does: a value kept from before a rejected edit says so; call
   * before start.
   *
   * @param notes the line of a value key (null for none)
   * @param notedKeys the value keys that have a line now
   * @param listen registers a listener called after every change of the lines
   */
  public void publishNotes(
      Function<String, String> notes,
      Supplier<Set<String>> notedKeys,
      Function<Runnable, AutoCloseable> listen) {
    if (!valueStatuses) {
      return;
    }
    this.notes = Objects.requireNonNull(notes, "notes");
    Runnable update =
        () -> {
          Set<String> now = notedKeys.get();
          Set<String> changed;
          synchronized (this) {
            changed = new HashSet<>(noted);
            changed.addAll(now);
          }
          // a key that gains or loses its line is rewritten, its state unchanged
          for (String k : changed) {
            restate(kvs.valueStatus(k).value());
          }
        };
    notesListener = listen.apply(update);
    update.run();
  }

  /**
   * Queues the status of {@code s} (its note looked up under the lock, so a note that changes
   * meanwhile is rewritten by the listener after it) unless it is what is queued already.
   */
  private void restate(ValueStatus s) {
    String key = statusKey(s.key());
    if (key == null) {
      return;
    }
    synchronized (this) {
      String value = jsonOf(s);
      if (!Objects.equals(desired.get(key), value)) {
        put(key, value);
        notifyAll();
      }
    }
  }

  private static boolean gone(ValueStatus s) {
    return s.state() == ValueState.REMOVED || s.state() == ValueState.NONEXISTENT;
  }

  /** Queues {@code value} (null: delete) for {@code key}. Under the lock. */
  private void put(String key, String value) {
    if (value == null) {
      desired.remove(key);
    } else {
      desired.put(key, value);
    }
    dirty.add(key);
  }

  /** The JSON to write for {@code s}, null to delete it. Under the lock. */
  private String jsonOf(ValueStatus s) {
    if (gone(s)) {
      noted.remove(s.key());
      return null;
    }
    return statusJson(s);
  }

  /** {@link #toJson} with the note of the value, if any; notes which keys have one. Under lock. */
  private String statusJson(ValueStatus s) {
    String note = notes.apply(s.key());
    if (note == null) {
      noted.remove(s.key());
      return toJson(s);
    }
    noted.add(s.key());
    List<String> details = new ArrayList<>(s.details());
    details.add(note);
    return toJson(new ValueStatus(s.key(), s.state(), s.error(), s.lastOperation(), details));
  }

  /**
   * Stops ({@code true}) or resumes writing. While this agent does not hold its label nothing is
   * written: the statuses under its lease are revoked (they go at once if etcd still has them), and
   * on resuming a new lease is granted and every status rewritten.
   */
  public void pause(boolean pause) {
    long revoke = 0;
    Client c;
    synchronized (this) {
      if (paused == pause) {
        return;
      }
      paused = pause;
      c = client;
      if (pause) {
        revoke = leaseLost ? 0 : leaseId;
        CloseableClient ka = keepAlive;
        keepAlive = null;
        if (ka != null) {
          ka.close();
        }
      }
      leaseLost = true;
      reconcile = true;
      notifyAll();
    }
    if (revoke != 0) {
      c.getLeaseClient().revoke(revoke).exceptionally(t -> null);
    }
  }

  /** After a reconnection: rewrite every status and delete stale ones. */
  public synchronized void reconnected() {
    reconcile = true;
    putAgentStatus();
    dirty.addAll(desired.keySet());
    notifyAll();
  }

  /**
   * Notes that the agent has applied its etcd configuration up to {@code revision}, after changing
   * {@code valueKeys}: their statuses as the scheduler has them now are queued first, then {@link
   * #APPLIED_KEY}, so the marker is never written before the statuses it vouches for. A revision
   * not above the last one noted is ignored; nothing is done without value statuses.
   */
  public void applied(long revision, Collection<String> valueKeys) {
    if (!valueStatuses) {
      return;
    }
    Map<String, ValueStatus> now = new HashMap<>();
    for (String k : valueKeys) {
      String key = statusKey(k);
      if (key != null) {
        now.put(key, kvs.valueStatus(k).value());
      }
    }
    synchronized (this) {
      now.forEach(
          (key, s) -> {
            String value = jsonOf(s);
            if (!Objects.equals(desired.get(key), value)) {
              put(key, value);
            }
          });
      if (revision <= appliedRevision) {
        notifyAll();
        return;
      }
      appliedRevision = revision;
      desired.put(APPLIED_KEY, json.createObjectNode().put("revision", revision).toString());
      // moved to the end: written after every status queued before it
      dirty.remove(APPLIED_KEY);
      dirty.add(APPLIED_KEY);
      notifyAll();
    }
  }

  /** The key under the agent prefix of the status of {@code valueKey}, or null for none. */
  public static String statusKey(String valueKey) {
    int at = valueKey.indexOf("config/");
    return at < 0 ? null : STATUS_PREFIX + valueKey.substring(at + "config/".length());
  }

  private void onStatus(BaseValueStatus status) {
    ValueStatus s = status.value();
    String key = statusKey(s.key());
    if (key == null) {
      return;
    }
    synchronized (this) {
      put(key, jsonOf(s));
      notifyAll();
    }
  }

  /** protojson of {@code ligato.kvscheduler.ValueStatus} with proto names, zero values left out. */
  public String toJson(ValueStatus s) {
    ObjectNode n = json.createObjectNode();
    n.put("key", s.key());
    if (s.state() != ValueState.NONEXISTENT) {
      n.put("state", s.state().name());
    }
    if (!s.error().isEmpty()) {
      n.put("error", s.error());
    }
    if (s.lastOperation() != TxnOperation.UNDEFINED) {
      n.put("last_operation", s.lastOperation().name());
    }
    if (!s.details().isEmpty()) {
      ArrayNode d = n.putArray("details");
      s.details().forEach(d::add);
    }
    return n.toString();
  }

  /** protojson of {@code status.AgentStatus} with proto names: running, or stopping. */
  String agentStatusJson(boolean stopping, long lastChange) {
    ObjectNode n = json.createObjectNode();
    String version = EtcdStatusPublisher.class.getPackage().getImplementationVersion();
    n.put("build_version", version != null ? version : "dev");
    // INIT, the zero value, is written out (Go's protojson would leave it out; its readers
    // accept both) so that a stopping agent is plain to see with etcdctl
    n.put("state", stopping ? "INIT" : "OK");
    n.put("start_time", Long.toString(startTime));
    n.put("last_change", Long.toString(lastChange));
    n.put("last_update", Long.toString(Instant.now().getEpochSecond()));
    if (!plugins.isEmpty()) {
      ArrayNode list = n.putArray("plugins");
      for (String name : plugins) {
        ObjectNode p = list.addObject().put("name", name);
        p.put("state", stopping ? "INIT" : "OK");
        if (stopping) {
          p.put("error", STOPPING);
        }
      }
    }
    return n.toString();
  }

  /**
   * Queues the running agent status, {@code last_update} now. Its content does not change while the
   * agent runs: it is queued on start and when every status is rewritten (a new lease, a
   * reconnection), never at rest.
   */
  private void putAgentStatus() {
    assert Thread.holdsLock(this);
    desired.put(AGENT_STATUS_KEY, agentStatusJson(false, startTime));
    dirty.add(AGENT_STATUS_KEY);
  }

  private void run() {
    String lastFailure = null;
    while (true) {
      try {
        publishStatuses();
        lastFailure = null;
        synchronized (this) {
          if (closed) {
            return;
          }
          boolean work = !paused && (!dirty.isEmpty() || (valueStatuses && reconcile) || leaseLost);
          if (!work) {
            // nothing is written at rest: woken by a change, a lost lease, a pause or close
            wait();
          }
        }
      } catch (InterruptedException e) {
        return;
      } catch (Exception e) {
        synchronized (this) {
          if (closed) {
            return;
          }
        }
        trouble();
        // told once per cause (an outage is reported by the northbound too; a user who may
        // read the agent prefix but not write it is reported only here)
        String why = describe(e);
        if (!why.equals(lastFailure)) {
          LOG.warn("etcd: cannot write the status keys under {} ({}); retrying", agentPrefix, why);
          lastFailure = why;
        } else {
          LOG.debug("etcd: status publishing failed ({}); retrying", why);
        }
        try {
          Thread.sleep(RETRY_MS);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  private void publishStatuses() throws Exception {
    boolean needLease;
    boolean needReconcile;
    synchronized (this) {
      if (paused) {
        return;
      }
      needLease = leaseLost;
      needReconcile = reconcile;
    }
    if (needLease) {
      grantLease();
    }
    if (needReconcile && valueStatuses && !isPaused()) {
      deleteStale();
    }
    while (true) {
      // up to BATCH keys, in the order they became dirty, in one transaction: a resync of
      // thousands of values costs etcd tens of writes, not thousands
      Map<String, String> batch = new LinkedHashMap<>();
      long lease;
      synchronized (this) {
        if (closed || leaseLost || paused) {
          return;
        }
        for (Iterator<String> it = dirty.iterator(); it.hasNext() && batch.size() < BATCH; ) {
          String key = it.next();
          batch.put(key, desired.get(key));
        }
        lease = leaseId;
      }
      if (batch.isEmpty()) {
        return;
      }
      List<Op> ops = new ArrayList<>(batch.size());
      PutOption withLease = PutOption.builder().withLeaseId(lease).build();
      batch.forEach(
          (key, value) ->
              ops.add(
                  value == null
                      ? Op.delete(bytes(agentPrefix + key), DeleteOption.DEFAULT)
                      : Op.put(bytes(agentPrefix + key), bytes(value), withLease)));
      await(client.getKVClient().txn().Then(ops.toArray(Op[]::new)).commit(), requestTimeout);
      lastAnswer = System.nanoTime();
      synchronized (this) {
        // unless it changed meanwhile, it is done
        batch.forEach(
            (key, value) -> {
              if (Objects.equals(desired.get(key), value)) {
                dirty.remove(key);
              }
            });
      }
    }
  }

  private void grantLease() throws Exception {
    CloseableClient old = keepAlive;
    if (old != null) {
      try {
        old.close();
      } catch (RuntimeException e) {
        LOG.debug("etcd: closing the old lease keep-alive failed ({})", describe(e));
      }
    }
    long id = await(client.getLeaseClient().grant(leaseTtlSeconds), requestTimeout).getID();
    lastAnswer = System.nanoTime();
    leaseId = id;
    keepAlive =
        client
            .getLeaseClient()
            .keepAlive(
                id,
                new StreamObserver<LeaseKeepAliveResponse>() {
                  @Override
                  public void onNext(LeaseKeepAliveResponse r) {
                    if (r.getTTL() <= 0) {
                      lost(id, "lease expired");
                    } else {
                      lastAnswer = System.nanoTime();
                    }
                  }

                  @Override
                  public void onError(Throwable t) {
                    lost(id, describe(t));
                    trouble();
                  }

                  @Override
                  public void onCompleted() {}
                });
    synchronized (this) {
      leaseLost = false;
      reconcile = true;
      putAgentStatus();
      dirty.addAll(desired.keySet());
    }
    LOG.debug("etcd: status lease {} granted (TTL {} s)", Long.toHexString(id), leaseTtlSeconds);
  }

  private void lost(long id, String why) {
    synchronized (this) {
      if (id != leaseId || closed) {
        return;
      }
      LOG.info(
          "etcd: status lease {} lost ({}); statuses will be rewritten", Long.toHexString(id), why);
      leaseLost = true;
      notifyAll();
    }
  }

  private synchronized boolean isPaused() {
    return paused;
  }

  /** Deletes {@code config-status/} keys in etcd that this agent does not have (any more). */
  private void deleteStale() throws Exception {
    GetResponse resp =
        await(
            client
                .getKVClient()
                .get(
                    bytes(agentPrefix + STATUS_PREFIX),
                    GetOption.builder().isPrefix(true).withKeysOnly(true).build()),
            requestTimeout);
    List<String> stale = new ArrayList<>();
    synchronized (this) {
      for (KeyValue kv : resp.getKvs()) {
        String key = kv.getKey().toString(StandardCharsets.UTF_8).substring(agentPrefix.length());
        if (!desired.containsKey(key)) {
          stale.add(key);
        }
      }
    }
    for (String key : stale) {
      await(client.getKVClient().delete(bytes(agentPrefix + key)), requestTimeout);
    }
    synchronized (this) {
      reconcile = false;
    }
  }

  @Override
  public void close() {
    Subscription sub = subscription;
    if (sub != null) {
      sub.close();
    }
    for (AutoCloseable listener : new AutoCloseable[] {problemsListener, notesListener}) {
      if (listener != null) {
        try {
          listener.close();
        } catch (Exception e) {
          LOG.debug("etcd: leaving the northbound problems failed ({})", e.toString());
        }
      }
    }
    synchronized (this) {
      closed = true;
      notifyAll();
    }
    Thread t = thread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    long id = leaseId;
    boolean leaseValid;
    synchronized (this) {
      leaseValid = !leaseLost && !paused && id != 0;
    }
    if (leaseValid) {
      try {
        // watchers see the agent stop before its keys go
        await(
            client
                .getKVClient()
                .put(
                    bytes(agentPrefix + AGENT_STATUS_KEY),
                    bytes(agentStatusJson(true, Instant.now().getEpochSecond())),
                    PutOption.builder().withLeaseId(id).build()),
            requestTimeout);
      } catch (Exception e) {
        LOG.debug("etcd: writing the stopping agent status failed ({})", describe(e));
      }
    }
    CloseableClient ka = keepAlive;
    if (ka != null) {
      ka.close();
    }
    if (id != 0) {
      try {
        // the statuses live as long as the agent: revoke so they vanish now
        await(client.getLeaseClient().revoke(id), requestTimeout);
      } catch (Exception e) {
        LOG.debug("etcd: revoking the status lease failed ({})", describe(e));
      }
    }
  }
}
