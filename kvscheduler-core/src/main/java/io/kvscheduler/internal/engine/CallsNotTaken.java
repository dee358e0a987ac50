package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.CallPlan;
import io.kvscheduler.internal.engine.calls.ParallelCalls;
import io.kvscheduler.internal.engine.calls.PlannedCall;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls that ran ahead of the walk ({@link ParallelCalls}) but that the walk never asked for:
 * undone, newest first, and, when they ran beyond the failure that reverts their transaction,
 * recorded as the walk would have recorded them, each followed by its undo, both flagged RAN_AHEAD.
 * The value's node never saw such a call (the walk stopped before it); its states in the records
 * are those the call and its undo would have set.
 */
final class CallsNotTaken {
  private static final Logger LOG = LoggerFactory.getLogger(CallsNotTaken.class);

  private final Graph graph;
  private final Registry registry;
  private final Clock clock;

  CallsNotTaken(Graph graph, Registry registry, Clock clock) {
    this.graph = graph;
    this.registry = registry;
    this.clock = clock;
  }

  /**
   * After the walk, or where a reverted transaction's walk stopped: undoes each call that ran ahead
   * but that the walk never asked for, newest first, so the southbound holds what the graph says.
   * Returns the base keys whose southbound content is unknown (a call or its undo failed): the
   * caller reads them. A value with a failed call holds what the failure left; its other calls are
   * not undone either.
   *
   * <p>In a transaction reverted on failure ({@code beyondFailure}) these are the calls that ran
   * while one before them in the walk's order failed: each is recorded where the walk stopped,
   * followed by its undo (flagged as part of the revert), as if the walk had gone that far before
   * reverting, both flagged RAN_AHEAD; a value whose call or undo failed is marked failed, as by
   * the walk. Otherwise there should be none: a call runs ahead only once every call whose outcome
   * could change the walk's way to it has succeeded ({@link CallPlan}); should the walk still go
   * another way, the call is undone, unrecorded, and the fact logged as an error.
   */
  Set<String> undo(Transaction txn, boolean beyondFailure) {
    CallPlan ranAhead = txn.pass.endRunAhead();
    if (ranAhead == null) {
      return Set.of();
    }
    List<PlannedCall> left = ranAhead.notTaken();
    Set<String> unknown = new TreeSet<>();
    Map<String, Node> detached = new HashMap<>(); // records of keys the graph does not hold
    for (PlannedCall c : left) {
      if (c.error != null) {
        unknown.add(c.baseKey);
      }
      if (beyondFailure) {
        OpRecord op = callRecord(c, nodeFor(c.key, detached));
        if (c.error != null) {
          op.newState = markFailed(txn, c, c.error, c.op);
        }
        txn.ops.add(op);
      }
    }
    for (int i = left.size() - 1; i >= 0; i--) {
      PlannedCall c = left.get(i);
      if (unknown.contains(c.baseKey)) {
        continue;
      }
      Instant started = clock.instant();
      Throwable err = ParallelCalls.undo(c);
      if (err != null) {
        unknown.add(c.baseKey);
      } else if (c.op != TxnOperation.CREATE && graph.get(c.key) != null) {
        // the value is back, re-created or updated back by the undo: with the metadata that call
        // returned (the node never saw the call that ran ahead; its metadata is the old object's)
        graph.write(c.key).setMetadata(c.undoMetadata);
      }
      if (beyondFailure) {
        OpRecord op = undoRecord(c, nodeFor(c.key, detached), started, clock.instant(), err);
        if (err != null) {
          LOG.warn("{} of {} ran beyond a failure; undoing it failed", c.op, c.key, err);
          op.newState = markFailed(txn, c, err, op.op);
        }
        txn.ops.add(op);
      } else if (err != null) {
        LOG.error(
            "{} of {} ran ahead, but the walk went another way; undoing it failed: its key is"
                + " read again",
            c.op,
            c.key,
            err);
      } else {
        LOG.error("{} of {} ran ahead, but the walk went another way: undone", c.op, c.key);
      }
    }
    return unknown;
  }

  /**
   * After call {@code c} ran beyond the failure of a reverted transaction and it or its undo
   * ({@code failedOp}) failed with {@code err}: marks its value failed, as when a call of the walk
   * fails (its status says so until the value is applied again). Returns the value's state, FAILED
   * when the graph does not hold it.
   */
  private ValueState markFailed(
      Transaction txn, PlannedCall c, Throwable err, TxnOperation failedOp) {
    if (graph.get(c.key) == null) {
      return ValueState.FAILED;
    }
    return FailurePolicy.markFailed(
        graph,
        registry,
        txn,
        graph.write(c.key),
        true,
        err,
        FailurePolicy.isRetriable(c.handle, err),
        failedOp);
  }

  /** The graph's node of {@code key}, or a node standing for it in records only. */
  private Node nodeFor(String key, Map<String, Node> detached) {
    Node n = graph.get(key);
    return n != null ? n : detached.computeIfAbsent(key, Node::new);
  }

  /** The call {@code c} on {@code node}'s value: what it changed, or what it failed with. */
  private static OpRecord callRecord(PlannedCall c, Node node) {
    OpRecord op = record(c, node);
    op.op = c.op;
    op.prevState = node.state();
    op.prevErr = node.error();
    switch (c.op) {
      case CREATE -> {
        op.newValue = c.value;
      }
      case UPDATE -> {
        op.prevValue = c.oldValue;
        op.newValue = c.value;
      }
      default -> op.prevValue = c.value;
    }
    if (c.error != null) {
      op.newState = ValueState.FAILED;
      op.newErr = c.error;
    } else {
      op.newState = c.op == TxnOperation.DELETE ? ValueState.REMOVED : ValueState.CONFIGURED;
    }
    op.callStarted = c.started;
    op.callEnded = c.ended;
    return op;
  }

  /**
   * The undo of call {@code c} on {@code node}'s value, made from {@code started} to {@code ended}:
   * back to the value and state before the call, or failed with {@code err}.
   */
  private static OpRecord undoRecord(
      PlannedCall c, Node node, Instant started, Instant ended, Throwable err) {
    OpRecord op = record(c, node);
    op.revert = true;
    op.prevState = c.op == TxnOperation.DELETE ? ValueState.REMOVED : ValueState.CONFIGURED;
    switch (c.op) {
      case CREATE -> {
        op.op = TxnOperation.DELETE;
        op.prevValue = c.value;
      }
      case UPDATE -> {
        op.op = TxnOperation.UPDATE;
        op.prevValue = c.value;
        op.newValue = c.oldValue;
      }
      default -> {
        op.op = TxnOperation.CREATE;
        op.newValue = c.value;
      }
    }
    if (err != null) {
      op.newState = ValueState.FAILED;
      op.newErr = err;
    } else {
      op.newState = node.state();
      op.newErr = node.error();
    }
    op.callStarted = started;
    op.callEnded = ended;
    return op;
  }

  private static OpRecord record(PlannedCall c, Node node) {
    OpRecord op = new OpRecord();
    op.key = c.key;
    op.baseKey = c.baseKey;
    op.derived = !c.key.equals(c.baseKey);
    op.ranAhead = true;
    return op;
  }
}
