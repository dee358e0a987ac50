package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.internal.collect.RecursionPath;
import io.kvscheduler.internal.engine.calls.UnreadStateException;
import io.kvscheduler.internal.engine.graph.Touched;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The state of one transaction, from the dequeued request to the published snapshot. Each phase of
 * {@link TxnProcessor} fills in its part and hands the object on:
 *
 * <ol>
 *   <li><b>preparation</b> ({@link TxnPreparer}): what the request asks ({@link #request}: type,
 *       options, values, the retry it continues; immutable), the keys to read first;
 *   <li><b>ordering</b>: {@link #sortedValues};
 *   <li><b>passes of the walk</b> ({@link TxnExecutor}, {@link Walker}): a simulation, a planning
 *       pass (a simulation that writes down the calls to run ahead in parallel) and the execution,
 *       each of its own kind ({@link WalkPass}) and started by {@link #startPass}, which empties
 *       the pass's state: its operations, the statuses it changed, the keys it left unread, and
 *       what it saw;
 *   <li><b>post-processing</b> ({@link PostProcessor}): reads the execution's outcome, the keys the
 *       transaction touched ({@link #touched}) and the failed keys refreshed after it.
 * </ol>
 *
 * <p>Passes run one after another on the engine thread; nothing here is shared with another thread.
 */
public final class Transaction {
  final long seq;

  /** The keys the transaction wrote (what publishing reads). */
  final Touched touched;

  /** The scheduler's clock: the times of the southbound calls. */
  final Clock clock;

  // ---- the request, as preparation made it ----

  /** What the transaction was asked (set once by {@link TxnPreparer}). */
  TxnRequest request = TxnRequest.NONE;

  /** The request's values sorted by key (set by the ordering step, reused by the record). */
  List<ValueToApply> sortedValues;

  /** True once the transaction counted as a resync (undone when it is aborted). */
  boolean countedResync;

  /** The request asks for a simulation before the execution (its plan is recorded). */
  boolean simulateFirst;

  /** Nothing to execute (no values, or a simulation that planned nothing). */
  boolean skip;

  /**
   * The operations recording the keys the request assumes absent ({@link AssumedAbsence}), made
   * before the walk: the first of the recorded ones.
   */
  List<OpRecord> assumedAbsent = List.of();

  /**
   * Base keys read again before the transaction (their dependents follow what the read found): the
   * key of a late southbound answer ({@link TxnPreparer#prepareLate}), and keys left unread by
   * earlier transactions ({@link UnreadKeys}) that a Retrieve has now answered for.
   */
  Set<String> readFirst = Set.of();

  /**
   * Descriptors whose Retrieve failed in the resync's refresh ({@link TxnPreparer#prepareNb}): the
   * transaction fails with them, and their values are unread.
   */
  List<RetrieveError> retrieveErrors = List.of();

  /** Base keys of the values that failed, refreshed after the execution (refreshFailed). */
  List<String> refreshedFailed = List.of();

  // ---- the current pass of the walk (see startPass) ----

  /** What kind of pass the walk is: simulation, planning or execution. */
  WalkPass pass = WalkPass.SIMULATION;

  /** Retry options of an NB transaction (null when none or not NB); set for each pass. */
  RetryOptions nbRetry;

  /**
   * True for a downstream resync given no retry options: it re-applies the NB intent as it is, so
   * each value keeps the retry settings of the transaction that last set it (as notifications and
   * retries do) instead of losing them. Set for each pass.
   */
  boolean inheritRetry;

  /** Keys on the current recursion path (cycle guard; empty between visits). */
  RecursionPath branch;

  /** The pass's operations, in the order the walk made them. */
  List<OpRecord> ops = new ArrayList<>();

  /**
   * Pairs of the transaction ignored because their key holds a derived value, and derived values
   * skipped because their key holds another value (no operation, so not among {@link #ops}):
   * reported as key errors of the transaction.
   */
  List<KeyError> ignored = new ArrayList<>();

  /** Keys of derived values reported as conflicting in {@link #ignored} (each once per pass). */
  Set<String> conflicts = new HashSet<>();

  /**
   * Base keys whose status changed, in order of change; a key may repeat (only immediate repeats,
   * e.g. a base and its derived values, are skipped): consumers deduplicate when they need to.
   */
  ArrayList<String> changedStatus = new ArrayList<>();

  /**
   * Base keys of the transaction's own values (B100: only their failures trigger revert); filled
   * only when {@link #revertOnFailure()} (empty and read only otherwise).
   */
  Set<String> ownKeys = Set.of();

  /** Set when a node whose base key is one of {@link #ownKeys} fails (not during revert). */
  boolean ownFailed;

  /**
   * Keys whose southbound call failed in this pass and that no refresh has read since: what the
   * southbound holds for them is unknown (the failure may have left anything), so the pass makes no
   * further call for them — a later call would name an old value the southbound may not hold.
   */
  Set<String> unread = new HashSet<>();

  /**
   * Base keys whose southbound state was unknown when the pass started: a call failed in an earlier
   * transaction and no Retrieve has answered since. The walk makes no call for them or their
   * derived values: each such call fails with {@link UnreadStateException} (retriable).
   */
  Set<String> unreadBefore = Set.of();

  /** Set when the walk made a value UNIMPLEMENTED. */
  boolean sawUnimplemented;

  /** Set when the walk met a value that was or became RETRYING (retry planning needed). */
  boolean sawRetrying;

  Transaction(long seq, Clock clock) {
    this.seq = seq;
    this.clock = clock;
    this.touched = new Touched(seq);
  }

  /**
   * Starts a pass of the walk of kind {@code pass} with an empty recursion path, with the keys
   * {@code unreadBefore} unknown. With {@code keepOutcome} (an execution after a simulation that
   * planned nothing: it makes no call), what the simulation noticed stays the transaction's
   * outcome: the statuses it changed, the pairs it ignored and the values it left unimplemented.
   */
  void startPass(
      WalkPass pass, RecursionPath emptyPath, Set<String> unreadBefore, boolean keepOutcome) {
    this.pass = pass;
    this.nbRetry = isNB() ? request.options().retry().orElse(null) : null;
    this.inheritRetry = isNB() && request.resync() == ResyncType.DOWNSTREAM && nbRetry == null;
    this.branch = emptyPath;
    this.unreadBefore = unreadBefore;
    this.ops = new ArrayList<>();
    if (!keepOutcome) {
      this.ignored = new ArrayList<>();
      this.conflicts = new HashSet<>();
      this.changedStatus = new ArrayList<>();
      this.sawUnimplemented = false;
    }
    this.ownKeys = revertOnFailure() ? new HashSet<>() : Set.of();
    this.ownFailed = false;
    this.unread = new HashSet<>();
    this.sawRetrying = false;
  }

  /** Adds {@code keys} to {@link #readFirst}. */
  void addReadFirst(Set<String> keys) {
    if (readFirst.isEmpty()) {
      readFirst = keys;
      return;
    }
    Set<String> out = new TreeSet<>(readFirst);
    out.addAll(keys);
    readFirst = out;
  }

  /** Notes that the status of base value {@code baseKey} changed. */
  void statusChanged(String baseKey) {
    int last = changedStatus.size() - 1;
    if (last < 0 || !changedStatus.get(last).equals(baseKey)) {
      changedStatus.add(baseKey);
    }
  }

  boolean isNB() {
    return request.isNB();
  }

  boolean isRetry() {
    return request.type() == TxnType.RETRY_FAILED_OPS;
  }

  /** An NB transaction undone as a whole when one of its own values fails. */
  boolean revertOnFailure() {
    return isNB() && request.options().revert();
  }
}
