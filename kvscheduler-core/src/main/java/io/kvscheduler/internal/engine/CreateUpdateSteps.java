package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.SbCall;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Readiness;
import io.kvscheduler.internal.engine.graph.SettledDerived;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.Compression;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The steps of CREATE and UPDATE in the walk ({@link Walker}), each cut where it runs a sequence of
 * child visits (dependents, derived values) and resumed in the phase it names. A re-creation and an
 * update that waits for new dependencies continue as a DELETE ({@link DeleteSteps}).
 */
final class CreateUpdateSteps {
  private final Graph graph;
  private final Registry registry;
  private final Transaction txn;
  private final Derivation derivation;
  private final StatusMarks marks;
  private final VisitSteps visits;

  CreateUpdateSteps(
      Graph graph,
      Registry registry,
      Transaction txn,
      Derivation derivation,
      StatusMarks marks,
      VisitSteps visits) {
    this.graph = graph;
    this.registry = registry;
    this.txn = txn;
    this.derivation = derivation;
    this.marks = marks;
    this.visits = visits;
  }

  // ---------------------------------------------------------------- CREATE

  /** CREATE: up to the Create call and its record; then the dependents waiting for the value. */
  void create(WalkFrame f) {
    Node node = f.node;
    OpRecord op = f.op;
    Walker.Args a = f.args;
    String key = a.kv().key();
    node.setValue(a.kv().value());
    DescriptorHandle handle = registry.forNode(node);
    if (handle != null) {
      node.setDescriptor(handle.name);
      node.setLabel(handle.label(key));
    } else {
      node.setDescriptor(null);
      node.setLabel(key);
    }
    if (a.derived()) {
      node.setDerivedFrom(a.baseKey());
    }

    if (!a.kv().fromSB() && !a.derived() && handle == null) {
      if (node.state() != ValueState.UNIMPLEMENTED) { // else already known: nothing to record
        node.setUnavailable(true);
        StatusMarks.clearError(node);
        op.noop = true;
        marks.setState(node, op, ValueState.UNIMPLEMENTED);
        txn.ops.add(op);
      }
      f.endOperation(null);
      return;
    }
    if (a.derived() && handle == null) {
      op.property = true;
    }

    if (!a.kv().fromSB() && handle != null) {
      Throwable invalid = txn.pass.invalid(registry, handle, key, node.value());
      if (invalid != null) {
        f.endOperation(marks.markInvalid(node, op, invalid));
        return;
      }
    }

    Derivation.Relations rel = derivation.relations(node, handle, a.kv(), a.derived());
    if (rel.error() != null) {
      f.endOperation(marks.markInvalid(node, op, rel.error()));
      return;
    }
    graph.setDeps(node, rel.deps());
    node.setDerivedKeys(rel.derivedKeys());

    if (!Readiness.isReady(graph, node, a.kv().fromSB())) {
      node.setUnavailable(true);
      StatusMarks.clearError(node);
      op.noop = true;
      marks.setState(node, op, ValueState.PENDING);
      if (stillPending(op, key)) {
        // no call, the same value, the same state: no operation, so nothing is recorded (D63)
        keepUntouched(f, node, handle, op.prevValue);
      } else {
        txn.ops.add(op);
      }
      f.endOperation(null);
      return;
    }

    if (!op.property) {
      // a value found in the southbound is not created: its metadata is what was found
      boolean found = a.kv().fromSB();
      DescriptorHandle.Result<Object> r =
          txn.pass
              .calls()
              .call(
                  SbCall.create(
                      node, handle, node.value(), op, found, found ? a.kv().metadata() : null));
      if (r.failed()) {
        node.setUnavailable(true);
        callFailed(f, op, node, handle, r.error(), TxnOperation.CREATE);
        return;
      }
    }

    StatusMarks.clearError(node);
    node.setUnavailable(false);
    node.setHeld(null);
    marks.setState(node, op, a.kv().fromSB() ? ValueState.OBTAINED : ValueState.CONFIGURED);
    txn.ops.add(op);

    // errors of dependents are theirs, not this value's (AFTER_DEPENDENTS ignores them); then
    // the derived values, whose last error is the value's
    f.relations = rel;
    f.startDependents(graph, node, true, WalkPhase.AFTER_DEPENDENTS);
  }

  // ---------------------------------------------------------------- UPDATE

