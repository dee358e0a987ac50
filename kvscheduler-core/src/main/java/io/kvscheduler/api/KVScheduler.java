package io.kvscheduler.api;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The KV Scheduler: keeps a southbound in sync with the desired state given by northbound
 * transactions, ordering operations by the dependencies declared in {@link KVDescriptor}s.
 *
 * <p><b>Threading.</b> Transactions run one at a time, in FIFO order, on a single engine thread
 * owned by the scheduler. Every read method ({@link #valueStatus}, {@link #dumpValues}, {@link
 * #transactionHistory}, metadata maps, ...) may be called from any thread; reads never block the
 * engine and always see the state after some completed transaction (an immutable, structurally
 * shared snapshot). Descriptor callbacks run on the engine thread.
 *
 * <p><b>Transaction phases:</b> queued → pre-processed (resync refresh, filters) → ordered
 * (deletes, re-creations, creations, updates; by key) → simulated (optional) → executed (with
 * revert on failure, optional) → recorded → post-processed (refresh of failed values, retries,
 * statuses to watchers, removal of deleted values).
 *
 * <p>Create with {@link #builder()}; close to stop the engine thread.
 */
public interface KVScheduler extends AutoCloseable {

  /** A new builder with the defaults documented on its methods. */
  static KVSchedulerBuilder builder() {
    return new KVSchedulerBuilder();
  }

  /**
   * Registers descriptors as one group: names must be unique, and every retrieve dependency must be
   * registered before or within the group. Values waiting as UNIMPLEMENTED for a newly registered
   * descriptor are applied by a RetryUnimplOps transaction.
   *
   * @throws IllegalArgumentException for a duplicate name or an unknown retrieve dependency
   * @throws IllegalStateException for a cycle among retrieve dependencies (the cycle is named), or
   *     after {@link #close()}
   */
  void registerDescriptors(KVDescriptor<?, ?>... descriptors);

  /** Descriptors in retrieve order (dependencies first, then by name). */
  List<KVDescriptor<?, ?>> descriptors();

  /** The descriptor named {@code name}. */
  Optional<KVDescriptor<?, ?>> descriptor(String name);

  /** The descriptor that selects {@code key}. */
  Optional<KVDescriptor<?, ?>> descriptorForKey(String key);

  /** The non-empty NB key prefixes of all registered descriptors. */
  Set<String> registeredNBKeyPrefixes();

  /** Starts an NB transaction. */
  Txn startNBTransaction();

  /**
   * Queues a notification from the southbound: values that appeared, changed ({@code value} set) or
   * disappeared ({@code value} null). Processed asynchronously as one SBNotification transaction;
   * values become OBTAINED without descriptor calls. Each pair is checked on its own, and ignored
   * when no descriptor selects its key, when its value or metadata is not of the descriptor's class
   * for it (logged as a warning), when the key holds a value owned by the northbound, or when it is
   * a derived value (set only by its base value).
   *
   * @throws NullPointerException if {@code values} or one of its entries is null (a removal is an
   *     entry whose value is null)
   * @throws IllegalStateException if the queue is full or the scheduler is closed
   */
  void pushSBNotification(List<KVWithMetadata<?, ?>> values);

  /** Transactions and notifications waiting in the queue now (not the one being processed). */
  int queueLength();

  /** Waits until every transaction queued before this call has been processed. */
  void transactionBarrier();

  /**
   * The metadata map of {@code descriptor}, typed by its metadata class: {@code
   * NamedMapping<TunnelMetadata> tunnels = kvs.metadataMap(tunnelDescriptor)}.
   *
   * @throws IllegalArgumentException if the descriptor is not registered (another descriptor of the
   *     same name counts as not registered unless it has the same value and metadata classes) or
   *     has no metadata
   */
  <M> NamedMapping<M> metadataMap(KVDescriptor<?, M> descriptor);

  /**
   * The metadata map of descriptor {@code descriptorName}, for callers that know the descriptor by
   * name only ({@link #metadataMap(KVDescriptor)} when you hold the descriptor).
   *
   * @throws IllegalArgumentException if the descriptor is unknown or has no metadata, or its
   *     metadata is not of {@code metadataType}
   */
  <M> NamedMapping<M> metadataMap(String descriptorName, Class<M> metadataType);

  /** Status of {@code key} with its derived values; NONEXISTENT for unknown keys. */
  BaseValueStatus valueStatus(String key);

  /** Statuses of every base value, sorted by key. */
  List<BaseValueStatus> valueStatuses();

  /**
   * Gives {@code action} the status of every base value whose key {@code selector} accepts, with
   * its derived values, in key order, one at a time: all from one published snapshot, on the
   * calling thread, without waiting for the engine (a transaction in progress is not waited for)
   * and without building the whole list first, so that a reader of many values keeps no more than
   * one status at a time.
   */
  default void forEachValueStatus(KeySelector selector, Consumer<? super BaseValueStatus> action) {
    Objects.requireNonNull(selector, "selector (KeySelector.any() for every key)");
    Objects.requireNonNull(action, "action");
    for (BaseValueStatus s : valueStatuses()) {
      if (selector.test(s.key())) {
        action.accept(s);
      }
    }
  }

  /**
   * Subscribes to status changes of base values accepted by {@code selector}: after each
   * transaction, one status per changed base key, keys ascending (a removed value is reported once
   * as REMOVED).
   */
  Subscription watchValueStatus(KeySelector selector, ValueStatusListener listener);

  /**
   * Waits until base value {@code key} is in {@code state}, at most {@code timeout}: returns at
   * once when it is already. Waiting for NONEXISTENT ends also when the value is REMOVED. Built on
   * {@link #watchValueStatus}, so statuses reach it through the status executor; do not call it
   * from the thread that delivers statuses (a listener, or any descriptor callback when statuses
   * are delivered on the engine thread), as it would wait for itself.
   *
   * @return true when the value reached {@code state}, false when {@code timeout} passed first
   * @throws InterruptedException if the calling thread is interrupted while waiting
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  default boolean awaitState(String key, ValueState state, Duration timeout)
      throws InterruptedException {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
    }
    Predicate<ValueState> reached =
        s -> s == state || (state == ValueState.NONEXISTENT && s == ValueState.REMOVED);
    CountDownLatch latch = new CountDownLatch(1);
    try (Subscription ignored =
        watchValueStatus(
            KeySelector.exact(key),
            status -> {
              if (status.key().equals(key) && reached.test(status.state())) {
                latch.countDown();
              }
            })) {
      return reached.test(valueStatus(key).state())
          || latch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  /** Records of transactions started within [since, until], oldest first. */
  List<RecordedTxn> transactionHistory(Instant since, Instant until);

  /** Every recorded transaction still in the history, oldest first. */
  default List<RecordedTxn> transactionHistory() {
    return transactionHistory(Instant.MIN, Instant.MAX);
  }

  /** The record of transaction {@code seqNum}, if still in the history. */
  Optional<RecordedTxn> recordedTransaction(long seqNum);

  /**
   * Values of {@code descriptor} in the given view (base values only), typed by its value and
   * metadata classes. A desired value of another class than the descriptor's (INVALID) is left out.
   *
   * @throws IllegalArgumentException if the descriptor is not registered (another descriptor of the
   *     same name counts as not registered unless it has the same value and metadata classes), or
   *     the view is SB and the descriptor has no Retrieve
   * @throws IllegalStateException as {@link #dumpValues(String, View)}
   */
  <V, M> List<KVWithMetadata<V, M>> dumpValues(KVDescriptor<V, M> descriptor, View view);

  /**
   * Values of descriptor {@code descriptorName} in the given view (base values only), for callers
   * that know the descriptor by name only ({@link #dumpValues(KVDescriptor, View)} when you hold
   * the descriptor).
   *
   * @throws IllegalArgumentException if the descriptor is not registered, or the view is SB and the
   *     descriptor has no Retrieve
   * @throws IllegalStateException for the SB view, when called from a southbound call that runs on
   *     a call thread (with an operation timeout): the engine, which runs Retrieve, is waiting for
   *     that call
   */
  List<KVWithMetadata<Object, Object>> dumpValues(String descriptorName, View view);

  /**
   * Like {@link #dumpValues(String, View)} for the descriptor whose NB key prefix equals {@code
   * keyPrefix}.
   *
   * @throws IllegalArgumentException if no descriptor has that prefix
   */
  List<KVWithMetadata<Object, Object>> dumpValuesByKeyPrefix(String keyPrefix, View view);

  /**
   * Validates values (and their derived values) with their descriptors without touching the graph.
   * Values without descriptor are skipped.
   *
   * @return one entry per invalid value, empty when all are valid
   */
  List<KeyError> validateSemantically(List<KeyValuePair> values);

  /** Revisions of {@code key}, oldest first (bounded by the history limits). */
  List<NodeRevision> keyTimeline(String key);

  /** The revision of every key valid at {@code time}, sorted by key. */
  List<NodeRevision> graphSnapshot(Instant time);

  /**
   * Counts recorded revisions (of keys accepted by {@code selector}) per value of {@code flag}.
   * Flags: {@code value-state}, {@code unavailable}, {@code error}, {@code last-update}, {@code
   * descriptor}, {@code derived}.
   */
  FlagStats flagStats(String flag, KeySelector selector);

  /**
   * Explains why a value is not CONFIGURED: the chain of causes down to the roots (missing key,
   * invalid value, failed dependency, dependency cycle), one line per cause, indented by depth
   * (beyond 32 levels the indentation stops growing and the line starts with its depth, e.g. {@code
   * (40) }). Empty for unknown keys.
   *
   * @throws IllegalStateException when called from a southbound call that runs on a call thread
   *     (with an operation timeout): the explanation is made on the engine thread, which is waiting
   *     for that call
   */
  List<String> explain(String key);

  /**
   * Explains why a value is in its state, as a tree of causes (the data behind {@link #explain}):
   * {@link Explanation.Reason#UNKNOWN_KEY} for unknown keys, {@link Explanation.Reason#APPLIED} for
   * a value without problem.
   *
   * @throws IllegalStateException as {@link #explain}
   */
  Explanation explanation(String key);

  /**
   * Stops the scheduler. The transaction being processed, if any, is finished (its southbound calls
   * are not interrupted); every transaction and request still queued, including those of callers
   * waiting for room in a full queue, fails at once with an {@link IllegalStateException}
   * ("scheduler was closed"), and nothing queued reaches the southbound. The same as {@link
   * #close(Duration) close(Duration.ofSeconds(20))}: waits up to 10 s for the engine thread to
   * finish; a southbound call still running then is interrupted, and waited for up to 10 s more.
   * Called from a descriptor callback, returns at once: the engine stops when the callback's
   * transaction is finished. Later transactions, notifications and registrations throw {@link
   * IllegalStateException}; closing again has no effect.
   */
  @Override
  void close();

  /**
   * Stops the scheduler as {@link #close()} does, waiting at most about {@code timeout}: half of it
   * for the transaction being processed to finish, then, when a southbound call is still running,
   * it is interrupted and waited for the rest of the time. Whatever is still running then is left
   * behind and named in a warning (logger {@code io.kvscheduler.internal.engine.EngineLoop}): the
   * engine thread, in a callback that ignores the interrupt (a daemon thread, which ends when the
   * callback returns: the southbound calls its transaction would make next fail at once, so none
   * reaches the southbound after this returned), and calls abandoned after their operation timeout.
   * {@code Duration.ZERO} interrupts the transaction in hand at once and waits for nothing.
   *
   * @return true when everything the scheduler ran has ended; false when something was left behind
   *     (or when called from a descriptor callback, which cannot wait for the engine thread)
   * @throws IllegalArgumentException if {@code timeout} is negative
   */
  boolean close(Duration timeout);
}
