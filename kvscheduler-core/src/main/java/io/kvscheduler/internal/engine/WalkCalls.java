package io.kvscheduler.internal.engine;

/**
 * The descriptor calls of the walk: Create, Update and Delete of a value (none in simulation: the
 * steps do not call these then), and the metadata they return, kept in the node and in the
 * descriptor's metadata map. Every southbound change the walk makes goes through here.
 */
final class WalkCalls {
  private final TxnContext txn;

  WalkCalls(TxnContext txn) {
    this.txn = txn;
  }

  /** The descriptor's Create of the walk. */
  DescriptorHandle.Result<Object> callCreate(DescriptorHandle handle, String key, Object value) {
    return handle.create(key, value);
  }

  /** The descriptor's Update of the walk. */
  DescriptorHandle.Result<Object> callUpdate(
      DescriptorHandle handle, String key, Object oldValue, Object newValue, Object metadata) {
    return handle.update(key, oldValue, newValue, metadata);
  }

  /** The descriptor's Delete of the walk: its error, or null. */
  Throwable callDelete(DescriptorHandle handle, String key, Object value, Object metadata) {
    return handle.delete(key, value, metadata);
  }

  /** Keeps {@code metadata} in {@code node} and, outside simulation, in the descriptor's map. */
  void setMetadata(Node node, DescriptorHandle handle, Object metadata) {
    node.metadata = metadata;
    if (!txn.simulate && handle.metadataMap != null) {
      handle.metadataMap.put(node.label, metadata);
    }
  }
}
