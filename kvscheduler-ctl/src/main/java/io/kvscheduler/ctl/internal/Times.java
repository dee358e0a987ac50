package io.kvscheduler.ctl.internal;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Times as the agent writes them (RFC 3339) and as a user gives them. */
public final class Times {
  private static final Pattern AGO = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private Times() {}

  /** Nanoseconds since the epoch of an RFC 3339 time (the agent's JSON), or -1. */
  public static long nanos(String rfc3339) {
    try {
      Instant i = OffsetDateTime.parse(rfc3339).toInstant();
      return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    } catch (DateTimeParseException e) {
      return -1;
    }
  }

  /**
   * A time given on the command line as nanoseconds since the epoch: RFC 3339 ({@code
   * 2026-11-26T09:00:00Z}), a duration before {@code now} ({@code 90s}, {@code 10m}, {@code 2h},
   * {@code 1d}) or a number of nanoseconds since the epoch.
   *
   * @throws CtlException (usage) naming {@code option} for anything else
   */
  public static long parse(String text, String option, Instant now) {
    String t = text.strip();
    Matcher m = AGO.matcher(t);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      Duration d =
          switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            default -> Duration.ofDays(n);
          };
      Instant i = now.minus(d);
      return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }
    if (t.matches("\\d+")) {
      return Long.parseLong(t);
    }
    long n = nanos(t);
    if (n < 0) {
      throw new CtlException(
          ExitCodes.USAGE,
          option
              + ": expected a time such as"
              + " 2026-11-26T09:00:00Z, a duration before now such as 10m, or nanoseconds since the"
              + " epoch; got '"
              + text
              + "'");
    }
    return n;
  }

  /** The time of day (with milliseconds) of an RFC 3339 time, the text itself if unparsable. */
  public static String display(String rfc3339) {
    try {
      OffsetDateTime t = OffsetDateTime.parse(rfc3339);
      return t.toLocalDate() + " " + t.toLocalTime().withNano(t.getNano() / 1_000_000 * 1_000_000);
    } catch (DateTimeParseException e) {
      return rfc3339;
    }
  }
}
