package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.Objects;

/**
 * Marks the status of nodes during the walk: INVALID values with their error, states set by an
 * operation, and the transaction-wide flags these marks raise (an UNIMPLEMENTED value seen). What a
 * failed call means is decided by {@link FailurePolicy}.
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
    err = sameAsBefore(node.error() != null ? node.error() : op.prevErr, err);
    FailurePolicy.noteOwnFailure(txn, node, op.revert);
    node.setUnavailable(true);
    op.newErr = err;
    op.noop = true;
    setState(node, op, ValueState.INVALID);
    node.setError(err);
    node.setErrorRetriable(false);
    node.setErrorOp(op.op);
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

  /**
   * Marks {@code node} FAILED or RETRYING after its call {@code failedOp} failed with {@code err}:
   * {@link FailurePolicy#markFailed} (row F2). Returns the state set.
   */
  ValueState markFailed(
      Node node, boolean revert, Throwable err, boolean retriable, TxnOperation failedOp) {
    return FailurePolicy.markFailed(graph, registry, txn, node, revert, err, retriable, failedOp);
  }

  /** Clears the error of {@code node}. */
  static void clearError(Node node) {
    node.setError(null);
    node.setErrorRetriable(false);
    node.setErrorOp(TxnOperation.UNDEFINED);
  }

  /** Sets state {@code s} on {@code node} and as the new state of {@code op}. */
  void setState(Node node, OpRecord op, ValueState s) {
    if (s == ValueState.UNIMPLEMENTED) {
      txn.sawUnimplemented = true;
    }
    node.setState(s);
    op.newState = s;
  }
}
