package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.testsupport.EtcdFixture;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One owner per label, with agents as processes of their own on a real etcd: a second agent of a
 * label exits naming the holder; a standby takes over when the holder is killed, resyncs and
 * applies each value once; a bad label is refused.
 */
class LabelClaimProcessTest {
  private static final int TTL_SECONDS = 3;
  private static final String IF = "config/mock/v1/interfaces/";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private EtcdFixture etcd;
  private final List<Process> processes = new ArrayList<>();

  @BeforeEach
  void startEtcd() throws Exception {
    etcd = EtcdFixture.startNew();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
    etcd.close();
  }

  /** An etcd.conf naming the fixture, with a short lease TTL. */
  private Path etcdConf() throws IOException {
    Path f = dir.resolve("etcd.conf");
    Files.writeString(
        f,
        "endpoints:\n  - \""
            + etcd.endpoint()
            + "\"\nsession-ttl: "
            + TTL_SECONDS
            + "\ndial-timeout: 1s\noperation-timeout: 2s\n");
    return f;
  }

  /** Starts {@code AgentMain run args}; its output goes into {@code lines} as it comes. */
  private Process launch(List<String> lines, String... args) throws IOException {
    String classpath =
        Arrays.stream(
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"))
                    .split(File.pathSeparator))
            .filter(e -> !e.endsWith("test-classes"))
            .collect(Collectors.joining(File.pathSeparator));
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                classpath,
                AgentMain.class.getName(),
                "run"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    processes.add(p);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                  synchronized (lines) {
                    lines.add(l);
                  }
                }
              } catch (IOException e) {
                // ended
              }
            },
            "agent-output-" + p.pid());
    reader.setDaemon(true);
    reader.start();
    return p;
  }

  private static void awaitLine(List<String> lines, String text, Duration limit) {
    await()
        .atMost(limit)
        .pollInterval(Duration.ofMillis(100))
        .untilAsserted(
            () -> {
              synchronized (lines) {
                assertThat(lines).as("output").anyMatch(l -> l.contains(text));
              }
            });
  }

  private static boolean printed(List<String> lines, String text) {
    synchronized (lines) {
      return lines.stream().anyMatch(l -> l.contains(text));
    }
  }

  private static int restPort(List<String> lines) {
    Pattern listening = Pattern.compile("REST API listening on \\w+://[^:]+:(\\d+)");
    synchronized (lines) {
      for (String l : lines) {
        Matcher m = listening.matcher(l);
        if (m.find()) {
          return Integer.parseInt(m.group(1));
        }
      }
    }
    throw new AssertionError("no REST port in the output: " + lines);
  }

  private static JsonNode get(int port, String path) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  private static String tap(String name) {
    return "{\"name\":\"" + name + "\",\"type\":\"TAP\",\"enabled\":true}";
  }

  private String owner(String label) throws IOException {
    return etcd.get("/vnf-agent/" + label + "/owner");
  }

  @Test
  void secondAgentOfALabelExitsNamingTheHolderAndAppliesNothing() throws Exception {
    etcd.put("/vnf-agent/one/" + IF + "tap1", tap("tap1"));
    Path conf = etcdConf();
    List<String> first = new ArrayList<>();
    Process holder =
        launch(first, "--label", "one", "--etcd-config", conf.toString(), "--rest", "off");
    awaitLine(first, "started with plugins", Duration.ofSeconds(60));
    // (on a loaded machine the first request may get no answer at start: claimed right after)
    await().atMost(Duration.ofSeconds(20)).until(() -> owner("one") != null);
    JsonNode claim = JSON.readTree(owner("one"));
    assertThat(claim.get("pid").asLong()).isEqualTo(holder.pid());
    assertThat(claim.get("host").asText()).isNotBlank();
    assertThat(claim.get("version").asText()).isNotBlank();
    assertThat(claim.get("start_time").asText()).isNotBlank();
    // bound to a lease of session-ttl
    assertThat(
            etcd.ctlChecked(
                "lease", "timetolive", Long.toHexString(etcd.leaseOf("/vnf-agent/one/owner"))))
        .contains("granted with TTL(" + TTL_SECONDS + "s)");

    List<String> second = new ArrayList<>();
    Process refused =
        launch(
            second,
            "--label",
            "one",
            "--etcd-config",
            conf.toString(),
            "--rest",
            "off",
            "--status-publishing");
    assertThat(refused.waitFor(60, TimeUnit.SECONDS)).as("exited; output %s", second).isTrue();
    Thread.sleep(300); // the reader takes the last lines
    assertThat(refused.exitValue()).as("output %s", second).isEqualTo(1);
    synchronized (second) {
      assertThat(second)
          .anyMatch(
              l ->
                  l.contains("label 'one' is held by another agent: host ")
                      && l.contains(" pid " + holder.pid() + " ")
                      && l.contains("--standby"));
      // nothing applied: no transaction touched the label's value
      assertThat(second).noneMatch(l -> l.contains("config/mock/v1/interfaces/tap1"));
    }
    // nothing written by the refused agent, the holder's claim stands
    assertThat(etcd.getPrefix("/vnf-agent/one/config-status/")).isEmpty();
    assertThat(JSON.readTree(owner("one")).get("pid").asLong()).isEqualTo(holder.pid());
    assertThat(holder.isAlive()).isTrue();

    // a standby asked to stop while it waits exits with 0, having applied nothing
    List<String> third = new ArrayList<>();
    Process waiting =
        launch(
            third,
            "--label",
            "one",
            "--etcd-config",
            conf.toString(),
            "--rest",
            "off",
            "--standby");
    awaitLine(third, "standing by", Duration.ofSeconds(60));
    new ProcessBuilder("kill", "-TERM", String.valueOf(waiting.pid())).start().waitFor();
    assertThat(waiting.waitFor(30, TimeUnit.SECONDS)).as("exited; output %s", third).isTrue();
    assertThat(waiting.exitValue()).as("output %s", third).isZero();
    assertThat(printed(third, "init plugin")).isFalse();
    assertThat(JSON.readTree(owner("one")).get("pid").asLong()).isEqualTo(holder.pid());

    // a clean stop releases the label at once
    new ProcessBuilder("kill", "-TERM", String.valueOf(holder.pid())).start().waitFor();
    assertThat(holder.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(owner("one")).isNull();
  }

  @Test
  void standbyTakesOverWithinTheLeaseTtlWhenTheHolderIsKilledAndAppliesEachValueOnce()
      throws Exception {
    String p = "/vnf-agent/two/";
    etcd.put(p + IF + "tap1", tap("tap1"));
    etcd.put(p + IF + "tap2", tap("tap2"));
    Path conf = etcdConf();
    List<String> first = new ArrayList<>();
    Process holder =
        launch(
            first,
            "--label",
            "two",
            "--etcd-config",
            conf.toString(),
            "--rest",
            "off",
            "--status-publishing");
    awaitLine(first, "started with plugins", Duration.ofSeconds(60));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> etcd.get(p + "config-status/mock/v1/interfaces/tap2") != null);
    long holderLease = etcd.leaseOf(p + "config-status/mock/v1/interfaces/tap2");

    List<String> second = new ArrayList<>();
    Process standby =
        launch(
            second,
            "--label",
            "two",
            "--etcd-config",
            conf.toString(),
            "--rest",
            "127.0.0.1:0",
            "--status-publishing",
            "--standby");
    awaitLine(second, "standing by", Duration.ofSeconds(60));
    synchronized (second) {
      assertThat(second)
          .anyMatch(l -> l.contains("standing by") && l.contains("pid " + holder.pid()));
    }
    Thread.sleep(1000);
    assertThat(printed(second, "init plugin")).as("the standby applies nothing").isFalse();
    assertThat(JSON.readTree(owner("two")).get("pid").asLong()).isEqualTo(holder.pid());

    long killed = System.nanoTime();
    new ProcessBuilder("kill", "-KILL", String.valueOf(holder.pid())).start().waitFor();
    assertThat(holder.waitFor(10, TimeUnit.SECONDS)).isTrue();
    awaitLine(second, "the standby takes over", Duration.ofSeconds(TTL_SECONDS + 10));
    long takeoverMs = (System.nanoTime() - killed) / 1_000_000;
    Figures.print(
        "standby took over %d ms after SIGKILL of the holder (TTL %d s)", takeoverMs, TTL_SECONDS);
    // the holder's lease expires within the TTL (plus a keep-alive period); the standby sees it
    assertThat(takeoverMs).isLessThan(TTL_SECONDS * 1000L + 3000);
    awaitLine(second, "started with plugins", Duration.ofSeconds(30));
    assertThat(JSON.readTree(owner("two")).get("pid").asLong()).isEqualTo(standby.pid());

    // the standby resynced: its statuses (under its own lease) say CONFIGURED
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              for (String tap : List.of("tap1", "tap2")) {
                String s = etcd.get(p + "config-status/mock/v1/interfaces/" + tap);
                assertThat(s).isNotNull();
                assertThat(JSON.readTree(s).get("state").asText()).isEqualTo("CONFIGURED");
                assertThat(etcd.leaseOf(p + "config-status/mock/v1/interfaces/" + tap))
                    .isNotEqualTo(holderLease);
              }
            });
    int port = restPort(second);
    JsonNode label = get(port, "/info/label");
    assertThat(label.get("state").asText()).isEqualTo("OWNER");
    assertThat(label.at("/holder/pid").asLong()).isEqualTo(standby.pid());
    assertThat(label.at("/holder/this_agent").asBoolean()).isTrue();

    // and it follows etcd from there
    etcd.put(p + IF + "tap3", tap("tap3"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> etcd.get(p + "config-status/mock/v1/interfaces/tap3") != null);

    // each value was applied once by the standby: one executed operation per key
    JsonNode history = get(port, "/scheduler/txn-history");
    for (String tap : List.of("tap1", "tap2", "tap3")) {
      int ops = 0;
      for (JsonNode txn : history) {
        for (JsonNode op : txn.path("Executed")) {
          if (op.path("Key").asText().equals(IF + tap)) {
            ops++;
          }
        }
      }
      assertThat(ops).as("operations on %s in %s", tap, history).isEqualTo(1);
    }
  }

  @Test
  void labelsWithASlashOrEmptyAreRefusedAtStart() throws Exception {
    for (String label : List.of("a/b", "")) {
      List<String> lines = new ArrayList<>();
      Process p = launch(lines, "--label", label, "--etcd", etcd.endpoint(), "--rest", "off");
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(300);
      assertThat(p.exitValue()).as("output %s", lines).isEqualTo(2);
      synchronized (lines) {
        assertThat(lines).anyMatch(l -> l.contains("invalid label '" + label + "'"));
        assertThat(lines).noneMatch(l -> l.contains("init plugin"));
      }
    }
    assertThat(etcd.getPrefix("/vnf-agent/")).isEmpty();
  }
}
