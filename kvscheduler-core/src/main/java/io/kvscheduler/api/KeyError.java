package io.kvscheduler.api;

import java.util.Objects;

/**
 * One failed value of a transaction.
 *
 * @param key the failed key (base or derived)
 * @param operation the operation that failed
 * @param message the error message
 * @param cause the exception raised by the descriptor or validation
 */
public record KeyError(String key, TxnOperation operation, String message, Throwable cause) {
  public KeyError {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(message, "message");
  }

  @Override
  public String toString() {
    return key + " (" + operation + "): " + message;
  }
}
