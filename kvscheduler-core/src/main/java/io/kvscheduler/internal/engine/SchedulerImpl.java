package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.DelayScheduler;
import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatusListener;
import io.kvscheduler.api.View;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler: a bounded FIFO queue consumed by one engine thread that owns the graph. Callers
 * block on futures; reads use the published snapshot and the history, never the graph.
 *
 * <p>Longer than our usual limit: it implements the whole public {@code KVScheduler} interface;
 * each method only queues work or reads published state, the work itself is elsewhere.
 */
public final class SchedulerImpl implements KVScheduler {
  private static final Logger LOG = LoggerFactory.getLogger(SchedulerImpl.class);

  private final SchedulerConfig cfg;
  private final Registry registry;

  /** Runs southbound calls that have a time limit. */
  private final SbCalls sbCalls;

  private final Graph graph = new Graph();
  private final LinkedBlockingDeque<Queued> queue;

  /**
   * Transactions queued from inside descriptor callbacks (the engine thread, or a call thread while
   * the engine waits for it); served before the shared queue, never blocks.
   */
  private final ConcurrentLinkedDeque<Queued> internal = new ConcurrentLinkedDeque<>();

  private final Published published = new Published();
  private final History history;
  private final Watchers watchers;
  private final TxnProcessor processor;
  private final Thread engine;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final List<AutoCloseable> owned = new ArrayList<>();
  private static final Queued STOP = new Queued.Task(() -> {});

  public SchedulerImpl(SchedulerConfig config) {
    SchedulerConfig c = config;
    DelayScheduler ds = c.delayScheduler();
    if (ds == null) {
      ScheduledExecutorService ses =
          Executors.newSingleThreadScheduledExecutor(daemon(c.threadName() + "-timer"));
      owned.add(ses::shutdownNow);
      ds =
          (delay, task) -> {
            var f = ses.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
          };
    }
    Executor ex = c.statusExecutor();
    if (ex == null) {
      var es = Executors.newSingleThreadExecutor(daemon(c.threadName() + "-status"));
      owned.add(es::shutdownNow);
      ex = es;
    }
    // the injected clock and delay scheduler are user code: guarded once, here, for every use
    c =
        new SchedulerConfig(
            GuardedTime.clock(c.clock()),
            GuardedTime.delayScheduler(ds),
            ex,
            c.queueCapacity(),
            c.simulation(),
            c.printTxnSummary(),
            c.valueFormatter(),
            c.recordHistory(),
            c.historyAgeLimit(),
            c.permanentHistoryPeriod(),
            c.historyMaxRecords(),
            c.threadName(),
            c.verify(),
            c.downstreamResyncPeriod(),
            c.downstreamResyncJitter(),
            c.operationTimeout(),
            c.txnLogMaxItems(),
            c.rejectUnselectedKeys());
    this.cfg = c;
    this.sbCalls = new SbCalls(c.threadName());
    owned.add(sbCalls);
    this.registry = new Registry(c.operationTimeout(), sbCalls);
    this.queue = new LinkedBlockingDeque<>(c.queueCapacity());
    this.history = new History(c, c.clock().instant(), published);
    this.watchers = new Watchers(c.statusExecutor());
    this.processor =
        new TxnProcessor(
            c,
            graph,
            registry,
            history,
            published,
            watchers,
            new TxnProcessor.Sink() {
              @Override
              public boolean offer(Queued q) {
                return !closed.get() && queue.offerLast(q);
              }

              @Override
              public void pushInternal(Queued q) {
                internal.addLast(q);
              }
            });
    // a southbound call abandoned after its time limit may still do what it was asked: when it
    // returns, its key is read again (Retrieve) and settled in a transaction of its own
    sbCalls.onLateReturn(
        key -> {
          if (!closed.get() && !queue.offerLast(new Queued.Late(key))) {
            LOG.warn(
                "{}: a southbound call abandoned after its time limit returned, but the"
                    + " transaction queue is full: the key is not read again until the next resync",
                key);
          }
        });
    this.engine = new Thread(null, this::loop, c.threadName(), ENGINE_STACK_BYTES);
    this.engine.setDaemon(true);
    this.engine.start();
    if (c.downstreamResyncPeriod() != null) {
      armDownstreamResync();
    }
  }

