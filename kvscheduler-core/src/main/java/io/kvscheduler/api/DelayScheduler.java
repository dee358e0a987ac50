package io.kvscheduler.api;

import java.time.Duration;

/**
 * Runs tasks after a delay (used for retries and periodic resync). Injected so tests can advance
 * time by hand; the default uses a daemon {@link java.util.concurrent.ScheduledExecutorService}.
 */
public interface DelayScheduler {
  /** Runs {@code task} once after {@code delay}; the returned handle cancels it. */
  Subscription schedule(Duration delay, Runnable task);
}
