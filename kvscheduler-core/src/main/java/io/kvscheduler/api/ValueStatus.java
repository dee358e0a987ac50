package io.kvscheduler.api;

import java.util.List;
import java.util.Objects;

/**
 * The status of one value.
 *
 * @param key the key
 * @param state the current state ({@link ValueState#NONEXISTENT} for unknown keys)
 * @param error message of the last failure, {@code ""} when none
 * @param lastOperation the last operation the scheduler decided for the value
 * @param details for PENDING the labels of unsatisfied dependencies, for INVALID the invalid
 *     fields, otherwise empty
 */
public record ValueStatus(
    String key, ValueState state, String error, TxnOperation lastOperation, List<String> details) {
  public ValueStatus {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(error, "error");
    Objects.requireNonNull(lastOperation, "lastOperation");
    details = List.copyOf(details);
  }

  /** The status of a key the scheduler does not know. */
  public static ValueStatus nonexistent(String key) {
    return new ValueStatus(key, ValueState.NONEXISTENT, "", TxnOperation.UNDEFINED, List.of());
  }
}
