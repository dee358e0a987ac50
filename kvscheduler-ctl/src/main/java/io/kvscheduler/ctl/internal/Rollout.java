package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import io.kvscheduler.agent.internal.etcd.EtcdStatusPublisher;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Rolls values out to agents in waves, over etcd.
 *
 * <p>Per agent (label), the life of a rollout:
 *
 * <pre>
 *   NOT_STARTED --write--> (no value differs) UNCHANGED
 *        |                 (values changed meanwhile by another writer) CONFLICT
 *        |                 (etcd error) ERROR
 *        v
 *     WRITTEN --statuses of the agent--> CHANGED    (every changed value in an accepted state)
 *        |                          \--> FAILED     (a value FAILED, INVALID, or rejected)
 *        \--------no answer in time---> TIMED_OUT
 * </pre>
 *
 * A FAILED, TIMED_OUT or ERROR agent is rolled back (its previous values written back); the rollout
 * then stops: later waves are left NOT_STARTED, and with {@code rollbackDone} the agents that were
 * CHANGED are rolled back too.
 *
 * <p>Each agent's change, and each roll-back, is one etcd transaction that writes only when none of
 * the keys changed since they were read (compared by modification revision), so an interrupted
 * rollout leaves every agent either before or after the change, never in between.
 *
 * <p>An agent has taken the change when it has applied its etcd configuration up to the revision of
 * that transaction (its key {@code check/status/v1/applied}, written after the statuses it vouches
 * for) and the statuses of the changed values ({@code config-status/...}) are in an accepted state.
 * Agents must publish value statuses ({@code --status-publishing}).
 */
final class Rollout {
  static final String APPLIED = EtcdStatusPublisher.APPLIED_KEY;
  static final String PROBLEMS = EtcdStatusPublisher.PROBLEMS_KEY;

  /** States that fail a rollout at once unless accepted; others (PENDING, ...) are waited on. */
  static final Set<String> FINAL = Set.of("FAILED", "INVALID", "UNIMPLEMENTED");

  /** What happened to one agent. */
  enum Outcome {
    NOT_STARTED,
    UNCHANGED,
    CHANGED,
    FAILED,
    TIMED_OUT,
    CONFLICT,
    ERROR;

    boolean took() {
      return this == UNCHANGED || this == CHANGED;
    }
  }

  /** One agent's report. */
  static final class AgentResult {
    final String label;
    Outcome outcome = Outcome.NOT_STARTED;
    int changed;
    long revision;
    Duration took;
    String detail = "";

    /** The state of each changed value as last seen (key relative to the agent prefix). */
    final Map<String, String> states = new TreeMap<>();

    /** null: no roll-back attempted; else what it did. */
    String rollback;

    private Map<String, KeyValue> previous = Map.of();
    private long startNanos;

    AgentResult(String label) {
      this.label = label;
    }

    ObjectNode json() {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("label", label);
      n.put("outcome", outcome.name());
      n.put("took_change", outcome.took() && rollback == null);
      n.put("changed_values", changed);
      if (revision > 0) {
        n.put("revision", revision);
      }
      if (took != null) {
        n.put("seconds", took.toMillis() / 1000.0);
      }
      n.put("detail", detail);
      ObjectNode s = n.putObject("states");
      states.forEach(s::put);
      if (rollback != null) {
        n.put("rollback", rollback);
      } else {
        n.putNull("rollback");
      }
      return n;
    }
  }

  /** What to roll out and how. */
  record Options(
      int maxUnavailable,
      Duration timeout,
      boolean rollbackDone,
      Set<String> accepted,
      Duration pollInterval) {}

  private final Client client;
  private final Duration requestTimeout;
  private final LongSupplier nanoTime;
  private final Options options;

  Rollout(Client client, Duration requestTimeout, LongSupplier nanoTime, Options options) {
    this.client = client;
    this.requestTimeout = requestTimeout;
    this.nanoTime = nanoTime;
    this.options = options;
  }

  /**
   * Rolls {@code values} (key relative to the agent prefix to the value as etcd keeps it) out to
   * the agents of {@code labels}, in this order, {@code maxUnavailable} at a time; {@code progress}
   * is told of each agent once its outcome is known.
   */
  List<AgentResult> run(
      List<String> labels, Map<String, String> values, Consumer<AgentResult> progress)
      throws InterruptedException {
    List<AgentResult> results = new ArrayList<>();
    labels.forEach(l -> results.add(new AgentResult(l)));
    int wave = Math.max(1, options.maxUnavailable());
    boolean stopped = false;
    for (int from = 0; from < results.size() && !stopped; from += wave) {
      List<AgentResult> now = results.subList(from, Math.min(results.size(), from + wave));
      List<AgentResult> waiting = new ArrayList<>();
      for (AgentResult r : now) {
        write(r, values);
        if (r.outcome == Outcome.CHANGED) {
          waiting.add(r); // written: CHANGED once the agent confirms it
        }
      }
      awaitAgents(waiting);
      for (AgentResult r : now) {
        if (!r.outcome.took()) {
          stopped = true;
          if (r.outcome != Outcome.CONFLICT && !r.previous.isEmpty() && r.revision > 0) {
            rollBack(r);
          }
        }
      }
      if (stopped && options.rollbackDone()) {
        for (AgentResult r : results.subList(0, from + now.size())) {
          if (r.outcome == Outcome.CHANGED && r.rollback == null) {
            rollBack(r);
          }
        }
      }
      now.forEach(progress);
    }
    if (stopped) {
      String at =
          results.stream()
              .filter(r -> r.outcome != Outcome.NOT_STARTED && !r.outcome.took())
              .map(r -> r.label)
              .findFirst()
              .orElse("?");
      for (AgentResult r : results) {
        if (r.outcome == Outcome.NOT_STARTED) {
          r.detail = "not started: the rollout stopped at " + at;
          progress.accept(r);
        }
      }
    }
    return results;
  }

