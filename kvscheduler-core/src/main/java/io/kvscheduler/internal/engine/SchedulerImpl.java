package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
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
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatusListener;
import io.kvscheduler.api.View;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Observer;
import io.kvscheduler.internal.engine.calls.ParallelCalls;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.SbCalls;
import io.kvscheduler.internal.engine.calls.SemanticValidator;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.history.History;
import io.kvscheduler.internal.engine.loop.EngineLoop;
import io.kvscheduler.internal.engine.loop.PeriodicResync;
import io.kvscheduler.internal.engine.loop.Queued;
import io.kvscheduler.internal.engine.loop.SchedulerThreads;
import io.kvscheduler.internal.engine.publish.Explainer;
import io.kvscheduler.internal.engine.publish.KeyRevision;
import io.kvscheduler.internal.engine.publish.Published;
import io.kvscheduler.internal.engine.publish.PublishedSnapshot;
import io.kvscheduler.internal.engine.publish.Watchers;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The scheduler's public entry point: a thin facade of the {@code KVScheduler} interface. Work goes
 * to the engine thread through {@link EngineLoop} (one transaction at a time, on a bounded FIFO
 * queue); reads use the published snapshot and the history, never the graph. Dumps are {@link
 * ValueDumps}, stand-alone validation is {@link SemanticValidator}, transactions are built by
 * {@link NbTxn}.
 */
public final class SchedulerImpl implements KVScheduler {
  private static final Logger LOG = LoggerFactory.getLogger(SchedulerImpl.class);

  private final SchedulerConfig config;
  private final Registry registry;
  private final Graph graph = new Graph();
  private final Published published = new Published();
  private final History history;
  private final Watchers watchers;
  private final TxnProcessor processor;
  private final EngineLoop loop;
  private final ValueDumps dumps;
  private final SemanticValidator validator;

  /** The warning of {@link #warnIfNoneRunsInParallel} was given. */
  private final AtomicBoolean warnedSequential = new AtomicBoolean();

