package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kvsctl's commands that look inside the agent, against a real agent on the example configuration
 * (bridge domain bd1 lists tap2, which is not configured: its binding and the FIB entry forwarding
 * to tap2 are PENDING).
 */
class KvsCtlInspectTest {
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String TAP2 = "config/mock/v1/interfaces/tap2";
  static final String BD1 = "config/mock/v1/bridge-domain/bd1";
  static final String FIB20 = "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:20";
  static final String BD1_TAP2 = "mock/bd/bd1/interface/tap2";
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  RunningAgent agent;

  @BeforeEach
  void start() throws Exception {
    Path config = Files.createDirectories(dir.resolve("config"));
    for (String f : List.of("interfaces.yaml", "l2.yaml")) {
      Files.copy(examples().resolve(f), config.resolve(f));
    }
    agent = RunningAgent.start(config);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> agent.agent.scheduler().valueStatus(FIB20).state() == ValueState.PENDING);
  }

  static Path examples() {
    Path p = Path.of("").toAbsolutePath();
    while (!Files.isDirectory(p.resolve("examples/config"))) {
      p = p.getParent();
    }
    return p.resolve("examples/config");
  }

  @AfterEach
  void stop() {
    agent.close();
  }

  void putTap2() throws Exception {
    var r =
        agent.ctl(
            "config",
            "put",
            Files.writeString(
                    dir.resolve("tap2.yaml"),
                    """
        mockConfig:
          Interface_list:
          - name: tap2
            type: TAP
        """)
                .toString());
    assertThat(r.exit()).as(r.err()).isZero();
  }

  @Test
  void statusTableJsonAndFilters() throws Exception {
    var all = agent.ctl("status");
    assertThat(all.exit()).as(all.err()).isZero();
    assertThat(all.out().lines().findFirst().orElseThrow())
        .startsWith("KEY")
        .contains("STATE", "LAST OP", "DETAILS", "ERROR");
    assertThat(all.out())
        .containsPattern(
            "(?m)^config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:20 +PENDING +CREATE +bridged-interface");
    assertThat(all.out()).containsPattern("(?m)^  mock/bd/bd1/interface/tap2 +PENDING");
    assertThat(all.out()).containsPattern("(?m)^config/mock/v1/interfaces/tap1 +CONFIGURED");

    var pending = agent.ctl("status", "--state", "pending", "-o", "json");
    JsonNode p = JSON.readTree(pending.out());
    List<String> keys = new ArrayList<>();
    p.forEach(s -> keys.add(s.at("/value/key").asText()));
    // the FIB entry itself, and bd1 for its PENDING derived binding of tap2
    assertThat(keys).containsExactly(BD1, FIB20);
    assertThat(p.get(0).at("/derived_values/0/key").asText()).isEqualTo(BD1_TAP2);

    var one = agent.ctl("status", FIB20, "-o", "json");
    assertThat(JSON.readTree(one.out()).at("/value/details/0").asText())
        .isEqualTo("bridged-interface");

    var byDescriptor = agent.ctl("status", "--descriptor", "mock-interface");
    assertThat(byDescriptor.out()).contains(TAP1).doesNotContain(BD1);

    var both = agent.ctl("status", FIB20, "--state", "PENDING");
    assertThat(both.exit()).isEqualTo(2);
    assertThat(both.err()).contains("mutually exclusive");
  }

  @Test
  void statusAndExplainEscapeControlCharacters() throws Exception {
    // a name and a MAC address holding a line feed that starts a forged line, CR, ESC and NUL
    String name = "x\nFORGED\r\u001b[2J\u0000"; // 14 characters: a valid length
    String key = "config/mock/v1/interfaces/" + name;
    try {
      agent
          .agent
          .scheduler()
          .startNBTransaction()
          .setValue(key, new Interface(name, Interface.Type.TAP, true, "\u001b[31m\nFORGED MAC"))
          .commit();
    } catch (RuntimeException expected) {
      // INVALID: the MAC address
    }
    assertThat(agent.agent.scheduler().valueStatus(key).state()).isEqualTo(ValueState.INVALID);
    for (var r : List.of(agent.ctl("status"), agent.ctl("explain", key))) {
      assertThat(r.exit()).as(r.err()).isZero();
      assertThat(r.out())
          .contains("interfaces/x\\nFORGED\\r\\u001b[2J\\u0000")
          .doesNotContain("\u001b", "\r", "\u0000")
          .doesNotContainPattern("(?m)^FORGED");
    }
    assertThat(agent.ctl("status").out()).contains("\\u001b[31m\\nFORGED MAC");
  }

  @Test
  void explainNamesTheMissingInterface() throws Exception {
    var r = agent.ctl("explain", FIB20);
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains(FIB20).contains("PENDING").contains(TAP2);
    var j = agent.ctl("explain", FIB20, "-o", "json");
    assertThat(JSON.readTree(j.out()).toString()).contains(TAP2);
  }

  @Test
  void historyLastSeqSinceAndText() throws Exception {
    putTap2();
    var all = agent.ctl("history", "-o", "json");
    JsonNode txns = JSON.readTree(all.out());
    assertThat(txns.size()).isGreaterThanOrEqualTo(2);
    long lastSeq = txns.get(txns.size() - 1).get("SeqNum").asLong();

    var last = agent.ctl("history", "--last", "1");
    assertThat(last.exit()).as(last.err()).isZero();
    assertThat(last.out().lines().toList()).hasSize(2);
    assertThat(last.out().lines().toList().get(1))
        .startsWith(lastSeq + " ")
        .contains("NBTransaction");

    var seq = agent.ctl("history", "--seq", String.valueOf(lastSeq));
    assertThat(seq.out())
        .startsWith("Transaction #" + lastSeq)
        .contains("CREATE", TAP2, FIB20, "PENDING", "CONFIGURED");

    var text = agent.ctl("history", "--last", "1", "--text");
    assertThat(text.out()).contains("Transaction #" + lastSeq).doesNotContain("Transaction #0:");

    var since = agent.ctl("history", "--since", "1h", "-o", "json");
    assertThat(JSON.readTree(since.out()).size()).isEqualTo(txns.size());
    var future = agent.ctl("history", "--since", "2999-01-01T00:00:00Z", "-o", "json");
    assertThat(JSON.readTree(future.out()).size()).isZero();

    var bad = agent.ctl("history", "--since", "yesterday");
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err()).contains("--since").contains("yesterday");

    var unknown = agent.ctl("history", "--seq", "99999");
    assertThat(unknown.exit()).isEqualTo(1);
    assertThat(unknown.err()).contains("404");
  }

  @Test
  void timelineShowsEveryRevision() throws Exception {
    putTap2();
    var r = agent.ctl("timeline", FIB20);
    assertThat(r.exit()).as(r.err()).isZero();
    List<String> lines = r.out().lines().toList();
    assertThat(lines.get(0)).startsWith("SINCE").contains("STATE", "UPDATED BY");
    assertThat(lines).anyMatch(l -> l.contains("PENDING"));
    assertThat(lines.get(lines.size() - 1)).contains("(now)").contains("CONFIGURED");
  }

  @Test
  void dumpOfTheViews() throws Exception {
    var nb = agent.ctl("dump", "--view", "NB", "--descriptor", "mock-interface");
    assertThat(nb.exit()).as(nb.err()).isZero();
    assertThat(nb.out())
        .contains(TAP1)
        .contains("\"physAddress\":\"aa:bb:cc:00:00:01\"")
        .doesNotContain(TAP2);
    var all = agent.ctl("dump", "--view", "cached", "-o", "json");
    JsonNode byDescriptor = JSON.readTree(all.out());
    assertThat(byDescriptor.has("mock-interface")).isTrue();
    assertThat(byDescriptor.has("mock-bridge-domain") || byDescriptor.size() >= 2).isTrue();
    // SB: what the mock southbound holds, read now
    var sb = agent.ctl("dump", "--view", "SB", "--descriptor", "mock-interface", "-o", "json");
    assertThat(sb.exit()).as(sb.err()).isZero();
    List<String> sbKeys = new ArrayList<>();
    JSON.readTree(sb.out()).forEach(kv -> sbKeys.add(kv.get("Key").asText()));
    assertThat(sbKeys).contains(TAP1).doesNotContain(TAP2);
    var sbTable = agent.ctl("dump", "--view", "SB", "--descriptor", "mock-interface");
    assertThat(sbTable.out())
        .containsPattern(
            "(?m)^mock-interface +config/mock/v1/interfaces/tap1 +NB +\\{\"name\":\"tap1\"");
    var bad = agent.ctl("dump", "--view", "XY");
    assertThat(bad.exit()).isEqualTo(2);
  }

  @Test
  void anUnknownStateIsAUsageErrorNamingTheStates() throws Exception {
    var bogus = agent.ctl("status", "--state", "BOGUS");
    assertThat(bogus.exit()).isEqualTo(2);
    assertThat(bogus.err())
        .contains("unknown state 'BOGUS' for --state")
        .contains("CONFIGURED, OBTAINED")
        .contains("PENDING");
    assertThat(bogus.out()).isEmpty();
  }

  @Test
  void graphInEveryFormat() throws Exception {
    Path dot = dir.resolve("g.dot");
    var r = agent.ctl("graph", "--out", dot.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(Files.readString(dot)).startsWith("digraph").contains(FIB20);
    // without --out: standard output
    var stdout = agent.ctl("graph");
    assertThat(stdout.exit()).as(stdout.err()).isZero();
    assertThat(stdout.out()).startsWith("digraph").contains(FIB20);
    // -o is the output format, as in every command
    var jsonOut = agent.ctl("graph", "-o", "json");
    assertThat(jsonOut.exit()).as(jsonOut.err()).isZero();
    assertThat(JSON.readTree(jsonOut.out()).get("nodes").size()).isGreaterThan(5);
    Path json = dir.resolve("g.json");
    assertThat(agent.ctl("graph", "--format", "json", "--out", json.toString()).exit()).isZero();
    JsonNode g = JSON.readTree(json.toFile());
    assertThat(g.get("nodes").size()).isGreaterThan(5);
    assertThat(g.get("edges").size()).isGreaterThan(3);

    // SVG, rendered by the agent with Graphviz
    Path svg = dir.resolve("g.svg");
    var s = agent.ctl("graph", "-o", "svg", "--out", svg.toString());
    assertThat(s.exit()).as(s.err()).isZero();
    assertThat(Files.readString(svg))
        .contains("<svg")
        .contains("aa:bb:cc:00:00:20")
        .endsWith("</svg>\n");

    var history = JSON.readTree(agent.ctl("history", "-o", "json").out());
    long first = history.get(0).get("SeqNum").asLong();
    var old = agent.ctl("graph", "--txn", String.valueOf(first), "--out", "-");
    assertThat(old.exit()).as(old.err()).isZero();
    assertThat(old.out()).startsWith("digraph");
  }

  @Test
  void resyncPrintsItsTransaction() throws Exception {
    var r = agent.ctl("resync", "-o", "json");
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode txn = JSON.readTree(r.out());
    assertThat(txn.get("ResyncType").asText()).isEqualTo("DownstreamResync");
    var table = agent.ctl("resync", "--retry");
    assertThat(table.out()).startsWith("Transaction #").contains("DownstreamResync");
  }

  @Test
  void metricsAsTextAndJson() throws Exception {
    var r = agent.ctl("metrics");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("# TYPE").contains("kvs_");
    var j = agent.ctl("metrics", "-o", "json", "--name", "kvs_");
    JsonNode samples = JSON.readTree(j.out());
    assertThat(samples.size()).isPositive();
    samples.forEach(s -> assertThat(s.get("name").asText()).startsWith("kvs_"));
  }

  @Test
  void watchFollowsAChange() throws Exception {
    // a polling interval far beyond the test's patience: only the agent's events can wake it, and
    // well before the longest quiet wait (ChangeSignal.MAX_QUIET_MILLIS)
    CompletableFuture<RunningAgent.Run> watch =
        CompletableFuture.supplyAsync(
            () -> agent.ctl("watch", "--state", "PENDING", "--interval", "600000", "--count", "4"));
    // the first read lists the current PENDING values (2), then tap2 comes
    Thread.sleep(1000);
    putTap2();
    RunningAgent.Run r = watch.get(20, TimeUnit.SECONDS);
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out())
        .contains(FIB20 + "  NONEXISTENT -> PENDING")
        .contains(FIB20 + "  PENDING -> CONFIGURED")
        .contains(BD1_TAP2 + "  PENDING -> CONFIGURED");
  }

  @Test
  void reportBundlesEverything() throws Exception {
    // something in the agent's log (the tests log warnings only): a refused configuration
    assertThat(
            agent
                .ctl(
                    "config",
                    "put",
                    Files.writeString(
                            dir.resolve("bad.yaml"),
                            "mockConfig:\n  Interface_list:\n  - name: x\n    colour: red\n")
                        .toString())
                .exit())
        .isEqualTo(1);
    Path zip = dir.resolve("report.zip");
    var r = agent.ctl("report", "--out", zip.toString());
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.err()).doesNotContain("not in the report");
    try (ZipFile z = new ZipFile(zip.toFile())) {
      List<String> names = z.stream().map(e -> e.getName()).toList();
      assertThat(names)
          .containsExactlyInAnyOrder(
              "version.json",
              "settings.json",
              "configuration.yaml",
              "status.json",
              "txn-history.json",
              "txn-history.txt",
              "graph.dot",
              "graph.json",
              "stats.json",
              "metrics.txt",
              "agent.log",
              "manifest.txt");
      assertThat(new String(z.getInputStream(z.getEntry("status.json")).readAllBytes()))
          .contains(FIB20);
      assertThat(new String(z.getInputStream(z.getEntry("agent.log")).readAllBytes()))
          .contains("unknown field 'colour'");
      assertThat(new String(z.getInputStream(z.getEntry("settings.json")).readAllBytes()))
          .contains("\"label\"")
          .contains("\"rest-token\": \"none\"")
          // every setting, off or at its default included
          .contains("\"linux\": false")
          .contains("\"file-settle-time\": \"PT2S\"")
          .contains("\"grpc-address\": \"off\"")
          .contains("\"grpc-config\": null");
      assertThat(new String(z.getInputStream(z.getEntry("graph.dot")).readAllBytes()))
          .startsWith("digraph");
    }
  }
}
