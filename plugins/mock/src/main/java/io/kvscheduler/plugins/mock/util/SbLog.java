package io.kvscheduler.plugins.mock.util;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * The mock southbound's log: one line per operation at INFO while operations come at most {@link
 * #threshold} to a window of {@link #windowNanos}; beyond that, the operations of the window are
 * logged at DEBUG only, and one INFO line at the end of the window sums them up ({@code 99,900 more
 * southbound operations within 1 s, logged at DEBUG}). A few operations read as before; a resync of
 * 100,000 values writes a few lines, not 100,000 (formatting and writing a line costs more than the
 * operation itself).
 */
final class SbLog implements SbPrinter {
  /** Operations logged at INFO per window: more are at DEBUG. */
  static final int DEFAULT_THRESHOLD = 100;

  /** The window, one second. */
  static final long DEFAULT_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(1);

  private static final ScheduledExecutorService SUMMARIES =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kvs-mock-sb-log");
            t.setDaemon(true);
            return t;
          });

  private final Logger log;
  private final int threshold;
  private final long windowNanos;
  private final LongSupplier clock;

  private long windowStart;
  private int inWindow;
  private long quieted;
  private boolean summaryScheduled;

  SbLog(Logger log, int threshold, long windowNanos, LongSupplier clock) {
    this.log = log;
    this.threshold = threshold;
    this.windowNanos = windowNanos;
    this.clock = clock;
    this.windowStart = clock.getAsLong() - windowNanos;
  }

  @Override
  public void print(String line) {
    boolean info;
    synchronized (this) {
      long now = clock.getAsLong();
      if (now - windowStart >= windowNanos) {
        summary();
        windowStart = now;
        inWindow = 0;
      }
      info = ++inWindow <= threshold;
      if (!info) {
        quieted++;
        if (!summaryScheduled) {
          summaryScheduled = true;
          long delay = Math.max(0, windowStart + windowNanos - now);
          SUMMARIES.schedule(this::summaryIfDue, delay, TimeUnit.NANOSECONDS);
        }
      }
    }
    if (info) {
      log.info("{}", line);
    } else {
      log.debug("{}", line);
    }
  }

  private synchronized void summaryIfDue() {
    summaryScheduled = false;
    if (clock.getAsLong() - windowStart >= windowNanos) {
      summary();
    } else if (quieted > 0) {
      summaryScheduled = true;
      SUMMARIES.schedule(
          this::summaryIfDue,
          Math.max(0, windowStart + windowNanos - clock.getAsLong()),
          TimeUnit.NANOSECONDS);
    }
  }

  /** The summary line of the operations logged at DEBUG only, if any (holding the lock). */
  private void summary() {
    if (quieted > 0) {
      log.info(
          "{} more southbound operations within {} ms, logged at DEBUG (logger {})",
          quieted,
          TimeUnit.NANOSECONDS.toMillis(windowNanos),
          log.getName());
      quieted = 0;
    }
  }

  /** Logs the pending summary now (for tests). */
  synchronized void flush() {
    summary();
  }
}
