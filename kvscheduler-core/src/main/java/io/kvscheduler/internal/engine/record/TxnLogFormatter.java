package io.kvscheduler.internal.engine.record;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.internal.util.UserCode;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * Renders the human-readable transaction summary that the scheduler prints for every transaction
 * (docs/interop.md §5.4), in the same layout as vpp-agent's KV scheduler.
 *
 * <p>Two blocks per transaction, each returned as a string whose every line ends with {@code \n};
 * the caller prints it with {@code println}, which yields the extra empty line after each block:
 *
 * <ul>
 *   <li>{@link #preRecord}: a {@code +===+} box titled {@code | #<seq> - <TxnType> ... <info> |}
 *       (info = resync type, {@code retrying failed TXN #n (attempt k)} or {@code retrying
 *       unimplemented TXN #n}), then {@code * transaction arguments:} (seqNum, type, optional
 *       description, values) and, for simulated transactions, {@code * planned operations:}.
 *   <li>{@link #finalRecord}: an {@code o---o} line, {@code * executed operations (<start> ->
 *       <stop>, dur: <d>):} with the numbered operations (or {@code <NONE>}), then an {@code x---x}
 *       box titled {@code | #<seq> - <TxnType> ... took <elapsed> |}.
 * </ul>
 *
 * <p>Lines are 120 characters wide; the box title is padded so that the right-hand info ends at
 * column 118 (a longer info simply widens the line). Operations print as {@code <n>. <OP>
 * [<flags>]:} (flags from {@link RecordedTxnOp#displayFlags()}) followed by key, value(s) and
 * errors. A present value prints as {@code { <text> }} where the text comes from the {@code
 * valueText} function supplied by the caller (for example {@code Object::toString}, or a
 * single-line proto text renderer); an absent value prints as {@code <NIL>}. Like the Go output,
 * {@code - value:}, {@code - prev-value:} and {@code - new-value:} lines end with one trailing
 * space.
 *
 * <p>Times are always printed in UTC in Go's {@code time.Time.String()} layout after rounding to
 * the millisecond ({@code 2024-05-06 10:15:01.123 +0000 UTC}; trailing zeros of the fraction are
 * dropped as Go does). Durations use Go's {@code time.Duration.String()} syntax: {@code dur:} is
 * rounded to 1 ms, {@code took} to 100 µs.
 */
public final class TxnLogFormatter {

  /** Width of the rule lines, corners included. */
  static final int WIDTH = 120;

  private static final String I1 = "  ";
  private static final String I2 = "      ";
  private static final String I3 = "          ";

  private static final DateTimeFormatter DATE_TIME =
      DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

  private static final long MICRO = 1_000L;
  private static final long MILLI = 1_000_000L;
  private static final long SECOND = 1_000_000_000L;

  private TxnLogFormatter() {}

  /**
   * Where the library sends a reader for the whole of a transaction's lists: the record {@link
   * io.kvscheduler.api.KVScheduler#recordedTransaction} returns.
   */
  public static final LongFunction<String> LIBRARY_HINT =
      seq -> "KVScheduler.recordedTransaction(" + seq + ") has them all";

  /**
   * The line that ends a list cut at {@code shown} items of {@code total}: {@code … and M more
   * (<hint>)}, the hint being where to read the rest (user code: a hint that fails is left out).
   */
  static String more(int total, int shown, long seq, LongFunction<String> hint) {
    String where;
    try {
      where = " (" + Excerpt.escaped(Excerpt.quote(hint.apply(seq))) + ")";
    } catch (Throwable t) {
      UserCode.rethrowFatal(t);
      where = "";
    }
    return "… and " + (total - shown) + " more" + where + "\n";
  }

  /**
   * The block printed when processing of {@code txn} starts (before execution), listing at most
   * {@code maxItems} values (0: all), then how many more there are and where to see them ({@code
   * hint}, given the transaction's sequence number).
   */
  public static String preRecord(
      RecordedTxn txn,
      Function<Object, String> valueText,
      int maxItems,
      LongFunction<String> hint) {
    StringBuilder sb = new StringBuilder();
    String rule = "+" + "=".repeat(WIDTH - 2) + "+\n";
    sb.append(rule).append(titleLine(txn, headerInfo(txn))).append(rule);

    sb.append(I1).append("* transaction arguments:\n");
    sb.append(I2).append("- seqNum: ").append(txn.seqNum()).append('\n');
    sb.append(I2).append("- type: ").append(typeText(txn)).append('\n');
    if (!txn.description().isEmpty()) {
      String[] lines = txn.description().split("\n", -1);
      sb.append(I2)
          .append("- Description: ")
          .append(Excerpt.escaped(Excerpt.message(lines[0])))
          .append('\n');
      int shownLines = Math.min(lines.length, maxItems > 0 ? maxItems : lines.length);
      for (int i = 1; i < shownLines; i++) {
        sb.append(I3).append(Excerpt.escaped(Excerpt.message(lines[i]))).append('\n');
      }
      if (shownLines < lines.length) {
        sb.append(I3).append("… and ").append(lines.length - shownLines).append(" more lines\n");
      }
    }
    boolean nb = txn.type() == TxnType.NB_TRANSACTION;
    if (!(nb && txn.resyncType() == ResyncType.DOWNSTREAM)) {
      boolean resync = nb && txn.resyncType() != ResyncType.NOT_RESYNC;
      // As in Go, "NONE" depends on the full list even if every entry is filtered out below.
      sb.append(I2).append(txn.values().isEmpty() ? "- values: NONE\n" : "- values:\n");
      int shown = 0;
      int listed = 0;
      for (RecordedTxn.RecordedValue kv : txn.values()) {
        if (resync && kv.origin() == ValueOrigin.FROM_SB) {
          continue;
        }
        listed++;
        if (maxItems > 0 && shown == maxItems) {
          continue;
        }
        shown++;
        sb.append(I3).append("- key: ").append(Excerpt.escaped(kv.key())).append('\n');
        sb.append(I3).append("  val: ").append(value(kv.value(), valueText)).append('\n');
      }
      if (listed > shown) {
        sb.append(I3).append(more(listed, shown, txn.seqNum(), hint));
      }
    }
    if (txn.withSimulation()) {
      sb.append(I1).append("* planned operations:\n");
      appendOps(sb, txn.planned(), valueText, maxItems, txn.seqNum(), hint);
    }
    return sb.toString();
  }

  /**
   * The block printed when execution of {@code txn} has ended, listing at most {@code maxItems}
   * operations (0: all), then how many more there are and where to see them ({@code hint}).
   */
  public static String finalRecord(
      RecordedTxn txn,
      Function<Object, String> valueText,
      int maxItems,
      LongFunction<String> hint) {
    StringBuilder sb = new StringBuilder();
    sb.append('o').append("-".repeat(WIDTH - 2)).append("o\n");
    if (txn.executed().isEmpty()) {
      sb.append(I1).append("* executed operations:\n");
    } else {
      sb.append(I1)
          .append("* executed operations (")
          .append(goTime(roundToMillis(txn.start())))
          .append(" -> ")
          .append(goTime(roundToMillis(txn.stop())))
          .append(", dur: ")
          .append(goDuration(round(elapsedNanos(txn), MILLI)))
          .append("):\n");
    }
    appendOps(sb, txn.executed(), valueText, maxItems, txn.seqNum(), hint);
    appendRetrieveErrors(sb, txn);
    String rule = "x" + "-".repeat(WIDTH - 2) + "x\n";
    String took = "took " + goDuration(round(elapsedNanos(txn), 100 * MICRO));
    sb.append(rule).append(titleLine(txn, took)).append(rule);
    return sb.toString();
  }

  /**
   * Lists the descriptors whose Retrieve failed in the transaction's refresh (nothing when none).
   */
  static void appendRetrieveErrors(StringBuilder sb, RecordedTxn txn) {
    if (txn.retrieveErrors().isEmpty()) {
      return;
    }
    sb.append(I1).append("* retrieve errors (values not confirmed):\n");
    for (RetrieveError e : txn.retrieveErrors()) {
      sb.append(I2).append("- ").append(Excerpt.escaped(e.toString())).append('\n');
    }
  }

  /** Renders a numbered operation list at the operation indent ({@code <NONE>} when empty). */
  static void appendOps(
      StringBuilder sb, List<RecordedTxnOp> ops, Function<Object, String> valueText) {
    appendOps(sb, ops, valueText, 0, 0, LIBRARY_HINT);
  }

  /**
   * Like {@link #appendOps(StringBuilder, List, Function)}, at most {@code maxItems} (0: all), then
   * how many more and where to read them ({@code hint}, given {@code seq}).
   */
  static void appendOps(
      StringBuilder sb,
      List<RecordedTxnOp> ops,
      Function<Object, String> valueText,
      int maxItems,
      long seq,
      LongFunction<String> hint) {
    if (ops.isEmpty()) {
      sb.append(I2).append("<NONE>\n");
      return;
    }
    int n = 0;
    for (RecordedTxnOp op : ops) {
      if (maxItems > 0 && n == maxItems) {
        sb.append(I2).append(more(ops.size(), n, seq, hint));
        break;
      }
      n++;
      List<String> flags = RecordedTxnOp.labels(op.displayFlags());
      sb.append(I2).append(n).append(". ").append(op.operation().name());
      if (!flags.isEmpty()) {
        sb.append(" [").append(String.join(" ", flags)).append(']');
      }
      sb.append(":\n");
      sb.append(I3).append("- key: ").append(Excerpt.escaped(op.key())).append('\n');
      if (op.operation() == TxnOperation.UPDATE) {
        sb.append(I3).append("- prev-value: ").append(value(op.prevValue(), valueText));
        sb.append(" \n");
        sb.append(I3).append("- new-value: ").append(value(op.newValue(), valueText));
        sb.append(" \n");
      } else if (op.operation() == TxnOperation.DELETE) {
        sb.append(I3).append("- value: ").append(value(op.prevValue(), valueText)).append(" \n");
      } else if (op.operation() == TxnOperation.CREATE) {
        sb.append(I3).append("- value: ").append(value(op.newValue(), valueText)).append(" \n");
      }
      if (!op.prevError().isEmpty()) {
        sb.append(I3).append("- prev-error: ").append(Excerpt.escaped(op.prevError())).append('\n');
      }
      if (!op.newError().isEmpty()) {
        sb.append(I3).append("- error: ").append(Excerpt.escaped(op.newError())).append('\n');
      }
    }
  }

  /** {@code | <msg> <info> |} with {@code info} right-aligned so the line is 120 wide. */
  static String titleLine(RecordedTxn txn, String info) {
    String msg = "#" + txn.seqNum() + " - " + txn.type().jsonName();
    int width = WIDTH - 5 - msg.length();
    String padded = info.length() >= width ? info : " ".repeat(width - info.length()) + info;
    return "| " + msg + " " + padded + " |\n";
  }

  private static String headerInfo(RecordedTxn txn) {
    switch (txn.type()) {
      case NB_TRANSACTION:
        return txn.resyncType() == ResyncType.NOT_RESYNC ? "" : txn.resyncType().jsonName();
      case RETRY_FAILED_OPS:
        return "retrying failed TXN #"
            + txn.retryForTxn()
            + " (attempt "
            + txn.retryAttempt()
            + ")";
      case RETRY_UNIMPL_OPS:
        return "retrying unimplemented TXN #" + txn.retryForTxn();
      default:
        return "";
    }
  }

  private static String typeText(RecordedTxn txn) {
    switch (txn.type()) {
      case NB_TRANSACTION:
        switch (txn.resyncType()) {
          case FULL:
            return "NB Transaction, Full Resync";
          case UPSTREAM:
            return "NB Transaction, NB Sync";
          case DOWNSTREAM:
            return "NB Transaction, SB Sync";
          default:
            return "NB Transaction";
        }
      case SB_NOTIFICATION:
        return "SB Notification";
      case RETRY_FAILED_OPS:
        return "Retry Transaction (for txn #"
            + txn.retryForTxn()
            + ", attempt #"
            + txn.retryAttempt()
            + ")";
      case RETRY_UNIMPL_OPS:
        return "RetryUnimplOps (for txn #" + txn.retryForTxn() + ")";
      default:
        return txn.type().jsonName();
    }
  }

  /**
   * A value's text, kept to {@link Excerpt#MAX_MESSAGE_CHARS} characters (the log shows what a
   * value is, the transaction history keeps the whole of it) and {@link Excerpt#escaped escaped}.
   */
  private static String value(Optional<Object> v, Function<Object, String> valueText) {
    return v.map(o -> "{ " + Excerpt.escaped(Excerpt.message(OpRecord.text(valueText, o))) + " }")
        .orElse("<NIL>");
  }

  private static long elapsedNanos(RecordedTxn txn) {
    return Duration.between(txn.start(), txn.stop()).toNanos();
  }

  /** Rounds to the nearest millisecond, halfway values up (Go's {@code Time.Round}). */
  static Instant roundToMillis(Instant t) {
    long rem = t.getNano() % MILLI;
    Instant down = t.minusNanos(rem);
    return rem * 2 < MILLI ? down : down.plusNanos(MILLI);
  }

  /** Rounds {@code d} to a multiple of {@code m}, halfway values away from zero (Go). */
  static long round(long d, long m) {
    long r = Math.abs(d % m);
    long down = d < 0 ? d + r : d - r;
    if (r * 2 < m) {
      return down;
    }
    return d < 0 ? down - m : down + m;
  }

  /** Go's {@code time.Time.String()} for a UTC instant, without the monotonic clock reading. */
  static String goTime(Instant t) {
    return DATE_TIME.format(t) + fraction(t.getNano(), 9) + " +0000 UTC";
  }

  /**
   * Go's {@code time.Duration.String()}: {@code 0s}, {@code 350µs}, {@code 2.1ms}, {@code 1m30s}.
   */
  static String goDuration(long nanos) {
    if (nanos == 0) {
      return "0s";
    }
    if (nanos == Long.MIN_VALUE) {
      return "-2562047h47m16.854775808s";
    }
    String sign = nanos < 0 ? "-" : "";
    long u = Math.abs(nanos);
    if (u < MICRO) {
      return sign + u + "ns";
    }
    if (u < MILLI) {
      return sign + (u / MICRO) + fraction(u % MICRO, 3) + "µs";
    }
    if (u < SECOND) {
      return sign + (u / MILLI) + fraction(u % MILLI, 6) + "ms";
    }
    long secs = u / SECOND;
    StringBuilder sb = new StringBuilder(sign);
    if (secs >= 3600) {
      sb.append(secs / 3600).append('h');
    }
    if (secs >= 60) {
      sb.append((secs / 60) % 60).append('m');
    }
    return sb.append(secs % 60).append(fraction(u % SECOND, 9)).append('s').toString();
  }

  /** {@code .ddd} for {@code frac} written with {@code digits} digits, zeros trimmed; "" for 0. */
  private static String fraction(long frac, int digits) {
    if (frac == 0) {
      return "";
    }
    String s = String.format(Locale.ROOT, "%0" + digits + "d", frac);
    int end = s.length();
    while (s.charAt(end - 1) == '0') {
      end--;
    }
    return "." + s.substring(0, end);
  }
}
