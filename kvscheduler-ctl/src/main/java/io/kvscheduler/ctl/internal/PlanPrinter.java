package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/**
 * Prints a plan as the agent answers it ({@code PUT /configuration?dry-run}, {@code GET
 * /scheduler/drift}): one row per operation, in execution order, with the predicted state and what
 * a PENDING value waits for or why a value is INVALID.
 */
final class PlanPrinter {
  private PlanPrinter() {}

  /** The table of the operations of {@code plan}, or a line saying there are none. */
  static void print(JsonNode plan, PrintWriter out, String nothing) {
    JsonNode ops = plan.path("operations");
    if (ops.isEmpty()) {
      out.println(nothing);
      return;
    }
    Table t = new Table("#", "OPERATION", "KEY", "STATE", "DETAILS");
    int i = 1;
    for (JsonNode op : ops) {
      t.row(
          Integer.toString(i++),
          op.path("operation").asText(),
          op.path("key").asText(),
          op.path("state").asText(),
          details(op));
    }
    t.print(out);
  }

  /** An INVALID value's error, or a PENDING value's "waits for ...", and the NOOP flag. */
  private static String details(JsonNode op) {
    List<String> parts = new ArrayList<>();
    if (op.has("error")) {
      parts.add(op.get("error").asText());
    } else if (op.has("details")) {
      List<String> labels = new ArrayList<>();
      op.get("details").forEach(d -> labels.add(d.asText()));
      parts.add(
          (op.path("state").asText().equals("PENDING") ? "waits for " : "")
              + String.join(", ", labels));
    }
    for (JsonNode f : op.path("flags")) {
      if (f.asText().equals("noop")) {
        parts.add("no call");
      }
    }
    return String.join("; ", parts);
  }
}
