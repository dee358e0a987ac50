package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.time.Clock;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code history}: the recorded transactions. */
@Command(
    name = "history",
    description = {
      "The recorded transactions: all, the last N, one, or" + " those since a time.",
      "Example: kvsctl history --last 5"
    })
public final class HistoryCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @ArgGroup(exclusive = true)
  Selection selection = new Selection();

  static final class Selection {
    @Option(names = "--last", paramLabel = "N", description = "The last N transactions.")
    Integer last;

    @Option(names = "--seq", paramLabel = "N", description = "Transaction number N.")
    Long seq;

    @Option(
        names = "--since",
        paramLabel = "T",
        description =
            "Transactions started since T:"
                + " RFC 3339 (2026-11-26T09:00:00Z), a duration before now (10m, 2h) or ns since the"
                + " epoch.")
    String since;
  }

  @Option(names = "--text", description = "The agent's text log of the transactions.")
  boolean text;

  @Override
  protected int run() {
    if (selection.last != null && selection.last < 1) {
      throw new CtlException(
          ExitCodes.USAGE, "--last: expected a positive number, got " + selection.last);
    }
    Long since =
        selection.since == null
            ? null
            : Times.parse(selection.since, "--since", Clock.systemUTC().instant());
    if (text) {
      if (selection.last != null) {
        // the text of the last N: from the start of the N-th last transaction on
        ArrayNode all = all(null);
        if (all.isEmpty()) {
          out().print(client().get("/scheduler/txn-history?format=text").text());
          return ExitCodes.OK;
        }
        JsonNode first = all.get(Math.max(0, all.size() - selection.last));
        since = Times.nanos(Json.text(first, "Start"));
      }
      out()
          .print(
              client()
                  .get(
                      "/scheduler/txn-history"
                          + AgentClient.query(
                              "seq-num", selection.seq, "since", since, "format", "text"))
                  .text());
      return ExitCodes.OK;
    }
    ArrayNode txns;
    if (selection.seq != null) {
      txns =
          JsonNodeFactory.instance
              .arrayNode()
              .add(
                  client()
                      .get("/scheduler/txn-history" + AgentClient.query("seq-num", selection.seq))
                      .json());
    } else {
      txns = all(since);
      if (selection.last != null && txns.size() > selection.last) {
        ArrayNode tail = JsonNodeFactory.instance.arrayNode();
        for (int i = txns.size() - selection.last; i < txns.size(); i++) {
          tail.add(txns.get(i));
        }
        txns = tail;
      }
    }
    if (output.json()) {
      out().println(Json.pretty(selection.seq != null ? txns.get(0) : txns));
      return ExitCodes.OK;
    }
    if (selection.seq != null) {
      TxnPrinter.details(txns.get(0), out());
      return ExitCodes.OK;
    }
    Table t = new Table("SEQ", "START", "TYPE", "RESYNC", "VALUES", "OPS", "ERRORS", "DESCRIPTION");
    for (JsonNode txn : txns) {
      t.row(
          Json.text(txn, "SeqNum"),
          Times.display(Json.text(txn, "Start")),
          Json.text(txn, "TxnType"),
          Json.text(txn, "ResyncType"),
          String.valueOf(txn.path("Values").size()),
          String.valueOf(txn.path("Executed").size()),
          String.valueOf(TxnPrinter.errors(txn)),
          Json.text(txn, "Description"));
    }
    t.print(out());
    return ExitCodes.OK;
  }

  private ArrayNode all(Long since) {
    JsonNode n = client().get("/scheduler/txn-history" + AgentClient.query("since", since)).json();
    return n instanceof ArrayNode a ? a : JsonNodeFactory.instance.arrayNode();
  }
}
