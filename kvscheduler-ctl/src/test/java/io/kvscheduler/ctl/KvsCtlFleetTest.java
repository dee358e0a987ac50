package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.testsupport.EtcdFixture;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code kvsctl fleet} against a real etcd with real agents (in this JVM, and as processes of their
 * own) publishing.
 */
class KvsCtlFleetTest {
  private static final String IF = "config/mock/v1/interfaces/";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(20);

  private static EtcdFixture etcd;
  private static final List<Agent> agents = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdFixture.startNew();
  }

  @AfterAll
  static void stop() throws Exception {
    agents.forEach(Agent::close);
    etcd.close();
  }

  private static Agent agent(String label) throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .label(label)
                .restAddress(null)
                .etcdEndpoints(List.of(etcd.endpoint()))
                .statusPublishing(true)
                .printTxnSummary(false)
                .build());
    agents.add(a);
    return a;
  }

  private static String tap(String name) {
    return "{\"name\":\"" + name + "\",\"type\":\"TAP\"}";
  }

  private static void awaitStatus(String label, String name, String state) {
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              String s =
                  etcd.get("/vnf-agent/" + label + "/config-status/mock/v1/interfaces/" + name);
              assertThat(s).as(label + "/" + name).isNotNull();
              assertThat(JSON.readTree(s).get("state").asText()).isEqualTo(state);
            });
  }

  private static JsonNode agentIn(JsonNode view, String label) {
    for (JsonNode a : view.get("agents")) {
      if (a.get("label").asText().equals(label)) {
        return a;
      }
    }
    throw new AssertionError("no agent " + label + " in " + view);
  }

  @Test
  void listsEveryAgentAsTableAndJsonAndExitsWith1WhileOneHasAnInvalidValue() throws Exception {
    etcd.put("/vnf-agent/fa/" + IF + "tap1", tap("tap1"));
    etcd.put("/vnf-agent/fa/" + IF + "tap2", tap("tap2"));
    etcd.put("/vnf-agent/fb/" + IF + "tap1", tap("tap1"));
    etcd.put("/vnf-agent/fb/" + IF + "bad", "{\"name\":\"bad\"}"); // no type: INVALID
    Agent a = agent("fa");
    Agent b = agent("fb");
    awaitStatus("fa", "tap2", "CONFIGURED");
    awaitStatus("fb", "tap1", "CONFIGURED");
    awaitStatus("fb", "bad", "INVALID");
    await().atMost(TIMEOUT).until(() -> etcd.get("/vnf-agent/fb/check/status/v1/agent") != null);

    RunningAgent.Run json =
        RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "-o", "json");
    assertThat(json.exit()).as(json.err()).isEqualTo(1);
    JsonNode view = JSON.readTree(json.out());
    assertThat(view.get("ok").asBoolean()).isFalse();
    JsonNode fa = agentIn(view, "fa");
    assertThat(fa.get("state").asText()).isEqualTo("OK");
    assertThat(fa.get("ok").asBoolean()).isTrue();
    assertThat(fa.at("/owner/pid").asLong()).isEqualTo(ProcessHandle.current().pid());
    assertThat(fa.at("/owner/host").asText()).isNotBlank();
    assertThat(fa.get("version").asText()).isNotBlank();
    assertThat(fa.get("last_status_age_seconds").asLong()).isBetween(0L, 15L);
    assertThat(fa.get("values").toString()).isEqualTo("{\"CONFIGURED\":2}");
    assertThat(fa.get("northbound_problems").size()).isZero();
    assertThat(fa.get("issues").size()).isZero();
    JsonNode fb = agentIn(view, "fb");
    assertThat(fb.get("ok").asBoolean()).isFalse();
    assertThat(fb.at("/values/INVALID").asInt()).isEqualTo(1);
    assertThat(fb.at("/values/CONFIGURED").asInt()).isEqualTo(1);
    assertThat(fb.get("issues").toString()).contains("1 INVALID value(s)");

    // the table, with the endpoints from the environment
    RunningAgent.Run table = RunningAgent.run(Map.of("ETCD_ENDPOINTS", etcd.endpoint()), "fleet");
    assertThat(table.exit()).as(table.err()).isEqualTo(1);
    List<String> lines = table.out().lines().toList();
    assertThat(lines.get(0))
        .startsWith("LABEL")
        .contains("STATE", "OWNER", "VERSION", "LAST STATUS", "VALUES", "NB PROBLEMS", "ISSUES");
    assertThat(lines)
        .anyMatch(
            l ->
                l.startsWith("fa ")
                    && l.contains(" OK ")
                    && l.contains(" pid " + ProcessHandle.current().pid())
                    && l.contains("CONFIGURED 2"));
    assertThat(lines).anyMatch(l -> l.startsWith("fb ") && l.contains("INVALID 1"));

    // fixed: every agent is well, exit 0
    etcd.del("/vnf-agent/fb/" + IF + "bad");
    await()
        .atMost(TIMEOUT)
        .until(() -> etcd.get("/vnf-agent/fb/config-status/mock/v1/interfaces/bad") == null);
    RunningAgent.Run fine = RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint());
    assertThat(fine.exit()).as(fine.out() + fine.err()).isZero();

    // an agent that stops leaves configuration nobody applies: DOWN, exit 1
    b.close();
    agents.remove(b);
    await().atMost(TIMEOUT).until(() -> etcd.get("/vnf-agent/fb/owner") == null);
    RunningAgent.Run down =
        RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "-o", "json");
    assertThat(down.exit()).isEqualTo(1);
    JsonNode gone = agentIn(JSON.readTree(down.out()), "fb");
    assertThat(gone.get("state").asText()).isEqualTo("DOWN");
    assertThat(gone.get("owner").isNull()).isTrue();
    assertThat(gone.get("issues").toString()).contains("no agent (1 configuration key(s) wait)");
    assertThat(agentIn(JSON.readTree(down.out()), "fa").get("ok").asBoolean()).isTrue();
    etcd.del("/vnf-agent/fb/" + IF + "tap1");
    assertThat(a.config().label()).isEqualTo("fa");
  }

  /** {@code kvsctl fleet -o json}: the view of {@code label}, and the exit code. */
  private static JsonNode fleetOf(String label, int[] exit) throws Exception {
    RunningAgent.Run r =
        RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "-o", "json");
    exit[0] = r.exit();
    assertThat(r.exit()).as(r.err()).isIn(0, 1);
    return agentIn(JSON.readTree(r.out()), label);
  }

  @Test
  void anAgentAtRestIsToldAliveByItsLeaseAndAStuckOrKilledOneIsNot(@TempDir Path dir)
      throws Exception {
    int ttl = 12;
    try (AgentProcesses procs = new AgentProcesses(etcd, dir, ttl)) {
      etcd.put("/vnf-agent/fk/" + IF + "tap1", tap("tap1"));
      Process agent = procs.start("fk");
      await()
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(500))
          .untilAsserted(() -> assertThat(procs.ready("fk")).as(procs.output()).isTrue());
      awaitStatus("fk", "tap1", "CONFIGURED");

      // at rest for longer than the TTL: the agent rewrites nothing, its lease says it is alive
      Thread.sleep((ttl + 2) * 1000L);
      int[] exit = new int[1];
      JsonNode rest = fleetOf("fk", exit);
      assertThat(rest.get("ok").asBoolean()).as(rest.toString()).isTrue();
      assertThat(rest.get("state").asText()).isEqualTo("OK");
      assertThat(rest.get("last_status_age_seconds").asLong()).isGreaterThanOrEqualTo(ttl);
      assertThat(rest.at("/lease/ttl_seconds").asLong()).isEqualTo(ttl);
      assertThat(rest.at("/lease/not_renewed_seconds").asLong())
          .isLessThanOrEqualTo(ttl * 2 / 3 + 1);
      assertThat(rest.at("/lease/key").asText()).isIn("owner", "check/status/v1/agent");
      RunningAgent.Run table = RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint());
      assertThat(table.out().lines().findFirst().orElse("")).contains("LEASE");
      assertThat(table.out().lines())
          .anyMatch(l -> l.startsWith("fk ") && l.contains("s/" + ttl + "s"));

      // stopped (SIGSTOP): its keys are still there, but the lease is not renewed: STALE
      long stoppedAt = System.nanoTime();
      AgentProcesses.signal(agent, "STOP");
      JsonNode[] seen = new JsonNode[1];
      await()
          .atMost(Duration.ofSeconds(ttl + 5))
          .pollInterval(Duration.ofMillis(300))
          .until(
              () -> {
                seen[0] = fleetOf("fk", exit);
                return !seen[0].get("ok").asBoolean();
              });
      JsonNode stale = seen[0];
      assertThat(exit[0]).isEqualTo(1);
      assertThat(stale.get("state").asText()).as(stale.toString()).isEqualTo("OK (STALE)");
      assertThat(stale.get("owner").isNull()).isFalse();
      assertThat(stale.get("issues").toString()).contains("not renewed for");
      assertThat(stale.at("/lease/not_renewed_seconds").asLong()).isGreaterThan(ttl * 2 / 3 + 1);

      // killed: DOWN once its lease expires, within the TTL of its last renewal
      AgentProcesses.signal(agent, "KILL");
      await()
          .atMost(Duration.ofSeconds(ttl + 5))
          .pollInterval(Duration.ofMillis(300))
          .until(
              () -> {
                seen[0] = fleetOf("fk", exit);
                return seen[0].get("state").asText().equals("DOWN");
              });
      double downAfter = (System.nanoTime() - stoppedAt) / 1e9;
      assertThat(exit[0]).isEqualTo(1);
      assertThat(seen[0].get("ok").asBoolean()).isFalse();
      assertThat(downAfter).isLessThan(ttl + 5.0);
      System.out.printf(
          "fleet: agent told STALE %s, DOWN %.1f s after SIGSTOP (session-ttl %d s)%n",
          stale.at("/lease/not_renewed_seconds"), downAfter, ttl);
      etcd.del("/vnf-agent/fk/" + IF + "tap1");
    }
  }

  @Test
  void watchShowsTheFleetAgainWhenAnAgentPublishesAChange() throws Exception {
    etcd.put("/vnf-agent/fw/" + IF + "tap1", tap("tap1"));
    agent("fw");
    awaitStatus("fw", "tap1", "CONFIGURED");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = KvsCtl.commandLine(Map.of());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    CompletableFuture<Integer> run =
        CompletableFuture.supplyAsync(
            () ->
                cl.execute(
                    "fleet", "--etcd", etcd.endpoint(), "--watch", "--updates", "3", "-o", "json"));
    await().atMost(TIMEOUT).until(() -> out.toString().contains("\"fw\""));
    etcd.put("/vnf-agent/fw/" + IF + "tap2", tap("tap2"));
    int exit = run.get(60, TimeUnit.SECONDS);
    List<JsonNode> views = new ArrayList<>();
    try (MappingIterator<JsonNode> it = JSON.readerFor(JsonNode.class).readValues(out.toString())) {
      it.forEachRemaining(views::add);
    }
    assertThat(views).as(out + "" + err).hasSize(3);
    assertThat(agentIn(views.get(0), "fw").at("/values/CONFIGURED").asInt()).isEqualTo(1);
    // every view tells the agent alive from its lease
    assertThat(views).allMatch(v -> agentIn(v, "fw").at("/lease/ttl_seconds").asLong() == 10);
    // a later view, read when the watch saw the agent publish tap2's status, shows it
    assertThat(views.subList(1, 3))
        .anyMatch(v -> agentIn(v, "fw").at("/values/CONFIGURED").asInt() == 2);
    assertThat(exit).as(err.toString()).isIn(0, 1);
  }

  @Test
  void unreachableEtcdAndMissingEndpointsAreNamed() {
    RunningAgent.Run none = RunningAgent.run(Map.of(), "fleet");
    assertThat(none.exit()).isEqualTo(2);
    assertThat(none.err()).contains("no etcd endpoints");
    RunningAgent.Run dead =
        RunningAgent.run(Map.of(), "fleet", "--etcd", "127.0.0.1:1", "--timeout", "5");
    assertThat(dead.exit()).as(dead.out() + dead.err()).isEqualTo(3);
    assertThat(dead.err()).contains("etcd at [127.0.0.1:1]");
    RunningAgent.Run badDuration =
        RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "--stale-after", "soon");
    assertThat(badDuration.exit()).isEqualTo(2);
    assertThat(badDuration.err()).contains("--stale-after: 'soon'");
  }
}
