package io.kvscheduler.api;

import java.time.Duration;
import java.util.Objects;

/**
 * How failed operations of a transaction are retried.
 *
 * @param period delay before the first retry
 * @param maxCount maximum number of retries; 0 means unlimited
 * @param expBackoff double the delay after every failed retry
 */
public record RetryOptions(Duration period, int maxCount, boolean expBackoff) {
  /** vpp-agent's default: first retry after 1 s, at most 3 retries, exponential back-off. */
  public static final RetryOptions DEFAULT = new RetryOptions(Duration.ofSeconds(1), 3, true);

  public RetryOptions {
    Objects.requireNonNull(period, "period");
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("retry period must be positive, got " + period);
    }
    if (maxCount < 0) {
      throw new IllegalArgumentException("retry maxCount must be >= 0, got " + maxCount);
    }
  }
}
