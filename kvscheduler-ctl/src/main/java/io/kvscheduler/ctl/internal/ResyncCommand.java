package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code resync}: makes the southbound match the desired state again. */
@Command(
    name = "resync",
    description = {
      "Reads the southbound again and corrects every"
          + " difference (a downstream resync); prints the transaction.",
      "Example: kvsctl resync --retry"
    })
public final class ResyncCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @Option(names = "--retry", description = "Retry the operations that fail.")
  boolean retry;

  @Override
  protected int run() {
    JsonNode txn =
        client()
            .post(
                "/scheduler/downstream-resync" + AgentClient.query("retry", retry ? "true" : null))
            .json();
    if (output.json()) {
      out().println(Json.pretty(txn));
    } else if (txn == null || txn.isNull()) {
      out().println("resync done (the agent records no transaction history)");
    } else {
      TxnPrinter.details(txn, out());
    }
    return txn != null && TxnPrinter.errors(txn) > 0 ? ExitCodes.FAILED : ExitCodes.OK;
  }
}
