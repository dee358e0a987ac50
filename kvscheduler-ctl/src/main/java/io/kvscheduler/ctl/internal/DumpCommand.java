package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code dump}: the values as the southbound, the northbound or the scheduler's cache has them. */
@Command(
    name = "dump",
    description = {
      "Values as seen by the southbound (SB, read now), the"
          + " northbound (NB) or the scheduler's cache (cached), of every descriptor or of one.",
      "Example: kvsctl dump --view NB --descriptor mock-interface"
    })
public final class DumpCommand extends AgentCommand {
  /** The views. */
  enum View {
    SB,
    NB,
    cached
  }

  @Mixin OutputFormat output;

  @Option(
      names = "--view",
      paramLabel = "VIEW",
      defaultValue = "cached",
      description = "SB, NB or cached (default: ${DEFAULT-VALUE}).")
  View view;

  @Option(names = "--descriptor", paramLabel = "D", description = "Only descriptor D.")
  String descriptor;

  @Override
  protected int run() {
    List<String> descriptors = new ArrayList<>();
    if (descriptor != null) {
      descriptors.add(descriptor);
    } else {
      client()
          .get("/scheduler/dump")
          .json()
          .path("Descriptors")
          .forEach(d -> descriptors.add(d.asText()));
    }
    ObjectNode byDescriptor = JsonNodeFactory.instance.objectNode();
    List<String> failures = new ArrayList<>();
    for (String d : descriptors) {
      try {
        JsonNode values =
            client()
                .get("/scheduler/dump" + AgentClient.query("descriptor", d, "view", view.name()))
                .json();
        byDescriptor.set(
            d, values == null || values.isNull() ? JsonNodeFactory.instance.arrayNode() : values);
      } catch (CtlException e) {
        if (descriptor != null || e.exitCode() != ExitCodes.FAILED) {
          throw e;
        }
        failures.add(d + ": " + e.getMessage()); // e.g. a descriptor that cannot Retrieve
      }
    }
    if (output.json()) {
      out().println(Json.pretty(descriptor != null ? byDescriptor.get(descriptor) : byDescriptor));
    } else {
      Table t = new Table("DESCRIPTOR", "KEY", "ORIGIN", "VALUE");
      byDescriptor
          .fields()
          .forEachRemaining(
              e -> {
                for (JsonNode kv : (ArrayNode) e.getValue()) {
                  t.row(
                      e.getKey(),
                      Json.text(kv, "Key"),
                      origin(kv.path("Origin").asInt()),
                      Json.compact(kv.path("Value").path("ProtoMsgData")));
                }
              });
      t.print(out());
    }
    failures.forEach(f -> err().println("kvsctl: not dumped: " + f));
    return ExitCodes.OK;
  }

  private static String origin(int o) {
    return switch (o) {
      case 1 -> "NB";
      case 2 -> "SB";
      default -> "unknown";
    };
  }
}
