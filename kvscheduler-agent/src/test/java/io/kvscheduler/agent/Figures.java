package io.kvscheduler.agent;

/**
 * Prints the figures of fault tests (counts, timings, reported causes) into the test log, one line
 * each, prefixed {@code [figure]}, whatever the log level.
 */
final class Figures {
  private Figures() {}

  static void print(String format, Object... args) {
    System.out.println("[figure] " + String.format(format, args));
  }
}
