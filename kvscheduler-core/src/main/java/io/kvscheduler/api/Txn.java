package io.kvscheduler.api;

import java.util.concurrent.CompletableFuture;

/**
 * A northbound transaction being built. Not thread-safe; use from one thread, commit once.
 *
 * <p>Setting the same key twice keeps the last value. A null value requests deletion.
 */
public interface Txn {
  /**
   * Sets the desired value of a base key; {@code null} requests deletion. A key that holds a
   * value derived from another one (when the transaction is applied) is not set or removed: only
   * its base value does that, and the commit fails with a {@link TransactionException} naming the
   * key (the transaction's other values apply).
   *
   * @return this transaction
   * @throws IllegalStateException if the transaction was already committed
   * @throws IllegalArgumentException if the key is empty
   */
  Txn setValue(String key, Object value);

  /**
   * Commits with default options and waits for the result.
   *
   * @return the sequence number of the processed transaction
   * @throws TransactionException if a value failed (every failed key is named) or the options are
   *     invalid
   * @throws IllegalStateException if the transaction was already committed or the scheduler is
   *     closed
   */
  default long commit() {
    return commit(TxnOptions.defaults());
  }

  /**
   * Commits and, unless {@link TxnOptions#nonBlocking()}, waits for the result. Called from a
   * descriptor callback (on the engine thread) the transaction is queued and {@code -1} returned
   * at once: waiting there would deadlock.
   *
   * @return the sequence number, or {@code -1} when the commit did not wait
   * @throws TransactionException if a value failed (every failed key is named) or the options are
   *     invalid, or the queue is full for a non-blocking commit
   * @throws IllegalStateException if the transaction was already committed or the scheduler is
   *     closed
   */
  long commit(TxnOptions options);

  /**
   * Commits without waiting for the transaction to be processed. While the queue is full, the
   * call waits for room first: a stream of changes committed this way is slowed down to the
   * engine's pace instead of losing any. With {@link TxnOptions.Builder#nonBlocking} a full queue
   * refuses the commit at once instead: the returned future has already failed with a {@link
   * TransactionException} "transaction queue is full" (for a caller that has someone to tell,
   * such as a REST client). The future completes with the sequence number, or exceptionally
   * with a {@link TransactionException} (a failed value, invalid options, a full queue for a
   * non-blocking commit) or with an {@link IllegalStateException} when the scheduler is closed
   * before the transaction runs.
   *
   * @throws IllegalStateException if the transaction was already committed or the scheduler is
   *     closed
   */
  CompletableFuture<Long> commitAsync(TxnOptions options);
}