  /** Reads the agent's current values of the keys and writes those that differ, in one txn. */
  private void write(AgentResult r, Map<String, String> values) {
    String prefix = FleetView.ROOT + r.label + "/";
    r.startNanos = nanoTime.getAsLong();
    try {
      Map<String, KeyValue> current = new LinkedHashMap<>();
      for (String key : values.keySet()) {
        List<KeyValue> kvs =
            EtcdClients.await(client.getKVClient().get(bytes(prefix + key)), requestTimeout)
                .getKvs();
        current.put(key, kvs.isEmpty() ? null : kvs.get(0));
      }
      List<Cmp> unchanged = new ArrayList<>();
      List<Op> puts = new ArrayList<>();
      Map<String, KeyValue> previous = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : values.entrySet()) {
        KeyValue kv = current.get(e.getKey());
        ByteSequence key = bytes(prefix + e.getKey());
        unchanged.add(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.modRevision(modRevision(kv))));
        if (kv == null || !sameJson(kv.getValue().toString(StandardCharsets.UTF_8), e.getValue())) {
          puts.add(Op.put(key, bytes(e.getValue()), PutOption.DEFAULT));
          previous.put(e.getKey(), kv);
        }
      }
      if (puts.isEmpty()) {
        r.outcome = Outcome.UNCHANGED;
        r.detail = "already had these " + values.size() + " value(s)";
        r.took = elapsed(r);
        return;
      }
      TxnResponse t =
          EtcdClients.await(
              client
                  .getKVClient()
                  .txn()
                  .If(unchanged.toArray(Cmp[]::new))
                  .Then(puts.toArray(Op[]::new))
                  .commit(),
              requestTimeout);
      if (!t.isSucceeded()) {
        r.outcome = Outcome.CONFLICT;
        r.detail = "its values changed in etcd while the rollout read them; nothing written";
        r.took = elapsed(r);
        return;
      }
      r.previous = previous;
      r.changed = previous.size();
      r.revision = t.getHeader().getRevision();
      r.outcome = Outcome.CHANGED;
      previous.keySet().forEach(k -> r.states.put(k, "NO STATUS"));
    } catch (Exception e) {
      r.outcome = Outcome.ERROR;
      r.detail =
          "etcd: "
              + EtcdClients.describe(e)
              + " (whether its values were written is not known: run the rollout again)";
      r.took = elapsed(r);
    }
  }

  /**
   * Waits until each written agent has taken its change, failed, or run out of time; reads its
   * applied revision, then the statuses of its changed values and its northbound problems.
   */
  private void awaitAgents(List<AgentResult> agents) throws InterruptedException {
    List<AgentResult> pending = new ArrayList<>(agents);
    long deadline = nanoTime.getAsLong() + options.timeout().toNanos();
    while (!pending.isEmpty()) {
      for (AgentResult r : List.copyOf(pending)) {
        String why = check(r);
        if (why == null) {
          continue; // not yet
        }
        r.took = elapsed(r);
        if (why.isEmpty()) {
          r.detail = "taken: " + summary(r.states);
        } else {
          r.outcome = Outcome.FAILED;
          r.detail = why;
        }
        pending.remove(r);
      }
      if (pending.isEmpty()) {
        return;
      }
      if (nanoTime.getAsLong() - deadline >= 0) {
        for (AgentResult r : pending) {
          r.outcome = Outcome.TIMED_OUT;
          r.took = elapsed(r);
          r.detail =
              "no answer within "
                  + options.timeout().toSeconds()
                  + " s"
                  + (r.detail.isEmpty() ? "" : ": " + r.detail)
                  + " ("
                  + summary(r.states)
                  + ")";
        }
        return;
      }
      Thread.sleep(options.pollInterval().toMillis());
    }
  }

  /**
   * null while the agent has not answered; "" when it took the change; else why it failed. Leaves
   * in {@code r.detail} what is awaited.
   */
  private String check(AgentResult r) {
    String prefix = FleetView.ROOT + r.label + "/";
    try {
      JsonNode applied = json(get(prefix + APPLIED));
      long at = applied == null ? 0 : applied.path("revision").asLong(0);
      if (at < r.revision) {
        r.detail =
            get(prefix + FleetView.OWNER) == null
                ? "no agent holds the label"
                : "the agent has not applied revision " + r.revision + " yet";
        return null;
      }
      JsonNode problemList = json(get(prefix + PROBLEMS));
      Map<String, String> statuses = getPrefix(prefix + FleetView.STATUSES);
      List<String> failed = new ArrayList<>();
      boolean waiting = false;
      for (String key : r.previous.keySet()) {
        String rejected = rejection(problemList, key);
        if (rejected != null) {
          r.states.put(key, "REJECTED");
          failed.add(key + ": rejected by the agent: " + rejected);
          continue;
        }
        String statusKey = EtcdStatusPublisher.statusKey(key);
        JsonNode status = statusKey == null ? null : json(statuses.get(prefix + statusKey));
        String state = status == null ? "NO STATUS" : status.path("state").asText("NONEXISTENT");
        r.states.put(key, state);
        if (options.accepted().contains(state)) {
          continue;
        }
        if (FINAL.contains(state)) {
          String error = status.path("error").asText("");
          failed.add(key + ": " + state + (error.isEmpty() ? "" : " (" + error + ")"));
        } else {
          waiting = true;
        }
      }
      if (!failed.isEmpty()) {
        return String.join("; ", failed);
      }
      if (waiting) {
        r.detail = "values not in an accepted state " + options.accepted();
        return null;
      }
      return "";
    } catch (Exception e) {
      r.detail = "etcd: " + EtcdClients.describe(e);
      return null;
    }
  }

  /** The message of the problem naming {@code key} in the agent's northbound problems, or null. */
  private static String rejection(JsonNode problems, String key) {
    if (problems == null || !problems.isArray()) {
      return null;
    }
    for (JsonNode p : problems) {
      if (p.toString().contains("\"" + key + "\"")) {
        return p.path("message").asText(p.toString());
      }
    }
    return null;
  }

  /**
   * Writes the agent's previous values back (deleting those that were absent), in one txn that
   * writes only when none of them changed since the rollout wrote them.
   */
  private void rollBack(AgentResult r) {
    String prefix = FleetView.ROOT + r.label + "/";
    List<Cmp> ours = new ArrayList<>();
    List<Op> ops = new ArrayList<>();
    r.previous.forEach(
        (key, kv) -> {
          ByteSequence k = bytes(prefix + key);
          ours.add(new Cmp(k, Cmp.Op.EQUAL, CmpTarget.modRevision(r.revision)));
          ops.add(
              kv == null
                  ? Op.delete(k, DeleteOption.DEFAULT)
                  : Op.put(k, kv.getValue(), PutOption.DEFAULT));
        });
    try {
      TxnResponse t =
          EtcdClients.await(
              client
                  .getKVClient()
                  .txn()
                  .If(ours.toArray(Cmp[]::new))
                  .Then(ops.toArray(Op[]::new))
                  .commit(),
              requestTimeout);
      r.rollback =
          t.isSucceeded()
              ? "ROLLED BACK"
              : "NOT ROLLED BACK: its values changed in etcd since the rollout wrote them";
    } catch (Exception e) {
      r.rollback =
          "ROLLBACK FAILED: etcd: "
              + EtcdClients.describe(e)
              + " (whether the previous values were written back is not known)";
    }
  }

  private Duration elapsed(AgentResult r) {
    return Duration.ofNanos(nanoTime.getAsLong() - r.startNanos);
  }

  private static String summary(Map<String, String> states) {
    Map<String, Integer> by = new TreeMap<>();
    states.values().forEach(s -> by.merge(s, 1, Integer::sum));
    StringBuilder b = new StringBuilder();
    by.forEach((s, n) -> b.append(b.length() == 0 ? "" : ", ").append(s).append(' ').append(n));
    return b.length() == 0 ? "no value" : b.toString();
  }

  private String get(String key) throws Exception {
    List<KeyValue> kvs =
        EtcdClients.await(client.getKVClient().get(bytes(key)), requestTimeout).getKvs();
    return kvs.isEmpty() ? null : kvs.get(0).getValue().toString(StandardCharsets.UTF_8);
  }

  private Map<String, String> getPrefix(String prefix) throws Exception {
    Map<String, String> out = new TreeMap<>();
    for (KeyValue kv :
        EtcdClients.await(
                client.getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).build()),
                requestTimeout)
            .getKvs()) {
      out.put(
          kv.getKey().toString(StandardCharsets.UTF_8),
          kv.getValue().toString(StandardCharsets.UTF_8));
    }
    return out;
  }

  private static long modRevision(KeyValue kv) {
    return kv == null ? 0 : kv.getModRevision();
  }

  private static boolean sameJson(String a, String b) {
    JsonNode x = json(a);
    JsonNode y = json(b);
    return x != null && x.equals(y);
  }

  private static JsonNode json(String text) {
    if (text == null) {
      return null;
    }
    try {
      return Json.MAPPER.readTree(text);
    } catch (IOException e) {
      return null;
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