  /**
   * Stack size of the engine thread. The walk recurses once per link of a dependency chain (a value
   * created or taken down makes its dependents follow), so the default stack of a thread (1 MB)
   * ends the walk at chains of a few hundred values. This much address space is reserved, not used:
   * memory is taken only as deep walks touch it. Chains of 100,000 links fit (20,000 measured in
   * one transaction). Time, not the stack, limits such chains: taking one down checks each link's
   * readiness down to the root, so a chain of n links costs about n²/2 node visits (20,000 links:
   * about a minute).
   */
  static final long ENGINE_STACK_BYTES = 256L << 20;

  private final SplittableRandom jitter = new SplittableRandom();

  /**
   * True when the delay scheduler could not arm the next periodic resync: the engine arms it again
   * after the next item it processes (the periodic resyncs would stop otherwise).
   */
  private volatile boolean periodicResyncLost;

  /** Queues a downstream resync every period (plus a random jitter), while open. */
  private void armDownstreamResync() {
    Duration delay = cfg.downstreamResyncPeriod();
    long j = cfg.downstreamResyncJitter().toMillis();
    if (j > 0) {
      delay = delay.plusMillis(jitter.nextLong(j + 1));
    }
    periodicResyncLost =
        cfg.delayScheduler()
                .schedule(
                    delay,
                    () -> {
                      if (closed.get()) {
                        return;
                      }
                      Queued.Nb q =
                          new Queued.Nb(
                              List.of(),
                              TxnOptions.builder()
                                  .resync(ResyncType.DOWNSTREAM)
                                  .description("periodic downstream resync")
                                  .build(),
                              new CompletableFuture<>());
                      if (!queue.offerLast(q)) {
                        LOG.warn(
                            "periodic downstream resync skipped: the transaction queue is full");
                      }
                      armDownstreamResync();
                    })
            == GuardedTime.LOST;
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  // ------------------------------------------------------------------ engine loop

  private void loop() {
    // closed: the transaction being processed was finished; what is still queued is failed
    while (!closed.get()) {
      Queued q = internal.pollFirst();
      if (q == null) {
        q = spinPoll();
      }
      if (q == null) {
        try {
          q = queue.takeFirst();
        } catch (InterruptedException e) {
          if (closed.get()) {
            break;
          }
          continue;
        }
      }
      if (q == STOP || closed.get()) {
        // closed while this was being taken from the queue: it fails like the rest
        if (q != STOP) {
          fail(q);
        }
        break;
      }
      try {
        if (q instanceof Queued.Task t) {
          t.run().run();
        } else {
          processor.process(q);
        }
      } catch (Throwable t) {
        // the engine thread never dies, and no caller waits for ever
        LOG.error("engine: unexpected failure while processing {}", q, t);
        if (q instanceof Queued.Nb nb) {
          nb.result().completeExceptionally(t);
        }
      }
      if (periodicResyncLost && !closed.get()) {
        armDownstreamResync();
      }
    }
    failPending();
    closeOwned();
  }

  /** Fails everything still queued: the callers waiting for it get "scheduler was closed". */
  private void failPending() {
    List<Queued> rest = new ArrayList<>();
    for (Queued q = internal.pollFirst(); q != null; q = internal.pollFirst()) {
      rest.add(q);
    }
    queue.drainTo(rest);
    for (Queued q : rest) {
      fail(q);
    }
  }

  private static void fail(Queued q) {
    CompletableFuture<?> waiter =
        q instanceof Queued.Nb nb ? nb.result() : q instanceof Queued.Task t ? t.waiter() : null;
    if (waiter != null) {
      waiter.completeExceptionally(new IllegalStateException("scheduler was closed"));
    }
  }

  /**
   * Puts {@code q} at the end of the queue, waiting for room when the queue is full. A scheduler
   * closed meanwhile fails {@code q} (close drains the queue, which may be what made the room): the
   * caller's wait then ends at once.
   */
  private void putWaiting(Queued q) {
    try {
      queue.putLast(q);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while queuing", e);
    }
    failIfClosed(q);
  }

  /**
   * Fails {@code q}, just queued, when the scheduler was closed meanwhile and {@code q} is still in
   * the queue (otherwise close's drain, or the engine, has it).
   */
  private void failIfClosed(Queued q) {
    if (closed.get() && queue.remove(q)) {
      fail(q);
    }
  }

  private boolean onEngine() {
    return Thread.currentThread() == engine;
  }

  /**
   * Queues {@code q} from inside a descriptor callback. From a call thread the engine may not be
   * waiting for the call any more (it overran its time limit): an empty task wakes the engine up if
   * it is idle.
   */
  private void queueFromCallback(Queued q) {
    internal.addLast(q);
    if (!onEngine()) {
      queue.offerLast(WAKE);
    }
  }

  private static final Queued WAKE = new Queued.Task(() -> {});

  /**
   * True inside a descriptor callback: on the engine thread, or on a call thread running a
   * southbound call the engine waits for. Waiting for the engine from there would deadlock.
   */
  private boolean inCallback() {
    return onEngine() || sbCalls.inCall();
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("scheduler was closed");
    }
  }

