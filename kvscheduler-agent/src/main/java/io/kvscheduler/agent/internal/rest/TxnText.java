package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;

/**
 * Recorded transactions as text, in vpp-agent's grammar ({@code docs/interop.md} §2.4 and §5.4):
 * the answer of {@code GET /scheduler/txn-history?format=text}. Keys, values, errors and
 * descriptions have their control characters escaped ({@link Excerpt#escaped}): the lines are the
 * layout's own. Values are shown whole: the history keeps them whole.
 */
final class TxnText {
  private static final DateTimeFormatter SECONDS =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");
  private static final DateTimeFormatter ZONE = DateTimeFormatter.ofPattern("xx zzz");

  private final ZoneId zone;

  TxnText(ZoneId zone) {
    this.zone = zone;
  }

  /** Every transaction: {@code Transaction #<seq>:} and its text at indent 4, blank-separated. */
  String history(List<RecordedTxn> txns) {
    if (txns.isEmpty()) {
      return "<NONE>\n";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < txns.size(); i++) {
      if (i > 0) {
        sb.append('\n');
      }
      sb.append("Transaction #").append(txns.get(i).seqNum()).append(":\n");
      append(sb, txns.get(i), false, 4);
    }
    return sb.toString();
  }

  /** One transaction at indent 0, every operation with its previous and new state. */
  String single(RecordedTxn txn) {
    StringBuilder sb = new StringBuilder();
    append(sb, txn, true, 0);
    return sb.toString();
  }

  private void append(StringBuilder sb, RecordedTxn t, boolean verbose, int indent) {
    String i0 = " ".repeat(indent);
    String i4 = " ".repeat(indent + 4);
    String i8 = " ".repeat(indent + 8);
    sb.append(i0).append("* transaction arguments:\n");
    sb.append(i4).append("- seqNum: ").append(t.seqNum()).append('\n');
    sb.append(i4).append("- type: ").append(type(t)).append('\n');
    if (!t.description().isEmpty()) {
      String[] lines = t.description().split("\n", -1);
      sb.append(i4).append("- Description: ").append(Excerpt.escaped(lines[0])).append('\n');
      for (int k = 1; k < lines.length; k++) {
        sb.append(i8).append(Excerpt.escaped(lines[k])).append('\n');
      }
    }
    boolean nb = t.type() == TxnType.NB_TRANSACTION;
    if (!(nb && t.resyncType() == ResyncType.DOWNSTREAM)) {
      boolean resync = nb && t.resyncType() != ResyncType.NOT_RESYNC;
      sb.append(i4).append(t.values().isEmpty() ? "- values: NONE\n" : "- values:\n");
      for (RecordedTxn.RecordedValue v : t.values()) {
        if (resync && v.origin() == ValueOrigin.FROM_SB) {
          continue;
        }
        sb.append(i8).append("- key: ").append(Excerpt.escaped(v.key())).append('\n');
        sb.append(i8).append("  val: ").append(value(v.value())).append('\n');
      }
    }
    if (t.withSimulation()) {
      sb.append(i0).append("* planned operations:\n");
      ops(sb, t.planned(), verbose, indent + 4);
    }
    if (t.executed().isEmpty()) {
      sb.append(i0).append("* executed operations:\n");
    } else {
      sb.append(i0)
          .append("* executed operations (")
          .append(goTime(t.start()))
          .append(" -> ")
          .append(goTime(t.stop()))
          .append(", dur: ")
          .append(goDuration(roundToMillis(Duration.between(t.start(), t.stop()).toNanos())))
          .append("):\n");
    }
    ops(sb, t.executed(), verbose, indent + 4);
    if (!t.retrieveErrors().isEmpty()) {
      sb.append(i0).append("* retrieve errors (values not confirmed):\n");
      String j = " ".repeat(indent + 4);
      t.retrieveErrors().forEach(e -> sb.append(j).append("- ").append(e).append('\n'));
    }
  }

