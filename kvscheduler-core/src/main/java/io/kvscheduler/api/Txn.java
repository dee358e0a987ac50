package io.kvscheduler.api;

import java.util.concurrent.CompletableFuture;

/**
 * A northbound transaction being built. Not thread-safe; use from one thread, commit once.
 *
 * <p>Setting the same key twice keeps the last value. A null value requests deletion.
 */
public interface Txn {
  /**
   * Sets the desired value of a base key; {@code null} requests deletion. A key that holds a value
   * derived from another one (when the transaction is applied) is not set or removed: only its base
   * value does that, and the commit fails with a {@link TransactionException} naming the key (the
   * transaction's other values apply).
   *
   * @return this transaction
   * @throws IllegalStateException if the transaction was already committed
   * @throws NullPointerException if the key is null
   * @throws IllegalArgumentException if the key is empty
   */
  Txn setValue(String key, Object value);

  /**
   * Requests the deletion of base key {@code key}: the same as {@code setValue(key, null)}.
   *
   * @return this transaction
   * @throws IllegalStateException if the transaction was already committed
   * @throws NullPointerException if the key is null
   * @throws IllegalArgumentException if the key is empty
   */
  default Txn delete(String key) {
    return setValue(key, null);
  }

  /**
   * Works out what {@link #commit()} would do, without doing it: as {@link #plan(TxnOptions)} with
   * the default options.
   *
   * @return the plan
   * @throws IllegalArgumentException as {@link #plan(TxnOptions)}
   * @throws IllegalStateException as {@link #plan(TxnOptions)}
   */
  default Plan plan() {
    return plan(TxnOptions.defaults());
  }

  /**
   * Works out what committing this transaction with {@code options} would do, without doing it, and
   * waits for the answer: the operations in the order the commit would execute them, each with its
   * predicted state (PENDING with the dependencies the value would wait for, INVALID with the
   * validation error). The descriptors' Validate is called; their Create, Update and Delete are
   * not; the scheduler's values, statuses, metadata maps and history do not change, no status is
   * sent to watchers and no sequence number is used.
   *
   * <p>A resync's plan reads the southbound first (the descriptors' Retrieve, which is read-only)
   * and returns what the resync would change; the plan of a downstream resync (an empty
   * transaction) is the <em>drift</em> of the southbound from the intent. Options other than the
   * resync and revert flags do not change the plan (a simulation is what a plan is; retries happen
   * only after failures, which a plan does not predict).
   *
   * <p>The transaction stays open: it may be changed, planned again, then committed. The plan is
   * exact when every southbound call succeeds and nothing else is queued in between.
   *
   * @return the plan (empty when the commit would do nothing)
   * @throws IllegalArgumentException if the options are invalid (as for {@link #commit}), or a key
   *     no descriptor selects was given to a scheduler built with {@link
   *     KVSchedulerBuilder#rejectUnselectedKeys}
   * @throws IllegalStateException if the transaction was already committed, the scheduler is
   *     closed, or when called inside a descriptor callback (the engine is busy with the callback's
   *     transaction)
   * @throws TransactionException for a resync's plan when a descriptor's Retrieve fails ({@link
   *     TransactionException#retrieveErrors()} names it): what the southbound holds there is
   *     unknown, so no plan claims there is no drift; nothing is changed
   */
  Plan plan(TxnOptions options);

  /**
   * Tells the scheduler that the southbound holds nothing for base key {@code key} (nor for its
   * derived values), whatever the scheduler guessed: the way out for a key left unread. When a call
   * for a value fails and the Retrieve after it fails too, what the southbound holds for the key is
   * unknown, and the scheduler makes no call for it (no Create over what the failure may have left,
   * no Delete or Update of an object that may not be there) until a Retrieve answers; every change
   * of the key fails until then with an error saying so. When the Retrieve keeps failing and you
   * know the object is gone (or have removed it yourself), commit a transaction with {@code
   * assumeAbsent(key)}: the key and its derived values are taken as absent, recorded as a {@code
   * DELETE} flagged {@link RecordedTxnOp.Flag#ASSUMED_ABSENT} and {@code NOOP} (no call), then the
   * transaction applies its value for the key ({@link #setValue}: created from nothing; {@link
   * #delete}: nothing to delete) or, when it gives none, the key's last intent again. A key holding
   * a derived value, or one the scheduler knows nothing of, is ignored (with a warning).
   *
   * <p>Use it only when the southbound really holds nothing for the key: otherwise the Create that
   * follows meets the object the scheduler was told is not there.
   *
   * @return this transaction
   * @throws IllegalStateException if the transaction was already committed
   * @throws IllegalArgumentException if the key is null or empty
   */
  Txn assumeAbsent(String key);

  /**
   * Commits with default options and waits for the result.
   *
   * @return the sequence number of the processed transaction
   * @throws TransactionException if a value failed (every failed key is named)
   * @throws IllegalArgumentException if the options are invalid (a resync with revert, a downstream
   *     resync carrying values), or a key no descriptor selects was given to a scheduler built with
   *     {@link KVSchedulerBuilder#rejectUnselectedKeys}: nothing is queued
   * @throws IllegalStateException if the transaction was already committed or the scheduler is
   *     closed
   */
  default long commit() {
    return commit(TxnOptions.defaults());
  }

  /**
   * Commits and waits for the result. While the scheduler's queue is full, waits for room first.
   *
   * @return the sequence number of the processed transaction
   * @throws TransactionException if a value failed (every failed key is named)
   * @throws IllegalArgumentException if the options are invalid (a resync with revert, a downstream
   *     resync carrying values), or a key no descriptor selects was given to a scheduler built with
   *     {@link KVSchedulerBuilder#rejectUnselectedKeys}: nothing is queued
   * @throws IllegalStateException if the transaction was already committed, the scheduler is
   *     closed, or when called inside a descriptor callback: the engine runs the callback and
   *     cannot wait for itself; use {@link #commitAsync} there
   */
  long commit(TxnOptions options);

  /**
   * Commits without waiting for the transaction to be processed. While the queue is full, the call
   * waits for room first: a stream of changes committed this way is slowed down to the engine's
   * pace instead of losing any ({@link #tryCommitAsync} refuses instead). Called inside a
   * descriptor callback, the transaction is queued at once to run right after the current one.
   *
   * @return a future completed, once the transaction ran, with its sequence number, or
   *     exceptionally with a {@link TransactionException} (a failed value) or with an {@link
   *     IllegalStateException} when the scheduler is closed before the transaction runs
   * @throws IllegalArgumentException if the options are invalid (as for {@link #commit})
   * @throws IllegalStateException if the transaction was already committed or the scheduler is
   *     closed
   */
  CompletableFuture<Long> commitAsync(TxnOptions options);

  /**
   * Like {@link #commitAsync}, but a full queue refuses the transaction at once instead of waiting
   * for room: for a caller that has someone to tell, such as a REST client. A refused transaction
   * is not committed; it may be committed again later.
   *
   * @return a future completed as {@link #commitAsync}'s
   * @throws QueueFullException if the scheduler's queue is full (nothing was queued)
   * @throws IllegalArgumentException if the options are invalid (as for {@link #commit})
   * @throws IllegalStateException if the transaction was already committed or the scheduler is
   *     closed
   */
  CompletableFuture<Long> tryCommitAsync(TxnOptions options);
}