  /**
   * Runs {@code work} ({@code what}, for the error message) on the engine thread between
   * transactions and waits for its result.
   *
   * @throws IllegalStateException on a call thread running a southbound call: the engine waits for
   *     that call, so waiting for the engine would last until the call's time limit and fail the
   *     call's operation
   */
  private <T> T onEngine(String what, Supplier<T> work) {
    if (onEngine()) {
      return work.get();
    }
    if (sbCalls.inCall()) {
      throw new IllegalStateException(
          what
              + " cannot be called from a southbound call that runs"
              + " with a time limit (operationTimeout): it needs the engine thread, which is waiting"
              + " for this call");
    }
    ensureOpen();
    CompletableFuture<T> f = new CompletableFuture<>();
    putWaiting(
        new Queued.Task(
            () -> {
              try {
                f.complete(work.get());
              } catch (Throwable t) {
                f.completeExceptionally(t);
              }
            },
            f));
    return await(f);
  }

  /**
   * How long the engine thread, its queue empty, polls before it parks. A caller committing
   * transactions one after another hands the next one over within microseconds; once parked, the
   * engine needs a wake-up, which on an idle core (a halted virtual CPU) can take longer than a
   * one-value transaction itself. The engine yields between polls, so a thread that needs its core
   * (the caller, woken on the same core, or the JIT compiler) usually gets it at once.
   *
   * <p>This spin and the caller's ({@link #CALLER_SPIN_NANOS}) are kept because of benchmark W2
   * (one-value transactions on a graph of 100,000 values, {@code bin/kvs-bench W2 --n 100000}, 5
   * runs each, fresh JVMs alternating): a mean of 6–8 µs per transaction with them, 49–62 µs with
   * blocking hand-offs instead.
   */
  private static final long SPIN_NANOS = 50_000;

  /** The next queued transaction if one arrives within {@link #SPIN_NANOS}, else null. */
  private Queued spinPoll() {
    long deadline = System.nanoTime() + SPIN_NANOS;
    do {
      Queued q = queue.pollFirst();
      if (q != null) {
        return q;
      }
      Thread.yield();
    } while (System.nanoTime() < deadline);
    return null;
  }

  /**
   * How long a caller of a blocking commit (or of a query run on the engine thread) polls for the
   * result before it parks: the same wake-up as in {@link #SPIN_NANOS}, on the caller's side, for
   * results that come within microseconds. The caller yields between polls, so the engine (or the
   * JIT compiler) usually gets the core at once if it needs it.
   */
  private static final long CALLER_SPIN_NANOS = 50_000;

