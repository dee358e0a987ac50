package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.testsupport.EtcdFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kvsctl fleet rollout} against a real etcd and real agents, each a process of its own
 * publishing its statuses: waves, an agent that fails or never answers stops the rollout and is
 * rolled back, the rest untouched; bad input is refused before anything is written.
 */
class KvsCtlFleetRolloutTest {
  private static final String IF = "config/mock/v1/interfaces/";
  private static final String BD = "config/mock/v1/bridge-domain/";
  private static final String FIB = "config/mock/v1/fib/bdx/mac/aa:bb:cc:00:00:01";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration START = Duration.ofSeconds(180);

  @TempDir static Path dir;
  private static EtcdFixture etcd;
  private static AgentProcesses agents;
  private static AgentProcesses patient;
  private static Process stopped;

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdFixture.startNew();
    agents = new AgentProcesses(etcd, dir, 10);
    for (String l : new String[] {"ra", "rb", "rc"}) {
      etcd.put("/vnf-agent/" + l + "/" + IF + "w1", "{\"name\":\"w1\",\"type\":\"TAP\"}");
      agents.start(l);
    }
    // ra alone has the bridge domain the FIB entry of a rollout needs
    etcd.put(
        "/vnf-agent/ra/" + BD + "bdx", "{\"name\":\"bdx\",\"interfaces\":[{\"name\":\"w1\"}]}");
    etcd.put("/vnf-agent/rd/" + IF + "w1", "{\"name\":\"w1\",\"type\":\"TAP\"}");
    // rd is stopped (SIGSTOP) by a test: its claim outlives the test
    patient = new AgentProcesses(etcd, Files.createDirectories(dir.resolve("rd")), 60);
    stopped = patient.start("rd");
    await()
        .atMost(START)
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () -> {
              for (String l : new String[] {"ra", "rb", "rc", "rd"}) {
                AgentProcesses in = l.equals("rd") ? patient : agents;
                assertThat(in.ready(l)).as(l + " ready; " + in.output()).isTrue();
              }
            });
    awaitState("ra", "w1", "CONFIGURED");
    awaitState("rc", "w1", "CONFIGURED");
  }

  @AfterAll
  static void stop() throws Exception {
    for (AgentProcesses a : new AgentProcesses[] {agents, patient}) {
      if (a != null) {
        a.close();
      }
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  private static void awaitState(String label, String name, String state) {
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              String s =
                  etcd.get("/vnf-agent/" + label + "/config-status/mock/v1/interfaces/" + name);
              assertThat(s).as(label + "/" + name).isNotNull();
              assertThat(JSON.readTree(s).get("state").asText()).isEqualTo(state);
            });
  }

  private static Path file(String name, String yaml) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, yaml);
    return f;
  }

  private static RunningAgent.Run rollout(String... args) {
    String[] all = new String[args.length + 4];
    all[0] = "fleet";
    all[1] = "rollout";
    all[2] = "--etcd";
    all[3] = etcd.endpoint();
    System.arraycopy(args, 0, all, 4, args.length);
    return RunningAgent.run(Map.of(), all);
  }

  private static JsonNode agentIn(JsonNode report, String label) {
    for (JsonNode a : report.get("agents")) {
      if (a.get("label").asText().equals(label)) {
        return a;
      }
    }
    throw new AssertionError("no agent " + label + " in " + report);
  }

  /** The modification revision of {@code key}, from etcdctl. */
  private static long modRevision(String key) throws Exception {
    JsonNode kvs = JSON.readTree(etcd.ctlChecked("get", key, "-w", "json")).path("kvs");
    return kvs.get(0).get("mod_revision").asLong();
  }

  @Test
  void changesEveryAgentInWavesOfOneTransactionEachAndWaitsForTheirStatuses() throws Exception {
    // w1 changes (its status stays CONFIGURED: the agent's applied revision says it took it)
    Path f =
        file(
            "waves.yaml",
            IF
                + "w1:\n  name: w1\n  type: TAP\n  enabled: true\n"
                + IF
                + "w2:\n  name: w2\n  type: TAP\n");
    RunningAgent.Run r =
        rollout(f.toString(), "--labels", "ra,rb,rc", "--max-unavailable", "2", "-o", "json");
    assertThat(r.exit()).as(r.out() + r.err()).isZero();
    JsonNode report = JSON.readTree(r.out());
    assertThat(report.get("ok").asBoolean()).isTrue();
    for (String l : new String[] {"ra", "rb", "rc"}) {
      JsonNode a = agentIn(report, l);
      assertThat(a.get("outcome").asText()).as(l).isEqualTo("CHANGED");
      assertThat(a.get("changed_values").asInt()).isEqualTo(2);
      assertThat(a.at("/states/" + IF.replace("/", "~1") + "w1").asText()).isEqualTo("CONFIGURED");
      assertThat(a.at("/states/" + IF.replace("/", "~1") + "w2").asText()).isEqualTo("CONFIGURED");
      assertThat(a.get("rollback").isNull()).isTrue();
      // both keys written in one transaction
      long rev = a.get("revision").asLong();
      assertThat(modRevision("/vnf-agent/" + l + "/" + IF + "w1")).isEqualTo(rev);
      assertThat(modRevision("/vnf-agent/" + l + "/" + IF + "w2")).isEqualTo(rev);
      assertThat(etcd.get("/vnf-agent/" + l + "/" + IF + "w1")).contains("\"enabled\":true");
      assertThat(etcd.get("/vnf-agent/" + l + "/config-status/mock/v1/interfaces/w2"))
          .contains("CONFIGURED");
    }
    // the third agent is written after the first wave took the change
    assertThat(agentIn(report, "rc").get("revision").asLong())
        .isGreaterThan(agentIn(report, "rb").get("revision").asLong());

    // the same again: nothing to write
    RunningAgent.Run again = rollout(f.toString(), "--labels", "ra,rb,rc");
    assertThat(again.exit()).as(again.out() + again.err()).isZero();
    assertThat(again.out()).contains("ra: UNCHANGED", "rb: UNCHANGED", "rc: UNCHANGED");
    assertThat(again.err()).contains("3 of 3 agent(s) took the change");
  }

  @Test
  void stopsAtTheFirstAgentThatDoesNotTakeTheChangeAndRollsBackWithTheAgentsDone()
      throws Exception {
    // the FIB entry waits (PENDING) for a bridge domain only ra has
    Path f =
        file(
            "fib.yaml",
            FIB
                + ":\n  phys_address: aa:bb:cc:00:00:01\n  bridge_domain: bdx\n"
                + "  outgoing_interface: w1\n"
                + IF
                + "w3:\n  name: w3\n  type: TAP\n");
    RunningAgent.Run r =
        rollout(
            f.toString(),
            "--labels",
            "ra,rb,rc",
            "--timeout",
            "6s",
            "--rollback-on-failure",
            "-o",
            "json");
    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
    JsonNode report = JSON.readTree(r.out());
    JsonNode ra = agentIn(report, "ra");
    assertThat(ra.get("outcome").asText()).isEqualTo("CHANGED");
    assertThat(ra.get("rollback").asText()).isEqualTo("ROLLED BACK");
    JsonNode rb = agentIn(report, "rb");
    assertThat(rb.get("outcome").asText()).isEqualTo("TIMED_OUT");
    assertThat(rb.at("/states/" + FIB.replace("/", "~1")).asText()).isEqualTo("PENDING");
    assertThat(rb.get("rollback").asText()).isEqualTo("ROLLED BACK");
    assertThat(agentIn(report, "rc").get("outcome").asText()).isEqualTo("NOT_STARTED");
    for (String l : new String[] {"ra", "rb", "rc"}) {
      assertThat(etcd.get("/vnf-agent/" + l + "/" + FIB)).as(l).isNull();
      assertThat(etcd.get("/vnf-agent/" + l + "/" + IF + "w3")).as(l).isNull();
    }
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> etcd.get("/vnf-agent/ra/config-status/mock/v1/interfaces/w3") == null);

    // PENDING accepted: every agent takes it
    RunningAgent.Run accepted =
        rollout(f.toString(), "--labels", "ra,rb,rc", "--accept", "PENDING", "--timeout", "30s");
    assertThat(accepted.exit()).as(accepted.out() + accepted.err()).isZero();
    assertThat(accepted.out()).contains("ra: CHANGED", "rb: CHANGED", "rc: CHANGED");
    assertThat(accepted.out()).contains("PENDING 1");
    for (String l : new String[] {"ra", "rb", "rc"}) {
      assertThat(etcd.get("/vnf-agent/" + l + "/" + FIB)).as(l).isNotNull();
    }
  }

  @Test
  void anInvalidValueFailsTheFirstAgentWhichIsRolledBackAndTheRestIsUntouched() {
    Path f;
    try {
      f = file("invalid.yaml", IF + "bad1:\n  name: bad1\n"); // no type: INVALID
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    RunningAgent.Run r = rollout(f.toString(), "--labels", "rb,ra,rc", "--timeout", "30s");
    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
    assertThat(r.out())
        .contains("rb: FAILED", IF + "bad1: INVALID", "ROLLED BACK")
        .contains("ra: NOT STARTED", "rc: NOT STARTED");
    assertThat(r.err()).contains("0 of 3 agent(s) took the change");
    for (String l : new String[] {"ra", "rb", "rc"}) {
      assertThat(etcd.get("/vnf-agent/" + l + "/" + IF + "bad1")).as(l).isNull();
    }
  }

  @Test
  void keysOfNoModelAndLabelsNoAgentHoldsAreRefusedBeforeAnythingIsWritten() throws Exception {
    Path f =
        file(
            "unknown.yaml",
            IF
                + "u1:\n  name: u1\n  type: TAP\n"
                + "config/nope/v1/things/x: {}\n"
                + "not/a/model: {}\n");
    RunningAgent.Run r = rollout(f.toString(), "--labels", "ra");
    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(5);
    assertThat(r.err()).contains("config/nope/v1/things/x", "not/a/model", "nothing written");
    assertThat(etcd.get("/vnf-agent/ra/" + IF + "u1")).isNull();

    Path good = file("good.yaml", IF + "u1:\n  name: u1\n  type: TAP\n");
    RunningAgent.Run ghosts = rollout(good.toString(), "--labels", "ra,ghost1,ghost2");
    assertThat(ghosts.exit()).as(ghosts.out() + ghosts.err()).isEqualTo(1);
    assertThat(ghosts.err()).contains("ghost1, ghost2", "nothing written");
    assertThat(etcd.get("/vnf-agent/ra/" + IF + "u1")).isNull();

    RunningAgent.Run badLabel = rollout(good.toString(), "--labels", "a/b");
    assertThat(badLabel.exit()).isEqualTo(2);
    assertThat(badLabel.err()).contains("'a/b'");
    RunningAgent.Run none = rollout(good.toString());
    assertThat(none.exit()).isEqualTo(2);
  }

  @Test
  void anAgentThatNeverAnswersIsTimedOutAndRolledBackAndTheRestUntouched() throws Exception {
    Path f = file("silent.yaml", IF + "s1:\n  name: s1\n  type: TAP\n");
    AgentProcesses.signal(stopped, "STOP");
    try {
      Map<String, String> before = new HashMap<>(etcd.getPrefix("/vnf-agent/ra/config/"));
      RunningAgent.Run r = rollout(f.toString(), "--labels", "rd,ra", "--timeout", "3s");
      assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(1);
      assertThat(r.out())
          .as(r.err())
          .contains("rd: TIMED OUT", "no answer within 3 s", "ROLLED BACK")
          .contains("ra: NOT STARTED - not started: the rollout stopped at rd");
      assertThat(etcd.get("/vnf-agent/rd/" + IF + "s1")).isNull();
      assertThat(etcd.getPrefix("/vnf-agent/ra/config/")).isEqualTo(before);
    } finally {
      AgentProcesses.signal(stopped, "CONT");
    }
  }
}