  public SchedulerImpl(SchedulerConfig config) {
    List<AutoCloseable> owned = new ArrayList<>();
    SchedulerConfig c = SchedulerThreads.withDefaults(config, owned);
    this.config = c;
    SbCalls sbCalls = new SbCalls(c.threadName());
    owned.add(sbCalls);
    Observer observer =
        c.operationListener() == null ? Observer.NONE : new Observer(c.operationListener());
    this.registry = new Registry(c.operationTimeout(), sbCalls, observer);
    ParallelCalls parallelCalls =
        new ParallelCalls(c.parallelism(), c.clock(), sbCalls, c.threadName());
    owned.add(parallelCalls);
    this.loop = new EngineLoop(c.threadName(), c.queueCapacity(), sbCalls, owned);
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
            parallelCalls,
            observer,
            new TxnProcessor.FollowUpQueue() {
              @Override
              public boolean offer(Queued q) {
                return loop.offerIfOpen(q);
              }

              @Override
              public void pushInternal(Queued q) {
                loop.pushInternal(q);
              }
            });
    this.dumps = new ValueDumps(registry, published, loop, processor);
    this.validator = new SemanticValidator(registry);
    // a southbound call abandoned after its time limit may still do what it was asked: when it
    // returns, its key is read again (Retrieve) and settled in a transaction of its own
    sbCalls.onLateReturn(
        key -> {
          if (!loop.isClosed() && !loop.offer(new Queued.Late(key))) {
            LOG.warn(
                "{}: a southbound call abandoned after its time limit returned, but the"
                    + " transaction queue is full: the key is not read again until the next resync",
                key);
          }
        });
    PeriodicResync resync = c.downstreamResyncPeriod() == null ? null : new PeriodicResync(c, loop);
    loop.start(processor::process, resync == null ? () -> {} : resync::rearmIfLost);
    if (resync != null) {
      resync.arm();
    }
  }

  // ------------------------------------------------------------------ descriptors

  @Override
  public void registerDescriptors(KVDescriptor<?, ?>... descriptors) {
    loop.ensureOpen();
    Objects.requireNonNull(descriptors, "descriptors");
    for (int i = 0; i < descriptors.length; i++) {
      if (descriptors[i] == null) {
        throw new NullPointerException(
            "descriptor " + (i + 1) + " of " + descriptors.length + " is null");
      }
    }
    registry.register(List.of(descriptors));
    warnIfNoneRunsInParallel();
    Runnable retry = processor::retryUnimplemented;
    if (loop.onEngine()) {
      retry.run();
    } else {
      loop.offer(new Queued.Task(retry));
    }
  }

  /**
   * Warns once when calls may run in parallel ({@code parallelism} above 1) but no descriptor
   * registered so far lets its own calls overlap ({@code maxConcurrency} above 1): the setting then
   * gains little, which is easy to miss.
   */
  private void warnIfNoneRunsInParallel() {
    if (config.parallelism() <= 1 || warnedSequential.get()) {
      return;
    }
    List<DescriptorHandle> all = registry.ordered();
    for (DescriptorHandle h : all) {
      if (h.descriptor.maxConcurrency() > 1) {
        return;
      }
    }
    if (!warnedSequential.compareAndSet(false, true)) {
      return;
    }
    LOG.warn(
        "parallelism is {}, but none of the {} registered descriptor{} opts in"
            + " (KVDescriptor.Builder.maxConcurrency above 1): the calls of each descriptor run one"
            + " at a time, only calls of different descriptors overlap",
        config.parallelism(),
        all.size(),
        all.size() == 1 ? "" : "s");
  }

  @Override
  public List<KVDescriptor<?, ?>> descriptors() {
    List<KVDescriptor<?, ?>> out = new ArrayList<>();
    for (DescriptorHandle h : registry.ordered()) {
      out.add(h.descriptor);
    }
    return out;
  }

  @Override
  public Optional<KVDescriptor<?, ?>> descriptor(String name) {
    DescriptorHandle h = registry.byName(name);
    return Optional.ofNullable(h == null ? null : h.descriptor);
  }

  @Override
  public Optional<KVDescriptor<?, ?>> descriptorForKey(String key) {
    DescriptorHandle h = registry.forKey(key);
    return Optional.ofNullable(h == null ? null : h.descriptor);
  }

  @Override
  public Set<String> registeredNBKeyPrefixes() {
    return registry.nbKeyPrefixes();
  }

  // ------------------------------------------------------------------ transactions

  @Override
  public Txn startNBTransaction() {
    return new NbTxn(loop, registry, config.rejectUnselectedKeys(), processor);
  }

  @Override
  public void pushSBNotification(List<KVWithMetadata<?, ?>> values) {
    loop.ensureOpen();
    Objects.requireNonNull(values, "values");
    List<ValueToApply> kvs = new ArrayList<>(values.size());
    for (KVWithMetadata<?, ?> kv : values) {
      if (kv == null) {
        throw new NullPointerException(
            "SB notification with a null entry (a removal is an" + " entry whose value is null)");
      }
      kvs.add(new ValueToApply(kv.key(), kv.value(), ValueOrigin.FROM_SB, false, kv.metadata()));
    }
    Queued.Sb q = new Queued.Sb(kvs);
    if (loop.inCallback()) {
      loop.queueFromCallback(q);
    } else if (!loop.offer(q)) {
      throw new QueueFullException();
    }
  }

  @Override
  public int queueLength() {
    return loop.queueLength();
  }

  @Override
  public void transactionBarrier() {
    if (loop.inCallback()) {
      return;
    }
    loop.onEngine("transactionBarrier", () -> null);
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
    if (h.descriptor != descriptor
        && (h.descriptor.valueType() != descriptor.valueType()
            || h.descriptor.metadataType() != descriptor.metadataType())) {
      throw new IllegalArgumentException(
          "descriptor "
              + descriptor.name()
              + " is not registered:"
              + " another descriptor of that name is, for "
              + h.descriptor.valueType().getName()
              + " values"
              + " with "
              + h.descriptor.metadataType().getName()
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
    if (!metadataType.isAssignableFrom(h.descriptor.metadataType())) {
      throw new IllegalArgumentException(
          "descriptor "
              + descriptorName
              + " has metadata of type "
              + h.descriptor.metadataType().getName()
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
    PublishedSnapshot views = published.current();
    for (KeyRevision v : views.values()) {
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
  public <V, M> List<KVWithMetadata<V, M>> dumpValues(KVDescriptor<V, M> descriptor, View view) {
    Objects.requireNonNull(view, "view");
    return dumps.of(registered(descriptor), descriptor, view);
  }

  @Override
  public List<KVWithMetadata<Object, Object>> dumpValues(String descriptorName, View view) {
    return dumps.byName(descriptorName, view);
  }

  @Override
  public List<KVWithMetadata<Object, Object>> dumpValuesByKeyPrefix(String keyPrefix, View view) {
    return dumps.byKeyPrefix(keyPrefix, view);
  }

  @Override
  public List<KeyError> validateSemantically(List<KeyValuePair> values) {
    return validator.validate(values);
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
    if (loop.isClosed()) {
      return List.of();
    }
    return loop.onEngine("explain", () -> Explainer.explain(graph, key));
  }

  @Override
  public Explanation explanation(String key) {
    Objects.requireNonNull(key, "key");
    if (loop.isClosed()) {
      return Explanation.of(key, ValueState.NONEXISTENT, Explanation.Reason.UNKNOWN_KEY);
    }
    return loop.onEngine("explain", () -> Explainer.tree(graph, key));
  }

  @Override
  public void close() {
    loop.close(EngineLoop.CLOSE_WAIT);
  }

  @Override
  public boolean close(Duration timeout) {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("close timeout must not be negative, got " + timeout);
    }
    return loop.close(timeout);
  }
}
