package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an NB transaction's {@code assumeAbsent(key)} does before the walk: the user says the
 * southbound holds nothing for base key {@code key}, so the scheduler drops what it guessed. The
 * key is no longer unread ({@link UnreadKeys}), and the base value and its derived values become
 * REMOVED (nothing held, no error), each recorded as a {@code DELETE [NOOP ASSUMED-ABSENT]} without
 * a call. The walk then applies the transaction's value for the key, or, when it gives none, the
 * key's last intent: a value is created from nothing, a deletion has nothing left to delete.
 */
final class AssumedAbsence {
  private static final Logger LOG = LoggerFactory.getLogger(AssumedAbsence.class);

  private final Graph graph;
  private final UnreadKeys unread;

  AssumedAbsence(Graph graph, UnreadKeys unread) {
    this.graph = graph;
    this.unread = unread;
  }

  /**
   * Applies {@code keys} to the graph and returns the operations that record it; adds to {@code
   * values} the last intent of each key the transaction gives no value for ({@code addIntent}: a
   * plain change, not a resync, which lists or re-applies every intent itself).
   */
  List<OpRecord> apply(
      Set<String> keys, List<ValueToApply> values, boolean addIntent, long txnSeq) {
    if (keys.isEmpty()) {
      return List.of();
    }
    Set<String> given = new HashSet<>();
    for (ValueToApply kv : values) {
      given.add(kv.key());
    }
    List<OpRecord> ops = new ArrayList<>();
    for (String key : keys) {
      Node n = graph.get(key);
      boolean wasUnread = unread.forget(key);
      if (n != null && n.isDerived()) {
        LOG.warn(
            "transaction #{}: assumeAbsent({}) ignored: the key holds a value derived from {};"
                + " name its base value",
            txnSeq,
            key,
            n.derivedFrom());
        continue;
      }
      if (n == null) {
        if (!wasUnread) {
          LOG.warn(
              "transaction #{}: assumeAbsent({}) ignored: the scheduler knows nothing of the key",
              txnSeq,
              key);
        }
        continue;
      }
      Node.LastUpdate intent = n.lastUpdate();
      List<String> derived = n.derivedKeys();
      if (n.state() != ValueState.REMOVED) {
        ops.add(remove(n.key(), null));
      }
      for (String dk : derived) {
        Node d = graph.get(dk);
        if (d != null && d.state() != ValueState.REMOVED && key.equals(d.derivedFrom())) {
          ops.add(remove(dk, key));
        }
      }
      if (addIntent && !given.contains(key) && intent != null) {
        values.add(new ValueToApply(key, intent.value(), ValueOrigin.FROM_NB, false, null));
      }
    }
    return ops;
  }

  /** Makes the node of {@code key} REMOVED, and the operation that records it. */
  private OpRecord remove(String key, String base) {
    Node n = graph.write(key);
    OpRecord op = new OpRecord();
    op.key = key;
    op.baseKey = base != null ? base : key;
    op.op = TxnOperation.DELETE;
    op.prevValue = n.held() != null ? n.held() : n.value();
    op.prevState = n.state();
    op.prevErr = n.error();
    op.derived = base != null;
    op.property = base != null && n.descriptor() == null;
    op.noop = true;
    op.assumedAbsent = true;
    n.setHeld(null);
    n.setUnavailable(true);
    StatusMarks.clearError(n);
    n.setState(ValueState.REMOVED);
    op.newState = ValueState.REMOVED;
    return op;
  }
}
