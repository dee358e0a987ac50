package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rejected and ignored northbound input as state, over real HTTP: {@code GET /northbound/problems}
 * lists what is wrong now (source, file or key, line and column, message, since), {@code
 * /scheduler/status} says which values are kept from before a rejected edit, and the {@code
 * kvs_northbound_problems} gauge counts them by source.
 */
class NorthboundProblemsTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String TAP2 = "config/mock/v1/interfaces/tap2";
  static final Duration TIMEOUT = Duration.ofSeconds(20);

  @TempDir Path dir;
  Agent agent;
  RawHttpClient http;

  @AfterEach
  void close() {
    if (http != null) {
      http.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  void start() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder()
                .configDir(dir)
                .restAddress("127.0.0.1:0")
                .fileSettleTime(Duration.ZERO)
                .printTxnSummary(false)
                .build());
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    http = new RawHttpClient(port);
  }

  RawHttpClient.Answer get(String target) throws Exception {
    return http.send("GET", target, Map.of(), new byte[0]);
  }

  JsonNode problems() throws Exception {
    RawHttpClient.Answer a = get("/northbound/problems");
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    assertThat(a.header("Content-Type")).startsWith("application/json");
    return JSON.readTree(a.body());
  }

  /** The problems by file (or key). */
  Map<String, JsonNode> bySubject() throws Exception {
    Map<String, JsonNode> m = new LinkedHashMap<>();
    problems()
        .forEach(p -> m.put(p.has("file") ? p.get("file").asText() : p.path("key").asText(), p));
    return m;
  }

  static String tap(String name) {
    return "config/mock/v1/interfaces/" + name + ": {name: " + name + ", type: TAP}\n";
  }

  @Test
  @DisplayName("all well: GET /northbound/problems answers [] and the gauge is 0")
  void emptyWhenAllIsWell() throws Exception {
    Files.writeString(dir.resolve("good.yaml"), tap("tap1"));
    start();
    RawHttpClient.Answer a = get("/northbound/problems");
    assertThat(a.status()).isEqualTo(200);
    assertThat(a.text().strip()).isEqualTo("[]");
    assertThat(get("/metrics").text()).contains("kvs_northbound_problems{source=\"file\"} 0.0");
  }

  @Test
  @DisplayName(
      "a malformed file (with line and column), a duplicate key across files, a loop of links and"
          + " a dangling link (whatever their names) are listed with source, file, message and"
          + " since; the gauge counts them; fixing them clears them")
  void fileProblemsAreListed() throws Exception {
    Files.writeString(dir.resolve("a-good.yaml"), tap("tap1"));
    Files.writeString(
        dir.resolve("bad.yaml"), "config/mock/v1/interfaces/tap2:\n  name: tap2\n  type: [TAP\n");
    Files.writeString(dir.resolve("dup.yaml"), tap("tap1"));
    Files.createSymbolicLink(dir.resolve("loop"), Path.of("loop"));
    Files.createSymbolicLink(dir.resolve("configs"), Path.of("missing-dir"));
    Instant before = Instant.now().minusSeconds(1);
    start();

    Map<String, JsonNode> p = bySubject();
    assertThat(p).containsOnlyKeys("bad.yaml", "dup.yaml", "loop", "configs");
    p.values()
        .forEach(
            x -> {
              assertThat(x.get("source").asText()).isEqualTo("file");
              assertThat(Instant.parse(x.get("since").asText())).isAfter(before);
            });
    JsonNode bad = p.get("bad.yaml");
    assertThat(bad.get("line").asInt()).isBetween(3, 4);
    assertThat(bad.has("column")).isTrue();
    assertThat(bad.get("message").asText()).contains("none of its values are applied");
    JsonNode dup = p.get("dup.yaml");
    assertThat(dup.get("line").asInt()).isEqualTo(1);
    assertThat(dup.get("message").asText()).contains(TAP1, "a-good.yaml");
    assertThat(p.get("loop").get("message").asText()).contains("loop");
    assertThat(p.get("loop").has("line")).isFalse();
    assertThat(p.get("configs").get("message").asText()).contains("dangling", "missing-dir");
    assertThat(get("/metrics").text()).contains("kvs_northbound_problems{source=\"file\"} 4.0");

    // fixed: each problem goes
    Files.writeString(dir.resolve("bad.yaml"), tap("tap2"));
    Files.delete(dir.resolve("dup.yaml"));
    Files.delete(dir.resolve("loop"));
    Files.delete(dir.resolve("configs"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(problems()).isEmpty());
    assertThat(agent.northbound().desired()).containsKeys(TAP1, TAP2);
    assertThat(get("/metrics").text()).contains("kvs_northbound_problems{source=\"file\"} 0.0");
  }

  @Test
  @DisplayName(
      "a value kept from before a bad edit says so: its status detail names the rejected edit, and"
          + " the problem says that a restart would apply none of that file's values")
  void keptValueSaysSo() throws Exception {
    Path file = dir.resolve("ifaces.yaml");
    Files.writeString(file, tap("tap1") + tap("tap2"));
    start();
    assertThat(problems()).isEmpty();
    RawHttpClient.Answer st = get("/scheduler/status?key=" + TAP1);
    assertThat(JSON.readTree(st.body()).get("value").has("details")).isFalse();

    Files.writeString(file, tap("tap1") + "config/mock/v1/interfaces/tap2: {name: tap2, type: [\n");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(bySubject()).containsKey("ifaces.yaml"));
    JsonNode p = bySubject().get("ifaces.yaml");
    assertThat(p.get("message").asText())
        .contains("stay applied", "a restart would apply none of this file's values");
    assertThat(p.get("kept_values").asInt()).isEqualTo(2);
    // the values from before the edit are still applied
    assertThat(agent.northbound().desired()).containsKeys(TAP1, TAP2);

    JsonNode one = JSON.readTree(get("/scheduler/status?key=" + TAP1).body()).get("value");
    assertThat(one.get("state").asText()).isEqualTo("CONFIGURED");
    assertThat(one.get("details").get(0).asText())
        .contains("kept from before the rejected edit of file ifaces.yaml", "restart");
    // and in the list agentctl values reads
    List<String> details = new ArrayList<>();
    JSON.readTree(get("/scheduler/status?key=&key-prefix=").body())
        .forEach(
            s -> {
              if (s.get("value").get("key").asText().equals(TAP2)) {
                s.get("value").get("details").forEach(d -> details.add(d.asText()));
              }
            });
    assertThat(details).anySatisfy(d -> assertThat(d).contains("ifaces.yaml"));

    Files.writeString(file, tap("tap1") + tap("tap2"));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(problems()).isEmpty());
    assertThat(
            JSON.readTree(get("/scheduler/status?key=" + TAP1).body()).get("value").has("details"))
        .isFalse();
  }

  @Test
  @DisplayName(
      "a refused PUT /configuration is listed as a problem of source rest until a PUT is"
          + " accepted")
  void restRejectionIsListed() throws Exception {
    start();
    RawHttpClient.Answer refused =
        http.send(
            "PUT",
            "/configuration",
            "application/yaml",
            "mockConfig:\n  Interface_list:\n  - name: [x\n".getBytes(StandardCharsets.UTF_8));
    assertThat(refused.status()).isEqualTo(400);
    JsonNode p = problems();
    assertThat(p).hasSize(1);
    assertThat(p.get(0).get("source").asText()).isEqualTo("rest");
    assertThat(p.get(0).get("message").asText()).contains("PUT /configuration", "nothing");
    assertThat(get("/metrics").text()).contains("kvs_northbound_problems{source=\"rest\"} 1.0");

    RawHttpClient.Answer ok =
        http.send(
            "PUT",
            "/configuration",
            "application/yaml",
            "mockConfig:\n  Interface_list:\n  - name: tap9\n    type: TAP\n"
                .getBytes(StandardCharsets.UTF_8));
    assertThat(ok.status()).as(ok.text()).isEqualTo(200);
    assertThat(problems()).isEmpty();
  }
}
