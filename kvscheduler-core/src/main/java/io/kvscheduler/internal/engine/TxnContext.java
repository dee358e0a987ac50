package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** State of one execution pass (simulation or real) of a transaction. */
final class TxnContext {
  final long seq;
  final TxnType type;
  final boolean simulate;

  /** Retry options of an NB transaction (null when none or not NB). */
  final RetryOptions nbRetry;

  /**
   * True for a downstream resync given no retry options: it re-applies the NB intent as it is, so
   * each value keeps the retry settings of the transaction that last set it (as notifications and
   * retries do) instead of losing them.
   */
  boolean inheritRetry;

  final boolean revertOnFailure;

  /** For retry transactions: base keys being retried and the attempt number. */
  final Set<String> retryKeys;

  final int retryAttempt;

  final List<OpRecord> ops = new ArrayList<>();

  /**
   * Pairs of the transaction ignored because their key holds a derived value (no operation, so not
   * among {@link #ops}): reported as key errors of an NB transaction.
   */
  final List<KeyError> ignored = new ArrayList<>();

  /** {@link Graph#departures()} when the pass started. */
  long departuresAtStart;

  /**
   * Base keys whose status changed, in order of change; a key may repeat (only immediate repeats,
   * e.g. a base and its derived values, are skipped): consumers deduplicate when they need to.
   */
  final ArrayList<String> changedStatus = new ArrayList<>();

  /**
   * Base keys of the transaction's own values (B100: only their failures trigger revert); filled
   * only when {@link #revertOnFailure} (empty and read only otherwise).
   */
  final Set<String> ownKeys;

  /** Set when a node whose base key is one of {@link #ownKeys} fails (not during revert). */
  boolean ownFailed;

  /**
   * Keys whose southbound call failed in this pass and that no refresh has read since: what the
   * southbound holds for them is unknown (the failure may have left anything), so the pass makes no
   * further call for them — a later call would name an old value the southbound may not hold.
   */
  final Set<String> unread = new HashSet<>();

  /**
   * Base keys whose southbound state was unknown when the transaction started: a call failed in an
   * earlier transaction and no Retrieve has answered since. The walk makes no call for them or
   * their derived values: each such call fails with {@link UnreadStateException} (retriable).
   */
  Set<String> unreadBefore = Set.of();

  /** Set when the walk made a value UNIMPLEMENTED. */
  boolean sawUnimplemented;

  /** Set when the walk met a value that was or became RETRYING (retry planning needed). */
  boolean sawRetrying;

  /**
   * In a planning pass (a simulation that validates, made only to know the calls ahead): where the
   * walk writes down each southbound call it would make. Null in any other pass.
   */
  CallPlan plan;

  /** The scheduler's clock: the times of the southbound calls. */
  java.time.Clock clock = java.time.Clock.systemUTC();

  /**
   * In a real pass whose calls ran ahead ({@link ParallelCalls}): what they returned, handed to the
   * walk call by call. Null when the walk calls the southbound itself.
   */
  CallPlan ranAhead;

  /** Keys on the current recursion path (cycle guard; empty between visits). */
  final RecursionPath branch;

  /** {@code branch}: an empty path, shared by the passes of one engine (one at a time). */
  TxnContext(
      long seq,
      TxnType type,
      boolean simulate,
      RetryOptions nbRetry,
      boolean revertOnFailure,
      Set<String> retryKeys,
      int retryAttempt,
      RecursionPath branch) {
    this.seq = seq;
    this.type = type;
    this.simulate = simulate;
    this.nbRetry = nbRetry;
    this.revertOnFailure = revertOnFailure;
    this.retryKeys = retryKeys;
    this.retryAttempt = retryAttempt;
    this.ownKeys = revertOnFailure ? new HashSet<>() : Set.of();
    this.branch = branch;
  }

  /** Notes that the status of base value {@code baseKey} changed. */
  void statusChanged(String baseKey) {
    int last = changedStatus.size() - 1;
    if (last < 0 || !changedStatus.get(last).equals(baseKey)) {
      changedStatus.add(baseKey);
    }
  }

  boolean isNB() {
    return type == TxnType.NB_TRANSACTION;
  }

  boolean isRetry() {
    return type == TxnType.RETRY_FAILED_OPS;
  }
}
