package io.kvscheduler.api;

/**
 * Receives value status changes. Called on a delivery thread, never on the engine thread; a
 * listener that throws is logged and keeps receiving. Statuses arrive in transaction order, one
 * per changed base key, keys ascending.
 */
@FunctionalInterface
public interface ValueStatusListener {
  void onStatus(BaseValueStatus status);
}
