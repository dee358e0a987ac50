package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvscheduler.api.Excerpt;
import java.time.Clock;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code watch}: follows the status of values, printing each change. The agent's stream of status
 * events ({@code /ui/events}, server-sent events naming the values that changed) says when to read
 * the status again, so a change shows within a moment and an idle agent is not polled; an agent
 * without that stream is read every {@code --interval}.
 */
@Command(
    name = "watch",
    description = {
      "Follows the values' status, printing one line per"
          + " change (first the current state of every value) until interrupted.",
      "Example: kvsctl watch --state PENDING"
    })
public final class WatchCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @Option(
      names = "--state",
      paramLabel = "S",
      description = "Only changes into or out of" + " state S.")
  String state;

  @Option(
      names = "--interval",
      paramLabel = "MS",
      defaultValue = "500",
      description =
          "How often the status is read when the agent offers no event stream, in milliseconds"
              + " (default: ${DEFAULT-VALUE}).")
  long intervalMillis;

  @Option(names = "--count", paramLabel = "N", description = "Stop after N changes.")
  Long count;

  private final Clock clock = Clock.systemDefaultZone();

  /** A value's status as compared between two reads. */
  private record Seen(String state, String lastOp, String details, String error) {}

  /** The path of the agent's status events. */
  static final String EVENTS = "/ui/events";

  @Override
  protected int run() throws InterruptedException {
    String wanted = state == null ? null : state.toUpperCase(Locale.ROOT);
    Map<String, Seen> last = new HashMap<>();
    long printed = 0;
    // subscribed before the first read, so that no change falls between the two
    try (ChangeSignal changes = ChangeSignal.open(client(), EVENTS)) {
      boolean first = true;
      while (count == null || printed < count) {
        if (!first) {
          changes.await(Math.max(50, intervalMillis));
        }
        first = false;
        Map<String, Seen> now = read();
        for (String key : new TreeSet<>(union(last, now))) {
          Seen before = last.get(key);
          Seen after = now.get(key);
          if (Objects.equals(before, after)) {
            continue;
          }
          String from = before == null ? "NONEXISTENT" : before.state;
          String to = after == null ? "NONEXISTENT" : after.state;
          if (wanted != null && !wanted.equals(from) && !wanted.equals(to)) {
            continue;
          }
          print(key, from, after);
          printed++;
          if (count != null && printed >= count) {
            break;
          }
        }
        last = now;
        out().flush();
      }
    }
    return ExitCodes.OK;
  }

  /** The status of every value, by key. */
  private Map<String, Seen> read() {
    JsonNode all = client().get("/scheduler/status").json();
    Map<String, Seen> now = new HashMap<>();
    if (all != null && all.isArray()) {
      for (JsonNode s : all) {
        put(now, s.get("value"));
        s.path("derived_values").forEach(d -> put(now, d));
      }
    }
    return now;
  }

  private void print(String key, String from, Seen after) {
    String to = after == null ? "NONEXISTENT" : after.state;
    if (output.json()) {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("time", clock.instant().toString());
      n.put("key", key);
      n.put("from", from);
      n.put("to", to);
      if (after != null) {
        n.put("last_operation", after.lastOp);
        n.put("details", after.details);
        n.put("error", after.error);
      }
      out().println(n.toString());
      return;
    }
    StringBuilder b =
        new StringBuilder()
            .append(LocalTime.now(clock.withZone(ZoneId.systemDefault())).withNano(0))
            .append("  ")
            .append(Excerpt.escaped(key))
            .append("  ")
            .append(from)
            .append(" -> ")
            .append(to);
    if (after != null && !after.details.isEmpty()) {
      b.append("  (waits for ").append(Excerpt.escaped(after.details)).append(')');
    }
    if (after != null && !after.error.isEmpty()) {
      b.append("  error: ").append(Excerpt.escaped(after.error));
    }
    out().println(b);
  }

  private static void put(Map<String, Seen> m, JsonNode v) {
    if (v == null) {
      return;
    }
    String st = Json.text(v, "state");
    StringBuilder details = new StringBuilder();
    v.path("details")
        .forEach(d -> details.append(details.length() == 0 ? "" : ", ").append(d.asText()));
    m.put(
        Json.text(v, "key"),
        new Seen(
            st.isEmpty() ? "NONEXISTENT" : st,
            Json.text(v, "last_operation"),
            details.toString(),
            Json.text(v, "error")));
  }

  private static Set<String> union(Map<String, Seen> a, Map<String, Seen> b) {
    Set<String> s = new HashSet<>(a.keySet());
    s.addAll(b.keySet());
    return s;
  }
}
