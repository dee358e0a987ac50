package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;

/**
 * The descriptor calls of the walk: Create, Update and Delete of a value (none in simulation: the
 * steps do not call these then), and the metadata they return, kept in the node and in the
 * descriptor's metadata map. Every southbound change the walk makes goes through here: a call that
 * ran ahead of the walk in parallel ({@link ParallelCalls}) is taken here instead of made, and each
 * call's start and end time are noted in its operation record.
 */
final class WalkCalls {
  private final Transaction txn;

  WalkCalls(Transaction txn) {
    this.txn = txn;
  }

  /**
   * The call that ran ahead of the walk for {@code key} ({@link WalkPass#takeRanAhead}), its times
   * noted in {@code op}; null when the walk calls the southbound itself.
   */
  private PlannedCall ranAhead(OpRecord op, String key, TxnOperation call) {
    PlannedCall ran = txn.pass.takeRanAhead(key, call);
    if (ran != null) {
      op.callStarted = ran.started;
      op.callEnded = ran.ended;
    }
    return ran;
  }

  /** The descriptor's Create of the walk (or the outcome of the one that ran ahead). */
  DescriptorHandle.Result<Object> callCreate(
      OpRecord op, DescriptorHandle handle, String key, Object value) {
    PlannedCall ran = ranAhead(op, key, TxnOperation.CREATE);
    if (ran != null) {
      return ran.result();
    }
    op.callStarted = txn.clock.instant();
    DescriptorHandle.Result<Object> r = handle.create(key, value);
    op.callEnded = txn.clock.instant();
    return r;
  }

  /** The descriptor's Update of the walk (or the outcome of the one that ran ahead). */
  DescriptorHandle.Result<Object> callUpdate(
      OpRecord op,
      DescriptorHandle handle,
      String key,
      Object oldValue,
      Object newValue,
      Object metadata) {
    PlannedCall ran = ranAhead(op, key, TxnOperation.UPDATE);
    if (ran != null) {
      return ran.result();
    }
    op.callStarted = txn.clock.instant();
    DescriptorHandle.Result<Object> r = handle.update(key, oldValue, newValue, metadata);
    op.callEnded = txn.clock.instant();
    return r;
  }

  /** The descriptor's Delete of the walk: its error, or null. */
  Throwable callDelete(
      OpRecord op, DescriptorHandle handle, String key, Object value, Object metadata) {
    PlannedCall ran = ranAhead(op, key, TxnOperation.DELETE);
    if (ran != null) {
      return ran.error;
    }
    op.callStarted = txn.clock.instant();
    Throwable err = handle.delete(key, value, metadata);
    op.callEnded = txn.clock.instant();
    return err;
  }

  /** Keeps {@code metadata} in {@code node} and, outside simulation, in the descriptor's map. */
  void setMetadata(Node node, DescriptorHandle handle, Object metadata) {
    node.metadata = metadata;
    if (txn.pass.callsSouthbound() && handle.metadataMap != null) {
      handle.metadataMap.put(node.label, metadata);
    }
  }
}
