package io.kvscheduler.api;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

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
 * @param flags the recorded flags ({@link Flag#isRecorded()}: NOOP, DERIVED, PROPERTY, REVERT,
 *     RETRY, RECREATE, RAN_AHEAD, ASSUMED_ABSENT) that are set; an unmodifiable copy, iterated in
 *     the log's order
 * @param callStarted when the descriptor's call (Create, Update or Delete) started; empty for an
 *     operation that made no call (NOOP, a value obtained from the southbound, a derived property)
 * @param callEnded when that call returned (or was abandoned when it overran its time limit)
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
    Set<Flag> flags,
    Optional<Instant> callStarted,
    Optional<Instant> callEnded) {

  /**
   * A flag of an operation, as the transaction log prints it ({@link #label()}). The first eight
   * are recorded with the operation ({@link #isRecorded()}); the others are read from the
   * operation's states ({@link #displayFlags()}). Declared in the log's order.
   */
  public enum Flag {
    /** The key is a derived value. */
    DERIVED(true),
    /** The key is a derived value without descriptor. */
    PROPERTY(true),
    /**
     * No descriptor call was made (pending create, invalid, unimplemented, delete of an unavailable
     * value, equivalent update that only changes the state).
     */
    NOOP(true),
    /** Part of the revert of a failed transaction. */
    REVERT(true),
    /** Part of a retry transaction. */
    RETRY(true),
    /** Part of a re-creation (Delete + Create instead of Update). */
    RECREATE(true),
    /**
     * A call that ran ahead of the walk beyond the failure that reverted the transaction, or the
     * call that undid it (also flagged REVERT); see {@code KVSchedulerBuilder.revertInParallel}.
     * The value keeps its intent from before the transaction, and its status unless the call or its
     * undo failed.
     */
    RAN_AHEAD(true),
    /**
     * No call: the user told the scheduler that the southbound holds nothing for the key ({@link
     * Txn#assumeAbsent}), so whatever it guessed is dropped (a DELETE, also flagged NOOP).
     */
    ASSUMED_ABSENT(true),
    /** The value is now OBTAINED (owned by the southbound). */
    OBTAINED(false),
    /** The value was OBTAINED and no longer is. */
    WAS_OBTAINED(false),
    /** The value is now UNIMPLEMENTED (no descriptor). */
    UNIMPLEMENTED(false),
    /** The value was UNIMPLEMENTED and no longer is. */
    WAS_UNIMPLEMENTED(false),
    /** A deletion of a value already REMOVED. */
    ALREADY_REMOVED(false),
    /** A value found MISSING from the southbound is now removed. */
    ALREADY_MISSING(false),
    /** The value was MISSING from the southbound. */
    WAS_MISSING(false),
    /** The value was DISCOVERED in the southbound. */
    DISCOVERED(false),
    /** The value was PENDING and still is. */
    STILL_PENDING(false),
    /** The value was PENDING and no longer is. */
    WAS_PENDING(false),
    /** The value is now PENDING. */
    IS_PENDING(false),
    /** The value was FAILED and still is. */
    STILL_FAILING(false),
    /** The value was FAILED or INVALID and is now CONFIGURED. */
    FIXED(false),
    /** The value is now FAILED. */
    FAILED(false),
    /** The value was INVALID and still is. */
    STILL_INVALID(false),
    /** The value is now INVALID. */
    INVALID(false);

    private final boolean recorded;

    Flag(boolean recorded) {
      this.recorded = recorded;
    }

    /** True for the flags recorded with the operation, false for those read from its states. */
    public boolean isRecorded() {
      return recorded;
    }

    /** The flag as the log prints it: the name with dashes ({@code WAS-MISSING}). */
    public String label() {
      return name().replace('_', '-');
    }

    /**
     * The flag printed as {@code label}.
     *
     * @throws IllegalArgumentException if no flag is printed so
     */
    public static Flag fromLabel(String label) {
      for (Flag f : values()) {
        if (f.label().equals(label)) {
          return f;
        }
      }
      throw new IllegalArgumentException("unknown operation flag '" + label + "'");
    }
  }

  /**
   * @throws NullPointerException if a component is null
   * @throws IllegalArgumentException if {@code flags} holds a flag that is not recorded
   */
  public RecordedTxnOp {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(prevValue, "prevValue");
    Objects.requireNonNull(newValue, "newValue");
    Objects.requireNonNull(prevState, "prevState");
    Objects.requireNonNull(newState, "newState");
    Objects.requireNonNull(prevError, "prevError");
    Objects.requireNonNull(newError, "newError");
    Objects.requireNonNull(flags, "flags (an empty set for none)");
    Objects.requireNonNull(callStarted, "callStarted");
    Objects.requireNonNull(callEnded, "callEnded");
    EnumSet<Flag> copy = EnumSet.noneOf(Flag.class);
    for (Flag f : flags) {
      if (!f.isRecorded()) {
        throw new IllegalArgumentException(
            "flag " + f.label() + " of " + key + " is read from the states, not recorded");
      }
      copy.add(f);
    }
    flags = Collections.unmodifiableSet(copy);
  }

  /** An operation without the times of a call (one that made none, or whose times are unknown). */
  public RecordedTxnOp(
      TxnOperation operation,
      String key,
      Optional<Object> prevValue,
      Optional<Object> newValue,
      ValueState prevState,
      ValueState newState,
      String prevError,
      String newError,
      Set<Flag> flags) {
    this(
        operation,
        key,
        prevValue,
        newValue,
        prevState,
        newState,
        prevError,
        newError,
        flags,
        Optional.empty(),
        Optional.empty());
  }

  /** Whether recorded flag {@code flag} is set. */
  /**
   * True when {@code o} is an operation that did the same: every component but the call's times
   * ({@link #callStarted}, {@link #callEnded}) is equal. A simulated operation thus equals the one
   * executed, and a transaction run with parallel calls records operations equal to the sequential
   * run's.
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof RecordedTxnOp r
        && operation == r.operation
        && key.equals(r.key)
        && prevValue.equals(r.prevValue)
        && newValue.equals(r.newValue)
        && prevState == r.prevState
        && newState == r.newState
        && prevError.equals(r.prevError)
        && newError.equals(r.newError)
        && flags.equals(r.flags);
  }

  /** Consistent with {@link #equals}: the call's times do not count. */
  @Override
  public int hashCode() {
    return Objects.hash(
        operation, key, prevValue, newValue, prevState, newState, prevError, newError, flags);
  }

  public boolean is(Flag flag) {
    return flags.contains(flag);
  }

  /**
   * The flags as the transaction log prints them, in the log's order: DERIVED, PROPERTY, NOOP,
   * REVERT, RETRY, RECREATE, RAN-AHEAD, ASSUMED-ABSENT (DERIVED, REVERT and RETRY not for a
   * PROPERTY), then the flags read from the state transition, such as WAS-PENDING or FAILED.
   */
  public Set<Flag> displayFlags() {
    EnumSet<Flag> f = EnumSet.noneOf(Flag.class);
    boolean property = is(Flag.PROPERTY);
    if (is(Flag.DERIVED) && !property) f.add(Flag.DERIVED);
    if (property) f.add(Flag.PROPERTY);
    if (is(Flag.NOOP)) f.add(Flag.NOOP);
    if (is(Flag.REVERT) && !property) f.add(Flag.REVERT);
    if (is(Flag.RETRY) && !property) f.add(Flag.RETRY);
    if (is(Flag.RECREATE)) f.add(Flag.RECREATE);
    if (is(Flag.RAN_AHEAD)) f.add(Flag.RAN_AHEAD);
    if (is(Flag.ASSUMED_ABSENT)) f.add(Flag.ASSUMED_ABSENT);
    if (newState == ValueState.OBTAINED) f.add(Flag.OBTAINED);
    if (prevState == ValueState.OBTAINED && prevState != newState) f.add(Flag.WAS_OBTAINED);
    if (newState == ValueState.UNIMPLEMENTED) f.add(Flag.UNIMPLEMENTED);
    if (prevState == ValueState.UNIMPLEMENTED && prevState != newState) {
      f.add(Flag.WAS_UNIMPLEMENTED);
    }
    if (prevState == ValueState.REMOVED && operation == TxnOperation.DELETE) {
      f.add(Flag.ALREADY_REMOVED);
    }
    if (prevState == ValueState.MISSING) {
      f.add(newState == ValueState.REMOVED ? Flag.ALREADY_MISSING : Flag.WAS_MISSING);
    }
    if (prevState == ValueState.DISCOVERED) f.add(Flag.DISCOVERED);
    if (prevState == ValueState.PENDING) {
      f.add(newState == ValueState.PENDING ? Flag.STILL_PENDING : Flag.WAS_PENDING);
    } else if (newState == ValueState.PENDING) {
      f.add(Flag.IS_PENDING);
    }
    if (prevState == ValueState.FAILED) {
      if (newState == ValueState.FAILED) f.add(Flag.STILL_FAILING);
      else if (newState == ValueState.CONFIGURED) f.add(Flag.FIXED);
    } else if (newState == ValueState.FAILED) {
      f.add(Flag.FAILED);
    }
    if (prevState == ValueState.INVALID) {
      if (newState == ValueState.INVALID) f.add(Flag.STILL_INVALID);
      else if (newState == ValueState.CONFIGURED) f.add(Flag.FIXED);
    } else if (newState == ValueState.INVALID) {
      f.add(Flag.INVALID);
    }
    return Collections.unmodifiableSet(f);
  }

  /** Labels of {@code flags} in their order, e.g. {@code [DERIVED, IS-PENDING]}. */
  public static List<String> labels(Set<Flag> flags) {
    List<String> out = new ArrayList<>(flags.size());
    for (Flag f : flags) {
      out.add(f.label());
    }
    return out;
  }

  @Override
  public String toString() {
    return operation
        + " "
        + key
        + " ("
        + prevState
        + "->"
        + newState
        + ") "
        + new TreeSet<>(labels(flags))
        + (newError.isEmpty() ? "" : " error: " + newError);
  }
}
