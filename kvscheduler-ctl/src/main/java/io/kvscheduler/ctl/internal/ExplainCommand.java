package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.Excerpt;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** {@code explain KEY}: why a value is not applied, as a tree of causes. */
@Command(
    name = "explain",
    description = {
      "Why a value is not applied: the chain of causes of a"
          + " PENDING, FAILED, INVALID or RETRYING value.",
      "Example: kvsctl explain config/mock/v1/interfaces/tap1"
    })
public final class ExplainCommand extends AgentCommand {
  /** Fields printed on a node's own line, in this order. */
  private static final Set<String> HEAD = Set.of("key", "state");

  @Mixin OutputFormat output;

  @Parameters(paramLabel = "KEY", description = "The value's key.")
  String key;

  @Override
  protected int run() {
    JsonNode tree = client().get("/scheduler/explain" + AgentClient.query("key", key)).json();
    if (output.json()) {
      out().println(Json.pretty(tree));
    } else {
      print(tree, "");
    }
    return ExitCodes.OK;
  }

  /** One node per line (key, state, then its other scalar fields), its causes indented below. */
  private void print(JsonNode n, String indent) {
    if (n.isArray()) {
      n.forEach(c -> print(c, indent));
      return;
    }
    if (!n.isObject()) {
      out().println(indent + Excerpt.escaped(n.asText()));
      return;
    }
    StringBuilder line = new StringBuilder(indent);
    line.append(Excerpt.escaped(Json.text(n, "key")));
    String state = Json.text(n, "state");
    if (!state.isEmpty()) {
      line.append(" [").append(state).append(']');
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      if (HEAD.contains(f.getKey()) || isNodes(f.getValue())) {
        continue;
      }
      line.append("  ")
          .append(f.getKey())
          .append(": ")
          .append(
              Excerpt.escaped(
                  f.getValue().isTextual() ? f.getValue().asText() : f.getValue().toString()));
    }
    out().println(line.toString().stripTrailing());
    for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      if (isNodes(f.getValue())) {
        f.getValue().forEach(c -> print(c, indent + "  "));
      }
    }
  }

  /** Whether {@code v} holds further nodes of the tree (objects with a key). */
  private static boolean isNodes(JsonNode v) {
    if (v.isObject()) {
      return v.has("key");
    }
    if (!v.isArray() || v.isEmpty()) {
      return false;
    }
    for (JsonNode c : v) {
      if (!c.isObject()) {
        return false;
      }
    }
    return true;
  }
}
