package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.mockcalls.MockIfaceHandler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code PUT /configuration?dry-run} and {@code GET /scheduler/drift} over real HTTP against a
 * running agent with the mock plugins and a state store: the plan is answered in execution order
 * with predicted states, and nothing is applied, recorded or stored.
 */
class DryRunRestTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String IF = "config/mock/v1/interfaces/";
  static final String BD = "config/mock/v1/bridge-domain/";
  static final String FIB = "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10";

  @TempDir Path dir;
  MockAgentPlugin mock;
  Agent agent;
  KVScheduler kvs;
  RawHttpClient http;

  @BeforeEach
  void start() throws Exception {
    mock = new MockAgentPlugin();
    agent =
        Agent.start(
            AgentConfig.builder()
                .restAddress("127.0.0.1:0")
                .stateDir(dir.resolve("state"))
                .printTxnSummary(false)
                .build(),
            List.of(mock));
    kvs = agent.scheduler();
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    http = new RawHttpClient(port);
  }

  @AfterEach
  void stop() {
    if (http != null) {
      http.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  RawHttpClient.Answer put(String query, String yaml) throws Exception {
    return http.send(
        "PUT",
        "/configuration" + query,
        Map.of("Content-Type", "application/yaml"),
        yaml.getBytes(StandardCharsets.UTF_8));
  }

  RawHttpClient.Answer get(String target) throws Exception {
    return http.send("GET", target, Map.of(), new byte[0]);
  }

  /** What a dry run must leave as it is: history, statuses, configuration, the state store. */
  String observed() throws Exception {
    Path store = dir.resolve("state");
    List<String> files = new ArrayList<>();
    if (Files.exists(store)) {
      try (var walk = Files.walk(store)) {
        for (Path p : walk.filter(Files::isRegularFile).sorted().toList()) {
          files.add(p + " " + Files.size(p) + " " + Files.getLastModifiedTime(p));
        }
      }
    }
    return get("/scheduler/txn-history").text()
        + get("/scheduler/status").text()
        + get("/configuration").text()
        + mock.plugins().interfaces().southbound().dumpInterfaces()
        + files;
  }

  static String tap(String name) {
    return IF + name + ": {name: " + name + ", type: TAP, enabled: true}\n";
  }

  /** The operations as "OPERATION key STATE [details]". */
  static List<String> ops(JsonNode plan) {
    List<String> out = new ArrayList<>();
    for (JsonNode op : plan.path("operations")) {
      StringBuilder b =
          new StringBuilder(op.path("operation").asText())
              .append(' ')
              .append(op.path("key").asText())
              .append(' ')
              .append(op.path("state").asText());
      if (op.has("details")) {
        b.append(' ').append(op.get("details"));
      }
      out.add(b.toString());
    }
    return out;
  }

  @Test
  @DisplayName(
      "PUT /configuration?dry-run answers 200 with the ordered plan (PENDING with what it waits"
          + " for, INVALID with its error) and applies, records and stores nothing")
  void dryRunPlansWithoutApplying() throws Exception {
    assertThat(put("", tap("tap0")).status()).isEqualTo(200);
    String before = observed();
    String yaml =
        tap("tap1")
            + IF
            + "notype: {name: notype}\n"
            + FIB
            + ": {physAddress: \"aa:bb:cc:00:00:10\", bridge_domain: bd1,"
            + " outgoing_interface: tap1, action: FORWARD}\n";
    RawHttpClient.Answer a = put("?dry-run", yaml);
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    assertThat(a.header("Content-Type")).startsWith("application/json");
    JsonNode plan = JSON.readTree(a.body());
    assertThat(ops(plan))
        .containsExactly(
            "CREATE " + FIB + " PENDING [\"bridged-interface\"]",
            "CREATE " + IF + "notype INVALID [\"type\"]",
            "CREATE " + IF + "tap1 CONFIGURED");
    JsonNode invalid = plan.path("operations").get(1);
    assertThat(invalid.path("error").asText()).contains("type");
    assertThat(plan.path("operations").get(2).path("value").path("name").asText())
        .isEqualTo("tap1");
    assertThat(observed()).as("nothing applied, recorded or stored").isEqualTo(before);
    assertThat(kvs.valueStatus(IF + "tap1").state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  @DisplayName(
      "PUT /configuration?replace&dry-run plans the resync of the source: what it drops is"
          + " deleted, what it keeps makes no operation; nothing changes")
  void dryRunReplace() throws Exception {
    assertThat(put("", tap("tap1") + tap("tap2")).status()).isEqualTo(200);
    String before = observed();
    RawHttpClient.Answer a = put("?replace&dry-run=true", tap("tap2") + tap("tap3"));
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    assertThat(ops(JSON.readTree(a.body())))
        .containsExactly("DELETE " + IF + "tap1 REMOVED", "CREATE " + IF + "tap3 CONFIGURED");
    assertThat(observed()).isEqualTo(before);
    // without dry-run the same request applies: what was planned is what is done
    assertThat(put("?replace", tap("tap2") + tap("tap3")).status()).isEqualTo(200);
    assertThat(kvs.valueStatus(IF + "tap3").state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(IF + "tap1").state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  @DisplayName(
      "dry-run with confirm-within, or a bad dry-run value: 400 naming the parameter, nothing"
          + " applied; a dry run of a body that cannot be read is no northbound problem")
  void badDryRuns() throws Exception {
    String before = observed();
    RawHttpClient.Answer a = put("?dry-run&confirm-within=30s", tap("tap1"));
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.text()).contains("confirm-within");
    a = put("?dry-run=maybe", tap("tap1"));
    assertThat(a.status()).isEqualTo(400);
    assertThat(a.text()).contains("dry-run");
    a = put("?dry-run", IF + "tap1: {name: [tap1\n");
    assertThat(a.status()).isEqualTo(400);
    assertThat(get("/northbound/problems").text().strip()).isEqualTo("[]");
    assertThat(observed()).isEqualTo(before);
  }

  @Test
  @DisplayName(
      "GET /scheduler/drift: false when the southbound holds the intent; true with the"
          + " correcting operation when it drifted; changes nothing; a downstream resync ends it")
  void drift() throws Exception {
    assertThat(put("", tap("tap1") + tap("tap2")).status()).isEqualTo(200);
    JsonNode none = JSON.readTree(get("/scheduler/drift").body());
    assertThat(none.path("drift").asBoolean()).as(none.toString()).isFalse();
    assertThat(ops(none)).isEmpty();

    MockIfaceHandler sb = mock.plugins().interfaces().southbound();
    int handle =
        sb.dumpInterfaces().entrySet().stream()
            .filter(e -> e.getValue().name().equals("tap1"))
            .findFirst()
            .orElseThrow()
            .getKey();
    sb.interfaceAdminDown(handle); // behind the agent's back
    String before = observed();
    RawHttpClient.Answer a = get("/scheduler/drift");
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    JsonNode drift = JSON.readTree(a.body());
    assertThat(drift.path("drift").asBoolean()).as(drift.toString()).isTrue();
    assertThat(ops(drift)).containsExactly("UPDATE " + IF + "tap1 CONFIGURED");
    assertThat(drift.fieldNames().next()).isEqualTo("drift");
    assertThat(observed()).as("the drift changed nothing").isEqualTo(before);
    assertThat(sb.dumpInterfaces().get(handle).enabled()).isFalse();

    assertThat(http.send("POST", "/scheduler/downstream-resync", Map.of(), new byte[0]).status())
        .isEqualTo(200);
    assertThat(JSON.readTree(get("/scheduler/drift").body()).path("drift").asBoolean()).isFalse();
    assertThat(sb.dumpInterfaces().get(handle).enabled()).isTrue();
  }
}
