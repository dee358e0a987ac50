package io.kvscheduler.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that moves only when told to. Each {@link #instant()} call also advances it by {@link
 * #tick} (default 1 ms) so that start and stop times of records are distinct.
 */
public final class ManualClock extends Clock {
  private Instant now;
  private final Duration tick;

  public ManualClock(Instant start, Duration tick) {
    this.now = start;
    this.tick = tick;
  }

  /** Starts at 2024-01-01T00:00:00Z, ticking 1 ms per read. */
  public ManualClock() {
    this(Instant.parse("2024-01-01T00:00:00Z"), Duration.ofMillis(1));
  }

  @Override
  public synchronized Instant instant() {
    Instant t = now;
    now = now.plus(tick);
    return t;
  }

  /** The current time, without ticking. */
  public synchronized Instant peek() {
    return now;
  }

  /** Moves the clock forward. */
  public synchronized void advance(Duration d) {
    now = now.plus(d);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }
}
