package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code config get}: the desired configuration of every northbound source, as YAML. */
@Command(
    name = "get",
    description = {
      "The desired configuration (every source), in the YAML"
          + " configuration format; -o json for JSON.",
      "Example: kvsctl config get > config.yaml"
    })
public final class ConfigGetCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @Override
  protected int run() {
    String yaml = client().get("/configuration").text();
    if (!output.json()) {
      out().print(yaml);
      return ExitCodes.OK;
    }
    try {
      JsonNode tree = new ObjectMapper(new YAMLFactory()).readTree(yaml);
      out().println(Json.pretty(tree));
    } catch (IOException e) {
      throw new CtlException(ExitCodes.FAILED, "the agent's configuration is not YAML: " + e, e);
    }
    return ExitCodes.OK;
  }
}
