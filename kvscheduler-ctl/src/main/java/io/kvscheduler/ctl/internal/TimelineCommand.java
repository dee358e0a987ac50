package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code timeline KEY}: every recorded revision of one value. */
@Command(
    name = "timeline",
    description = {
      "Every recorded revision of a value: when, in which"
          + " state, changed by which transaction, with which error.",
      "Example: kvsctl timeline config/mock/v1/interfaces/tap1"
    })
public final class TimelineCommand extends AgentCommand {
  private static final String ZERO_TIME = "0001-01-01T00:00:00Z";

  @Mixin OutputFormat output;

  @Parameters(paramLabel = "KEY", description = "The value's key.")
  String key;

  @Override
  protected int run() {
    JsonNode revisions =
        client().get("/scheduler/key-timeline" + AgentClient.query("key", key)).json();
    if (output.json()) {
      out().println(Json.pretty(revisions));
      return ExitCodes.OK;
    }
    if (revisions == null || revisions.isNull() || revisions.isEmpty()) {
      err().println("kvsctl: no recorded revision of " + key);
      return ExitCodes.OK;
    }
    Table t = new Table("SINCE", "UNTIL", "STATE", "UPDATED BY", "ERROR", "VALUE");
    for (JsonNode r : revisions) {
      JsonNode flags = r.path("Flags");
      String until = Json.text(r, "Until");
      t.row(
          Times.display(Json.text(r, "Since")),
          until.isEmpty() || until.equals(ZERO_TIME) ? "(now)" : Times.display(until),
          Json.text(flags, "value-state"),
          Json.text(flags, "last-update"),
          Json.text(flags, "error"),
          Json.compact(r.path("Value").path("ProtoMsgData")));
    }
    t.print(out());
    return ExitCodes.OK;
  }
}
