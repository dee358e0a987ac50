package io.kvscheduler.api;

import io.kvscheduler.internal.engine.SchedulerImpl;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;

/** Builds a {@link KVScheduler}. Every setting has a default, stated on its method. */
public final class KVSchedulerBuilder {
  private final SchedulerConfig.Mutable cfg = new SchedulerConfig.Mutable();

  KVSchedulerBuilder() {}

  /** Clock for records, history and retry timing. Default: the system UTC clock. */
  public KVSchedulerBuilder clock(Clock clock) {
    cfg.clock = Objects.requireNonNull(clock, "clock");
    return this;
  }

  /** Runs delayed tasks (retries). Default: a daemon scheduled executor. */
  public KVSchedulerBuilder delayScheduler(DelayScheduler scheduler) {
    cfg.delayScheduler = Objects.requireNonNull(scheduler, "scheduler");
    return this;
  }

  /**
   * Delivers value statuses to watchers. Default: one daemon thread per scheduler. Pass {@code
   * Runnable::run} to deliver on the engine thread (deterministic tests).
   */
  public KVSchedulerBuilder statusExecutor(Executor executor) {
    cfg.statusExecutor = Objects.requireNonNull(executor, "executor");
    return this;
  }

  /** Capacity of the transaction queue. Default: 200. */
  public KVSchedulerBuilder queueCapacity(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("queue capacity must be >= 1, got " + capacity);
    }
    cfg.queueCapacity = capacity;
    return this;
  }

  /** Simulate every NB transaction and SB notification first. Default: false. */
  public KVSchedulerBuilder enableTxnSimulation(boolean enable) {
    cfg.simulation = enable;
    return this;
  }

  /** Write the transaction log (logger {@code io.kvscheduler.txn}, INFO). Default: true. */
  public KVSchedulerBuilder printTxnSummary(boolean print) {
    cfg.printTxnSummary = print;
    return this;
  }

  /**
   * Values and operations listed per transaction in the transaction log, at most: a longer list
   * ends with {@code … and M more (KVScheduler.recordedTransaction(N) has them all)} (see {@link
   * #txnLogMoreHint}), the whole of it staying in the transaction history. Whatever this limit, a
   * value's text is cut at {@value Excerpt#MAX_MESSAGE_CHARS} characters, followed by {@code … N
   * more characters}. Default: 50; 0 lists every one.
   *
   * @throws IllegalArgumentException if {@code max} is negative
   */
  public KVSchedulerBuilder txnLogMaxItems(int max) {
    if (max < 0) {
      throw new IllegalArgumentException("txnLogMaxItems must not be negative, got " + max);
    }
    cfg.txnLogMaxItems = max;
    return this;
  }

  /**
   * Where the transaction log sends a reader for the values and operations {@link #txnLogMaxItems}
   * left out: given the transaction's sequence number, the text between the parentheses of {@code …
   * and M more (…)} (cut at {@value Excerpt#MAX_QUOTED_CHARS} characters; a hint that throws is
   * left out). An application that serves its records elsewhere names that place, as the agent
   * names its REST address. Default: {@code KVScheduler.recordedTransaction(N) has them all}.
   */
  public KVSchedulerBuilder txnLogMoreHint(LongFunction<String> hint) {
    cfg.txnLogMoreHint = Objects.requireNonNull(hint, "hint");
    return this;
  }

  /** Text of a value in the transaction log. Default: {@code String.valueOf}. */
  public KVSchedulerBuilder valueFormatter(Function<Object, String> formatter) {
    cfg.valueFormatter = Objects.requireNonNull(formatter, "formatter");
    return this;
  }

  /** Keep transaction records and graph revisions. Default: true. */
  public KVSchedulerBuilder recordHistory(boolean record) {
    cfg.recordHistory = record;
    return this;
  }

  /**
   * Drop records and revisions older than this. Default: 24 hours.
   *
   * @throws IllegalArgumentException if {@code age} is not positive (to keep no history, use {@link
   *     #recordHistory(boolean) recordHistory(false)})
   */
  public KVSchedulerBuilder historyAgeLimit(Duration age) {
    cfg.historyAgeLimit = positive(age, "historyAgeLimit");
    return this;
  }

  /**
   * Records from this long after start are kept regardless of age. Default: 1 hour.
   *
   * @throws IllegalArgumentException if {@code period} is negative (zero keeps none that way)
   */
  public KVSchedulerBuilder permanentHistoryPeriod(Duration period) {
    Objects.requireNonNull(period, "permanentHistoryPeriod");
    if (period.isNegative()) {
      throw new IllegalArgumentException(
          "permanentHistoryPeriod must not be negative, got " + period);
    }
    cfg.permanentHistoryPeriod = period;
    return this;
  }

  /** At most this many transaction records are kept (oldest dropped first). Default: 100 000. */
  public KVSchedulerBuilder historyMaxRecords(int max) {
    if (max < 1) {
      throw new IllegalArgumentException("historyMaxRecords must be >= 1, got " + max);
    }
    cfg.historyMaxRecords = max;
    return this;
  }

  /**
   * The transaction history's byte budget: when the records kept take more than this (estimated),
   * the oldest are dropped first, whatever their age, down to the newest one. A record's size is
   * estimated from its input values and recorded values ({@link #valueSizeEstimator}), keys and
   * error messages, plus a fixed cost per value and operation. A value held by several records is
   * counted in each, so the estimate errs on the large side. Default: 64 MiB.
   *
   * @throws IllegalArgumentException if {@code bytes} is not positive
   */
  public KVSchedulerBuilder historyMaxBytes(long bytes) {
    if (bytes < 1) {
      throw new IllegalArgumentException("historyMaxBytes must be >= 1, got " + bytes);
    }
    cfg.historyMaxBytes = bytes;
    return this;
  }

  /**
   * Estimates the bytes a value takes, for the history's byte budget ({@link #historyMaxBytes}).
   * Called on the engine thread for the values of each recorded transaction, so it should be cheap
   * (a protobuf message's serialized size, which the message caches, is a good one). An estimator
   * that throws or returns a negative number counts the value as {@code 64} bytes. Default: two
   * bytes per character of a {@link CharSequence}, the length of a {@code byte[]}, {@code 64} bytes
   * for anything else.
   */
  public KVSchedulerBuilder valueSizeEstimator(ToLongFunction<Object> estimator) {
    cfg.valueSizeEstimator = Objects.requireNonNull(estimator, "estimator");
    return this;
  }

  /**
   * Bounds every southbound call (Create, Update, Delete, Retrieve) of descriptors that set no
   * timeout of their own ({@link KVDescriptor.Builder#operationTimeout}): a call still running
   * after {@code timeout} is interrupted and no longer awaited, and the operation fails with an
   * {@link OperationTimeoutException} (retried like any failure when the transaction asked for
   * retries). With a timeout, calls run on a separate call thread while the engine waits; a call
   * that ignores the interrupt may still finish later, concurrently with later calls, and its
   * result is dropped (the failed value's key is refreshed through Retrieve after the transaction,
   * and again when the abandoned call returns, which shows what the southbound really did: e.g. a
   * Create that completed late leaves a value that a later removal deletes). Default: none — calls
   * run on the engine thread and may take as long as they take.
   *
   * @throws IllegalArgumentException if {@code timeout} is not positive
   */
  public KVSchedulerBuilder operationTimeout(Duration timeout) {
    cfg.operationTimeout = positive(timeout, "operationTimeout");
    return this;
  }

  static Duration positive(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " must be positive, got " + d);
    }
    return d;
  }

  /**
   * Verification mode for every transaction: after execution the changed values are read back
   * (Retrieve) and values whose southbound state differs from what was applied are reported as
   * failed keys. Per transaction: {@link TxnOptions.Builder#verify}. Default: false.
   */
  public KVSchedulerBuilder verifyMode(boolean verify) {
    cfg.verify = verify;
    return this;
  }

  /**
   * Runs a downstream resync (refresh from the southbound, then repair) every {@code period} plus a
   * random delay of up to {@code maxJitter}, so that changes made behind the scheduler's back are
   * repaired. Default: off.
   *
   * @throws IllegalArgumentException if the period is not positive or the jitter negative
   */
  public KVSchedulerBuilder periodicDownstreamResync(Duration period, Duration maxJitter) {
    Objects.requireNonNull(period, "period");
    Objects.requireNonNull(maxJitter, "maxJitter (Duration.ZERO for none)");
    if (period.isZero() || period.isNegative() || maxJitter.isNegative()) {
      throw new IllegalArgumentException(
          "periodic resync needs a positive period and a non-negative jitter, got "
              + period
              + " and "
              + maxJitter);
    }
    cfg.downstreamResyncPeriod = period;
    cfg.downstreamResyncJitter = maxJitter;
    return this;
  }

  /**
   * Name of the engine thread (and prefix of the scheduler's other threads). Default: {@code
   * kvscheduler}.
   *
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public KVSchedulerBuilder threadName(String name) {
    Objects.requireNonNull(name, "threadName");
    if (name.isBlank()) {
      throw new IllegalArgumentException("threadName must not be blank");
    }
    cfg.threadName = name;
    return this;
  }

  /**
   * Refuses NB values of keys that no registered descriptor selects: the commit throws an {@link
   * IllegalArgumentException} naming them, and nothing of the transaction is queued. Default: false
   * — such a value is accepted with a warning naming the key, and waits as UNIMPLEMENTED until a
   * descriptor that selects it is registered.
   */
  public KVSchedulerBuilder rejectUnselectedKeys(boolean reject) {
    cfg.rejectUnselectedKeys = reject;
    return this;
  }

  /**
   * How many southbound calls of one transaction may run at the same time, at most. Default: 1 —
   * every call runs after the one before, in the order of the walk.
   *
   * <p>Above 1, the calls of a transaction that do not depend on each other run concurrently on a
   * pool of this many threads: a call starts only once every call it depends on has returned (the
   * values it depends on, its base value (for a derived value's Create) or its derived values (for
   * a base value's Delete), earlier calls for the same key, and the calls its dependents must make
   * first when it is a Delete). Only descriptors that opted in ({@link
   * KVDescriptor.Builder#maxConcurrency}) have their calls run concurrently with each other; the
   * calls of any other descriptor run one at a time. The outcome — values' states, errors, the
   * recorded transaction and its order of operations — is the one the sequential walk gives; see
   * {@code docs/writing-a-descriptor.md} for what a descriptor may see run at the same time.
   *
   * @throws IllegalArgumentException if {@code parallelism} is below 1
   */
  public KVSchedulerBuilder parallelism(int parallelism) {
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be at least 1, got " + parallelism);
    }
    cfg.parallelism = parallelism;
    return this;
  }

  /**
   * Whether a transaction committed with revert on failure ({@link TxnOptions#revert}) runs its
   * calls in parallel too, under {@link #parallelism}. Default: false — such a transaction calls
   * the southbound one call after the other, so it makes exactly the calls of the sequential walk,
   * and stops at the first failure of one of its own values before anything beyond it reaches the
   * southbound.
   *
   * <p>With true, its independent calls overlap like those of any transaction. When a call of one
   * of its own values (or of a value derived from one) fails, no further call starts and the calls
   * still running are waited for. Calls that ran although they come after the failure in the walk's
   * order are then undone, newest first, before the revert undoes the values applied before the
   * failure, in reverse order. The recorded transaction lists each such call where the walk
   * stopped, followed by its undo (flagged {@code REVERT}), both flagged {@code RAN_AHEAD}; the
   * value keeps its intent from before the transaction. A call or undo that failed is recorded with
   * its error, its value is marked FAILED and its key read again from the southbound. Otherwise
   * states and the southbound's content end as with sequential calls; the southbound sees more
   * calls.
   */
  public KVSchedulerBuilder revertInParallel(boolean inParallel) {
    cfg.revertInParallel = inParallel;
    return this;
  }

  /**
   * Tells {@code listener} of each transaction's start and end and of each southbound call (key,
   * descriptor, operation, duration, outcome): for metrics or tracing without wrapping descriptors.
   * Its methods are guarded (what they throw is logged once and otherwise ignored); see {@link
   * OperationListener} for the threads they run on. Default: none.
   */
  public KVSchedulerBuilder operationListener(OperationListener listener) {
    cfg.operationListener = Objects.requireNonNull(listener, "listener");
    return this;
  }

  /** Builds and starts the scheduler (its engine thread). */
  public KVScheduler build() {
    return new SchedulerImpl(cfg.freeze());
  }
}
