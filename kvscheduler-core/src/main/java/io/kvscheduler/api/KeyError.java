package io.kvscheduler.api;

import java.util.Objects;

/**
 * One failed value of a transaction.
 *
 * @param key the failed key (base or derived)
 * @param operation the operation that failed
 * @param message the error message
 * @param cause the exception raised by the descriptor or validation
 * @param kind what kind of failure it is, for callers that branch on it (the message is for people)
 */
public record KeyError(
    String key, TxnOperation operation, String message, Throwable cause, Kind kind) {

  /**
   * What kind of failure a {@link KeyError} reports. The kind says what the caller can do about it;
   * the message and cause say what happened.
   */
  public enum Kind {
    /**
     * A southbound call failed: Create, Update or Delete threw. Retried when the descriptor calls
     * the error retriable.
     */
    CALL_FAILED,
    /** The call did not return within the operation timeout ({@link OperationTimeoutException}). */
    TIMEOUT,
    /**
     * The value was rejected before any call (state INVALID): Validate threw, the value is of
     * another class than the descriptor's, Dependencies or DerivedValues threw for it, or the key
     * is selected by more than one descriptor. Not retried: the value must change.
     */
    INVALID,
    /**
     * No call was made because what the southbound holds for the key is unknown: an earlier call
     * failed, or a resync's Retrieve failed, and no Retrieve has answered since. Retriable: the
     * next transaction reads the key first.
     */
    UNREAD,
    /** The descriptor does not implement the operation asked (e.g. no Update). */
    NOT_IMPLEMENTED,
    /**
     * A descriptor callback answered something its contract forbids, or the northbound set a key
     * only base values may set. Not retried.
     */
    CONTRACT,
    /**
     * The key is already held by another value: a derived value whose key holds a value that is not
     * derived from the same base, or a northbound value for a key that holds a derived value.
     * Nothing is done for the newcomer; the value that holds the key keeps it.
     */
    CONFLICT,
    /** Verification mode: after the transaction, the southbound does not hold what was applied. */
    VERIFICATION
  }

  public KeyError {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(kind, "kind");
  }

  /**
   * A key error whose kind follows from its cause: {@link Kind#INVALID} for an {@link
   * InvalidValueException}, {@link Kind#TIMEOUT} for an {@link OperationTimeoutException}, {@link
   * Kind#CALL_FAILED} otherwise.
   */
  public KeyError(String key, TxnOperation operation, String message, Throwable cause) {
    this(key, operation, message, cause, kindOf(cause));
  }

  private static Kind kindOf(Throwable cause) {
    if (cause instanceof InvalidValueException) {
      return Kind.INVALID;
    }
    if (cause instanceof OperationTimeoutException) {
      return Kind.TIMEOUT;
    }
    return Kind.CALL_FAILED;
  }

  @Override
  public String toString() {
    return key + " (" + operation + "): " + message;
  }
}
