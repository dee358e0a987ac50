package io.kvscheduler.agent.internal.etcd;

import static io.kvscheduler.agent.internal.etcd.EtcdClients.await;
import static io.kvscheduler.agent.internal.etcd.EtcdClients.bytes;
import static io.kvscheduler.agent.internal.etcd.EtcdClients.describe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.agent.EtcdSettings;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One owner per label: the agent's claim on {@code /vnf-agent/<label>/owner}.
 *
 * <p>The claim is an etcd transaction that creates the key only if it is absent, bound to a lease
 * of {@code session-ttl} that this object keeps alive; its value names the holder ({@link Holder}:
 * host, pid, start time, version). While another agent holds the key, this one is refused (it
 * exits, or as a standby waits, watching the key, until the key goes: the holder stopped, or died
 * and its lease expired). A claim left by an earlier run of this agent (same host and pid
 * namespace, its process gone) is taken over at once, so an agent restarted after a crash does not
 * wait for the old lease to expire.
 *
 * <p>The lease counts as lost when etcd says so, or when no keep-alive was answered for nearly the
 * TTL (from then on another agent may hold the label): the owner is told ({@link #onLost}) and
 * stops applying etcd changes until {@link #ensureOwner} has claimed the label again.
 */
public final class LabelClaim implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LabelClaim.class);

  /** The key of the claim, relative to the agent prefix. */
  public static final String OWNER_KEY = "owner";

  /** How often the lease's freshness is checked, and a standby looks whether the key is gone. */
  private static final Duration CHECK_EVERY = Duration.ofMillis(250);

  private static final Duration STANDBY_POLL = Duration.ofSeconds(2);
  private static final Duration RENEW_CLIENT_EVERY = Duration.ofSeconds(5);

  /** Instances of claims alive in this JVM (several agents may run in one process). */
  private static final Set<String> LIVE = ConcurrentHashMap.newKeySet();

  private static final ObjectMapper JSON = new ObjectMapper();

  /** Where the claim stands. */
  public enum State {
    /** Not claimed yet (etcd not reached, or refused the claim). */
    UNCLAIMED,
    /** Another agent holds the label; this one waits for it to go. */
    STANDBY,
    /** This agent holds the label. */
    OWNER,
    /** The lease was lost: etcd changes are not applied until the label is claimed again. */
    LOST,
    /** The agent stopped and released the label. */
    RELEASED
  }

  /**
   * What the owner key holds (JSON with these names, snake_case).
   *
   * @param host host name of the holder
   * @param pid process id of the holder
   * @param startTime when the holder started (ISO-8601)
   * @param version the holder's version
   * @param instance a random id of the holding agent instance
   * @param pidNamespace the holder's pid namespace ({@code pid:[n]}), or null when unknown
   */
  public record Holder(
      String host,
      long pid,
      String startTime,
      String version,
      String instance,
      String pidNamespace) {

    /** The holder as an operator reads it: host, pid, start and version. */
    public String describe() {
      return "host "
          + host
          + " pid "
          + pid
          + " (started "
          + startTime
          + ", version "
          + version
          + ")";
    }

    /** The JSON stored in etcd. */
    public String toJson() {
      ObjectNode n = JSON.createObjectNode();
      n.put("host", host);
      n.put("pid", pid);
      n.put("start_time", startTime);
      n.put("version", version);
      n.put("instance", instance);
      if (pidNamespace != null) {
        n.put("pid_namespace", pidNamespace);
      }
      return n.toString();
    }

    /** The holder written in {@code json}; fields that are missing or not JSON read as unknown. */
    public static Holder parse(String json) {
      JsonNode n;
      try {
        n = JSON.readTree(json);
      } catch (IOException e) {
        n = null;
      }
      if (n == null || !n.isObject()) {
        return new Holder("?", 0, "?", "?", "?", null);
      }
      return new Holder(
          n.path("host").asText("?"),
          n.path("pid").asLong(0),
          n.path("start_time").asText("?"),
          n.path("version").asText("?"),
          n.path("instance").asText("?"),
          n.hasNonNull("pid_namespace") ? n.get("pid_namespace").asText() : null);
    }
  }

  /** The label is held by another agent that is alive. */
  public static final class HeldException extends IllegalStateException {
    private static final long serialVersionUID = 1L;
    private final transient Holder holder;

    /**
     * @param standbyHint whether the message tells how to wait for the label instead
     */
    public HeldException(String label, String key, Holder holder, boolean standbyHint) {
      super(
          "label '"
              + label
              + "' is held by another agent: "
              + holder.describe()
              + " (etcd key "
              + key
              + ")"
              + (standbyHint
                  ? "; stop that agent, choose another --label, or start this one with --standby"
                      + " to take over when it goes"
                  : ""));
      this.holder = holder;
    }

    /** The agent holding the label. */
    public Holder holder() {
      return holder;
    }
  }

  private final String label;
  private final String key;
  private final List<String> endpoints;
  private final EtcdSettings settings;
  private final Holder self;
  private final Thread monitor;

  private volatile Client client;
  private volatile long renewedAt = System.nanoTime();
  private volatile Runnable onLost = () -> {};

  // guarded by this
  private State state = State.UNCLAIMED;
  private Holder other;
  private String detail = "not claimed yet";
  private Instant since = Instant.now();
  private long leaseId;
  private CloseableClient keepAlive;
  private long lastAlive;
  private boolean restartKeepAlive;
  private boolean closed;

  /**
   * A claim of {@code label} over its own etcd client (not connected yet).
   *
   * @throws IllegalArgumentException when the TLS files cannot be used
   */
  public LabelClaim(String label, List<String> endpoints, EtcdSettings settings) {
    this.label = Objects.requireNonNull(label, "label");
    this.key = "/vnf-agent/" + label + "/" + OWNER_KEY;
    this.endpoints = List.copyOf(endpoints);
    this.settings = Objects.requireNonNull(settings, "settings");
    String version = LabelClaim.class.getPackage().getImplementationVersion();
    this.self =
        new Holder(
            hostName(),
            ProcessHandle.current().pid(),
            Instant.now().toString(),
            version != null ? version : "dev",
            UUID.randomUUID().toString(),
            pidNamespace());
    LIVE.add(self.instance());
    this.client = EtcdClients.create(this.endpoints, settings);
    this.monitor = new Thread(this::watchLease, "etcd-claim-" + label);
    monitor.setDaemon(true);
    monitor.start();
  }

  /** The owner key, {@code /vnf-agent/<label>/owner}. */
  public String key() {
    return key;
  }

  /** What this agent writes into the owner key. */
  public Holder self() {
    return self;
  }

  /** Called (on a thread of the claim) when the lease of an owner is lost; set before claiming. */
  public void onLost(Runnable action) {
    this.onLost = Objects.requireNonNull(action, "action");
  }

  public synchronized State state() {
    return state;
  }

  public synchronized boolean isOwner() {
    return state == State.OWNER;
  }

  /** The state for the REST API: label, key, state, since, detail, holder. */
  public synchronized Map<String, Object> describeState() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("label", label);
    m.put("key", key);
    m.put("state", state.name());
    m.put("since", since.toString());
    m.put("detail", detail);
    // the holder as last known: this agent while it holds the label, else the other one seen
    Holder h = state == State.OWNER ? self : other;
    if (h == null) {
      m.put("holder", null);
    } else {
      Map<String, Object> holder = new LinkedHashMap<>();
      holder.put("host", h.host());
      holder.put("pid", h.pid());
      holder.put("start_time", h.startTime());
      holder.put("version", h.version());
      holder.put("this_agent", h == self);
      m.put("holder", holder);
    }
    m.put("session_ttl_seconds", ttlSeconds());
    return m;
  }

  /**
   * Tries to claim the label once (bounded by the request timeout): returns null when this agent
   * holds it, or the agent that holds it.
   *
   * @throws Exception when etcd cannot be reached or refuses the claim (see {@link
   *     EtcdClients#explain})
   */
  public Holder tryClaim() throws Exception {
    synchronized (this) {
      if (state == State.OWNER) {
        return null;
      }
      if (closed) {
        throw new IllegalStateException("the claim of label '" + label + "' is closed");
      }
    }
    Client c = client;
    long lease = await(c.getLeaseClient().grant(ttlSeconds()), settings.requestTimeout()).getID();
    boolean claimed = false;
    try {
      Holder held = null;
      for (int attempt = 0; attempt < 3 && !claimed; attempt++) {
        TxnResponse r =
            await(
                c.getKVClient()
                    .txn()
                    .If(new Cmp(bytes(key), Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(bytes(key), bytes(self.toJson()), leased(lease)))
                    .Else(Op.get(bytes(key), GetOption.DEFAULT))
                    .commit(),
                settings.requestTimeout());
        if (r.isSucceeded()) {
          claimed = true;
          break;
        }
        List<KeyValue> kvs = r.getGetResponses().get(0).getKvs();
        if (kvs.isEmpty()) {
          continue; // released in between: try again
        }
        KeyValue kv = kvs.get(0);
        held = Holder.parse(kv.getValue().toString(StandardCharsets.UTF_8));
        if (!stale(held)) {
          break;
        }
        // left by an earlier run of this agent: replaced unless it changed meanwhile
        TxnResponse t =
            await(
                c.getKVClient()
                    .txn()
                    .If(
                        new Cmp(
                            bytes(key), Cmp.Op.EQUAL, CmpTarget.modRevision(kv.getModRevision())))
                    .Then(Op.put(bytes(key), bytes(self.toJson()), leased(lease)))
                    .commit(),
                settings.requestTimeout());
        if (t.isSucceeded()) {
          LOG.info(
              "etcd: label '{}' was held by an earlier run of this agent ({}), now gone:"
                  + " taken over",
              label,
              held.describe());
          claimed = true;
        }
      }
      if (!claimed) {
        synchronized (this) {
          other = held;
          if (state != State.STANDBY && state != State.LOST) {
            state = State.UNCLAIMED;
          }
          detail = held == null ? "the owner key changes too often" : "held by " + held.describe();
        }
        return held != null ? held : Holder.parse("");
      }
      startKeepAlive(c, lease);
      return null;
    } finally {
      if (!claimed) {
        revokeQuietly(c, lease);
      }
    }
  }

  /**
   * Called once when an attempt after the start finds the label held by another agent and this
   * agent has never held it (its first claim at start had no answer): an agent that is not a
   * standby gives up (see {@link #onHeldBeforeClaimed}).
   */
  private volatile Consumer<HeldException> heldBeforeClaimed;

  private volatile boolean everOwned;
  private volatile Exception lastFailure;
  private volatile long lastFailureAt;

  /**
   * What to do when the label turns out to be held by another agent before this one ever held it
   * (the claim at start got no answer from etcd); null (the default) keeps waiting, as a standby.
   */
  public void onHeldBeforeClaimed(Consumer<HeldException> action) {
    this.heldBeforeClaimed = action;
  }

  /**
   * Claims the label if this agent does not hold it. An attempt that failed less than a second ago
   * is not repeated: its failure is thrown again.
   *
   * @throws HeldException when another agent holds it
   * @throws Exception when etcd cannot be reached or refuses the claim
   */
  public void ensureOwner() throws Exception {
    if (isOwner()) {
      return;
    }
    Exception recent = lastFailure;
    if (recent != null && System.nanoTime() - lastFailureAt < TimeUnit.SECONDS.toNanos(1)) {
      throw recent;
    }
    Holder h;
    try {
      h = tryClaim();
      lastFailure = null;
    } catch (Exception e) {
      failed(e);
      if (System.nanoTime() - renewedAt > RENEW_CLIENT_EVERY.toNanos()) {
        renewClient();
      }
      throw e;
    }
    if (h != null) {
      HeldException held = new HeldException(label, key, h, false);
      Consumer<HeldException> action = heldBeforeClaimed;
      if (!everOwned && action != null) {
        heldBeforeClaimed = null;
        action.accept(new HeldException(label, key, h, true));
      }
      throw held;
    }
  }

  /** Remembers a failed attempt (see {@link #ensureOwner}). */
  public void failed(Exception e) {
    lastFailure = e;
    lastFailureAt = System.nanoTime();
  }

  /**
   * Waits, as a standby, until this agent holds the label: watches the owner key and claims it when
   * it goes; also looks every few seconds in case a watch event is missed.
   *
   * @param holder the agent holding the label now
   * @param stop polled while waiting: true ends the wait with an {@link InterruptedException}
   */
  public void awaitClaim(Holder holder, BooleanSupplier stop) throws InterruptedException {
    synchronized (this) {
      state = State.STANDBY;
      other = holder;
      detail = "standing by: held by " + holder.describe();
      since = Instant.now();
    }
    LOG.warn(
        "etcd: label '{}' is held by {}: standing by, watching {} to take over",
        label,
        holder.describe(),
        key);
    Semaphore poke = new Semaphore(0);
    Watch.Watcher watcher = null;
    Client watching = null;
    String lastProblem = null;
    long nextPoll = 0;
    try {
      while (true) {
        if (stop.getAsBoolean()) {
          throw new InterruptedException("stopped while standing by for label '" + label + "'");
        }
        Client c = client;
        if (watcher == null || watching != c) {
          if (watcher != null) {
            watcher.close();
          }
          watching = c;
          watcher =
              c.getWatchClient()
                  .watch(
                      bytes(key),
                      WatchOption.DEFAULT,
                      Watch.listener(
                          r -> {
                            if (r.getEvents().stream()
                                .anyMatch(e -> e.getEventType() == WatchEvent.EventType.DELETE)) {
                              poke.release();
                            }
                          },
                          t -> poke.release()));
        }
        boolean poked = poke.tryAcquire(CHECK_EVERY.toMillis(), TimeUnit.MILLISECONDS);
        if (!poked && System.nanoTime() - nextPoll < 0) {
          continue;
        }
        nextPoll = System.nanoTime() + STANDBY_POLL.toNanos();
        try {
          GetResponse g =
              await(
                  c.getKVClient().get(bytes(key), GetOption.builder().withCountOnly(true).build()),
                  settings.requestTimeout());
          Holder h = null;
          if (g.getCount() == 0 || poked) {
            h = tryClaim();
            if (h == null) {
              LOG.info("etcd: label '{}' claimed: the standby takes over", label);
              return;
            }
          }
          lastProblem = null;
          if (h != null && !h.instance().equals(holder.instance())) {
            holder = h;
            synchronized (this) {
              other = h;
              detail = "standing by: held by " + h.describe();
            }
            LOG.warn("etcd: label '{}' is now held by {}: standing by", label, h.describe());
          }
        } catch (InterruptedException e) {
          throw e;
        } catch (Exception e) {
          String why = EtcdClients.explain(e, settings, "/vnf-agent/" + label + "/");
          if (!why.equals(lastProblem)) {
            LOG.warn("etcd: standby of label '{}' cannot reach etcd ({}); retrying", label, why);
            lastProblem = why;
          }
          if (System.nanoTime() - renewedAt > RENEW_CLIENT_EVERY.toNanos()) {
            renewClient();
          }
        }
      }
    } finally {
      if (watcher != null) {
        watcher.close();
      }
    }
  }

  private static PutOption leased(long lease) {
    return PutOption.builder().withLeaseId(lease).build();
  }

  private long ttlSeconds() {
    return Math.max(1, settings.leaseTtl().toSeconds());
  }

  /**
   * Whether {@code h} was left by an earlier run of this agent: this very claim, or the same host
   * and pid namespace with its process gone (or this process's pid, when no live claim of this JVM
   * has that instance: a container restarted with the same pid).
   */
  private boolean stale(Holder h) {
    if (h.instance().equals(self.instance())) {
      return true;
    }
    if (!h.host().equals(self.host())
        || self.pidNamespace() == null
        || !self.pidNamespace().equals(h.pidNamespace())) {
      return false;
    }
    if (h.pid() == self.pid()) {
      return !LIVE.contains(h.instance());
    }
    return ProcessHandle.of(h.pid()).map(p -> !p.isAlive()).orElse(true);
  }

  /**
   * Keeps {@code lease} alive: a response refreshes it, an expired lease is lost. A stream that
   * fails (a connection cut) is restarted by {@link #watchLease}: the lease is lost only when etcd
   * says so or no keep-alive was answered for nearly the TTL.
   */
  private StreamObserver<LeaseKeepAliveResponse> keepAliveObserver(long lease) {
    return new StreamObserver<>() {
      @Override
      public void onNext(LeaseKeepAliveResponse r) {
        if (r.getTTL() <= 0) {
          lost(lease, "etcd says the lease expired");
        } else {
          synchronized (LabelClaim.this) {
            if (leaseId == lease) {
              lastAlive = System.nanoTime();
            }
          }
        }
      }

      @Override
      public void onError(Throwable t) {
        synchronized (LabelClaim.this) {
          if (leaseId == lease && state == State.OWNER && !closed) {
            restartKeepAlive = true;
            LOG.debug("etcd: keep-alive of the claim of '{}' failed ({})", label, describe(t));
          }
        }
      }

      @Override
      public void onCompleted() {}
    };
  }

  private void startKeepAlive(Client c, long lease) {
    State was;
    everOwned = true;
    synchronized (this) {
      was = state;
      leaseId = lease;
      lastAlive = System.nanoTime();
      restartKeepAlive = false;
      state = State.OWNER;
      other = null;
      detail = "held by this agent";
      since = Instant.now();
    }
    CloseableClient ka = c.getLeaseClient().keepAlive(lease, keepAliveObserver(lease));
    synchronized (this) {
      keepAlive = ka;
    }
    if (was == State.LOST) {
      LOG.info("etcd: label '{}' claimed again: etcd changes are applied again", label);
    } else {
      LOG.info("etcd: label '{}' claimed ({}, lease TTL {} s)", label, key, ttlSeconds());
    }
  }

  /**
   * Checks that the lease was kept alive recently enough (a stale one counts as lost) and restarts
   * a keep-alive stream that failed, at most every 500 ms.
   */
  private void watchLease() {
    // lost a little before etcd would expire it: another agent may take over only after expiry
    long ttlMs = ttlSeconds() * 1000;
    long limitNanos = TimeUnit.MILLISECONDS.toNanos(ttlMs - Math.min(1000, ttlMs / 4));
    long nextRestart = System.nanoTime();
    while (true) {
      try {
        Thread.sleep(CHECK_EVERY.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      long lease;
      long silent;
      CloseableClient old = null;
      boolean restart = false;
      synchronized (this) {
        if (closed) {
          return;
        }
        if (state != State.OWNER) {
          continue;
        }
        lease = leaseId;
        silent = System.nanoTime() - lastAlive;
        if (restartKeepAlive && System.nanoTime() - nextRestart >= 0) {
          restartKeepAlive = false;
          restart = true;
          old = keepAlive;
          keepAlive = null;
        }
      }
      if (silent > limitNanos) {
        lost(
            lease,
            "no keep-alive answered for "
                + TimeUnit.NANOSECONDS.toMillis(silent)
                + " ms (session-ttl "
                + ttlSeconds()
                + " s)");
        continue;
      }
      if (restart) {
        nextRestart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
        if (old != null) {
          try {
            old.close();
          } catch (RuntimeException e) {
            LOG.debug("etcd: closing a failed keep-alive failed ({})", describe(e));
          }
        }
        try {
          CloseableClient ka = client.getLeaseClient().keepAlive(lease, keepAliveObserver(lease));
          synchronized (this) {
            if (leaseId == lease && state == State.OWNER && keepAlive == null) {
              keepAlive = ka;
              ka = null;
            }
          }
          if (ka != null) {
            ka.close();
          }
        } catch (RuntimeException e) {
          synchronized (this) {
            restartKeepAlive = true;
          }
          LOG.debug("etcd: restarting the keep-alive failed ({})", describe(e));
        }
      }
    }
  }

  private void lost(long lease, String why) {
    CloseableClient ka;
    synchronized (this) {
      if (closed || state != State.OWNER || lease != leaseId) {
        return;
      }
      state = State.LOST;
      detail = "lease lost: " + why;
      since = Instant.now();
      ka = keepAlive;
      keepAlive = null;
    }
    LOG.error(
        "etcd: the claim of label '{}' is lost ({}): etcd changes are not applied until the"
            + " label is claimed again",
        label,
        why);
    if (ka != null) {
      try {
        ka.close();
      } catch (RuntimeException e) {
        LOG.debug("etcd: closing the keep-alive failed ({})", describe(e));
      }
    }
    Client c = client;
    // if etcd still has it, the key goes now rather than at expiry (an answer says so)
    c.getLeaseClient().revoke(lease).exceptionally(t -> null);
    try {
      onLost.run();
    } catch (RuntimeException e) {
      LOG.error("etcd: reacting to the lost claim of label '{}' failed", label, e);
    }
  }

  /** Replaces the client by a new one (while etcd does not answer), unless it keeps a lease. */
  private void renewClient() {
    renewedAt = System.nanoTime();
    synchronized (this) {
      if (state == State.OWNER || closed) {
        return;
      }
    }
    Client old = client;
    try {
      client = EtcdClients.create(endpoints, settings);
    } catch (RuntimeException e) {
      LOG.debug("etcd: cannot create a new client for the claim ({})", describe(e));
      return;
    }
    try {
      old.close();
    } catch (RuntimeException e) {
      LOG.debug("etcd: closing the old client failed ({})", describe(e));
    }
  }

  private void revokeQuietly(Client c, long lease) {
    try {
      await(c.getLeaseClient().revoke(lease), settings.requestTimeout());
    } catch (Exception e) {
      LOG.debug("etcd: revoking an unused lease failed ({})", describe(e));
    }
  }

  /** Releases the label (its key goes at once) and closes the client. */
  @Override
  public void close() {
    CloseableClient ka;
    long lease;
    boolean owner;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      owner = state == State.OWNER;
      state = State.RELEASED;
      detail = "the agent stopped";
      since = Instant.now();
      ka = keepAlive;
      keepAlive = null;
      lease = leaseId;
    }
    monitor.interrupt();
    if (ka != null) {
      ka.close();
    }
    Client c = client;
    if (owner) {
      try {
        await(c.getLeaseClient().revoke(lease), settings.requestTimeout());
        LOG.info("etcd: label '{}' released", label);
      } catch (Exception e) {
        LOG.warn(
            "etcd: releasing label '{}' failed ({}); it goes when its lease expires",
            label,
            describe(e));
      }
    }
    c.close();
    LIVE.remove(self.instance());
  }

  private static String hostName() {
    String h = System.getenv("HOSTNAME");
    if (h != null && !h.isBlank()) {
      return h.strip();
    }
    try {
      String f = Files.readString(Path.of("/etc/hostname"), StandardCharsets.UTF_8).strip();
      if (!f.isEmpty()) {
        return f;
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: asked below
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static String pidNamespace() {
    try {
      return Files.readSymbolicLink(Path.of("/proc/self/ns/pid")).toString();
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return null;
    }
  }
}
