package io.kvscheduler.api;

/**
 * Receives value status changes. Called through the scheduler's status executor ({@link
 * KVSchedulerBuilder#statusExecutor}): by default one delivery thread, never the engine thread;
 * with a direct executor such as {@code Runnable::run}, on the engine thread, where a transaction
 * can only be committed with {@link Txn#commitAsync} (it runs after the current one). A listener
 * that throws is logged and keeps receiving. Statuses arrive in transaction order, one per changed
 * base key, keys ascending.
 */
@FunctionalInterface
public interface ValueStatusListener {
  void onStatus(BaseValueStatus status);
}