  private static <T> T await(CompletableFuture<T> f) {
    long deadline = System.nanoTime() + CALLER_SPIN_NANOS;
    while (!f.isDone() && System.nanoTime() < deadline) {
      Thread.yield();
    }
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("waiting for result of blocking transaction was canceled", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException re) {
        throw re;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(c);
    }
  }

  // ------------------------------------------------------------------ descriptors

  @Override
  public void registerDescriptors(KVDescriptor<?, ?>... descriptors) {
    ensureOpen();
    Objects.requireNonNull(descriptors, "descriptors");
    for (int i = 0; i < descriptors.length; i++) {
      if (descriptors[i] == null) {
        throw new NullPointerException(
            "descriptor " + (i + 1) + " of " + descriptors.length + " is null");
      }
    }
    registry.register(List.of(descriptors));
    Runnable retry = processor::retryUnimplemented;
    if (onEngine()) {
      retry.run();
    } else {
      queue.offerLast(new Queued.Task(retry));
    }
  }

  @Override
  public List<KVDescriptor<?, ?>> descriptors() {
    List<KVDescriptor<?, ?>> out = new ArrayList<>();
    for (DescriptorHandle h : registry.ordered()) {
      out.add(h.d);
    }
    return out;
  }

  @Override
  public Optional<KVDescriptor<?, ?>> descriptor(String name) {
    DescriptorHandle h = registry.byName(name);
    return Optional.ofNullable(h == null ? null : h.d);
  }

  @Override
  public Optional<KVDescriptor<?, ?>> descriptorForKey(String key) {
    DescriptorHandle h = registry.forKey(key);
    return Optional.ofNullable(h == null ? null : h.d);
  }

  @Override
  public Set<String> registeredNBKeyPrefixes() {
    return registry.nbKeyPrefixes();
  }

  // ------------------------------------------------------------------ transactions

  @Override
  public Txn startNBTransaction() {
    return new TxnImpl();
  }

  private final class TxnImpl implements Txn {
    private final Map<String, Object> values = new LinkedHashMap<>();
    private boolean committed;

    @Override
    public Txn setValue(String key, Object value) {
      if (committed) {
        throw new IllegalStateException("transaction was already committed");
      }
      if (key == null || key.isEmpty()) {
        throw new IllegalArgumentException("key must not be empty");
      }
      values.put(key, value);
      return this;
    }

    @Override
    public long commit(TxnOptions options) {
      Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
      if (inCallback()) {
        throw new IllegalStateException(
            "commit() cannot wait inside a descriptor callback: the"
                + " engine runs the callback and would wait for itself; use commitAsync()");
      }
      CompletableFuture<Long> f = new CompletableFuture<>();
      submit(options, f, true);
      return await(f);
    }

    @Override
    public CompletableFuture<Long> commitAsync(TxnOptions options) {
      Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
      CompletableFuture<Long> f = new CompletableFuture<>();
      submit(options, f, true);
      return f;
    }

    @Override
    public CompletableFuture<Long> tryCommitAsync(TxnOptions options) {
      Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
      CompletableFuture<Long> f = new CompletableFuture<>();
      submit(options, f, false);
      return f;
    }

    /**
     * Warns about (or, with {@code rejectUnselectedKeys}, refuses) values of keys that no
     * registered descriptor selects: they would wait as UNIMPLEMENTED for a descriptor.
     */
    private void checkSelected() {
      List<String> unselected = new ArrayList<>();
      values.forEach(
          (k, v) -> {
            if (v != null && registry.forKey(k) == null) {
              unselected.add(k);
            }
          });
      if (unselected.isEmpty()) {
        return;
      }
      if (cfg.rejectUnselectedKeys()) {
        committed = false; // nothing was queued: the caller may fix the keys
        throw new IllegalArgumentException(
            "no registered descriptor selects key"
                + (unselected.size() > 1 ? "s " : " ")
                + String.join(", ", unselected));
      }
      LOG.warn(
          "no registered descriptor selects key{} {}: UNIMPLEMENTED until one is registered",
          unselected.size() > 1 ? "s" : "",
          String.join(", ", unselected));
    }

