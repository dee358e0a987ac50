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
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

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

    // fixed or deleted: cleared, and the etcd key goes when none is left
    etcd.put(p + IF + "tap1", tap("tap1", true));
    etcd.del(p + IF + "bad");
    etcd.del(p + "config/nosuch/v1/thing/x");
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(agent.problems().list()).isEmpty());
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(etcd.get(p + PROBLEMS)).isNull());
  }
}
