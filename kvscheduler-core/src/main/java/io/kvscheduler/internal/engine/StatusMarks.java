package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.Objects;

/**
 * Marks the status of nodes during the walk: INVALID and FAILED/RETRYING values with their error,
 * states set by an operation, and the transaction-wide flags these marks raise (a failure of one of
 * the transaction's own values, a RETRYING or UNIMPLEMENTED value seen, a key whose southbound
 * content is unknown after a failed call).
 */
final class StatusMarks {
  private final Graph graph;
  private final Registry registry;
  private final Transaction txn;

  StatusMarks(Graph graph, Registry registry, Transaction txn) {
    this.graph = graph;
    this.registry = registry;
    this.txn = txn;
  }

  /** Marks {@code node} INVALID with {@code err}, records {@code op}; returns {@code err}. */
  Throwable markInvalid(Node node, OpRecord op, Throwable err) {
    err = sameAsBefore(node.error != null ? node.error : op.prevErr, err);
    noteOwnFailure(node, op.revert);
    node.unavailable = true;
    op.newErr = err;
    op.noop = true;
    setState(node, op, ValueState.INVALID);
    node.error = err;
    node.errorRetriable = false;
    node.errorOp = op.op;
    txn.ops.add(op);
    return err;
  }

  /**
   * {@code before} when {@code err} says the same (same class, same message), else {@code err}: a
   * value found invalid again for the same reason (each resync validates it anew) keeps one error
   * object and message, rather than a new one per transaction held by statuses and the history.
   */
  static Throwable sameAsBefore(Throwable before, Throwable err) {
    if (before != null
        && err != null
        && before != err
        && before.getClass() == err.getClass()
        && Objects.equals(before.getMessage(), err.getMessage())) {
      return before; // both contained on entry: reading them does not throw
    }
    return err;
  }

  private void noteOwnFailure(Node node, boolean revert) {
    if (!revert && txn.revertOnFailure() && txn.ownKeys.contains(node.baseKey())) {
      txn.ownFailed = true;
    }
  }

  /**
   * Marks {@code node} FAILED, or RETRYING when the error is {@code retriable}, its last update
   * asks for retries, attempts remain and no revert follows. {@code revert}: the failed operation
   * is itself part of a revert. Returns the state set.
   */
  ValueState markFailed(
      Node node, boolean revert, Throwable err, boolean retriable, TxnOperation failedOp) {
    noteOwnFailure(node, revert);
    if (readable(node)) {
      txn.unread.add(node.key); // a call failed: the southbound may hold anything for the key
    }
    ValueState state = ValueState.FAILED;
    boolean toBeReverted = txn.isNB() && txn.revertOnFailure() && !revert;
    int attempt = 1;
    if (txn.isRetry() && txn.retryKeys.contains(node.baseKey())) {
      attempt = txn.retryAttempt + 1;
    }
    if (retriable && !toBeReverted) {
      Node.LastUpdate lu = node.lastUpdate;
      if (lu != null
          && lu.retry() != null
          && (lu.retry().maxCount() == 0 || attempt <= lu.retry().maxCount())) {
        state = ValueState.RETRYING;
      }
    }
    if (state == ValueState.RETRYING) {
      txn.sawRetrying = true;
    }
    node.state = state;
    node.error = err;
    node.errorRetriable = retriable;
    node.errorOp = failedOp;
    node.retryAttempt = attempt;
    return state;
  }

  /**
   * True when a refresh can read {@code node}: its descriptor (of a derived value: its base's) can
   * Retrieve. What the southbound holds for a value nothing can read stays the scheduler's best
   * guess.
   */
  private boolean readable(Node node) {
    Node base = node.isDerived() ? graph.get(node.derivedFrom) : node;
    DescriptorHandle handle = base == null ? null : registry.forNode(base);
    return handle != null && handle.canRetrieve();
  }

  /**
   * The error a call for {@code node} fails with, without being made, while what the southbound
   * holds for its base is unknown ({@link Transaction#unreadBefore}); null otherwise.
   */
  Throwable unknownState(Node node) {
    if (txn.unreadBefore.isEmpty() || !txn.pass.validates()) {
      return null;
    }
    String base = node.baseKey();
    return txn.unreadBefore.contains(base) ? new UnreadStateException(base) : null;
  }

  /** Clears the error of {@code node}. */
  static void clearError(Node node) {
    node.error = null;
    node.errorRetriable = false;
    node.errorOp = TxnOperation.UNDEFINED;
  }

  /** Sets state {@code s} on {@code node} and as the new state of {@code op}. */
  void setState(Node node, OpRecord op, ValueState s) {
    if (s == ValueState.UNIMPLEMENTED) {
      txn.sawUnimplemented = true;
    }
    node.state = s;
    op.newState = s;
  }
}
