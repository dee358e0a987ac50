package io.kvscheduler.plugins.mock.oracle;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Runs the 56 scenario scripts of the differential corpus (test resources {@code oracle/}) and
 * compares every step with what the reference scheduler did: executed operations (order, operation,
 * key, states, values, errors, flags), value statuses and the southbound state.
 */
class DifferentialCorpusTest {

  static List<String> scenarioNames() throws IOException, URISyntaxException {
    Path dir = Path.of(DifferentialCorpusTest.class.getResource("/oracle/scenarios").toURI());
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".json"))
          .map(n -> n.substring(0, n.length() - ".json".length()))
          .sorted()
          .toList();
    }
  }

  static JsonNode resource(String path) throws IOException {
    try (InputStream in = DifferentialCorpusTest.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IOException("missing test resource " + path);
      }
      return OracleRunner.JSON.readTree(in);
    }
  }

  /** A row of the documented corpus differences: mismatches allowed at these steps/fields. */
  record Allowed(String scenario, Set<Integer> steps, String fields, String differences) {
    boolean covers(String name, int step, String diffPath) {
      return scenario.equals(name)
          && steps.contains(step)
          && (fields.equals("*") || diffPath.startsWith(fields));
    }
  }

  private static final Pattern ROW =
      Pattern.compile(
          "^\\|\\s*(\\w+)\\s*\\|\\s*([\\d, ]+)\\s*\\|\\s*(\\S+)\\s*\\|\\s*(D\\d+(?:, *D\\d+)*)\\s*\\|\\s*$");

  /** Reads the table of corpus differences from docs/differences-from-reference.md. */
  static List<Allowed> documentedDifferences() throws IOException {
    Path dir = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    while (dir != null && !Files.exists(dir.resolve("docs/differences-from-reference.md"))) {
      dir = dir.getParent();
    }
    assertThat(dir)
        .as("docs/differences-from-reference.md above the working directory")
        .isNotNull();
    List<Allowed> out = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("docs/differences-from-reference.md"))) {
      Matcher m = ROW.matcher(line);
      if (m.matches()) {
        Set<Integer> steps = new TreeSet<>();
        for (String st : m.group(2).split(",")) {
          steps.add(Integer.parseInt(st.trim()));
        }
        out.add(new Allowed(m.group(1), steps, m.group(3), m.group(4)));
      }
    }
    return out;
  }

  @Test
  @DisplayName(
      "differential corpus: every step of all 56 scripts matches the reference"
          + " except the documented differences")
  void everyStepMatchesTheReference() throws Exception {
    List<Allowed> allowed = documentedDifferences();
    assertThat(allowed)
        .as("corpus difference rows in docs/differences-from-reference.md")
        .isNotEmpty();
    Set<String> usedRows = new HashSet<>();
    List<String> mismatches = new ArrayList<>();
    int steps = 0;
    int matchedSteps = 0;
    int ops = 0;
    int matchedOps = 0;
    for (String name : scenarioNames()) {
      JsonNode script = resource("/oracle/scenarios/" + name + ".json");
      JsonNode expected = resource("/oracle/expected/" + name + ".json");
      List<ObjectNode> actual = OracleRunner.run(script);
      // per key: whether the reference's latest operation on it is one D63 leaves unrecorded
      Map<String, Boolean> lastStillPending = new HashMap<>();
      JsonNode limit = expected.path("determinism").path("compare_steps_before");
      int compare = limit.isInt() ? limit.asInt() : expected.path("steps").size();
      for (int i = 0; i < compare; i++) {
        JsonNode reference = expected.path("steps").get(i);
        noteStillPending(reference, lastStillPending);
        JsonNode exp = withoutStillPending(reference);
        ObjectNode act = actual.get(i);
        List<String> diffs = new ArrayList<>();
        compare("", exp, act, diffs);
        steps++;
        int expOps = exp.path("executed").size();
        ops += expOps;
        matchedOps += matchingOps(exp.path("executed"), act.path("executed"));
        if (diffs.isEmpty()) {
          matchedSteps++;
        }
        for (String d : diffs) {
          String diffPath = d.substring(0, d.indexOf(':'));
          if (untouchedLastOperation(diffPath, d)
              || lastOperationOfStillPending(exp, diffPath, d, lastStillPending)) {
            continue;
          }
          Allowed row = null;
          for (Allowed a : allowed) {
            if (a.covers(name, i, diffPath)) {
              row = a;
            }
          }
          if (row == null) {
            mismatches.add(name + " step " + i + ": " + d);
          } else {
            usedRows.add(row.scenario() + "#" + i);
          }
        }
      }
    }
    System.out.printf(
        "differential corpus: %d/%d steps match, %d/%d executed operations match%n",
        matchedSteps, steps, matchedOps, ops);
    List<String> stale = new ArrayList<>();
    for (Allowed a : allowed) {
      for (int st : a.steps()) {
        if (!usedRows.contains(a.scenario() + "#" + st)) {
          stale.add(a.scenario() + " step " + st + " (" + a.differences() + ")");
        }
      }
    }
    assertThat(mismatches)
        .as(
            "mismatches with the reference not documented in"
                + " docs/differences-from-reference.md")
        .isEmpty();
    assertThat(stale).as("documented corpus differences that no longer occur").isEmpty();
  }

  /**
   * D61: the reference reports {@code UPDATE} as the last operation of a value that an equivalent
   * value given again (or a resync finding it in place) left untouched; ours keeps the operation
   * that was made. The executed operations are compared in full, so a real Update still shows.
   */
  private static boolean untouchedLastOperation(String diffPath, String diff) {
    return diffPath.endsWith(".last_operation") && diff.contains("expected \"UPDATE\"");
  }

  /**
   * D63: the last operation of a value whose latest operation in the reference is a {@code CREATE
   * [NOOP]} PENDING -> PENDING with the same value, which ours does not record: the reference
   * reports {@code CREATE}, ours the operation that was made before it.
   */
  private static boolean lastOperationOfStillPending(
      JsonNode step, String diffPath, String diff, Map<String, Boolean> lastStillPending) {
    String suffix = ".last_operation";
    if (!diffPath.endsWith(suffix) || !diff.contains("expected \"CREATE\"")) {
      return false;
    }
    JsonNode status = at(step, diffPath.substring(0, diffPath.length() - suffix.length()));
    return status != null && Boolean.TRUE.equals(lastStillPending.get(status.path("key").asText()));
  }

  /** The node of {@code root} at a path such as {@code .status[0].derived_values[2]}, or null. */
  private static JsonNode at(JsonNode root, String path) {
    Matcher m = Pattern.compile("\\.(\\w+)|\\[(\\d+)\\]").matcher(path);
    JsonNode n = root;
    int end = 0;
    while (m.find() && m.start() == end) {
      n = m.group(1) != null ? n.path(m.group(1)) : n.path(Integer.parseInt(m.group(2)));
      end = m.end();
    }
    return end == path.length() && !n.isMissingNode() ? n : null;
  }

  /**
   * Notes, for each key the reference operated on in {@code step} (its executed operations, then
   * those of the transactions that followed), whether its latest operation is one D63 leaves
   * unrecorded.
   */
  private static void noteStillPending(JsonNode step, Map<String, Boolean> lastStillPending) {
    List<JsonNode> lists = new ArrayList<>();
    lists.add(step.path("executed"));
    for (JsonNode later : step.path("later_transactions")) {
      lists.add(later.path("executed"));
    }
    for (JsonNode ops : lists) {
      for (JsonNode op : ops) {
        lastStillPending.put(op.path("key").asText(), stillPending(op));
      }
    }
  }

  /**
   * D63: the reference records a value that waits for its dependencies, re-attempted and waiting
   * still with the same value, as {@code CREATE [NOOP]} PENDING -> PENDING (shown STILL-PENDING);
   * ours records no operation that made no call and changed neither value nor state. The step with
   * exactly those operations taken out of every {@code executed} list; everything else is compared
   * in full (a pending value given a new value is still recorded).
   */
  static JsonNode withoutStillPending(JsonNode step) {
    if (step == null) {
      return null;
    }
    JsonNode copy = step.deepCopy();
    dropStillPending(copy);
    return copy;
  }

  private static void dropStillPending(JsonNode node) {
    if (node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (e.getKey().equals("executed") && e.getValue().isArray()) {
          ArrayNode ops = (ArrayNode) e.getValue();
          for (int i = ops.size() - 1; i >= 0; i--) {
            if (stillPending(ops.get(i))) {
              ops.remove(i);
            }
          }
        }
        dropStillPending(e.getValue());
      }
    } else if (node.isArray()) {
      for (JsonNode n : node) {
        dropStillPending(n);
      }
    }
  }

  /** A CREATE [NOOP] of a PENDING value that stays PENDING with the same value and no error. */
  private static boolean stillPending(JsonNode op) {
    boolean noop = false;
    for (JsonNode f : op.path("flags")) {
      noop |= f.asText().equals("NOOP");
    }
    return noop
        && op.path("operation").asText().equals("CREATE")
        && op.path("prev_state").asText().equals("PENDING")
        && op.path("new_state").asText().equals("PENDING")
        && op.path("prev_error").asText().isEmpty()
        && op.path("error").asText().isEmpty()
        && op.path("prev_value").equals(op.path("new_value"));
  }

  private static int matchingOps(JsonNode exp, JsonNode act) {
    int n = 0;
    for (int i = 0; i < exp.size(); i++) {
      if (i < act.size() && exp.get(i).equals(act.get(i))) {
        n++;
      }
    }
    return n;
  }

  /** Appends to {@code diffs} a line per differing leaf, path-qualified. */
  static void compare(String path, JsonNode exp, JsonNode act, List<String> diffs) {
    if (exp.equals(act)) {
      return;
    }
    if (exp.isObject() && act.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = exp.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode other = act.get(e.getKey());
        if (other == null) {
          diffs.add(path + "." + e.getKey() + ": missing");
        } else {
          compare(path + "." + e.getKey(), e.getValue(), other, diffs);
        }
      }
      return;
    }
    if (exp.isArray() && act.isArray()) {
      if (exp.size() != act.size()) {
        diffs.add(
            path
                + ": expected "
                + exp.size()
                + " elements "
                + brief(exp)
                + ", got "
                + act.size()
                + " "
                + brief(act));
        return;
      }
      for (int i = 0; i < exp.size(); i++) {
        compare(path + "[" + i + "]", exp.get(i), act.get(i), diffs);
      }
      return;
    }
    diffs.add(path + ": expected " + exp + ", got " + act);
  }

  private static String brief(JsonNode arr) {
    List<String> parts = new ArrayList<>();
    for (JsonNode n : arr) {
      if (n.has("operation")) {
        parts.add(
            n.path("operation").asText()
                + " "
                + n.path("key").asText()
                + " "
                + n.path("prev_state").asText()
                + "->"
                + n.path("new_state").asText());
      } else if (n.has("key")) {
        parts.add(n.path("key").asText() + (n.has("state") ? "=" + n.path("state").asText() : ""));
      } else {
        parts.add(n.toString());
      }
    }
    return parts.toString();
  }
}
