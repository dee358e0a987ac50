package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.KeyValue;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.spi.ModelRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code fleet rollout FILE}: writes the values of FILE under the prefix of each agent of the given
 * labels, a few agents at a time, waiting for each to take them; stops and rolls back at the first
 * agent that does not (see {@link Rollout}).
 */
@Command(
    name = "rollout",
    description = {
      "Writes the values of FILE into etcd under /vnf-agent/<label>/ of each agent of --labels"
          + " (or of every agent with --all), --max-unavailable agents at a time, and waits for"
          + " each agent to publish the statuses of the changed values (CONFIGURED, or a state"
          + " given with --accept). Stops at the first agent that fails or does not answer within"
          + " --timeout, and writes its previous values back (with --rollback-on-failure, those of"
          + " the agents already done too). Each agent's change is one etcd transaction.",
      "The agents must publish value statuses (--status-publishing).",
      "Exits with 0 only when every agent took the change.",
      "Examples: kvsctl fleet rollout mtu.yaml --etcd 127.0.0.1:2379 --labels node1,node2,node3",
      "          kvsctl fleet rollout mtu.yaml --all --max-unavailable 2 --timeout 30s"
          + " --rollback-on-failure"
    })
public final class FleetRolloutCommand extends AgentCommand {
  @ParentCommand FleetCommand parent;

  @Mixin OutputFormat output;

  @Mixin EtcdOptions etcdOptions;

  @Parameters(
      paramLabel = "FILE",
      description =
          "The values: YAML or JSON, a mapping of keys to values or the YAML configuration format"
              + " ('-' for standard input).")
  String file;

  @ArgGroup(multiplicity = "1")
  Agents agents;

  static final class Agents {
    @Option(
        names = "--labels",
        paramLabel = "L1,L2,...",
        split = ",",
        required = true,
        description = "The agents to change, in this order.")
    List<String> labels;

    @Option(
        names = "--all",
        required = true,
        description = "Every agent that holds its label in etcd, in the order of their labels.")
    boolean all;
  }

  @Option(
      names = "--max-unavailable",
      paramLabel = "N",
      defaultValue = "1",
      description = "How many agents are changed at a time (default ${DEFAULT-VALUE}).")
  int maxUnavailable;

  @Option(
      names = "--rollback-on-failure",
      description = "When an agent fails, also roll back the agents that took the change.")
  boolean rollbackDone;

  @Option(
      names = "--accept",
      paramLabel = "STATE,...",
      split = ",",
      description =
          "States besides CONFIGURED that count as taken (e.g. PENDING, for values waiting for"
              + " something another writer provides).")
  List<String> accept = new ArrayList<>();

