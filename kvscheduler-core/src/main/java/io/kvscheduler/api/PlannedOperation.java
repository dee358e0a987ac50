package io.kvscheduler.api;

import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One operation of a {@link Plan}: what the commit would do to one key, and the state it predicts
 * for the key afterwards. The same operation, in the same place, as the commit's record would show
 * ({@link RecordedTxnOp}) when every southbound call succeeds.
 *
 * @param operation CREATE, UPDATE or DELETE
 * @param key the key (base or derived)
 * @param prevValue the value held before (empty when the key holds none)
 * @param value the value to apply (empty for a deletion)
 * @param prevState the key's state now
 * @param state the predicted state: CONFIGURED, REMOVED, OBTAINED (a value the southbound owns),
 *     PENDING (waiting for a dependency, named in {@code details}), INVALID (rejected by the
 *     descriptor's Validate, the reason in {@code error}), UNIMPLEMENTED (no descriptor)
 * @param error for INVALID, the validation error; {@code ""} otherwise
 * @param details for PENDING, the labels of the dependencies the value waits for; for INVALID, the
 *     invalid fields the descriptor named; empty otherwise (an unmodifiable copy)
 * @param flags the operation's recorded flags (NOOP: no southbound call would be made, DERIVED,
 *     PROPERTY, RECREATE, ...; an unmodifiable copy)
 */
public record PlannedOperation(
    TxnOperation operation,
    String key,
    Optional<Object> prevValue,
    Optional<Object> value,
    ValueState prevState,
    ValueState state,
    String error,
    List<String> details,
    Set<RecordedTxnOp.Flag> flags) {

  /**
   * Checks and copies the fields.
   *
   * @throws NullPointerException if a field is null
   */
  public PlannedOperation {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(prevValue, "prevValue");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(prevState, "prevState");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(error, "error");
    details = List.copyOf(details);
    flags =
        flags.isEmpty()
            ? Set.of()
            : Collections.unmodifiableSet(EnumSet.copyOf(Objects.requireNonNull(flags, "flags")));
  }

  /** True when the commit would call the southbound for this operation (it is not a NOOP). */
  public boolean callsSouthbound() {
    return !flags.contains(RecordedTxnOp.Flag.NOOP);
  }

  /**
   * True when the operation would change something: it calls the southbound, or the key's state
   * changes. False for a value whose intent is applied again with the same outcome (a value that
   * stays INVALID, or PENDING, and so makes no call).
   */
  public boolean isChange() {
    return callsSouthbound() || prevState != state;
  }

  /** For PENDING, the labels of the dependencies the value would wait for; empty otherwise. */
  public List<String> waitingFor() {
    return state == ValueState.PENDING ? details : List.of();
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder().append(operation).append(' ').append(key);
    b.append(" -> ").append(state);
    if (!error.isEmpty()) {
      b.append(" (").append(error).append(')');
    }
    if (!details.isEmpty()) {
      b.append(' ').append(details);
    }
    if (!flags.isEmpty()) {
      b.append(' ').append(flags);
    }
    return b.toString();
  }
}
