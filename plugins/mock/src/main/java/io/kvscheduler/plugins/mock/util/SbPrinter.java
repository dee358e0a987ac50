package io.kvscheduler.plugins.mock.util;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the mock southbound reports every operation it carries out, one line each (e.g. {@code
 * Created TAP interface: tap1}).
 */
@FunctionalInterface
public interface SbPrinter {
  /** Reports one operation. */
  void print(String line);

  /**
   * Logs through SLF4J logger {@code io.kvscheduler.plugins.mock.sb}: each line at INFO while there
   * are at most 100 operations a second, beyond that at DEBUG with one summary line at INFO per
   * second (a resync of 100,000 values writes a few lines, not 100,000).
   */
  static SbPrinter logging() {
    Logger log = LoggerFactory.getLogger("io.kvscheduler.plugins.mock.sb");
    return new SbLog(log, SbLog.DEFAULT_THRESHOLD, SbLog.DEFAULT_WINDOW_NANOS, System::nanoTime);
  }

  /** Prints each line to standard output, prefixed with {@code " [mock SB] "}. */
  static SbPrinter stdout() {
    return line -> System.out.println("  [mock SB] " + line);
  }

  /** Discards every line. */
  static SbPrinter silent() {
    return line -> {};
  }
}
