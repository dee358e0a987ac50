package io.kvscheduler.api;

import java.time.Duration;
import java.util.Objects;

/**
 * Observes the scheduler's work as it happens, for metrics, tracing or logs of one's own: the start
 * and end of each transaction and each southbound call (Create, Update, Delete, Retrieve) with its
 * duration and outcome. Set one with {@link KVSchedulerBuilder#operationListener}; every method has
 * an empty default, so a listener overrides only what it needs.
 *
 * <p><b>Threads.</b> Transaction events come on the engine thread, in order: {@code
 * transactionStarted}, the transaction's calls, {@code transactionEnded}, before the committer
 * learns the outcome (a {@code commit()} that returned was seen by the listener). A southbound call
 * is reported on the thread that waited for it, right after it returned: the engine thread, or,
 * when calls run in parallel ({@link KVSchedulerBuilder#parallelism}), one of the scheduler's call
 * threads, so {@link #southboundCall} may be called from several threads at once and must be
 * thread-safe. Durations are measured with {@link System#nanoTime()}, not with the scheduler's
 * clock.
 *
 * <p><b>Cost.</b> The engine waits while a method runs: keep it short (count, record a timer, hand
 * the event to a queue of one's own). Without a listener nothing is measured or allocated.
 *
 * <p><b>Guarded.</b> What a method throws is caught: the first failure is logged as an error with
 * its stack trace, later ones are not logged; the scheduler goes on as if the method had returned.
 * Inside a method, as inside a descriptor callback, a blocking {@link Txn#commit()} or waiting on
 * {@link Txn#commitAsync}'s future fails at once with an {@link IllegalStateException}: the
 * transaction could only run after the one being processed.
 */
public interface OperationListener {

  /** A transaction begins: before its preparation (a resync's Retrieve calls come after this). */
  default void transactionStarted(TxnStarted txn) {}

  /** A transaction ended: recorded and published, its caller not told yet. */
  default void transactionEnded(TxnEnded txn) {}

  /** A southbound call returned, failed or overran its time limit. */
  default void southboundCall(SouthboundCall call) {}

  /** The kind of a southbound call. */
  enum Call {
    CREATE,
    UPDATE,
    DELETE,
    RETRIEVE
  }

  /** How a southbound call ended. */
  enum CallOutcome {
    /** The callback returned. */
    OK,
    /** The callback threw (or returned something its contract forbids). */
    ERROR,
    /** The callback did not return within its operation timeout and is no longer awaited. */
    TIMEOUT
  }

  /** How a transaction ended. */
  enum TxnOutcome {
    /** No value failed. */
    OK,
    /** Some value failed: the transaction's {@link TransactionException} names them. */
    FAILED,
    /** An internal error stopped the transaction; its changes were rolled back. */
    ABORTED
  }

  /**
   * A transaction that begins.
   *
   * @param seqNum its sequence number (as in {@link RecordedTxn#seqNum()})
   * @param type its kind
   * @param resync the resync it asks for ({@link ResyncType#NOT_RESYNC} when none)
   */
  record TxnStarted(long seqNum, TxnType type, ResyncType resync) {
    public TxnStarted {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(resync, "resync");
    }
  }

  /**
   * A transaction that ended.
   *
   * @param seqNum its sequence number
   * @param type its kind
   * @param resync the resync it asked for
   * @param outcome how it ended
   * @param failedKeys how many keys failed (those the {@link TransactionException} lists)
   * @param duration from {@code transactionStarted} to this event
   */
  record TxnEnded(
      long seqNum,
      TxnType type,
      ResyncType resync,
      TxnOutcome outcome,
      int failedKeys,
      Duration duration) {
    public TxnEnded {
      Objects.requireNonNull(type, "type");
      Objects.requireNonNull(resync, "resync");
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(duration, "duration");
    }
  }

  /**
   * A southbound call of a descriptor.
   *
   * @param seqNum the transaction it was made for, or -1 outside a transaction (a dump of the
   *     southbound view, {@link View#SB})
   * @param descriptor the descriptor's name
   * @param call its kind
   * @param key the value's key; null for a Retrieve
   * @param outcome how it ended
   * @param error what it threw (an {@link OperationTimeoutException} for a timeout); null when OK
   * @param duration how long the engine (or the call thread) waited for it
   */
  record SouthboundCall(
      long seqNum,
      String descriptor,
      Call call,
      String key,
      CallOutcome outcome,
      Throwable error,
      Duration duration) {
    public SouthboundCall {
      Objects.requireNonNull(descriptor, "descriptor");
      Objects.requireNonNull(call, "call");
      Objects.requireNonNull(outcome, "outcome");
      Objects.requireNonNull(duration, "duration");
    }
  }
}
