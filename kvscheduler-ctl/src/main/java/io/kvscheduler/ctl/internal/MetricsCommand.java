package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code metrics}: the agent's metrics (Prometheus text, or JSON samples). */
@Command(
    name = "metrics",
    description = {
      "The agent's metrics: the Prometheus text as served,"
          + " or with -o json one object per sample.",
      "Example: kvsctl metrics --name kvs_txn"
    })
public final class MetricsCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @Option(
      names = "--name",
      paramLabel = "PREFIX",
      description = "Only metrics whose name" + " starts with PREFIX.")
  String prefix;

  @Override
  protected int run() {
    String text = client().get("/metrics").text();
    if (!output.json()) {
      text.lines()
          .filter(
              l ->
                  prefix == null
                      || l.startsWith(prefix)
                      || (l.startsWith("# ")
                          && l.split(" ").length > 2
                          && l.split(" ")[2].startsWith(prefix)))
          .forEach(out()::println);
      return ExitCodes.OK;
    }
    ArrayNode samples = JsonNodeFactory.instance.arrayNode();
    text.lines()
        .filter(l -> !l.isBlank() && !l.startsWith("#"))
        .forEach(
            l -> {
              int brace = l.indexOf('{');
              int space = l.lastIndexOf(' ');
              if (space < 0) {
                return;
              }
              String name =
                  brace >= 0 && brace < space ? l.substring(0, brace) : l.substring(0, space);
              if (prefix != null && !name.startsWith(prefix)) {
                return;
              }
              ObjectNode s = samples.addObject();
              s.put("name", name);
              ObjectNode labels = s.putObject("labels");
              if (brace >= 0 && brace < space) {
                String inner = l.substring(brace + 1, l.lastIndexOf('}'));
                for (String pair : inner.split(",(?=[a-zA-Z_][a-zA-Z0-9_]*=\")")) {
                  int eq = pair.indexOf('=');
                  if (eq > 0) {
                    labels.put(pair.substring(0, eq), pair.substring(eq + 2, pair.length() - 1));
                  }
                }
              }
              String value = l.substring(space + 1);
              try {
                s.put("value", Double.parseDouble(value));
              } catch (NumberFormatException e) {
                s.put("value", value);
              }
            });
    out().println(Json.pretty(samples));
    return ExitCodes.OK;
  }
}
