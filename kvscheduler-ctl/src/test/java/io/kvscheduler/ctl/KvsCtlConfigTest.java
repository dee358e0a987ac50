package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.RestSecurity;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testsupport.EtcdFixture;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** kvsctl's configuration commands, its errors and exit codes, against a real agent. */
class KvsCtlConfigTest {
  static final String TAP5 = "config/mock/v1/interfaces/tap5";
  static final String LOOP5 = "config/mock/v1/interfaces/loop5";
  static final String CONFIG =
      """
      mockConfig:
        Interface_list:
        - name: tap5
          type: TAP
          enabled: true
          physAddress: "00:11:22:33:44:01"
        - name: loop5
          type: LOOPBACK
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
  void configPutOverRestThenGet() throws Exception {
    agent = RunningAgent.start();
    var put = agent.ctl("config", "put", file("c.yaml", CONFIG).toString());
    assertThat(put.exit()).as(put.err()).isEqualTo(0);
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.agent.scheduler().valueStatus(LOOP5).state()).isEqualTo(ValueState.CONFIGURED);

    var get = agent.ctl("config", "get");
    assertThat(get.exit()).isEqualTo(0);
    assertThat(get.out()).contains("mockConfig:", "name: tap5", "physAddress:");

    var json = agent.ctl("config", "get", "-o", "json");
    JsonNode tree = new ObjectMapper().readTree(json.out());
    assertThat(tree.at("/mockConfig/Interface_list").size()).isEqualTo(2);
  }

  @Test
  void configPutOverRestTakesTheKeyedFormatOfTheFileSourceToo() throws Exception {
    agent = RunningAgent.start();
    var put =
        agent.ctl(
            "config",
            "put",
            file(
                    "keyed.yaml",
                    """
        config/mock/v1/interfaces/tap5:
          name: tap5
          type: TAP
          phys_address: "aa:bb:cc:00:00:05"
        config/mock/v1/interfaces/loop5:
          name: loop5
          type: LOOPBACK
        """)
                .toString());
    assertThat(put.exit()).as(put.err()).isEqualTo(0);
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.agent.scheduler().valueStatus(LOOP5).state()).isEqualTo(ValueState.CONFIGURED);
    // a key of no model: the error names the key and the model keys known
    var bad =
        agent.ctl(
            "config",
            "put",
            file("bad-key.yaml", "config/mock/v9/tunnels/t1:\n  name: t1\n").toString());
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("config/mock/v9/tunnels/t1", "config/mock/v1/interfaces/");
  }

  @Test
  void configPutReplaceRemovesWhatTheFileLeavesOut() throws Exception {
    agent = RunningAgent.start();
    assertThat(agent.ctl("config", "put", file("c.yaml", CONFIG).toString()).exit()).isZero();
    var r =
        agent.ctl(
            "config",
            "put",
            "--replace",
            file(
                    "d.yaml",
                    """
        mockConfig:
          Interface_list:
          - name: loop5
            type: LOOPBACK
        """)
                .toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(agent.agent.scheduler().valueStatus(LOOP5).state()).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void confirmedCommitIsConfirmedOrRolledBackWithKvsctl() throws Exception {
    agent = RunningAgent.start();
    Path c = file("c.yaml", CONFIG);
    var put = agent.ctl("config", "put", "--confirm-within", "30s", c.toString());
    assertThat(put.exit()).as(put.err()).isEqualTo(0);
    assertThat(put.err())
        .contains("confirmed commit #1 from rest")
        .contains("kvsctl config confirm");
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.agent.confirmations().pending()).isPresent();

    var second = agent.ctl("config", "put", "--confirm-within", "30s", c.toString());
    assertThat(second.exit()).isEqualTo(1);
    assertThat(second.err()).contains("409").contains("confirmed commit #1 from rest");

    var confirm = agent.ctl("config", "confirm");
    assertThat(confirm.exit()).as(confirm.err()).isEqualTo(0);
    assertThat(confirm.err()).contains("confirmed commit #1").contains("confirmed");
    assertThat(agent.agent.confirmations().pending()).isEmpty();
    var again = agent.ctl("config", "confirm");
    assertThat(again.exit()).isEqualTo(1);
    assertThat(again.err()).contains("409").contains("nothing to confirm");

    var replace =
        agent.ctl(
            "config",
            "put",
            "--replace",
            "--confirm-within",
            "5m",
            file("e.yaml", "mockConfig:\n  Interface_list:\n  - name: other\n    type: TAP\n")
                .toString());
    assertThat(replace.exit()).as(replace.err()).isEqualTo(0);
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.NONEXISTENT);
    var rollback = agent.ctl("config", "rollback");
    assertThat(rollback.exit()).as(rollback.err()).isEqualTo(0);
    assertThat(rollback.err()).contains("rolled back in transaction");
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.agent.scheduler().valueStatus("config/mock/v1/interfaces/other").state())
        .isEqualTo(ValueState.NONEXISTENT);

    var bad = agent.ctl("config", "put", "--confirm-within", "2h", c.toString());
    assertThat(bad.exit()).isEqualTo(1);
    assertThat(bad.err()).contains("400").contains("confirm-within");
  }

  @Test
  void invalidConfigOverRestIsTheAgentsErrorAndChangesNothing() throws Exception {
    agent = RunningAgent.start();
    var r =
        agent.ctl(
            "config",
            "put",
            file(
                    "bad.yaml",
                    """
        mockConfig:
          Interface_list:
          - name: tap5
            colour: blue
        """)
                .toString());
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).startsWith("kvsctl: the agent answered ").contains("colour");
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  void unreachableAgentIsExitCode3WithAHint() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    var r = RunningAgent.run(Map.of(), "--agent", "http://127.0.0.1:" + port, "config", "get");
    assertThat(r.exit()).isEqualTo(3);
    assertThat(r.err())
        .contains("cannot reach the agent at http://127.0.0.1:" + port)
        .contains("--agent or KVS_AGENT");
  }

  @Test
  void unreachableEtcdIsExitCode3NamingTheEndpoint() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    long start = System.nanoTime();
    var r =
        RunningAgent.run(
            Map.of(),
            "config",
            "put",
            "--etcd",
            "127.0.0.1:" + port,
            file("c.yaml", CONFIG).toString());
    assertThat(r.exit()).as(r.err()).isEqualTo(3);
    assertThat(r.err()).contains("etcd at").contains("127.0.0.1:" + port);
    // bounded: the write gives up within its limit
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
  }

  @Test
  void missingFileAndUnknownOptionsAreClear() throws Exception {
    agent = RunningAgent.start();
    var r = agent.ctl("config", "put", dir.resolve("absent.yaml").toString());
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err()).contains("cannot read").contains("absent.yaml");

    var u = agent.ctl("status", "--colour");
    assertThat(u.exit()).isEqualTo(2);
    assertThat(u.err()).contains("Unknown option: '--colour'");
  }

  @Test
  void configPutIntoEtcdInTheReferenceLayoutReachesAnAgentWatchingIt() throws Exception {
    try (EtcdFixture etcd = EtcdFixture.startNew()) {
      var r =
          RunningAgent.run(
              Map.of(),
              "config",
              "put",
              "--etcd",
              etcd.endpoint(),
              "--label",
              "lab1",
              file("c.yaml", CONFIG).toString());
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.err()).contains("wrote 2 value(s)").contains("/vnf-agent/lab1/");
      // vpp-agent's layout: absolute key under the label, protobuf JSON with snake_case names
      assertThat(etcd.getPrefix("/vnf-agent/lab1/"))
          .containsExactly(
              Map.entry("/vnf-agent/lab1/" + LOOP5, "{\"name\":\"loop5\",\"type\":\"LOOPBACK\"}"),
              Map.entry(
                  "/vnf-agent/lab1/" + TAP5,
                  "{\"name\":\"tap5\",\"type\":\"TAP\","
                      + "\"enabled\":true,\"phys_address\":\"00:11:22:33:44:01\"}"));

      try (Agent a =
          Agent.start(
              AgentConfig.builder()
                  .label("lab1")
                  .restAddress(null)
                  .etcdEndpoints(List.of(etcd.endpoint()))
                  .printTxnSummary(false)
                  .build())) {
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> a.scheduler().valueStatus(TAP5).state() == ValueState.CONFIGURED);

        // --replace: what the file leaves out is deleted, and the agent removes it
        var rep =
            RunningAgent.run(
                Map.of(),
                "config",
                "put",
                "--replace",
                "--etcd",
                etcd.endpoint(),
                "--label",
                "lab1",
                file(
                        "d.yaml",
                        """
                config/mock/v1/interfaces/loop5:
                  name: loop5
                  type: LOOPBACK
                """)
                    .toString());
        assertThat(rep.exit()).as(rep.err()).isZero();
        assertThat(rep.err()).contains("removed 1");
        assertThat(etcd.get("/vnf-agent/lab1/" + TAP5)).isNull();
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> a.scheduler().valueStatus(TAP5).state() == ValueState.NONEXISTENT);
      }
    }
  }

  @Test
  void configPutIntoEtcdKnowsTheLinuxModels() throws Exception {
    Path topology = KvsCtlInspectTest.examples().getParent().resolve("linux/config/topology.yaml");
    try (EtcdFixture etcd = EtcdFixture.startNew()) {
      var r =
          RunningAgent.run(
              Map.of(),
              "config",
              "put",
              "--etcd",
              etcd.endpoint(),
              "--label",
              "lab2",
              topology.toString());
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.err()).contains("wrote 5 value(s)");
      Map<String, String> written = etcd.getPrefix("/vnf-agent/lab2/");
      assertThat(written.keySet())
          .containsExactlyInAnyOrder(
              "/vnf-agent/lab2/config/linux/interfaces/v2/interface/veth1",
              "/vnf-agent/lab2/config/linux/interfaces/v2/interface/veth2",
              "/vnf-agent/lab2/config/linux/interfaces/v2/interface/lo2",
              "/vnf-agent/lab2/config/linux/l3/v2/route/10.0.2.0/24/veth1",
              "/vnf-agent/lab2/config/linux/l3/v2/arp/veth1/10.0.1.2");
      assertThat(written.get("/vnf-agent/lab2/config/linux/interfaces/v2/interface/veth1"))
          .contains("\"peer_if_name\":\"veth2\"")
          .contains("\"ip_addresses\":[\"10.0.1.1/24\"]");
    }
  }

  @Test
  void configPutIntoEtcdRejectsAnInvalidFileNamingTheLineAndWritesNothing() throws Exception {
    try (EtcdFixture etcd = EtcdFixture.startNew()) {
      var r =
          RunningAgent.run(
              Map.of(),
              "config",
              "put",
              "--etcd",
              etcd.endpoint(),
              file(
                      "bad.yaml",
                      """
              mockConfig:
                Interface_list:
                - name: ok1
                - name: tap5
                  mtu: lots
              """)
                  .toString());
      assertThat(r.exit()).isEqualTo(5);
      assertThat(r.err()).contains("bad.yaml:5").contains("mtu");
      assertThat(etcd.getPrefix("/vnf-agent/")).isEmpty();
    }
  }

  @Test
  void tokenFromFileOrEnvironmentAndRefusalsAreExitCode4() throws Exception {
    agent = RunningAgent.start(new RestSecurity("s3cret", null, false, null, null));
    var none = agent.ctl("status");
    assertThat(none.exit()).isEqualTo(4);
    assertThat(none.err()).contains("refused").contains("--token-file FILE or KVS_REST_TOKEN");

    var wrong = agent.ctl(Map.of("KVS_REST_TOKEN", "guess"), "status");
    assertThat(wrong.exit()).isEqualTo(4);
    assertThat(wrong.err()).contains("the token was not accepted");

    var env =
        agent.ctl(
            Map.of("KVS_REST_TOKEN", "s3cret"), "config", "put", file("c.yaml", CONFIG).toString());
    assertThat(env.exit()).as(env.err()).isZero();
    Path tokenFile = file("token", "s3cret\n");
    var fromFile =
        agent.ctl(
            Map.of("KVS_REST_TOKEN", "guess"),
            "--token-file",
            tokenFile.toString(),
            "status",
            TAP5);
    assertThat(fromFile.exit()).as(fromFile.err()).isZero();
    assertThat(fromFile.out()).contains(TAP5).contains("CONFIGURED");
  }

  @Test
  void readOnlyAgentRefusesAPutWithExitCode4() throws Exception {
    agent = RunningAgent.start(new RestSecurity(null, null, true, null, null));
    var r = agent.ctl("config", "put", file("c.yaml", CONFIG).toString());
    assertThat(r.exit()).isEqualTo(4);
    assertThat(r.err()).contains("403").contains("read-only");
    assertThat(agent.agent.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  void completionScriptIsGeneratedForEveryCommand() {
    var r = RunningAgent.run(Map.of(), "completion");
    assertThat(r.exit()).isZero();
    assertThat(r.out())
        .contains(
            "complete -F _complete_kvsctl",
            "status",
            "explain",
            "history",
            "--descriptor",
            "--token-file");
  }
}
