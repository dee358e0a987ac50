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

  /** Logs each line at INFO level through SLF4J logger {@code io.kvscheduler.plugins.mock.sb}. */
  static SbPrinter logging() {
    Logger log = LoggerFactory.getLogger("io.kvscheduler.plugins.mock.sb");
    return line -> log.info("{}", line);
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
