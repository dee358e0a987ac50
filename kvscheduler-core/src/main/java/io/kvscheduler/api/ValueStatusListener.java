package io.kvscheduler.api;

/**
 * Receives value status changes. Called through the scheduler's status executor ({@link
 * KVSchedulerBuilder#statusExecutor}): by default one delivery thread, never the engine thread;
 * with a direct executor such as {@code Runnable::run}, on the engine thread, where a blocking
 * commit is only queued, not awaited. A listener that throws is logged and keeps receiving.
 * Statuses arrive in transaction order, one per changed base key, keys ascending.
 */
@FunctionalInterface
public interface ValueStatusListener {
  void onStatus(BaseValueStatus status);
}
