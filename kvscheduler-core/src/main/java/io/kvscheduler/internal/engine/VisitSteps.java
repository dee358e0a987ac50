package io.kvscheduler.internal.engine;

import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Readiness;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;

/**
 * Entering and leaving a visit of the walk ({@link Walker}): on ENTER the key goes onto the
 * recursion path, the operation is decided and the key's last update set, and a visit with nothing
 * to do (or nothing it may do) ends at once; on EXIT what the operation left is settled and a
 * changed status is noted. The operation's own steps are {@link CreateUpdateSteps} and {@link
 * DeleteSteps}.
 */
final class VisitSteps {
  private final Graph graph;
  private final Registry registry;
  private final Transaction txn;
  private final StatusMarks marks;

  VisitSteps(Graph graph, Registry registry, Transaction txn, StatusMarks marks) {
    this.graph = graph;
    this.registry = registry;
    this.txn = txn;
    this.marks = marks;
  }

  /** ENTER: takes the key onto the path, decides the operation, then starts its step. */
  void enter(WalkFrame f) {
    Walker.Args a = f.args;
    String key = a.kv().key();
    if (!txn.branch.push(key)) {
      f.finish(null); // already on the recursion path: a dependency cycle
      return;
    }
    f.onPath = true;
    txn.pass.enterVisit();
    Node node = graph.write(key);
    OpRecord op = preRecord(a, node);
    f.node = node;
    f.op = op;
    ValueState prevState = node.state();
    f.prevState = prevState;
    f.prevOp = node.lastOperation();
    f.prevErr = OpRecord.msg(node.error());
    f.prevDetails = Readiness.details(graph, node);
    Node.LastUpdate prevUpdate = node.lastUpdate();
    f.prevUpdate = prevUpdate;

    if (a.depUpdate()) {
      op.op = depUpdateOperation(node);
      if (op.op == TxnOperation.UNDEFINED) {
        leave(f, null);
        return;
      }
    } else if (a.kv().value() == null) {
      op.op = TxnOperation.DELETE;
    } else if (node.value() == null || !node.isAvailable()) {
      op.op = TxnOperation.CREATE;
    } else {
      op.op = TxnOperation.UPDATE;
    }
    boolean failedEarlier = FailurePolicy.failedEarlier(txn, prevUpdate, prevState);
    if (node.held() != null && failedEarlier) { // F8
      // its call failed earlier in this transaction: what the southbound holds is unknown until
      // the refresh after the transaction (the failure may have left anything), so the walk goes
      // on as if nothing were there, as the reference does
      node.setHeld(null);
    }
    if (node.held() != null) {
      // the southbound still holds an object for the key: it is updated (or re-created), never
      // created a second time, and the operation starts from it
      if (op.op == TxnOperation.CREATE) {
        op.op = TxnOperation.UPDATE;
      }
      op.prevValue = node.held();
    }

    RetryOptions retry = null;
    if (txn.isNB() && !txn.inheritRetry) {
      retry = txn.nbRetry;
    } else if (prevUpdate != null) {
      retry = prevUpdate.retry();
    } else if (a.derived()) {
      Node base = graph.get(a.baseKey());
      if (base != null && base.lastUpdate() != null) {
        retry = base.lastUpdate().retry();
      }
    }
    node.setLastUpdate(lastUpdate(prevUpdate, op.op, a.kv(), retry));
    if (FailurePolicy.retryLost(node, node.lastUpdate())) {
      // the pending retry is obsolete now (new last-update) and no new one can be
      // scheduled: a RETRYING state would never be retried (e.g. kept by an inherited failure)
      node.setState(ValueState.FAILED);
    }

    // a value already broken by this transaction is not touched again, except by the revert
    // once a refresh has read it: until then what the southbound holds for it is unknown (even
    // whether a failed Create left an object that a removal would have to delete)
    if (failedEarlier && FailurePolicy.noCallAfterFailure(txn, a.kv().revert(), key)) {
      leave(f, node.error());
      return;
    }

    Throwable unknown = txn.pass.unknownState(txn, node);
    if (unknown != null) {
      // what the southbound holds is unknown: no call, and no status that would claim it (F7)
      op.newErr = unknown;
      op.newState =
          marks.markFailed(
              node, a.kv().revert(), unknown, FailurePolicy.isRetriable(null, unknown), op.op);
      txn.ops.add(op);
      txn.statusChanged(a.baseKey());
      if (!a.derived()) {
        // the base's new last update made the retries of its derived values obsolete (F13)
        FailurePolicy.settleObsoleteRetries(graph, txn, node, a.baseKey());
      }
      leave(f, unknown);
      return;
    }

    if (prevState == ValueState.RETRYING) {
      txn.sawRetrying = true;
    }
    switch (op.op) {
      case DELETE -> f.startDelete(a.depUpdate(), false, null);
      case CREATE -> f.phase = WalkPhase.CREATE;
      case UPDATE -> f.phase = WalkPhase.UPDATE;
      default -> f.endOperation(null);
    }
  }

