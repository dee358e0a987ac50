package io.kvscheduler.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One operation of a recorded transaction.
 *
 * @param operation CREATE, UPDATE or DELETE
 * @param key the key (base or derived)
 * @param prevValue value held before (empty when the key was REMOVED, or for the CREATE half of a
 *     re-creation)
 * @param newValue value being applied (empty for requested deletions)
 * @param prevState state before
 * @param newState state after
 * @param prevError error message before, {@code ""} when none
 * @param newError error message after, {@code ""} when none
 * @param noop no descriptor call was made (pending create, invalid, unimplemented, delete of an
 *     unavailable value, equivalent update that only changes the state)
 * @param derived the key is a derived value
 * @param property the key is a derived value without descriptor
 * @param revert part of the revert of a failed transaction
 * @param retry part of a retry transaction
 * @param recreate part of a re-creation (Delete + Create instead of Update)
 */
public record RecordedTxnOp(
    TxnOperation operation,
    String key,
    Optional<Object> prevValue,
    Optional<Object> newValue,
    ValueState prevState,
    ValueState newState,
    String prevError,
    String newError,
    boolean noop,
    boolean derived,
    boolean property,
    boolean revert,
    boolean retry,
    boolean recreate) {

  public RecordedTxnOp {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(prevValue, "prevValue");
    Objects.requireNonNull(newValue, "newValue");
    Objects.requireNonNull(prevState, "prevState");
    Objects.requireNonNull(newState, "newState");
    Objects.requireNonNull(prevError, "prevError");
    Objects.requireNonNull(newError, "newError");
  }

  /** The boolean flags that are set, sorted alphabetically (NOOP, DERIVED, ...). */
  public List<String> flags() {
    List<String> f = new ArrayList<>();
    if (derived) f.add("DERIVED");
    if (noop) f.add("NOOP");
    if (property) f.add("PROPERTY");
    if (recreate) f.add("RECREATE");
    if (retry) f.add("RETRY");
    if (revert) f.add("REVERT");
    return f;
  }

  /**
   * The flags as the transaction log prints them, in the log's order: DERIVED, PROPERTY, NOOP,
   * REVERT, RETRY, RECREATE, then state-transition flags such as WAS-PENDING or FAILED.
   */
  public List<String> displayFlags() {
    List<String> f = new ArrayList<>();
    if (derived && !property) f.add("DERIVED");
    if (property) f.add("PROPERTY");
    if (noop) f.add("NOOP");
    if (revert && !property) f.add("REVERT");
    if (retry && !property) f.add("RETRY");
    if (recreate) f.add("RECREATE");
    if (newState == ValueState.OBTAINED) f.add("OBTAINED");
    if (prevState == ValueState.OBTAINED && prevState != newState) f.add("WAS-OBTAINED");
    if (newState == ValueState.UNIMPLEMENTED) f.add("UNIMPLEMENTED");
    if (prevState == ValueState.UNIMPLEMENTED && prevState != newState) {
      f.add("WAS-UNIMPLEMENTED");
    }
    if (prevState == ValueState.REMOVED && operation == TxnOperation.DELETE) {
      f.add("ALREADY-REMOVED");
    }
    if (prevState == ValueState.MISSING) {
      f.add(newState == ValueState.REMOVED ? "ALREADY-MISSING" : "WAS-MISSING");
    }
    if (prevState == ValueState.DISCOVERED) f.add("DISCOVERED");
    if (prevState == ValueState.PENDING) {
      f.add(newState == ValueState.PENDING ? "STILL-PENDING" : "WAS-PENDING");
    } else if (newState == ValueState.PENDING) {
      f.add("IS-PENDING");
    }
    if (prevState == ValueState.FAILED) {
      if (newState == ValueState.FAILED) f.add("STILL-FAILING");
      else if (newState == ValueState.CONFIGURED) f.add("FIXED");
    } else if (newState == ValueState.FAILED) {
      f.add("FAILED");
    }
    if (prevState == ValueState.INVALID) {
      if (newState == ValueState.INVALID) f.add("STILL-INVALID");
      else if (newState == ValueState.CONFIGURED) f.add("FIXED");
    } else if (newState == ValueState.INVALID) {
      f.add("INVALID");
    }
    return f;
  }

  @Override
  public String toString() {
    return operation + " " + key + " (" + prevState + "->" + newState + ") " + flags()
        + (newError.isEmpty() ? "" : " error: " + newError);
  }
}
