package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseTimeToLiveResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What etcd says of every agent under {@code /vnf-agent/}: for each label its claim ({@code
 * owner}), its agent status ({@code check/status/v1/agent}), the states of its published value
 * statuses ({@code config-status/...}) and the northbound problems it publishes, if any (a key of
 * its {@code check/} tree whose name holds {@code problems}, or such a field of its agent status).
 *
 * <p>Whether an agent is alive is told by the leases of its {@code owner} and agent status keys:
 * the agent keeps them alive (a keep-alive every third of their TTL) and rewrites its status only
 * when it changes. A lease etcd no longer has, or one not renewed for more than two keep-alive
 * intervals, is an agent that is gone or stuck; when the lease expires its keys vanish. An agent
 * status written without a lease (vpp-agent rewrites its status every 10 s) is judged by its {@code
 * last_update} instead: older than {@code staleAfter} is stale.
 */
final class FleetView {
  static final String ROOT = "/vnf-agent/";
  static final String OWNER = "owner";
  static final String AGENT_STATUS = "check/status/v1/agent";
  static final String CHECK = "check/";
  static final String STATUSES = "config-status/";
  static final String CONFIG = "config/";

  private final Client client;
  private final Duration timeout;
  private final Duration staleAfter;

  FleetView(Client client, Duration timeout, Duration staleAfter) {
    this.client = client;
    this.timeout = timeout;
    this.staleAfter = staleAfter;
  }

  /**
   * The lease of an agent's key as etcd has it.
   *
   * @param key the key under the agent prefix ({@code owner} or the agent status)
   * @param id the lease id
   * @param ttlSeconds the TTL it was granted
   * @param remainingSeconds what is left of it (whole seconds); negative when etcd no longer has it
   */
  record Lease(String key, long id, long ttlSeconds, long remainingSeconds) {
    boolean expired() {
      return remainingSeconds < 0;
    }

    /** For how long it was not renewed: a keep-alive resets what is left to the TTL. */
    long notRenewedSeconds() {
      return Math.max(0, ttlSeconds - remainingSeconds);
    }

    /**
     * Not renewed for more than two keep-alive intervals (the agent renews every third of the TTL),
     * plus one second as etcd counts whole seconds.
     */
    boolean stale() {
      return !expired() && notRenewedSeconds() > ttlSeconds * 2 / 3 + 1;
    }

    ObjectNode json() {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("key", key);
      n.put("id", Long.toHexString(id));
      n.put("ttl_seconds", ttlSeconds);
      n.put("remaining_seconds", Math.max(-1, remainingSeconds));
      n.put("not_renewed_seconds", expired() ? ttlSeconds : notRenewedSeconds());
      return n;
    }
  }

  /**
   * One agent (one label) as etcd shows it.
   *
   * @param lease the lease of the agent's keys that was renewed least recently (the one that tells
   *     first when the agent stops renewing), null when neither key has one
   */
  record AgentRow(
      String label,
      String state,
      boolean ok,
      JsonNode owner,
      String version,
      Long lastStatusAgeSeconds,
      Lease lease,
      Map<String, Integer> values,
      List<JsonNode> northboundProblems,
      List<String> issues) {

    ObjectNode json() {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("label", label);
      n.put("state", state);
      n.put("ok", ok);
      if (owner != null) {
        ObjectNode o = n.putObject("owner");
        for (String f : List.of("host", "pid", "start_time", "version")) {
          if (owner.has(f)) {
            o.set(f, owner.get(f));
          }
        }
      } else {
        n.putNull("owner");
      }
      n.put("version", version);
      if (lastStatusAgeSeconds != null) {
        n.put("last_status_age_seconds", lastStatusAgeSeconds);
      } else {
        n.putNull("last_status_age_seconds");
      }
      if (lease != null) {
        n.set("lease", lease.json());
      } else {
        n.putNull("lease");
      }
      ObjectNode v = n.putObject("values");
      values.forEach(v::put);
      ArrayNode p = n.putArray("northbound_problems");
      northboundProblems.forEach(p::add);
      ArrayNode i = n.putArray("issues");
      issues.forEach(i::add);
      return n;
    }
  }

