package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.NorthboundProblems;
import io.kvscheduler.api.ValueState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rejected etcd values as northbound problems: a malformed value and a value of no model are
 * listed, a value kept from before a bad update says so, and with status publishing the list is
 * written to etcd under the agent's status ({@code check/status/v1/northbound-problems}).
 */
class EtcdProblemsTest extends SharedEtcdTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String PROBLEMS = "check/status/v1/northbound-problems";

  static Map<String, NorthboundProblems.Problem> byKey(Agent a) {
    Map<String, NorthboundProblems.Problem> m = new TreeMap<>();
    a.problems().list().forEach(p -> m.put(p.subject(), p));
    return m;
  }

  @Test
  void malformedAndUnknownValuesAreListedAndPublished() throws Exception {
    String p = prefix("pb1");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    etcd.put(p + IF + "bad", "{\"name\": \"bad\", \"type\": ");
    etcd.put(p + "config/nosuch/v1/thing/x", "{\"name\": \"x\"}");
    Agent agent = agents.start("pb1", true);
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> assertThat(byKey(agent)).containsKeys(IF + "bad", "config/nosuch/v1/thing/x"));
    assertThat(byKey(agent)).hasSize(2);
    assertThat(byKey(agent).get("config/nosuch/v1/thing/x").message())
        .contains("no registered model");
    assertThat(agent.problems().count("etcd")).isEqualTo(2);
    NorthboundProblems.Problem bad = byKey(agent).get(IF + "bad");
    assertThat(bad.source()).isEqualTo("etcd");
    assertThat(bad.key()).isEqualTo(IF + "bad");
    assertThat(bad.message()).contains("not applied");

    // published with the status
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              String v = etcd.get(p + PROBLEMS);
              assertThat(v).isNotNull();
              JsonNode list = JSON.readTree(v);
              assertThat(list.isArray()).isTrue();
              assertThat(list.toString())
                  .contains(IF + "bad", "config/nosuch/v1/thing/x", "\"source\":\"etcd\"");
            });

    // a bad update keeps the value accepted before, and says a restart would not apply it
    etcd.put(p + IF + "tap1", "{\"name\": \"tap1\", \"nosuchfield\": 1}");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(byKey(agent)).containsKey(IF + "tap1"));
    assertThat(byKey(agent).get(IF + "tap1").message()).contains("stays applied", "restart");
    assertThat(agent.problems().note(IF + "tap1")).contains("kept from before", "restart");
    assertThat(agent.scheduler().valueStatus(IF + "tap1").value().state())
        .isEqualTo(ValueState.CONFIGURED);
    // the published status carries the same detail as the REST status
    String status = p + "config-status/mock/v1/interfaces/tap1";
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(details(etcd.get(status)))
                    .containsExactly(agent.problems().note(IF + "tap1")));

    // fixed or deleted: cleared, and the etcd key goes when none is left
    etcd.put(p + IF + "tap1", tap("tap1", true));
    etcd.del(p + IF + "bad");
    etcd.del(p + "config/nosuch/v1/thing/x");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(agent.problems().list()).isEmpty());
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(etcd.get(p + PROBLEMS)).isNull());
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(details(etcd.get(status))).isEmpty());
    assertThat(JSON.readTree(etcd.get(status)).get("state").asText()).isEqualTo("CONFIGURED");
  }

  /** The {@code details} of a published status (none when it has none). */
  static List<String> details(String status) throws Exception {
    assertThat(status).isNotNull();
    List<String> out = new ArrayList<>();
    JSON.readTree(status).path("details").forEach(d -> out.add(d.asText()));
    return out;
  }

  @Test
  @DisplayName(
      "a value of the config directory kept from before a rejected edit: its status published to"
          + " etcd names the rejected edit as the REST status does, and no longer once it is"
          + " fixed")
  void keptFileValueIsPublishedWithItsDetail(@TempDir Path dir) throws Exception {
    String p = prefix("pb2");
    Path file = dir.resolve("ifaces.yaml");
    Files.writeString(file, fileTap("tap1") + fileTap("tap2"));
    try (Agent agent =
        Agent.start(
            AgentConfig.builder()
                .label("pb2")
                .restAddress(null)
                .configDir(dir)
                .fileSettleTime(Duration.ZERO)
                .etcdEndpoints(List.of(etcd.endpoint()))
                .statusPublishing(true)
                .printTxnSummary(false)
                .build())) {
      awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
      String status = p + "config-status/mock/v1/interfaces/tap2";
      await()
          .atMost(TIMEOUT)
          .untilAsserted(() -> assertThat(etcd.get(status)).contains("CONFIGURED"));
      assertThat(details(etcd.get(status))).isEmpty();

      Files.writeString(file, fileTap("tap1") + IF + "tap2: {name: tap2, type: [\n");
      await()
          .atMost(TIMEOUT)
          .untilAsserted(() -> assertThat(agent.problems().note(IF + "tap2")).isNotNull());
      String note = agent.problems().note(IF + "tap2");
      assertThat(note).contains("kept from before the rejected edit of file ifaces.yaml");
      for (String name : List.of("tap1", "tap2")) {
        await()
            .atMost(TIMEOUT)
            .untilAsserted(
                () ->
                    assertThat(details(etcd.get(p + "config-status/mock/v1/interfaces/" + name)))
                        .containsExactly(note));
      }
      JsonNode published = JSON.readTree(etcd.get(status));
      assertThat(published.get("state").asText()).isEqualTo("CONFIGURED");
      assertThat(published.get("key").asText()).isEqualTo(IF + "tap2");

      Files.writeString(file, fileTap("tap1") + fileTap("tap2"));
      await().atMost(TIMEOUT).untilAsserted(() -> assertThat(details(etcd.get(status))).isEmpty());
      assertThat(agent.problems().list()).isEmpty();
    }
  }

  static String fileTap(String name) {
    return IF + name + ": {name: " + name + ", type: TAP}\n";
  }
}