    /**
     * Queues the transaction, to complete {@code f}. From a descriptor callback it is queued to run
     * after the current transaction, never waiting. Otherwise a full queue is waited for when
     * {@code waitForRoom}, else refused with a {@link QueueFullException}.
     */
    private void submit(TxnOptions o, CompletableFuture<Long> f, boolean waitForRoom) {
      if (committed) {
        throw new IllegalStateException("transaction was already committed");
      }
      committed = true;
      ensureOpen();
      if (o.resync() == ResyncType.DOWNSTREAM && !values.isEmpty()) {
        throw new IllegalArgumentException(
            "downstream resync combined with data changes in one transaction");
      }
      if (o.revert() && o.resync() != ResyncType.NOT_RESYNC) {
        throw new IllegalArgumentException("it is not supported to combine resync with revert");
      }
      checkSelected();
      List<Kv> kvs = new ArrayList<>(values.size());
      values.forEach((k, v) -> kvs.add(Kv.nb(k, v)));
      Queued.Nb q = new Queued.Nb(kvs, o, f);
      if (inCallback()) {
        queueFromCallback(q);
      } else if (waitForRoom) {
        putWaiting(q);
      } else if (queue.offerLast(q)) {
        failIfClosed(q);
      } else {
        committed = false; // nothing was queued: the caller may try again
        throw new QueueFullException();
      }
    }
  }

  @Override
  public void pushSBNotification(List<KVWithMetadata<?, ?>> values) {
    ensureOpen();
    Objects.requireNonNull(values, "values");
    List<Kv> kvs = new ArrayList<>(values.size());
    for (KVWithMetadata<?, ?> kv : values) {
      if (kv == null) {
        throw new NullPointerException(
            "SB notification with a null entry (a removal is an" + " entry whose value is null)");
      }
      kvs.add(new Kv(kv.key(), kv.value(), ValueOrigin.FROM_SB, false, kv.metadata()));
    }
    Queued.Sb q = new Queued.Sb(kvs);
    if (inCallback()) {
      queueFromCallback(q);
    } else if (!queue.offerLast(q)) {
      throw new QueueFullException();
    }
  }

  @Override
  public int queueLength() {
    return queue.size();
  }

  @Override
  public void transactionBarrier() {
    if (inCallback()) {
      return;
    }
    onEngine("transactionBarrier", () -> null);
  }

  // ------------------------------------------------------------------ reads

  @Override
  public <M> NamedMapping<M> metadataMap(KVDescriptor<?, M> descriptor) {
    DescriptorHandle h = registered(descriptor);
    if (h.metadataMap == null) {
      throw new IllegalArgumentException("descriptor " + h.name + " has no metadata");
    }
    @SuppressWarnings("unchecked")
    NamedMapping<M> m = (NamedMapping<M>) h.metadataMap;
    return m;
  }

  /**
   * The handle of the descriptor registered under {@code descriptor}'s name, which must have the
   * same value and metadata classes (it may be a wrapper of {@code descriptor}).
   */
  private DescriptorHandle registered(KVDescriptor<?, ?> descriptor) {
    Objects.requireNonNull(descriptor, "descriptor");
    DescriptorHandle h = registry.byName(descriptor.name());
    if (h == null) {
      throw new IllegalArgumentException("descriptor " + descriptor.name() + " is not registered");
    }
    if (h.d != descriptor
        && (h.d.valueType() != descriptor.valueType()
            || h.d.metadataType() != descriptor.metadataType())) {
      throw new IllegalArgumentException(
          "descriptor "
              + descriptor.name()
              + " is not registered:"
              + " another descriptor of that name is, for "
              + h.d.valueType().getName()
              + " values"
              + " with "
              + h.d.metadataType().getName()
              + " metadata");
    }
    return h;
  }