  /** UPDATE: validation, equivalence, re-creation; then obsolete derived values are deleted. */
  void update(WalkFrame f) {
    Node node = f.node;
    OpRecord op = f.op;
    Walker.Args a = f.args;
    String key = a.kv().key();
    DescriptorHandle handle = registry.forNode(node);
    f.update.depsBefore = node.deps();
    if (node.held() != null) {
      node.setValue(node.held()); // what the southbound holds: the update starts from it
    }
    if (!a.kv().fromSB() && handle != null) {
      Throwable invalid = txn.pass.invalid(registry, handle, key, a.kv().value());
      if (invalid != null) {
        // nothing is called: the southbound keeps what it holds, remembered for the next
        // operation (a removal deletes it, a valid value updates it)
        node.setHeld(node.value());
        node.setValue(a.kv().value());
        f.endOperation(marks.markInvalid(node, op, invalid));
        return;
      }
    }
    boolean equivalent =
        handle != null
            ? handle.equivalent(key, node.value(), a.kv().value())
            : DescriptorHandle.equalValues(key, node.value(), a.kv().value());
    if (equivalent && handle != null) {
      handle.rememberEqual(node, node.value(), a.kv().value());
    }
    boolean recreate =
        !equivalent
            && !a.kv().fromSB()
            && handle != null
            && handle.updateWithRecreate(key, node.value(), a.kv().value(), node.metadata());

    if (recreate) {
      Set<String> recreating = new HashSet<>(node.derivedKeys());
      recreating.add(key);
      Walker.Args ra = a.withRecreating(recreating);
      OpRecord del = visits.preRecord(ra, node);
      del.op = TxnOperation.DELETE;
      del.newValue = null;
      f.args = ra;
      f.op = del;
      f.startDelete(false, true, null);
      f.delete.createAfterDelete = true;
      return;
    }

    f.update.handle = handle;
    f.update.equivalent = equivalent;
    f.update.prevValue = node.value();
    // an unavailable value whose object the southbound holds: once updated it is available
    // again, and what waits for it goes ahead, as after a Create
    f.update.wasUnavailable = node.unavailable();
    Derivation.Relations rel = derivation.relations(node, handle, a.kv(), a.derived());
    if (rel.error() != null) {
      node.setHeld(node.value());
      node.setValue(a.kv().value());
      f.endOperation(marks.markInvalid(node, op, rel.error()));
      return;
    }
    f.relations = rel;
    boolean derivedChanged = !Derivation.sameKeys(rel.derivedKeys(), node.derivedKeys());
    if (!equivalent || derivedChanged) {
      f.update.oldDerived = node.derivedKeys();
      f.update.oldDeps = node.deps();
      graph.setDeps(node, rel.deps());
      node.setDerivedKeys(rel.derivedKeys());
      List<ValueToApply> obsolete = new ArrayList<>();
      // no set of the kept keys, no string comparison when the matching of the derived values
      // found them (W5: a base with thousands of derived values)
      for (String dk :
          SettledDerived.Match.dropped(rel.settled(), f.update.oldDerived, rel.derivedKeys())) {
        obsolete.add(new ValueToApply(dk, null, a.kv().origin(), a.kv().revert(), null));
      }
      f.startDerived(obsolete, false, WalkPhase.UPDATE_AFTER_OBSOLETE);
      return;
    }
    f.phase = WalkPhase.UPDATE_CALL;
  }

  /** UPDATE_AFTER_OBSOLETE: an obsolete derived value that could not go stops the update. */
  void afterObsolete(WalkFrame f, Throwable obsoleteError) {
    if (obsoleteError != null) {
      // the Update was not called: keep the value that is in the SB
      graph.setDeps(f.node, f.update.oldDeps);
      f.node.setDerivedKeys(f.update.oldDerived);
      f.endOperation(obsoleteError);
      return;
    }
    f.phase = WalkPhase.UPDATE_CALL;
  }

