package io.kvscheduler.internal.engine.config;

import io.kvscheduler.api.DelayScheduler;
import io.kvscheduler.api.OperationListener;
import io.kvscheduler.internal.engine.record.RecordSize;
import io.kvscheduler.internal.engine.record.TxnLogFormatter;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.function.ToLongFunction;

/** Immutable settings of a scheduler (see KVSchedulerBuilder for the defaults). */
public record SchedulerConfig(
    Clock clock,
    DelayScheduler delayScheduler,
    Executor statusExecutor,
    int queueCapacity,
    boolean simulation,
    boolean printTxnSummary,
    Function<Object, String> valueFormatter,
    boolean recordHistory,
    Duration historyAgeLimit,
    Duration permanentHistoryPeriod,
    int historyMaxRecords,
    long historyMaxBytes,
    ToLongFunction<Object> valueSizeEstimator,
    String threadName,
    boolean verify,
    Duration downstreamResyncPeriod,
    Duration downstreamResyncJitter,
    Duration operationTimeout,
    int txnLogMaxItems,
    LongFunction<String> txnLogMoreHint,
    boolean rejectUnselectedKeys,
    int parallelism,
    boolean revertInParallel,
    OperationListener operationListener) {

  /** Builder-side mutable settings. */
  public static final class Mutable {
    public Clock clock = Clock.systemUTC();
    public DelayScheduler delayScheduler;
    public Executor statusExecutor;
    public int queueCapacity = 200;
    public boolean simulation;
    public boolean printTxnSummary = true;
    public Function<Object, String> valueFormatter = String::valueOf;
    public boolean recordHistory = true;
    public Duration historyAgeLimit = Duration.ofHours(24);
    public Duration permanentHistoryPeriod = Duration.ofHours(1);
    public int historyMaxRecords = 100_000;
    public long historyMaxBytes = 64L << 20;
    public ToLongFunction<Object> valueSizeEstimator = RecordSize::defaultValueSize;
    public String threadName = "kvscheduler";
    public boolean verify;
    public Duration downstreamResyncPeriod;
    public Duration downstreamResyncJitter = Duration.ZERO;

    /** Default limit of a southbound call; null = none. */
    public Duration operationTimeout;

    /** Values and operations printed per transaction in the log, at most; 0 = all. */
    public int txnLogMaxItems = 50;

    /** Where the log's "… and M more" sends a reader, given the transaction's number. */
    public LongFunction<String> txnLogMoreHint = TxnLogFormatter.LIBRARY_HINT;

    /** Refuse NB values of keys no descriptor selects (instead of a warning). */
    public boolean rejectUnselectedKeys;

    /** Southbound calls of one transaction that may run at the same time; 1 = one at a time. */
    public int parallelism = 1;

    /** Whether a transaction reverted on failure runs its calls in parallel too. */
    public boolean revertInParallel;

    /** Told of transactions and southbound calls; null = none. */
    public OperationListener operationListener;

    public SchedulerConfig freeze() {
      return new SchedulerConfig(
          clock,
          delayScheduler,
          statusExecutor,
          queueCapacity,
          simulation,
          printTxnSummary,
          valueFormatter,
          recordHistory,
          historyAgeLimit,
          permanentHistoryPeriod,
          historyMaxRecords,
          historyMaxBytes,
          valueSizeEstimator,
          threadName,
          verify,
          downstreamResyncPeriod,
          downstreamResyncJitter,
          operationTimeout,
          txnLogMaxItems,
          txnLogMoreHint,
          rejectUnselectedKeys,
          parallelism,
          revertInParallel,
          operationListener);
    }
  }
}