  private static void ops(StringBuilder sb, List<RecordedTxnOp> ops, boolean verbose, int indent) {
    String j = " ".repeat(indent);
    String j4 = " ".repeat(indent + 4);
    if (ops.isEmpty()) {
      sb.append(j).append("<NONE>\n");
      return;
    }
    int n = 0;
    for (RecordedTxnOp op : ops) {
      n++;
      sb.append(j).append(n).append(". ").append(op.operation().name());
      List<String> flags = RecordedTxnOp.labels(op.displayFlags());
      if (!flags.isEmpty()) {
        sb.append(" [").append(String.join(" ", flags)).append(']');
      }
      sb.append(":\n");
      sb.append(j4).append("- key: ").append(Excerpt.escaped(op.key())).append('\n');
      if (op.operation() == TxnOperation.UPDATE) {
        sb.append(j4).append("- prev-value: ").append(value(op.prevValue())).append(" \n");
        sb.append(j4).append("- new-value: ").append(value(op.newValue())).append(" \n");
      } else if (op.operation() == TxnOperation.DELETE) {
        sb.append(j4).append("- value: ").append(value(op.prevValue())).append(" \n");
      } else if (op.operation() == TxnOperation.CREATE) {
        sb.append(j4).append("- value: ").append(value(op.newValue())).append(" \n");
      }
      if (!op.prevError().isEmpty()) {
        sb.append(j4).append("- prev-error: ").append(Excerpt.escaped(op.prevError())).append('\n');
      }
      if (!op.newError().isEmpty()) {
        sb.append(j4).append("- error: ").append(Excerpt.escaped(op.newError())).append('\n');
      }
      if (verbose) {
        sb.append(j4).append("- prev-state: ").append(op.prevState().name()).append(" \n");
        sb.append(j4).append("- new-state: ").append(op.newState().name()).append(" \n");
      }
    }
  }

  private static String type(RecordedTxn t) {
    return switch (t.type()) {
      case NB_TRANSACTION ->
          switch (t.resyncType()) {
            case FULL -> "NB Transaction, Full Resync";
            case UPSTREAM -> "NB Transaction, NB Sync";
            case DOWNSTREAM -> "NB Transaction, SB Sync";
            default -> "NB Transaction";
          };
      case SB_NOTIFICATION -> "SB Notification";
      case RETRY_FAILED_OPS ->
          "Retry Transaction (for txn #" + t.retryForTxn() + ", attempt #" + t.retryAttempt() + ")";
      case RETRY_UNIMPL_OPS -> "RetryUnimplOps (for txn #" + t.retryForTxn() + ")";
      default -> t.type().jsonName();
    };
  }

  private static String value(Optional<Object> v) {
    return v.map(o -> "{ " + Excerpt.escaped(String.valueOf(o)) + " }").orElse("<NIL>");
  }

  /** Go's {@code time.String()} of {@code t} rounded to the millisecond (zeros trimmed). */
  private String goTime(Instant t) {
    ZonedDateTime z = t.plusNanos(500_000).truncatedTo(ChronoUnit.MILLIS).atZone(zone);
    String millis =
        z.getNano() == 0
            ? ""
            : ("." + String.format("%03d", z.getNano() / 1_000_000)).replaceAll("0+$", "");
    return SECONDS.format(z) + millis + " " + ZONE.format(z);
  }

  private static long roundToMillis(long nanos) {
    return (nanos + 500_000L) / 1_000_000L * 1_000_000L;
  }

  /** Go's {@code time.Duration.String()} for a whole number of milliseconds or more. */
  static String goDuration(long nanos) {
    if (nanos == 0) {
      return "0s";
    }
    if (nanos < 1_000_000_000L) {
      return trim(nanos / 1e6) + "ms";
    }
    long s = nanos / 1_000_000_000L;
    double frac = (nanos % 1_000_000_000L) / 1e9;
    if (s < 60) {
      return trim(s + frac) + "s";
    }
    long h = s / 3600;
    long m = (s % 3600) / 60;
    return (h > 0 ? h + "h" : "") + m + "m" + trim(s % 60 + frac) + "s";
  }

  private static String trim(double d) {
    String t = BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
    return t;
  }
}
