package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.time.Instant;

/**
 * The records of a call that ran ahead of the walk beyond a failure, in a transaction reverted on
 * failure ({@link TxnExecutor#undoNotTaken}): the call as it went, then its undo, both flagged
 * RAN_AHEAD. The value's node never saw the call (the walk stopped before it); its states in the
 * records are those the call and its undo would have set.
 */
final class BeyondFailure {
  private BeyondFailure() {}

  /** The call {@code c} on {@code node}'s value: what it changed, or what it failed with. */
  static OpRecord callRecord(PlannedCall c, Node node) {
    OpRecord op = record(c, node);
    op.op = c.op;
    op.prevState = node.state;
    op.prevErr = node.error;
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
  static OpRecord undoRecord(
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
      op.newState = node.state;
      op.newErr = node.error;
    }
    op.callStarted = started;
    op.callEnded = ended;
    return op;
  }

  private static OpRecord record(PlannedCall c, Node node) {
    OpRecord op = new OpRecord();
    op.node = node;
    op.key = c.key;
    op.baseKey = c.baseKey;
    op.derived = !c.key.equals(c.baseKey);
    op.ranAhead = true;
    return op;
  }
}
