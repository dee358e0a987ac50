package io.kvscheduler.api;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The failure of a processed transaction: the list of every key that failed, in execution order,
 * each with its operation and cause. Message format: {@code transaction #N failed: KeyErrors: [key
 * (OP): error, ...]}. Only failed values are reported so: a misuse (invalid options, a closed
 * scheduler, a full queue) throws {@link IllegalArgumentException}, {@link IllegalStateException}
 * or {@link QueueFullException} before anything is queued.
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

  /** Sequence number of the failed transaction. */
  public long seqNum() {
    return seqNum;
  }

  /** Every failed key, in execution order. */
  public List<KeyError> keyErrors() {
    return keyErrors;
  }
}
