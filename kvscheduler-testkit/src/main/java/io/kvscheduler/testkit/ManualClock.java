package io.kvscheduler.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A clock that moves only when told to: reading it ({@link #instant()}) does not move it, {@link
 * #advance} does. A test that wants distinct times (a revision after the one before) advances the
 * clock between its steps; one that needs time to pass within a transaction (a record's start
 * before its stop) asks for it explicitly, with a tick that every reading adds ({@link
 * #tickOnEveryRead}, or the constructor's {@code tick}).
 */
public final class ManualClock extends Clock {
  private Instant now;
  private Duration tick;

  /**
   * A clock at {@code start} that moves by {@code tick} after each reading ({@link Duration#ZERO}:
   * only when advanced).
   *
   * @throws IllegalArgumentException if {@code tick} is negative
   */
  public ManualClock(Instant start, Duration tick) {
    this.now = start;
    this.tick = checked(tick);
  }

  /** A clock at {@code start} that moves only when advanced. */
  public ManualClock(Instant start) {
    this(start, Duration.ZERO);
  }

  /** Starts at 2024-01-01T00:00:00Z and moves only when advanced. */
  public ManualClock() {
    this(Instant.parse("2024-01-01T00:00:00Z"));
  }

  @Override
  public synchronized Instant instant() {
    Instant t = now;
    now = now.plus(tick);
    return t;
  }

  /** The current time; never moves the clock, whatever its tick. */
  public synchronized Instant peek() {
    return now;
  }

  /**
   * From now on, each reading ({@link #instant()}) moves the clock by {@code tick} after it was
   * read ({@link Duration#ZERO}: only {@link #advance} moves it): for tests that need the
   * scheduler's readings within one transaction to differ.
   *
   * @return this clock
   * @throws IllegalArgumentException if {@code tick} is negative
   */
  public synchronized ManualClock tickOnEveryRead(Duration tick) {
    this.tick = checked(tick);
    return this;
  }

  private static Duration checked(Duration tick) {
    if (tick.isNegative()) {
      throw new IllegalArgumentException("tick must not be negative, got " + tick);
    }
    return tick;
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
