package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.SettledDerived;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.util.Objects;

/**
 * The walk's visits of the derived values of a created or updated base ({@link Walker}): which of
 * them are visited, and which are left alone because the visit would change nothing. A base with
 * thousands of derived values, updated for one of them, costs what changed in them: a derived value
 * known settled ({@link SettledDerived}) is skipped without reading its node, and the others are
 * skipped when their node shows the visit would change nothing (benchmark W5, see BENCHMARKS.md).
 */
final class DerivedVisits {
  private final Graph graph;
  private final Transaction txn;
  private final Derivation derivation;

  DerivedVisits(Graph graph, Transaction txn, Derivation derivation) {
    this.graph = graph;
    this.txn = txn;
    this.derivation = derivation;
  }

  /**
   * Starts applying the derived values of the frame's created or updated base, with what is known
   * of them: a new entry for the base when the walk may find them settled.
   */
  void start(WalkFrame f) {
    Derivation.Relations rel = f.relations;
    f.startDerived(rel.derived(), true, WalkPhase.AFTER_DERIVED);
    Walker.Args a = f.args;
    if (a.derived()) {
      return; // a derived value derives nothing
    }
    boolean renew = checksRetry() && mayBeUnchanged(a.kv(), a);
    f.children.settled =
        graph.settled.begin(
            a.baseKey(), rel.settled(), rel.derived(), rel.derivedKeys(), renew, txn.nbRetry);
  }

  /** The visit of the {@code i}th derived value of the frame's base, or null when skipped. */
  Walker.Args visit(WalkFrame f, int i) {
    ValueToApply kv = f.children.values.get(i);
    Walker.Args a = f.args;
    SettledDerived.Pass settled = f.children.settled;
    if (settled != null && settled.settled(i) && knownUnchanged(kv, a, settled)) {
      // the node need not be read: the checks below would skip it
      settled.foundSettled(i);
      return null;
    }
    Node n = graph.get(kv.key());
    if (f.children.check && !derivation.validDerived(kv, n, a.baseKey())) {
      return null;
    }
    if (unchanged(kv, n, a)) {
      if (settled != null) {
        settled.foundSettled(i);
      }
      return null;
    }
    return new Walker.Args(kv, a.baseKey(), true, false, a.recreating());
  }

  /** True when {@link #unchanged} compares a node's retry options with the transaction's. */
  private boolean checksRetry() {
    return txn.isNB() && !txn.inheritRetry;
  }

  /**
   * {@link #unchanged} for a derived value whose node is known settled with an equal value (its
   * state, error, held object and last update as {@link #unchanged} wants them, a last update of an
   * earlier transaction): only what depends on the visit and the transaction is left to check.
   */
  private boolean knownUnchanged(ValueToApply kv, Walker.Args a, SettledDerived.Pass settled) {
    return mayBeUnchanged(kv, a)
        && (!checksRetry() || Objects.equals(settled.retry(), txn.nbRetry));
  }

  /**
   * The conditions of {@link #unchanged} that depend on the visit and transaction, not the node.
   */
  private boolean mayBeUnchanged(ValueToApply kv, Walker.Args a) {
    return a.recreating() == null
        && !kv.fromSB()
        && !kv.revert()
        && (txn.unreadBefore.isEmpty() || !txn.unreadBefore.contains(a.baseKey()));
  }

  /**
   * True when visiting derived value {@code kv} of {@code a}'s base would change nothing: the node
   * holds an equal value, CONFIGURED by an earlier create or update of an equal value with the same
   * retry and revert settings, with nothing left over from a failure. Such a visit would make no
   * call, record nothing, change no status and keep the node's last update (an equal value asked
   * for again keeps the operation that made it, {@code CreateUpdateSteps.keepUntouched}); skipping
   * it keeps the node, its revision and its published entry as they are. A create counts as well as
   * an update: else a member created once would be read on every later update of its base (W5,
   * {@code bin/kvs-bench W5 --n 10000}).
   */
  private boolean unchanged(ValueToApply kv, Node n, Walker.Args a) {
    if (n == null
        || n.state() != ValueState.CONFIGURED
        || a.recreating() != null
        || kv.fromSB()
        || kv.revert()
        || n.held() != null
        || n.error() != null
        || !a.baseKey().equals(n.derivedFrom())) {
      return false;
    }
    Node.LastUpdate last = n.lastUpdate();
    if (last == null
        || last.op() != TxnOperation.UPDATE && last.op() != TxnOperation.CREATE
        || last.revert()
        || last.seq() == txn.seq
        || txn.isNB() && !txn.inheritRetry && !Objects.equals(last.retry(), txn.nbRetry)
        || !txn.unreadBefore.isEmpty() && txn.unreadBefore.contains(a.baseKey())) {
      return false;
    }
    Object v = kv.value();
    return Objects.equals(v, n.value()) && Objects.equals(v, last.value());
  }
}
