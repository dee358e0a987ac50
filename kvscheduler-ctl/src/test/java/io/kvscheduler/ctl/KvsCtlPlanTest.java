package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.mockcalls.MockIfaceHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvsctl config put --dry-run} and {@code kvsctl drift} against a real agent. */
class KvsCtlPlanTest {
  static final String IF = "config/mock/v1/interfaces/";
  static final String CONFIG =
      """
      config/mock/v1/interfaces/tap7: {name: tap7, type: TAP, enabled: true}
      config/mock/v1/interfaces/bad7: {name: bad7}
      """;

  @TempDir Path dir;
  RunningAgent agent;

  @AfterEach
  void close() {
    if (agent != null) {
      agent.close();
    }
  }

  Path file(String name, String text) throws Exception {
    Path p = dir.resolve(name);
    Files.writeString(p, text);
    return p;
  }

  @Test
  void configPutDryRunPrintsThePlanAndAppliesNothing() throws Exception {
    agent = RunningAgent.start();
    int history = agent.agent.scheduler().transactionHistory().size();
    String f = file("c.yaml", CONFIG).toString();
    var table = agent.ctl("config", "put", f, "--dry-run");
    assertThat(table.exit()).as(table.err()).isEqualTo(0);
    assertThat(table.out().lines())
        .first()
        .asString()
        .contains("#", "OPERATION", "KEY", "STATE", "DETAILS");
    assertThat(table.out())
        .containsPattern("1 +CREATE +" + IF + "bad7 +INVALID +\\S.*type")
        .containsPattern("2 +CREATE +" + IF + "tap7 +CONFIGURED");
    assertThat(table.err()).contains("nothing was applied");

    var json = agent.ctl("config", "put", f, "--dry-run", "-o", "json");
    assertThat(json.exit()).as(json.err()).isEqualTo(0);
    JsonNode plan = new ObjectMapper().readTree(json.out());
    assertThat(plan.path("operations").size()).isEqualTo(2);
    assertThat(plan.path("operations").get(1).path("state").asText()).isEqualTo("CONFIGURED");

    assertThat(agent.agent.scheduler().valueStatus(IF + "tap7").state())
        .isEqualTo(ValueState.NONEXISTENT);
    assertThat(agent.agent.scheduler().transactionHistory()).hasSize(history);

    var etcd = agent.ctl("config", "put", f, "--dry-run", "--etcd", "127.0.0.1:1");
    assertThat(etcd.exit()).isEqualTo(2);
    assertThat(etcd.err()).contains("--dry-run");
  }

  @Test
  void driftExitsZeroTwoOrOne() throws Exception {
    agent = RunningAgent.start();
    var put =
        agent.ctl(
            "config", "put", file("c.yaml", IF + "tap7: {name: tap7, type: TAP}\n").toString());
    assertThat(put.exit()).as(put.err()).isEqualTo(0);

    var none = agent.ctl("drift");
    assertThat(none.exit()).as(none.out() + none.err()).isEqualTo(0);
    assertThat(none.out()).contains("no drift");

    MockIfaceHandler sb =
        agent.agent.plugins().stream()
            .filter(MockAgentPlugin.class::isInstance)
            .map(MockAgentPlugin.class::cast)
            .findFirst()
            .orElseThrow()
            .plugins()
            .interfaces()
            .southbound();
    int handle =
        sb.dumpInterfaces().entrySet().stream()
            .filter(e -> e.getValue().name().equals("tap7"))
            .findFirst()
            .orElseThrow()
            .getKey();
    sb.deleteTapInterface(handle); // behind the agent's back
    var drift = agent.ctl("drift");
    assertThat(drift.exit()).as(drift.out() + drift.err()).isEqualTo(2);
    assertThat(drift.out()).contains("drift:").containsPattern("CREATE +" + IF + "tap7");
    var json = agent.ctl("drift", "-o", "json");
    assertThat(json.exit()).isEqualTo(2);
    assertThat(new ObjectMapper().readTree(json.out()).path("drift").asBoolean()).isTrue();
    assertThat(sb.dumpInterfaces().values()) // changed nothing
        .noneMatch(i -> i.name().equals("tap7"));

    assertThat(agent.ctl("resync").exit()).isEqualTo(0);
    assertThat(agent.ctl("drift").exit()).isEqualTo(0);

    assertThat(agent.ctl("drift", "-o", "nonsense").exit()).as("a bad option").isEqualTo(1);
    var unreachable =
        RunningAgent.run(java.util.Map.of("KVS_AGENT", "http://127.0.0.1:1"), "drift");
    assertThat(unreachable.exit()).as(unreachable.err()).isEqualTo(1);
  }
}