  /** EXIT: settles what the operation left and notes a status change, then leaves the path. */
  void exit(WalkFrame f) {
    Walker.Args a = f.args;
    String key = a.kv().key();
    if (!a.derived()) {
      FailurePolicy.settleObsoleteRetries(graph, txn, graph.get(key), a.baseKey()); // F11
    }
    Node now = graph.get(key);
    boolean neverThere =
        f.prevState == ValueState.NONEXISTENT
            && f.prevUpdate == null
            && (now == null || now.value() == null); // e.g. the removal of an unknown key
    if (!neverThere
        && (f.prevUpdate == null
            || now == null
            || now.value() == null
            || f.prevState != now.state()
            || f.prevOp != now.lastOperation()
            || !f.prevErr.equals(OpRecord.msg(now.error()))
            || !f.prevDetails.equals(Readiness.details(graph, now)))) {
      txn.statusChanged(a.baseKey());
    }
    leave(f, f.opResult);
  }

  /**
   * The key's last update after this visit: {@code prev} itself when this transaction already asked
   * the same (a value visited again, e.g. created once its dependency appeared), so a second visit
   * allocates nothing.
   */
  private Node.LastUpdate lastUpdate(
      Node.LastUpdate prev, TxnOperation op, ValueToApply kv, RetryOptions retry) {
    if (prev != null
        && prev.seq() == txn.seq
        && prev.op() == op
        && prev.value() == kv.value()
        && prev.revert() == kv.revert()
        && prev.retry() == retry) {
      return prev;
    }
    return new Node.LastUpdate(txn.seq, op, kv.value(), kv.revert(), retry);
  }

  private TxnOperation depUpdateOperation(Node node) {
    boolean ready = Readiness.isReady(graph, node, false);
    if (!node.isAvailable()) {
      return ready ? TxnOperation.CREATE : TxnOperation.UNDEFINED;
    }
    return ready ? TxnOperation.UNDEFINED : TxnOperation.DELETE;
  }

  OpRecord preRecord(Walker.Args a, Node node) {
    OpRecord op = new OpRecord();
    op.key = a.kv().key();
    op.baseKey = a.baseKey();
    op.prevValue = node.state() != ValueState.REMOVED ? node.value() : null;
    op.newValue = a.kv().value();
    op.prevState = node.state();
    op.prevErr = node.error();
    op.derived = a.derived();
    op.property = a.derived() && registry.forNode(node) == null;
    op.revert = a.kv().revert();
    op.retry = txn.isRetry() || txn.request.type() == TxnType.RETRY_UNIMPL_OPS;
    op.recreate = a.recreating() != null && a.recreating().contains(a.kv().key());
    return op;
  }

  /** Takes the frame's key off the recursion path and ends the frame with {@code result}. */
  void leave(WalkFrame f, Throwable result) {
    if (f.onPath) {
      txn.branch.pop();
      f.onPath = false;
      txn.pass.exitVisit();
    }
    f.finish(result);
  }
}