  @Override
  public <M> NamedMapping<M> metadataMap(String descriptorName, Class<M> metadataType) {
    DescriptorHandle h = registry.byName(descriptorName);
    if (h == null) {
      throw new IllegalArgumentException("descriptor " + descriptorName + " is not registered");
    }
    if (h.metadataMap == null) {
      throw new IllegalArgumentException("descriptor " + descriptorName + " has no metadata");
    }
    if (!metadataType.isAssignableFrom(h.d.metadataType())) {
      throw new IllegalArgumentException(
          "descriptor "
              + descriptorName
              + " has metadata of type "
              + h.d.metadataType().getName()
              + ", not "
              + metadataType.getName());
    }
    @SuppressWarnings("unchecked")
    NamedMapping<M> m = (NamedMapping<M>) h.metadataMap;
    return m;
  }

  @Override
  public BaseValueStatus valueStatus(String key) {
    return published.status(key);
  }

  @Override
  public List<BaseValueStatus> valueStatuses() {
    List<BaseValueStatus> out = new ArrayList<>();
    forEachValueStatus(KeySelector.any(), out::add);
    return out;
  }

  @Override
  public void forEachValueStatus(KeySelector selector, Consumer<? super BaseValueStatus> action) {
    Objects.requireNonNull(selector, "selector (KeySelector.any() for every key)");
    Objects.requireNonNull(action, "action");
    Published.Snapshot views = published.current();
    for (Rev v : views.values()) {
      if (v.derivedFrom == null && selector.test(v.key)) {
        action.accept(views.status(v));
      }
    }
  }

  @Override
  public Subscription watchValueStatus(KeySelector selector, ValueStatusListener listener) {
    Objects.requireNonNull(selector, "selector (KeySelector.any() for every key)");
    Objects.requireNonNull(listener, "listener");
    return watchers.add(selector, listener);
  }

  @Override
  public List<RecordedTxn> transactionHistory(Instant since, Instant until) {
    Objects.requireNonNull(since, "since (Instant.MIN for no lower bound)");
    Objects.requireNonNull(until, "until (Instant.MAX for no upper bound)");
    return history.records(since, until);
  }

