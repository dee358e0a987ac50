package io.kvscheduler.agent.spi;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Confirmed commits: a source's delivery applied at once and rolled back unless confirmed in time.
 *
 * <p>One commit is pending at a time, over every source. While it is pending, the source's values
 * before it stay the durable truth (a restart comes back to them), other deliveries of that source
 * are refused ({@link ConfirmationConflictException}), and it ends in one of three ways:
 *
 * <ul>
 *   <li>{@link #confirm}, or every probe of the agent passing: the new values become the durable
 *       truth;
 *   <li>the deadline passing, a probe failing, or {@link #rollback}: the source's values before it
 *       are restored, and the southbound follows in one transaction described {@code rollback: ...}
 *       (the cause);
 *   <li>the agent stopping: nothing is confirmed, the next start applies the values before it.
 * </ul>
 */
public interface ConfirmedCommits {
  /** The longest {@code confirm-within}. */
  Duration MAX_WITHIN = Duration.ofHours(1);

  /** The name of the parameter (REST query parameter, gRPC request metadata, kvsctl flag). */
  String PARAMETER = "confirm-within";

  /**
   * A commit that waits for its confirmation.
   *
   * @param id its number, counted from 1 since the agent started
   * @param source the data source it came from ({@code rest}, {@code grpc})
   * @param seqNum the sequence number of its transaction, or -1 while not known yet
   * @param committed when it was committed
   * @param within how long it waits for the confirmation
   * @param deadline when it is rolled back unless confirmed
   */
  record Pending(
      long id, String source, long seqNum, Instant committed, Duration within, Instant deadline) {
    /** Its name: {@code confirmed commit #1 from rest (transaction 12)}. */
    public String name() {
      return "confirmed commit #"
          + id
          + " from "
          + source
          + (seqNum >= 0 ? " (transaction " + seqNum + ")" : "");
    }

    /** How it is named in answers: its name and its deadline. */
    public String describe() {
      return name() + ", rolled back at " + deadline + " unless confirmed";
    }
  }

  /**
   * Applies {@code values} of {@code source} at once (a resync of the source when {@code replace},
   * else a change) and rolls them back unless confirmed within {@code within}.
   *
   * @return the transaction's sequence number (as a plain delivery's); a {@link
   *     ConfirmationConflictException} when a commit is pending already, naming it (nothing
   *     applied)
   * @throws IllegalArgumentException when {@code within} is not positive or over {@link
   *     #MAX_WITHIN}
   */
  CompletableFuture<Long> commit(
      String source, Map<String, Object> values, boolean replace, Duration within);

  /**
   * Like {@link #commit(String, Map, boolean, Duration)}, with the labels given with the values (by
   * key, as {@link Northbound#change(String, Map, Map)}). The default ignores the labels.
   */
  default CompletableFuture<Long> commit(
      String source,
      Map<String, Object> values,
      Map<String, Map<String, String>> labels,
      boolean replace,
      Duration within) {
    return commit(source, values, replace, within);
  }

  /**
   * Confirms the pending commit.
   *
   * @return the commit confirmed
   * @throws ConfirmationConflictException when none is pending
   */
  Pending confirm();

  /**
   * Rolls the pending commit back now.
   *
   * @return the sequence number of the rollback's transaction
   * @throws ConfirmationConflictException when none is pending
   */
  CompletableFuture<Long> rollback();

  /** The commit waiting for its confirmation, if any. */
  Optional<Pending> pending();

  /**
   * Reads a {@code confirm-within}: a number with a unit ({@code 500ms}, {@code 30s}, {@code 5m},
   * {@code 1h}) or an ISO-8601 duration ({@code PT30S}), more than zero and at most an hour.
   *
   * @throws IllegalArgumentException naming the parameter, the value and what is accepted
   */
  static Duration parseWithin(String text) {
    String t = text == null ? "" : text.strip();
    Duration d = null;
    Matcher m = Pattern.compile("(\\d{1,9})(ms|s|m|h)").matcher(t.toLowerCase(Locale.ROOT));
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      d =
          switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
          };
    } else if (t.toUpperCase(Locale.ROOT).startsWith("PT")) {
      try {
        d = Duration.parse(t);
      } catch (DateTimeParseException e) {
        d = null;
      }
    }
    if (d == null) {
      throw new IllegalArgumentException(
          PARAMETER + " '" + t + "' is not a duration: write it as 500ms, 30s, 5m, 1h or PT30S");
    }
    checkWithin(d);
    return d;
  }

  /**
   * Checks a {@code confirm-within}: more than zero, at most {@link #MAX_WITHIN}.
   *
   * @throws IllegalArgumentException naming the parameter
   */
  static void checkWithin(Duration within) {
    if (within.isNegative() || within.isZero()) {
      throw new IllegalArgumentException(
          PARAMETER + " must be more than zero, got " + within.toMillis() + "ms");
    }
    if (within.compareTo(MAX_WITHIN) > 0) {
      throw new IllegalArgumentException(
          PARAMETER + " must be at most 1h, got " + within.toSeconds() + "s");
    }
  }
}
