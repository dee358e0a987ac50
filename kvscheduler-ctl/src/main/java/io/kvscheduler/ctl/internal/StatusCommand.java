package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvscheduler.api.ValueState;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code status}: the state of every value, of one key, of a descriptor's values or a state. */
@Command(
    name = "status",
    description = {
      "The state of values: all, one KEY, a descriptor's," + " or those in one state.",
      "Then the northbound problems, when the agent lists any: input it rejected or ignored.",
      "Example: kvsctl status --state PENDING"
    })
public final class StatusCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @ArgGroup(exclusive = true)
  Selection selection = new Selection();

  @Option(
      names = "--strict",
      description = "Exit with 1 when the agent lists northbound problems (rejected input).")
  boolean strict;

  static final class Selection {
    @Parameters(paramLabel = "KEY", arity = "0..1", description = "One value's key.")
    String key;

    @Option(names = "--descriptor", paramLabel = "D", description = "Values of descriptor D.")
    String descriptor;

    @Option(
        names = "--state",
        paramLabel = "S",
        description = "Values in state S (CONFIGURED, PENDING, FAILED, ...), derived included.")
    String state;
  }

  /** The states a value can be in, as {@code --state} takes them. */
  static final List<String> STATES =
      Arrays.stream(ValueState.values()).map(ValueState::name).toList();

  @Override
  protected int run() {
    String state = null;
    if (selection.state != null) {
      state = selection.state.toUpperCase(Locale.ROOT);
      if (!STATES.contains(state)) {
        // before asking the agent: a misspelt state is not "no values in that state"
        throw new CtlException(
            ExitCodes.USAGE,
            "unknown state '"
                + selection.state
                + "' for --state: one of "
                + String.join(", ", STATES)
                + " (any case)");
      }
    }
    String q =
        selection.key != null
            ? AgentClient.query("key", selection.key)
            : AgentClient.query("descriptor", selection.descriptor);
    JsonNode answer = client().get("/scheduler/status" + q).json();
    if (selection.key != null) {
      answer = JsonNodeFactory.instance.arrayNode().add(answer);
    } else if (answer == null || answer.isNull()) {
      answer = JsonNodeFactory.instance.arrayNode();
    }
    if (state != null) {
      answer = inState(answer, state);
    }
    JsonNode problems = problems();
    if (output.json()) {
      out()
          .println(
              Json.pretty(selection.key != null && answer.size() == 1 ? answer.get(0) : answer));
      printProblems(problems, err()); // the JSON on the standard output stays one document
      return strict && problems.size() > 0 ? ExitCodes.FAILED : ExitCodes.OK;
    }
    Table t = new Table("KEY", "STATE", "LAST OP", "DETAILS", "ERROR");
    for (JsonNode s : answer) {
      row(t, s.get("value"), "");
      for (JsonNode d : s.path("derived_values")) {
        row(t, d, "  ");
      }
    }
    t.print(out());
    printProblems(problems, out());
    return strict && problems.size() > 0 ? ExitCodes.FAILED : ExitCodes.OK;
  }

  /** The agent's northbound problems; none from an agent that does not list them (404). */
  private JsonNode problems() {
    try {
      JsonNode p = client().get("/northbound/problems").json();
      return p != null && p.isArray() ? p : JsonNodeFactory.instance.arrayNode();
    } catch (CtlException e) {
      if (e.getMessage() != null && e.getMessage().contains("404")) {
        return JsonNodeFactory.instance.arrayNode();
      }
      throw e;
    }
  }

  /**
   * The block of northbound problems, when there are any: one line each, {@code source
   * file-or-key:line:column: message (since T)}.
   */
  static void printProblems(JsonNode problems, java.io.PrintWriter to) {
    if (problems.isEmpty()) {
      return;
    }
    to.println();
    to.println("northbound problems (" + problems.size() + "):");
    for (JsonNode p : problems) {
      String where = Json.text(p, "file");
      if (where.isEmpty()) {
        where = Json.text(p, "key");
      }
      StringBuilder b = new StringBuilder("  ").append(Json.text(p, "source"));
      if (!where.isEmpty()) {
        b.append(' ').append(where);
        if (p.path("line").asInt() > 0) {
          b.append(':').append(p.path("line").asInt());
          if (p.path("column").asInt() > 0) {
            b.append(':').append(p.path("column").asInt());
          }
        }
      }
      b.append(": ").append(Json.text(p, "message"));
      b.append(" (since ").append(Json.text(p, "since")).append(')');
      to.println(b);
    }
    to.flush();
  }

  private static void row(Table t, JsonNode v, String indent) {
    if (v == null) {
      return;
    }
    String state = Json.text(v, "state");
    t.row(
        indent + Json.text(v, "key"),
        state.isEmpty() ? "NONEXISTENT" : state,
        Json.text(v, "last_operation"),
        details(v.get("details")),
        Json.text(v, "error"));
  }

  private static String details(JsonNode d) {
    if (d == null || !d.isArray()) {
      return "";
    }
    StringBuilder b = new StringBuilder();
    d.forEach(x -> b.append(b.length() == 0 ? "" : ", ").append(x.asText()));
    return b.toString();
  }

  /** The statuses whose value (or one of whose derived values) is in {@code state}. */
  static ArrayNode inState(JsonNode statuses, String state) {
    ArrayNode out = JsonNodeFactory.instance.arrayNode();
    for (JsonNode s : statuses) {
      boolean base = state.equals(stateOf(s.get("value")));
      ArrayNode derived = JsonNodeFactory.instance.arrayNode();
      for (JsonNode d : s.path("derived_values")) {
        if (state.equals(stateOf(d))) {
          derived.add(d);
        }
      }
      if (base || !derived.isEmpty()) {
        ObjectNode copy = JsonNodeFactory.instance.objectNode();
        copy.set("value", s.get("value"));
        if (!derived.isEmpty()) {
          copy.set("derived_values", derived);
        }
        out.add(copy);
      }
    }
    return out;
  }

  private static String stateOf(JsonNode v) {
    String s = Json.text(v, "state");
    return s.isEmpty() ? "NONEXISTENT" : s;
  }
}
