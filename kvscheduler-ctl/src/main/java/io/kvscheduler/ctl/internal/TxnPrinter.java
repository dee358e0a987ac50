package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.Excerpt;
import java.io.PrintWriter;

/** One recorded transaction for people: its header and a table of its executed operations. */
final class TxnPrinter {
  private TxnPrinter() {}

  /** How many executed operations of {@code txn} ended with an error. */
  static int errors(JsonNode txn) {
    int n = 0;
    for (JsonNode op : txn.path("Executed")) {
      if (op.hasNonNull("NewErrMsg")) {
        n++;
      }
    }
    return n;
  }

  static void details(JsonNode txn, PrintWriter out) {
    out.println(
        "Transaction #"
            + Json.text(txn, "SeqNum")
            + "  "
            + Json.text(txn, "TxnType")
            + (txn.has("ResyncType") ? " (" + Json.text(txn, "ResyncType") + ")" : "")
            + "  "
            + Times.display(Json.text(txn, "Start")));
    if (txn.has("Description")) {
      out.println("Description: " + Excerpt.escaped(Json.text(txn, "Description")));
    }
    if (!txn.path("Values").isEmpty()) {
      out.println("Values:");
      for (JsonNode v : txn.path("Values")) {
        JsonNode value = v.get("Value");
        out.println(
            "  "
                + Excerpt.escaped(Json.text(v, "Key"))
                + " = "
                + (value == null || value.isNull()
                    ? "<delete>"
                    : Excerpt.escaped(Json.compact(value.get("ProtoMsgData")))));
      }
    }
    Table t = new Table("OPERATION", "KEY", "PREV STATE", "NEW STATE", "ERROR", "FLAGS");
    for (JsonNode op : txn.path("Executed")) {
      StringBuilder flags = new StringBuilder();
      for (String f :
          new String[] {
            "NOOP", "IsDerived", "IsProperty", "IsRevert", "IsRetry", "IsRecreate", "IsRanAhead"
          }) {
        if (op.path(f).asBoolean(false)) {
          flags.append(flags.length() == 0 ? "" : ",").append(f);
        }
      }
      t.row(
          Json.text(op, "Operation"),
          Json.text(op, "Key"),
          Json.text(op, "PrevState"),
          Json.text(op, "NewState"),
          Json.text(op, "NewErrMsg"),
          flags.toString());
    }
    out.println("Executed:");
    t.print(out);
  }
}