  @Override
  public Optional<RecordedTxn> recordedTransaction(long seqNum) {
    return history.record(seqNum);
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public <V, M> List<KVWithMetadata<V, M>> dumpValues(KVDescriptor<V, M> descriptor, View view) {
    Objects.requireNonNull(view, "view");
    List<KVWithMetadata<Object, Object>> all = new ArrayList<>(dump(registered(descriptor), view));
    // metadata is checked by the engine; a desired value of another class (INVALID) is left out
    all.removeIf(kv -> kv.value() != null && !descriptor.valueType().isInstance(kv.value()));
    return (List) all;
  }

  @Override
  public List<KVWithMetadata<Object, Object>> dumpValues(String descriptorName, View view) {
    DescriptorHandle h = registry.byName(descriptorName);
    if (h == null) {
      throw new IllegalArgumentException("descriptor " + descriptorName + " is not registered");
    }
    return dump(h, view);
  }

  @Override
  public List<KVWithMetadata<Object, Object>> dumpValuesByKeyPrefix(String keyPrefix, View view) {
    for (DescriptorHandle h : registry.ordered()) {
      if (!keyPrefix.isEmpty() && h.d.nbKeyPrefix().equals(keyPrefix)) {
        return dump(h, view);
      }
    }
    throw new IllegalArgumentException(
        "no descriptor found matching the key prefix '" + keyPrefix + "'");
  }

  private List<KVWithMetadata<Object, Object>> dump(DescriptorHandle h, View view) {
    if (view == View.SB) {
      if (!h.canRetrieve()) {
        throw new IllegalArgumentException(
            "descriptor " + h.name + " does not support Retrieve operation");
      }
      return onEngine(
          "a dump of the SB view (descriptor " + h.name + ")",
          () -> processor.refresher().retrieveForDump(h));
    }
    List<KVWithMetadata<Object, Object>> out = new ArrayList<>();
    for (Rev v : published.current().withPrefix(h.d.nbKeyPrefix())) {
      if (v.derivedFrom != null || !h.name.equals(v.descriptor)) {
        continue;
      }
      if (view == View.NB) {
        if (v.state == ValueState.OBTAINED || v.intentDelete() || v.intent() == null) {
          continue;
        }
        out.add(new KVWithMetadata<>(v.key, v.intent(), v.metadata, ValueOrigin.FROM_NB));
      } else {
        if (!v.available()) {
          continue;
        }
        out.add(
            new KVWithMetadata<>(
                v.key,
                v.value,
                v.metadata,
                v.state == ValueState.OBTAINED ? ValueOrigin.FROM_SB : ValueOrigin.FROM_NB));
      }
    }
    return out;
  }

  @Override
  public List<KeyError> validateSemantically(List<KeyValuePair> values) {
    Objects.requireNonNull(values, "values");
    List<KeyError> out = new ArrayList<>();
    for (KeyValuePair kv : values) {
      validateOne(kv, out, true);
    }
    return out;
  }

  private void validateOne(KeyValuePair kv, List<KeyError> out, boolean base) {
    DescriptorHandle h = registry.forKey(kv.key());
    if (h == null || kv.value() == null) {
      return;
    }
    Throwable err = h.validate(kv.key(), kv.value());
    if (err != null) {
      out.add(new KeyError(kv.key(), TxnOperation.VALIDATE, OpRecord.msg(err), err));
    }
    if (base) {
      DescriptorHandle.Result<List<KeyValuePair>> der = h.derivedValues(kv.key(), kv.value());
      if (der.failed()) {
        out.add(
            new KeyError(kv.key(), TxnOperation.VALIDATE, OpRecord.msg(der.error()), der.error()));
      } else {
        for (KeyValuePair d : der.value()) {
          validateOne(d, out, false);
        }
      }
    }
  }

  @Override
  public List<NodeRevision> keyTimeline(String key) {
    return history.timeline(key);
  }

  @Override
  public List<NodeRevision> graphSnapshot(Instant time) {
    Objects.requireNonNull(time, "time");
    return history.snapshot(time);
  }

  @Override
  public FlagStats flagStats(String flag, KeySelector selector) {
    Objects.requireNonNull(flag, "flag");
    Objects.requireNonNull(selector, "selector (KeySelector.any() for every key)");
    return history.flagStats(flag, selector);
  }

  @Override
  public List<String> explain(String key) {
    if (closed.get()) {
      return List.of();
    }
    return onEngine("explain", () -> Explainer.explain(graph, key));
  }

  @Override
  public Explanation explanation(String key) {
    Objects.requireNonNull(key, "key");
    if (closed.get()) {
      return Explanation.of(key, ValueState.NONEXISTENT, Explanation.Reason.UNKNOWN_KEY);
    }
    return onEngine("explain", () -> Explainer.tree(graph, key));
  }

  /** How long {@link #close()} waits for the transaction being processed before interrupting it. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    // what is queued fails now; the engine finishes what it is processing, then sees the flag
    // (STOP wakes it up if it waits for work)
    failPending();
    while (!queue.offerFirst(STOP)) {
      failPending(); // filled again by callers that were waiting for room: they fail too
    }
    if (onEngine() || sbCalls.inCall()) {
      // called from a descriptor callback: the engine stops once the callback's transaction is
      // finished, and closes the timer and call threads itself (joining here would wait for
      // the thread that waits for this call)
      return;
    }
    try {
      engine.join(CLOSE_WAIT.toMillis());
      if (engine.isAlive()) {
        LOG.warn(
            "close: the engine thread is still processing a transaction after {} s;"
                + " interrupting it",
            CLOSE_WAIT.toSeconds());
        engine.interrupt();
        engine.join(CLOSE_WAIT.toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    failPending();
    closeOwned();
  }

  /** Stops the threads the scheduler started besides the engine (timer, status, calls). */
  private void closeOwned() {
    for (AutoCloseable c : owned) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing {}", c, e);
      }
    }
  }
}
