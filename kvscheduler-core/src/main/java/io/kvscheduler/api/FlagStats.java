package io.kvscheduler.api;

import java.util.Map;

/**
 * Statistics of one flag over recorded graph revisions.
 *
 * @param total revisions carrying the flag
 * @param perValue revisions per flag value ({@code ""} for flags without a value)
 */
public record FlagStats(long total, Map<String, Long> perValue) {
  public FlagStats {
    perValue = Map.copyOf(perValue);
  }
}
