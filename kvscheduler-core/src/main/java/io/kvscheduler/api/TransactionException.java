package io.kvscheduler.api;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The one error of a transaction: either an option error detected before queuing (no sequence
 * number consumed, {@link #seqNum()} is -1), or the list of every key that failed, in execution
 * order, each with its operation and cause. Message format: {@code KeyErrors: [key (OP): error,
 * ...]}.
 */
public final class TransactionException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final long seqNum;
  private final transient List<KeyError> keyErrors;

  /** An error for a processed transaction listing every failed key. */
  public TransactionException(long seqNum, List<KeyError> keyErrors) {
    super(
        "transaction #"
            + seqNum
            + " failed: KeyErrors: ["
            + keyErrors.stream().map(KeyError::toString).collect(Collectors.joining(", "))
            + "]",
        keyErrors.isEmpty() ? null : keyErrors.get(0).cause());
    this.seqNum = seqNum;
    this.keyErrors = List.copyOf(keyErrors);
  }

  /** An error detected before the transaction was queued. */
  public TransactionException(String initError) {
    super(initError);
    this.seqNum = -1;
    this.keyErrors = List.of();
  }

  /** Sequence number of the failed transaction, -1 if it was never queued. */
  public long seqNum() {
    return seqNum;
  }

  /** Every failed key, in execution order; empty for an option error. */
  public List<KeyError> keyErrors() {
    return keyErrors;
  }

  /** True when the transaction was rejected before it was queued. */
  public boolean isInitError() {
    return seqNum < 0;
  }
}
