package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.SbCall;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.List;

/**
 * The steps of a DELETE in the walk ({@link Walker}): the value is marked unavailable (so its
 * dependents see it gone), its derived values are deleted, its dependents taken down, and the
 * Delete is called and recorded last. If a derived value or a dependent could not go, the value is
 * left as it was. A DELETE that is the first half of a re-creation continues with CREATE.
 */
final class DeleteSteps {
  private final Graph graph;
  private final Registry registry;
  private final Transaction txn;
  private final StatusMarks marks;
  private final VisitSteps visits;

  DeleteSteps(
      Graph graph, Registry registry, Transaction txn, StatusMarks marks, VisitSteps visits) {
    this.graph = graph;
    this.registry = registry;
    this.txn = txn;
    this.marks = marks;
    this.visits = visits;
  }

  /** DELETE: marks the value unavailable, then deletes its derived values (of a base value). */
  void delete(WalkFrame f) {
    Node node = f.node;
    Walker.Args a = f.args;
    if (node.value() == null) {
      graph.remove(node.key());
      endDelete(f, null);
      return;
    }
    if (!node.isAvailable() && node.held() == null) {
      f.op.noop = true;
      endDelete(f, finishDelete(f, null));
      return;
    }
    // an available value, or an unavailable one whose object the southbound still holds
    f.delete.object = node.held() != null ? node.held() : node.value();
    f.delete.before = node.state();
    f.delete.wasUnavailable = node.unavailable();
    node.setUnavailable(true);
    if (!f.delete.pending) {
      node.setState(ValueState.REMOVED);
    }
    if (node.isDerived()) {
      f.startDependents(graph, node, false, WalkPhase.DELETE_AFTER_DEPENDENTS);
      return;
    }
    List<ValueToApply> dels = new ArrayList<>();
    for (String dk : node.derivedKeys()) {
      Node dn = graph.get(dk);
      if (dn != null && dn.value() != null) {
        dels.add(new ValueToApply(dk, null, a.kv().origin(), a.kv().revert(), null));
      }
    }
    f.startDerived(dels, false, WalkPhase.DELETE_AFTER_DERIVED);
  }

  /** A derived value or a dependent could not be removed: the value is kept as it was. */
  void keepUndeleted(WalkFrame f, Throwable inherited) {
    f.node.setUnavailable(f.delete.wasUnavailable);
    f.node.setState(f.delete.before);
    endDelete(f, inherited);
  }

  /** DELETE_AFTER_DEPENDENTS with nothing left depending on the value: the Delete call. */
  void deleteCall(WalkFrame f) {
    Node node = f.node;
    Throwable err = null;
    DescriptorHandle handle = node.descriptor() == null ? null : registry.forNode(node);
    if (handle != null) {
      // a value found in the southbound is gone from it already: nothing is called
      err =
          txn.pass
              .calls()
              .call(SbCall.delete(node, handle, f.delete.object, f.op, f.args.kv().fromSB()))
              .error();
    }
    endDelete(f, finishDelete(f, err));
  }

  private Throwable finishDelete(WalkFrame f, Throwable err) {
    Node node = f.node;
    OpRecord op = f.op;
    if (err == null) {
      StatusMarks.clearError(node);
      node.setHeld(null);
      if (f.delete.pendingValue != null) {
        node.setValue(f.delete.pendingValue);
      }
      if (f.delete.pending) {
        marks.setState(node, op, ValueState.PENDING);
      } else if (f.args.derived() && !f.delete.recreate) {
        op.newState = ValueState.REMOVED;
        graph.remove(node.key());
      } else {
        marks.setState(node, op, ValueState.REMOVED);
      }
    } else {
      // the object is still in the southbound: the next operation on the key starts from it
      node.setHeld(node.held() != null ? node.held() : node.value());
      DescriptorHandle handle = registry.forNode(node);
      op.newErr = err;
      op.newState =
          marks.markFailed(
              node,
              f.args.kv().revert(),
              err,
              FailurePolicy.isRetriable(handle, err),
              TxnOperation.DELETE);
    }
    txn.ops.add(op);
    return err;
  }

  /**
   * The delete ended with {@code err}: of a re-creation, the Create follows when it succeeded;
   * otherwise the operation step ends with it.
   */
  private void endDelete(WalkFrame f, Throwable err) {
    if (!f.delete.createAfterDelete || err != null) {
      f.endOperation(err);
      return;
    }
    f.delete.createAfterDelete = false;
    Node node = graph.write(f.args.kv().key());
    OpRecord create = visits.preRecord(f.args, node);
    create.op = TxnOperation.CREATE;
    create.prevValue = null;
    f.node = node;
    f.op = create;
    f.phase = WalkPhase.CREATE;
  }
}
