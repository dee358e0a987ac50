package io.kvscheduler.api;

import java.util.List;

/**
 * The failure of a processed transaction: the list of every key that failed, in execution order,
 * each with its operation, cause and {@link KeyError.Kind kind}, and, for a resync, the descriptors
 * whose Retrieve failed. Message format: {@code transaction #N failed: KeyErrors: [key (OP): error,
 * ...]}, followed by {@code ; RetrieveErrors: [descriptor D: Retrieve failed: error, ...]} when a
 * Retrieve failed. The message names at most {@value #MESSAGE_KEYS} keys, then {@code and N more}:
 * the full list is {@link #keyErrors()}. Only failed values are reported so: a misuse (invalid
 * options, a closed scheduler, a full queue) throws {@link IllegalArgumentException}, {@link
 * IllegalStateException} or {@link QueueFullException} before anything is queued.
 *
 * <p>{@code commit()} throws it on the caller's thread, so its stack trace shows the call site; the
 * exception the engine completed the transaction with is attached as suppressed.
 */
public final class TransactionException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The most keys (and the most failed Retrieves) the message names. */
  public static final int MESSAGE_KEYS = 10;

  private final long seqNum;
  private final transient List<KeyError> keyErrors;
  private final transient List<RetrieveError> retrieveErrors;

  /** An error for a processed transaction listing every failed key. */
  public TransactionException(long seqNum, List<KeyError> keyErrors) {
    this(seqNum, keyErrors, List.of());
  }

  /**
   * An error for a processed transaction listing every failed key and every descriptor whose
   * Retrieve failed in its refresh.
   */
  public TransactionException(
      long seqNum, List<KeyError> keyErrors, List<RetrieveError> retrieveErrors) {
    super(
        message(seqNum, keyErrors, retrieveErrors),
        keyErrors.isEmpty() ? null : keyErrors.get(0).cause());
    this.seqNum = seqNum;
    this.keyErrors = List.copyOf(keyErrors);
    this.retrieveErrors = List.copyOf(retrieveErrors);
  }

  private static String message(
      long seqNum, List<KeyError> keyErrors, List<RetrieveError> retrieveErrors) {
    StringBuilder sb = new StringBuilder("transaction #").append(seqNum).append(" failed: ");
    if (!keyErrors.isEmpty() || retrieveErrors.isEmpty()) {
      sb.append("KeyErrors: ");
      appendCapped(sb, keyErrors);
    }
    if (!retrieveErrors.isEmpty()) {
      sb.append(keyErrors.isEmpty() ? "" : "; ").append("RetrieveErrors: ");
      appendCapped(sb, retrieveErrors);
    }
    return sb.toString();
  }

  private static void appendCapped(StringBuilder sb, List<?> items) {
    sb.append('[');
    int shown = Math.min(items.size(), MESSAGE_KEYS);
    for (int i = 0; i < shown; i++) {
      sb.append(i == 0 ? "" : ", ").append(items.get(i));
    }
    if (items.size() > shown) {
      sb.append(", and ").append(items.size() - shown).append(" more");
    }
    sb.append(']');
  }

  /** Sequence number of the failed transaction. */
  public long seqNum() {
    return seqNum;
  }

  /** Every failed key, in execution order. */
  public List<KeyError> keyErrors() {
    return keyErrors;
  }

  /**
   * The descriptors whose Retrieve failed in the transaction's refresh (a full or downstream
   * resync), in retrieve order; empty otherwise.
   */
  public List<RetrieveError> retrieveErrors() {
    return retrieveErrors;
  }
}
