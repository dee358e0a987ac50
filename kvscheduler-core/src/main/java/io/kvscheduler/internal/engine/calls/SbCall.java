package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.List;

/**
 * One southbound call as it is asked: the operation (Create, Update or Delete), the key and what
 * the descriptor is passed. It goes through the links of an {@link SbCallChain}, unchanged.
 *
 * @param op CREATE, UPDATE or DELETE
 * @param node the value's node (null for a call that ran ahead of the walk, or its undo)
 * @param handle the descriptor (null only for a value found in the southbound that no descriptor
 *     selects)
 * @param value Create: the value; Update: the new value; Delete: the object the southbound holds
 * @param oldValue Update: the value the southbound holds before it; else null
 * @param metadata Update and Delete: the metadata passed to the call; of a value found in the
 *     southbound: the metadata found with it
 * @param oldDeps Update: the dependencies of the old value (a planning pass links them); else empty
 * @param record the operation record the call's times are noted in (null: none)
 * @param found true for a value found in the southbound: nothing is called, the value is there
 */
public record SbCall(
    TxnOperation op,
    Node node,
    DescriptorHandle handle,
    String key,
    Object value,
    Object oldValue,
    Object metadata,
    List<Dependency> oldDeps,
    OpRecord record,
    boolean found) {

  /** The Create of {@code value} for {@code node}, or the value found so in the southbound. */
  public static SbCall create(
      Node node, DescriptorHandle handle, Object value, OpRecord record, boolean found, Object md) {
    return new SbCall(
        TxnOperation.CREATE, node, handle, node.key(), value, null, md, List.of(), record, found);
  }

  /** The Update of {@code node} from {@code oldValue} to {@code value}. */
  public static SbCall update(
      Node node,
      DescriptorHandle handle,
      Object oldValue,
      Object value,
      Object metadata,
      List<Dependency> oldDeps,
      OpRecord record,
      boolean found) {
    return new SbCall(
        TxnOperation.UPDATE,
        node,
        handle,
        node.key(),
        value,
        oldValue,
        metadata,
        oldDeps,
        record,
        found);
  }

  /** The Delete of {@code object}, the value of {@code node}. */
  public static SbCall delete(
      Node node, DescriptorHandle handle, Object object, OpRecord record, boolean found) {
    return new SbCall(
        TxnOperation.DELETE,
        node,
        handle,
        node.key(),
        object,
        null,
        node.metadata(),
        List.of(),
        record,
        found);
  }

  /** A call outside the walk (run ahead of it, or undoing one that did): no node, no record. */
  static SbCall direct(
      TxnOperation op,
      DescriptorHandle handle,
      String key,
      Object value,
      Object oldValue,
      Object metadata) {
    return new SbCall(op, null, handle, key, value, oldValue, metadata, List.of(), null, false);
  }

  /** The operation's name as the descriptor's errors say it: "Create", "Update", "Delete". */
  String operationName() {
    return switch (op) {
      case CREATE -> "Create";
      case UPDATE -> "Update";
      case DELETE -> "Delete";
      default -> op.name();
    };
  }
}