  /** Every label found under {@code /vnf-agent/}, sorted. */
  List<AgentRow> read() throws Exception {
    List<AgentRow> rows = new ArrayList<>();
    Instant now = Instant.now();
    for (String label : labels()) {
      rows.add(row(label, now));
    }
    return rows;
  }

  /**
   * The labels: each found with one read of one key, skipping the rest of that label's keys (a read
   * from {@code /vnf-agent/<label>0}, the key after every {@code /vnf-agent/<label>/...}).
   */
  List<String> labels() throws Exception {
    List<String> out = new ArrayList<>();
    String from = ROOT;
    ByteSequence end = bytes(ROOT.substring(0, ROOT.length() - 1) + "0");
    while (true) {
      GetResponse r =
          EtcdClients.await(
              client
                  .getKVClient()
                  .get(
                      bytes(from),
                      GetOption.builder().withRange(end).withLimit(1).withKeysOnly(true).build()),
              timeout);
      if (r.getKvs().isEmpty()) {
        return out;
      }
      String key = r.getKvs().get(0).getKey().toString(StandardCharsets.UTF_8);
      String rest = key.substring(ROOT.length());
      int slash = rest.indexOf('/');
      if (slash <= 0) {
        // a key right under the root (no label): skipped
        from = key + "\0";
        continue;
      }
      String label = rest.substring(0, slash);
      out.add(label);
      from = ROOT + label + "0";
    }
  }

  private AgentRow row(String label, Instant now) throws Exception {
    String prefix = ROOT + label + "/";
    KeyValue ownerKv = getKv(prefix + OWNER);
    JsonNode owner = ownerKv == null ? null : parse(text(ownerKv.getValue()));
    Map<String, KeyValue> checkKvs = getPrefixKvs(prefix + CHECK);
    Map<String, String> check = new TreeMap<>();
    checkKvs.forEach((k, kv) -> check.put(k, text(kv.getValue())));
    KeyValue statusKv = checkKvs.get(prefix + AGENT_STATUS);
    JsonNode status = parse(check.get(prefix + AGENT_STATUS));
    Map<String, Integer> values = new TreeMap<>();
    for (String v : getPrefix(prefix + STATUSES).values()) {
      JsonNode s = parse(v);
      String state = s == null ? "UNREADABLE" : s.path("state").asText("NONEXISTENT");
      values.merge(state, 1, Integer::sum);
    }
    List<JsonNode> problems = new ArrayList<>();
    check.forEach(
        (k, v) -> {
          if (!k.equals(prefix + AGENT_STATUS)
              && k.toLowerCase(java.util.Locale.ROOT).contains("problem")) {
            addProblems(problems, parse(v), k);
          }
        });
    if (status != null) {
      addProblems(problems, status.get("northbound_problems"), null);
    }
    // the leases of the claim and of the agent status (one read each, the same lease read once)
    Map<Long, Lease> leases = new LinkedHashMap<>();
    if (ownerKv != null && ownerKv.getLease() != 0) {
      leases.put(ownerKv.getLease(), lease(OWNER, ownerKv.getLease()));
    }
    if (statusKv != null && statusKv.getLease() != 0) {
      leases.putIfAbsent(statusKv.getLease(), lease(AGENT_STATUS, statusKv.getLease()));
    }
    Lease worst = null;
    for (Lease l : leases.values()) {
      if (l != null && (worst == null || lateness(l) > lateness(worst))) {
        worst = l;
      }
    }

    List<String> issues = new ArrayList<>();
    String state;
    Long age = null;
    if (status == null) {
      state = owner != null ? "NO STATUS" : "DOWN";
      long configured = count(prefix + CONFIG);
      issues.add(
          owner != null
              ? "claimed but no agent status published"
              : "no agent"
                  + (configured > 0 ? " (" + configured + " configuration key(s) wait)" : ""));
    } else {
      state = status.path("state").asText("INIT");
      if (!state.equals("OK")) {
        issues.add("agent state " + state);
      }
      String last = status.path("last_update").asText("");
      try {
        age = Math.max(0, now.getEpochSecond() - Long.parseLong(last));
      } catch (NumberFormatException e) {
        age = null;
      }
      if (statusKv.getLease() == 0) {
        // written without a lease (a vpp-agent, which rewrites it every 10 s): judged by its age
        if (age == null) {
          issues.add("agent status without last_update");
        } else if (age > staleAfter.toSeconds()) {
          issues.add("stale: last status " + age + " s ago");
          state = state + " (STALE)";
        }
      }
      if (owner == null) {
        issues.add("label not claimed");
      }
    }
    if (worst != null && worst.expired()) {
      issues.add("lease of " + worst.key() + " expired: the agent is gone");
      state = "DOWN";
    } else if (worst != null && worst.stale()) {
      issues.add(
          "lease of "
              + worst.key()
              + " not renewed for "
              + worst.notRenewedSeconds()
              + " s (TTL "
              + worst.ttlSeconds()
              + " s): the agent is stuck or cut off from etcd");
      state = state + " (STALE)";
    }
    for (String bad : List.of("FAILED", "INVALID")) {
      Integer n = values.get(bad);
      if (n != null && n > 0) {
        issues.add(n + " " + bad + " value(s)");
      }
    }
    String version =
        owner != null && owner.hasNonNull("version")
            ? owner.get("version").asText()
            : status != null ? status.path("build_version").asText("") : "";
    return new AgentRow(
        label, state, issues.isEmpty(), owner, version, age, worst, values, problems, issues);
  }

