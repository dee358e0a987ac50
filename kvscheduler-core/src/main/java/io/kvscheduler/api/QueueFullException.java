package io.kvscheduler.api;

/**
 * The scheduler's transaction queue is full: the transaction or notification was refused and
 * nothing of it was queued. Thrown by {@link Txn#tryCommitAsync} and {@link
 * KVScheduler#pushSBNotification}, for callers that prefer to tell someone (a REST client gets a
 * 503) rather than wait for room. The queue's capacity is set by {@link
 * KVSchedulerBuilder#queueCapacity}. Message: {@code transaction queue is full}.
 */
public final class QueueFullException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The refusal of one transaction or notification. */
  public QueueFullException() {
    super("transaction queue is full");
  }
}
