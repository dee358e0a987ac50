package io.kvscheduler.api;

import java.time.Duration;
import java.util.Objects;

/**
 * A southbound call (Create, Update, Delete or Retrieve) that did not return within its operation
 * timeout ({@link KVSchedulerBuilder#operationTimeout}, {@link
 * KVDescriptor.Builder#operationTimeout}). The engine stops waiting, interrupts the call and treats
 * the operation as failed with this exception; whether it is retried is decided like for any other
 * failure (the descriptor's {@code isRetriableFailure}, retriable by default).
 */
public final class OperationTimeoutException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String descriptor;
  private final String operation;
  private final String key;
  private final Duration timeout;

  /**
   * @param descriptor name of the descriptor whose callback did not return
   * @param operation {@code Create}, {@code Update}, {@code Delete} or {@code Retrieve}
   * @param key key of the value, or null for Retrieve
   * @param timeout the limit that was exceeded
   */
  public OperationTimeoutException(
      String descriptor, String operation, String key, Duration timeout) {
    super(
        "descriptor "
            + descriptor
            + ": "
            + operation
            + (key == null ? "" : " of key " + key)
            + " did not return within "
            + text(timeout)
            + " (the call was interrupted and is no longer awaited)");
    this.descriptor = Objects.requireNonNull(descriptor, "descriptor");
    this.operation = Objects.requireNonNull(operation, "operation");
    this.key = key;
    this.timeout = Objects.requireNonNull(timeout, "timeout");
  }

  private static String text(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** Name of the descriptor whose callback did not return. */
  public String descriptor() {
    return descriptor;
  }

  /** {@code Create}, {@code Update}, {@code Delete} or {@code Retrieve}. */
  public String operation() {
    return operation;
  }

  /** Key of the value; null for Retrieve. */
  public String key() {
    return key;
  }

  /** The limit that was exceeded. */
  public Duration timeout() {
    return timeout;
  }
}