  private static long lateness(Lease l) {
    return l.expired() ? Long.MAX_VALUE : l.notRenewedSeconds();
  }

  /**
   * The lease {@code id} of {@code key} as etcd has it (a LeaseTimeToLive), or null when etcd does
   * not say (a user without the right to ask): the key's presence is all that is known then.
   */
  private Lease lease(String key, long id) throws Exception {
    LeaseTimeToLiveResponse r;
    try {
      r = EtcdClients.await(client.getLeaseClient().timeToLive(id, LeaseOption.DEFAULT), timeout);
    } catch (InterruptedException e) {
      throw e;
    } catch (Exception e) {
      return null;
    }
    return new Lease(key, id, r.getGrantedTTL(), r.getTTL());
  }

  private static void addProblems(List<JsonNode> out, JsonNode n, String key) {
    if (n == null || n.isNull()) {
      return;
    }
    if (n.isArray()) {
      n.forEach(out::add);
    } else if (n.isObject() && n.path("problems").isArray()) {
      n.get("problems").forEach(out::add);
    } else if (n.isObject() || n.isTextual()) {
      out.add(n);
    } else if (key != null) {
      out.add(JsonNodeFactory.instance.textNode(key));
    }
  }

  private KeyValue getKv(String key) throws Exception {
    List<KeyValue> kvs = EtcdClients.await(client.getKVClient().get(bytes(key)), timeout).getKvs();
    return kvs.isEmpty() ? null : kvs.get(0);
  }

  private Map<String, KeyValue> getPrefixKvs(String prefix) throws Exception {
    Map<String, KeyValue> out = new TreeMap<>();
    for (KeyValue kv :
        EtcdClients.await(
                client.getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).build()),
                timeout)
            .getKvs()) {
      out.put(text(kv.getKey()), kv);
    }
    return out;
  }

  private static String text(ByteSequence b) {
    return b.toString(StandardCharsets.UTF_8);
  }

  private Map<String, String> getPrefix(String prefix) throws Exception {
    Map<String, String> out = new TreeMap<>();
    for (KeyValue kv :
        EtcdClients.await(
                client.getKVClient().get(bytes(prefix), GetOption.builder().isPrefix(true).build()),
                timeout)
            .getKvs()) {
      out.put(
          kv.getKey().toString(StandardCharsets.UTF_8),
          kv.getValue().toString(StandardCharsets.UTF_8));
    }
    return out;
  }

  private long count(String prefix) throws Exception {
    return EtcdClients.await(
            client
                .getKVClient()
                .get(bytes(prefix), GetOption.builder().isPrefix(true).withCountOnly(true).build()),
            timeout)
        .getCount();
  }

  private static JsonNode parse(String json) {
    if (json == null) {
      return null;
    }
    try {
      return Json.MAPPER.readTree(json);
    } catch (IOException e) {
      return null;
    }
  }

  static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