  /** UPDATE_CALL: the Update call and its record; then the dependents, when they may go ahead. */
  void updateCall(WalkFrame f) {
    Node node = f.node;
    OpRecord op = f.op;
    Walker.Args a = f.args;
    String key = a.kv().key();
    DescriptorHandle handle = f.update.handle;
    boolean equivalent = f.update.equivalent;
    // a failed value the southbound holds as asked after all (a refresh found it) is settled
    // here: with dependencies unmet it is taken down, as any value that loses them
    boolean settles =
        equivalent && (op.prevState == ValueState.FAILED || op.prevState == ValueState.RETRYING);
    if ((!equivalent || node.unavailable() || settles)
        && !Readiness.isReady(graph, node, a.kv().fromSB())) {
      // the new value waits for its dependencies: take the old one down, keep the new as PENDING
      // (also an equal value whose object a failed Delete left behind: it goes now)
      f.startDelete(true, false, a.kv().value());
      return;
    }
    node.setValue(a.kv().value());

    if (!equivalent && handle != null) {
      boolean found = a.kv().fromSB();
      DescriptorHandle.Result<Object> r =
          txn.pass
              .calls()
              .call(
                  SbCall.update(
                      node,
                      handle,
                      f.update.prevValue,
                      node.value(),
                      found ? a.kv().metadata() : node.metadata(),
                      f.update.depsBefore,
                      op,
                      found));
      if (r.failed()) {
        if (node.unavailable()) {
          node.setHeld(f.update.prevValue); // still there (an available value keeps its own value)
        }
        callFailed(f, op, node, handle, r.error(), TxnOperation.UPDATE);
        return;
      }
    }

    StatusMarks.clearError(node);
    node.setUnavailable(false);
    node.setHeld(null);
    marks.setState(node, op, a.kv().fromSB() ? ValueState.OBTAINED : ValueState.CONFIGURED);
    if (!equivalent) {
      txn.ops.add(op);
    } else if (op.prevState != op.newState
        && !(op.prevState == ValueState.DISCOVERED && op.newState == ValueState.CONFIGURED)) {
      op.noop = true;
      txn.ops.add(op);
    } else if (op.prevState == op.newState) {
      keepUntouched(f, node, handle, f.update.prevValue);
    }
    if (f.update.wasUnavailable
        || equivalent
            && (op.prevState == ValueState.FAILED || op.prevState == ValueState.RETRYING)) {
      // a failed operation that the southbound carried out after all (the refresh after the
      // failure found the value): nothing was created in this walk, yet the value is available
      // again, so what waits for it goes ahead now, as after a Create (their errors are theirs)
      f.startDependents(graph, node, true, WalkPhase.AFTER_DEPENDENTS);
    } else {
      f.phase = WalkPhase.AFTER_DEPENDENTS;
    }
  }

  /**
   * True when {@code op}, a value that waits for its dependencies, re-attempted and waiting still,
   * changes nothing: it was PENDING with no error, and the value asked for equals the one it had.
   * Such an operation makes no call and changes neither value nor state, so it is not recorded (a
   * transaction that did nothing records nothing, D63). A new value, even an equivalent one, is
   * recorded: the intent changed.
   */
  private static boolean stillPending(OpRecord op, String key) {
    return op.prevState == ValueState.PENDING
        && op.prevErr == null
        && op.prevValue != null
        && DescriptorHandle.equalValues(key, op.prevValue, op.newValue);
  }

  /**
   * The recorded operations {@code ops} compressed ({@link Compression}), without those that, once
   * compressed, change nothing (D63): a pending value that the transaction's operations left
   * pending with the value it had (e.g. given a new value, then its old one back by the revert).
   */
  static List<OpRecord> compress(List<OpRecord> ops) {
    List<OpRecord> out = Compression.compress(ops);
    out.removeIf(
        op ->
            op.op == TxnOperation.CREATE
                && op.newState == ValueState.PENDING
                && op.newErr == null
                && stillPending(op, op.key));
    return out;
  }

  /**
   * An equivalent value asked for again, no operation made and the state unchanged: the value keeps
   * the last operation that was made for it (a status never reports an operation nobody made). When
   * the intent is the same as before (an equal value, with the same revert and retry settings) the
   * key keeps its last update and its value object too, so its timeline gains no revision; a new
   * intent (an equivalent but different value, other settings) is kept with the last operation
   * made.
   */
  private void keepUntouched(WalkFrame f, Node node, DescriptorHandle handle, Object held) {
    Node.LastUpdate prev = f.prevUpdate;
    Node.LastUpdate now = node.lastUpdate();
    if (prev == null || now == null || prev == now) {
      return;
    }
    String key = node.key();
    // equals already decided "equivalent" when no comparator did: no second pass over the value
    boolean decidedByEquals = handle == null || !handle.hasComparator();
    boolean heldEqual =
        held == now.value()
            || decidedByEquals
            || DescriptorHandle.equalValues(key, held, now.value());
    boolean sameIntent =
        prev.value() == now.value()
            || (prev.value() == held
                ? heldEqual
                : DescriptorHandle.equalValues(key, prev.value(), now.value()));
    if (sameIntent && prev.revert() == now.revert() && Objects.equals(prev.retry(), now.retry())) {
      node.setLastUpdate(prev);
      if (heldEqual) {
        node.setValue(held);
      }
    } else if (prev.op() != now.op()) {
      node.setLastUpdate(
          new Node.LastUpdate(now.seq(), prev.op(), now.value(), now.revert(), now.retry()));
    }
  }

  /**
   * Ends the operation {@code op} of frame {@code f} whose descriptor call {@code failedOp} for
   * {@code node} failed with {@code error}: the node marked failed (or retrying), the operation
   * recorded.
   */
  private void callFailed(
      WalkFrame f,
      OpRecord op,
      Node node,
      DescriptorHandle handle,
      Throwable error,
      TxnOperation failedOp) {
    op.newErr = error;
    op.newState =
        marks.markFailed(
            node, f.args.kv().revert(), error, FailurePolicy.isRetriable(handle, error), failedOp);
    txn.ops.add(op);
    f.endOperation(error);
  }
}