  @Override
  protected int run() throws Exception {
    if (maxUnavailable < 1) {
      throw new CtlException(ExitCodes.USAGE, "--max-unavailable: must be 1 or more");
    }
    // the root's --timeout (seconds): here how long each agent may take
    Duration timeout = root().timeout();
    Set<String> accepted = new LinkedHashSet<>(List.of("CONFIGURED"));
    for (String a : accept) {
      String s = a.strip().toUpperCase(java.util.Locale.ROOT);
      if (!KNOWN_STATES.contains(s)) {
        throw new CtlException(
            ExitCodes.USAGE, "--accept: '" + a + "' is not a value state; one of " + KNOWN_STATES);
      }
      accepted.add(s);
    }
    List<String> labels = new ArrayList<>();
    if (agents.labels != null) {
      List<String> bad = new ArrayList<>();
      for (String l : agents.labels) {
        String t = l.strip();
        if (!t.matches("[-A-Za-z0-9_.]+")) {
          bad.add("'" + l + "'");
        } else if (!labels.contains(t)) {
          labels.add(t);
        }
      }
      if (!bad.isEmpty() || labels.isEmpty()) {
        throw new CtlException(
            ExitCodes.USAGE,
            "--labels: invalid label(s) "
                + (bad.isEmpty() ? "(none given)" : String.join(", ", bad)));
      }
    }
    Map<String, String> values = values();

    try (EtcdOptions.Connection etcd =
        etcdOptions.orElse(parent.etcdOptions).connect(root().env())) {
      // a command line may wait longer for one request than an agent (operation-timeout)
      Duration request = max(etcd.settings().requestTimeout(), Duration.ofSeconds(10));
      try {
        check(etcd, labels, request);
      } catch (CtlException e) {
        throw e;
      } catch (Exception e) {
        throw new CtlException(
            ExitCodes.ofEtcdFailure(e), etcd.explain(e, FleetView.ROOT), EtcdClients.unwrap(e));
      }

      Rollout rollout =
          new Rollout(
              etcd.client(),
              request,
              System::nanoTime,
              new Rollout.Options(
                  maxUnavailable, timeout, rollbackDone, accepted, Duration.ofMillis(100)));
      if (!output.json()) {
        err()
            .println(
                "kvsctl: rolling "
                    + values.size()
                    + " value(s) of "
                    + file
                    + " out to "
                    + labels.size()
                    + " agent(s), "
                    + maxUnavailable
                    + " at a time");
        err().flush();
      }
      List<Rollout.AgentResult> results =
          rollout.run(
              labels,
              values,
              r -> {
                if (!output.json()) {
                  out().println(line(r));
                  out().flush();
                }
              });
      long took = results.stream().filter(r -> r.outcome.took() && r.rollback == null).count();
      boolean all = took == results.size();
      if (output.json()) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("file", file);
        n.put("ok", all);
        n.put("took_change", took);
        n.put("agents_total", results.size());
        ArrayNode a = n.putArray("agents");
        results.forEach(r -> a.add(r.json()));
        out().println(Json.pretty(n));
      } else {
        err()
            .println(
                "kvsctl: "
                    + took
                    + " of "
                    + results.size()
                    + " agent(s) took the change"
                    + (all ? "" : "; the rollout stopped"));
      }
      return all ? ExitCodes.OK : ExitCodes.FAILED;
    }
  }

  /**
   * With --all, fills {@code labels} with every label an agent holds; else checks that an agent
   * holds each; then that each publishes value statuses. Throws naming the labels that fail.
   */
  private void check(EtcdOptions.Connection etcd, List<String> labels, Duration request)
      throws Exception {
    if (agents.all) {
      labels.addAll(
          held(etcd, new FleetView(etcd.client(), request, Duration.ZERO).labels(), request));
      if (labels.isEmpty()) {
        throw new CtlException(
            ExitCodes.FAILED, "no agent holds a label in etcd " + etcd.endpoints());
      }
    } else {
      List<String> holding = held(etcd, labels, request);
      List<String> missing = labels.stream().filter(l -> !holding.contains(l)).toList();
      if (!missing.isEmpty()) {
        throw new CtlException(
            ExitCodes.FAILED,
            "no agent holds label(s) "
                + String.join(", ", missing)
                + " in etcd "
                + etcd.endpoints()
                + " (no key /vnf-agent/<label>/owner); nothing written");
      }
    }
    List<String> silent = new ArrayList<>();
    for (String l : labels) {
      if (get(etcd, FleetView.ROOT + l + "/" + Rollout.APPLIED, request) == null) {
        silent.add(l);
      }
    }
    if (!silent.isEmpty()) {
      throw new CtlException(
          ExitCodes.FAILED,
          "the agent(s) of "
              + String.join(", ", silent)
              + " publish no value statuses (key check/status/v1/applied absent: start them"
              + " with --status-publishing); nothing written");
    }
  }

  private static final Set<String> KNOWN_STATES =
      new LinkedHashSet<>(
          List.of(
              "CONFIGURED",
              "PENDING",
              "FAILED",
              "INVALID",
              "RETRYING",
              "OBTAINED",
              "DISCOVERED",
              "MISSING",
              "UNIMPLEMENTED"));

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static String line(Rollout.AgentResult r) {
    StringBuilder b =
        new StringBuilder(r.label).append(": ").append(r.outcome.name().replace('_', ' '));
    if (r.changed > 0) {
      b.append(", ").append(r.changed).append(" value(s) changed");
    }
    if (r.took != null && r.outcome != Rollout.Outcome.NOT_STARTED) {
      b.append(String.format(java.util.Locale.ROOT, " in %.1f s", r.took.toMillis() / 1000.0));
    }
    if (!r.detail.isEmpty()) {
      b.append(" - ").append(r.detail);
    }
    if (r.rollback != null) {
      b.append("; ").append(r.rollback);
    }
    return b.toString();
  }

  /** The values of FILE as etcd keeps them (protobuf JSON), by key; refused when a key is bad. */
  private Map<String, String> values() {
    String text;
    try {
      text =
          file.equals("-")
              ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
              : Files.readString(Path.of(file), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CtlException(ExitCodes.FAILED, "cannot read " + file + ": " + e, e);
    }
    ModelRegistry models = Models.ofPlugins();
    Map<String, Object> decoded;
    try {
      ConfigDocument doc = ConfigDocument.parseYaml(ConfigDocument.withoutBom(text));
      JsonNode root = doc.root();
      if (root != null && root.isObject() && !ConfigFormat.isYamlConfig(root)) {
        // every key of no model named at once, before anything is decoded or written
        List<String> unknown = new ArrayList<>();
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
          String key = it.next();
          if (models.forKey(key).isEmpty()) {
            unknown.add(key);
          }
        }
        if (!unknown.isEmpty()) {
          throw new CtlException(
              ExitCodes.INVALID_CONFIG,
              file
                  + ": key(s) of no model: "
                  + String.join(", ", unknown)
                  + " (models: "
                  + models.models().stream().map(m -> m.keyPrefix()).sorted().toList()
                  + "); nothing written");
        }
      }
      decoded = ConfigFormat.decodeAny(models, doc);
    } catch (ConfigDocument.SyntaxException e) {
      throw new CtlException(
          ExitCodes.INVALID_CONFIG,
          file + (e.line() > 0 ? ":" + e.line() : "") + ": " + e.getMessage() + "; nothing written",
          e);
    } catch (ConfigFormat.ConfigException e) {
      throw new CtlException(
          ExitCodes.INVALID_CONFIG,
          file + (e.line() > 0 ? ":" + e.line() : "") + ": " + e.getMessage() + "; nothing written",
          e);
    }
    if (decoded.isEmpty()) {
      throw new CtlException(ExitCodes.INVALID_CONFIG, file + ": no value to roll out");
    }
    Map<String, String> out = new LinkedHashMap<>();
    decoded.forEach((k, v) -> out.put(k, models.encode(v)));
    return out;
  }

  /** Those of {@code labels} whose {@code owner} key is present (an agent holds them). */
  private static List<String> held(
      EtcdOptions.Connection etcd, List<String> labels, Duration timeout) throws Exception {
    List<String> out = new ArrayList<>();
    for (String l : labels) {
      if (get(etcd, FleetView.ROOT + l + "/" + FleetView.OWNER, timeout) != null) {
        out.add(l);
      }
    }
    return out;
  }

  private static String get(EtcdOptions.Connection etcd, String key, Duration timeout)
      throws Exception {
    List<KeyValue> kvs =
        EtcdClients.await(etcd.client().getKVClient().get(FleetView.bytes(key)), timeout).getKvs();
    return kvs.isEmpty() ? null : kvs.get(0).getValue().toString(StandardCharsets.UTF_8);
  }
}
