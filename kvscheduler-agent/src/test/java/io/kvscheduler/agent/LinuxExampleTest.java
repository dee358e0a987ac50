package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.LinuxAgentPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import java.io.BufferedReader;
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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The agent with the Linux plugin enabled, reading the examples of {@code examples/linux} through
 * the file northbound, configures the real kernel of a private network namespace: {@code config}'s
 * ping works, and a restarted agent's first resync executes no operation; {@code config-bridge}
 * carries ping and TCP through bridges and a VXLAN tunnel, drops the port its iptables chain drops,
 * and a downstream resync repairs a rule and a bridge port removed by hand.
 */
class LinuxExampleTest {
  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  static Path exampleDir() {
    return exampleDir("config");
  }

  static Path exampleDir(String name) {
    String dir = "examples/linux/" + name;
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve(dir))) {
        return p.resolve(dir);
      }
    }
    throw new AssertionError(dir + " not found above " + Path.of("").toAbsolutePath());
  }

  static NetnsSandbox sandbox() {
    try {
      return NetnsSandbox.start();
    } catch (IOException e) {
      Assumptions.abort(
          "the kernel or the system forbids private network namespaces here: " + e.getMessage());
      throw new AssertionError(e);
    }
  }

  static boolean ping(NetnsSandbox sb, String ns, String ip) throws Exception {
    List<String> cmd = new ArrayList<>(sb.prefix());
    cmd.addAll(List.of("ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "2", ip));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  /** Whether a ping from {@code ns} to {@code ip} is answered within {@code limit}. */
  static boolean pingWithin(NetnsSandbox sb, String ns, String ip, Duration limit)
      throws Exception {
    long end = System.nanoTime() + limit.toNanos();
    do {
      if (ping(sb, ns, ip)) {
        return true;
      }
    } while (System.nanoTime() < end);
    return false;
  }

  static Link link(IpRoute2Calls calls, String ns, String name) throws Exception {
    return calls.link(ns, name).orElseThrow(() -> new AssertionError(name + " not in " + ns));
  }

  @Test
  void exampleComesUpPingsAndIsAdoptedWithNoOperationAfterARestart() throws Exception {
    try (NetnsSandbox sb = sandbox();
        IpRoute2Calls calls = new IpRoute2Calls(sb.prefix(), Duration.ofSeconds(10))) {
      AgentConfig cfg =
          AgentConfig.builder()
              .configDir(exampleDir())
              .restAddress(null)
              .printTxnSummary(false)
              .enablePlugin("linux")
              .build();
      int index;
      try (Agent agent = Agent.start(cfg, List.of(new LinuxAgentPlugin(calls)))) {
        assertThat(agent.northbound().desired())
            .containsOnlyKeys(
                "config/linux/interfaces/v2/interface/veth1",
                "config/linux/interfaces/v2/interface/veth2",
                "config/linux/interfaces/v2/interface/lo2",
                "config/linux/l3/v2/route/10.0.2.0/24/veth1",
                "config/linux/l3/v2/arp/veth1/10.0.1.2");
        for (String key : agent.northbound().desired().keySet()) {
          assertThat(agent.scheduler().valueStatus(key).state())
              .as(key)
              .isEqualTo(ValueState.CONFIGURED);
        }
        Link veth1 = link(calls, "ns1", "veth1");
        index = veth1.index();
        assertThat(veth1.addresses()).containsExactly("10.0.1.1/24");
        assertThat(veth1.alias()).isEqualTo("/vnf-agent/vpp1/veth1/veth2");
        assertThat(calls.routes("ns1", "veth1"))
            .extracting(r -> r.destination() + " via " + r.gateway())
            .containsExactly("10.0.2.0/24 via 10.0.1.2");
        assertThat(calls.neighbours("ns1", "veth1"))
            .extracting(n -> n.ip() + " " + n.mac())
            .containsExactly("10.0.1.2 02:00:00:00:01:02");
        assertThat(ping(sb, "ns1", "10.0.2.1")).as("ping from ns1 to the loopback of ns2").isTrue();
      }
      try (Agent agent = Agent.start(cfg, List.of(new LinuxAgentPlugin(calls)))) {
        List<RecordedTxn> history = agent.scheduler().transactionHistory();
        RecordedTxn resync =
            history.stream()
                .filter(t -> t.description().equals("resync from file"))
                .findFirst()
                .orElseThrow();
        assertThat(
                resync.executed().stream()
                    .filter(
                        op ->
                            !op.is(RecordedTxnOp.Flag.NOOP) && !op.is(RecordedTxnOp.Flag.PROPERTY))
                    .map(RecordedTxnOp::key))
            .as("operations of the first resync after a restart")
            .isEmpty();
        assertThat(link(calls, "ns1", "veth1").index()).isEqualTo(index);
        assertThat(ping(sb, "ns1", "10.0.2.1")).isTrue();
      }
    }
  }

  /** Runs a command inside the sandbox; its output, or empty when it failed or timed out. */
  static Optional<String> run(NetnsSandbox sb, String... command) throws Exception {
    List<String> cmd = new ArrayList<>(sb.prefix());
    cmd.addAll(List.of(command));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(20, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return Optional.empty();
    }
    return p.exitValue() == 0 ? Optional.of(out) : Optional.empty();
  }

  /**
   * The greeting of the listener of ns2 when a TCP connection from ns1 to 10.10.0.2 {@code port} is
   * accepted within 2 seconds; empty when it is refused or nothing answers (a dropped SYN).
   */
  static Optional<String> connect(NetnsSandbox sb, int port) throws Exception {
    return run(
            sb,
            "ip",
            "netns",
            "exec",
            "ns1",
            "timeout",
            "2",
            "bash",
            "-c",
            "exec 3<>/dev/tcp/10.10.0.2/" + port + " && head -n 1 <&3")
        .map(String::strip);
  }

  static String inputRules(NetnsSandbox sb) throws Exception {
    return run(sb, "ip", "netns", "exec", "ns2", "iptables", "-S", "INPUT").orElseThrow();
  }

  static JsonNode downstreamResync(int restPort) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + restPort + "/scheduler/downstream-resync"))
                .timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return new ObjectMapper().readTree(r.body());
  }

  /** {@code Operation Key -> NewState} of the executed operations of a transaction's record. */
  static List<String> executed(JsonNode txn) {
    List<String> out = new ArrayList<>();
    txn.path("Executed")
        .forEach(
            op ->
                out.add(
                    op.path("Operation").asText()
                        + " "
                        + op.path("Key").asText()
                        + " -> "
                        + op.path("NewState").asText()));
    return out;
  }

  static void assertAllConfigured(Agent agent) {
    for (String key : agent.northbound().desired().keySet()) {
      assertThat(agent.scheduler().valueStatus(key).state())
          .as(key)
          .isEqualTo(ValueState.CONFIGURED);
    }
  }

  @Test
  void bridgeExampleCarriesTrafficDropsItsPortAndIsRepairedByADownstreamResync() throws Exception {
    try (NetnsSandbox sb = sandbox();
        IpRoute2Calls calls = new IpRoute2Calls(sb.prefix(), Duration.ofSeconds(10))) {
      AgentConfig cfg =
          AgentConfig.builder()
              .configDir(exampleDir("config-bridge"))
              .restAddress("127.0.0.1:0")
              .printTxnSummary(false)
              .enablePlugin("linux")
              .build();
      String chain = LinuxKeys.ruleChainKey("ns2-input");
      try (Agent agent = Agent.start(cfg, List.of(new LinuxAgentPlugin(calls)))) {
        int restPort =
            agent.sources().stream()
                .filter(RestNorthbound.class::isInstance)
                .map(RestNorthbound.class::cast)
                .findFirst()
                .orElseThrow()
                .port();
        assertThat(agent.northbound().desired())
            .containsOnlyKeys(
                "config/linux/interfaces/v2/interface/u1",
                "config/linux/interfaces/v2/interface/u2",
                LinuxKeys.linkKey("vx1"),
                LinuxKeys.linkKey("vx2"),
                LinuxKeys.linkKey("br1"),
                LinuxKeys.linkKey("br2"),
                LinuxKeys.portKey("vx1"),
                LinuxKeys.portKey("vx2"),
                chain);
        assertAllConfigured(agent);
        assertThat(link(calls, "ns1", "br1").addresses()).containsExactly("10.10.0.1/24");
        assertThat(run(sb, "ip", "-n", "ns1", "-d", "link", "show", "dev", "vx1").orElseThrow())
            .contains("master br1")
            .contains("vxlan id 42 remote 192.168.50.2 local 192.168.50.1 dev u1");
        assertThat(run(sb, "ip", "-n", "ns2", "link", "show", "dev", "vx2").orElseThrow())
            .contains("master br2");
        assertThat(inputRules(sb)).contains("-A INPUT -p tcp -m tcp --dport 8081 -j DROP");
        assertThat(ping(sb, "ns1", "10.10.0.2"))
            .as("ping from ns1 across the bridges and the tunnel")
            .isTrue();

        Process listener =
            new ProcessBuilder(
                    concat(
                        sb.prefix(),
                        "ip",
                        "netns",
                        "exec",
                        "ns2",
                        "python3",
                        exampleDir("").resolve("listen.py").toString(),
                        "8080",
                        "8081"))
                .redirectErrorStream(true)
                .start();
        try {
          BufferedReader out =
              new BufferedReader(
                  new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8));
          assertThat(out.readLine()).as("the listener (python3) started").isEqualTo("listening");
          assertThat(connect(sb, 8080)).contains("hello from port 8080");
          assertThat(connect(sb, 8081)).as("port 8081 is dropped").isEmpty();

          // the rule removed by hand: 8081 connects, until a downstream resync writes it again
          assertThat(
                  run(
                      sb,
                      "ip",
                      "netns",
                      "exec",
                      "ns2",
                      "iptables",
                      "-D",
                      "INPUT",
                      "-p",
                      "tcp",
                      "--dport",
                      "8081",
                      "-j",
                      "DROP"))
              .isPresent();
          assertThat(inputRules(sb)).doesNotContain("8081");
          assertThat(connect(sb, 8081)).contains("hello from port 8081");
          JsonNode resync = downstreamResync(restPort);
          assertThat(resync.path("ResyncType").asText()).isEqualTo("DownstreamResync");
          assertThat(executed(resync))
              .as("the record of the resync")
              .containsExactly("UPDATE " + chain + " -> CONFIGURED");
          assertThat(agent.scheduler().recordedTransaction(resync.path("SeqNum").asLong()))
              .isPresent();
          assertThat(inputRules(sb)).contains("-A INPUT -p tcp -m tcp --dport 8081 -j DROP");
          assertThat(connect(sb, 8081)).as("port 8081 is dropped again").isEmpty();
          assertThat(connect(sb, 8080)).contains("hello from port 8080");
          assertAllConfigured(agent);

          // the tunnel taken out of its bridge by hand: ping fails until a downstream resync
          assertThat(run(sb, "ip", "-n", "ns1", "link", "set", "dev", "vx1", "nomaster"))
              .isPresent();
          assertThat(ping(sb, "ns1", "10.10.0.2")).as("vx1 out of br1").isFalse();
          resync = downstreamResync(restPort);
          assertThat(executed(resync))
              .as("the record of the resync")
              .containsExactly("CREATE " + LinuxKeys.portKey("vx1") + " -> CONFIGURED");
          // the neighbour entry failed while the port was out: the first ping may have to wait
          assertThat(pingWithin(sb, "ns1", "10.10.0.2", Duration.ofSeconds(10)))
              .as("vx1 back in br1")
              .isTrue();
          assertThat(connect(sb, 8080)).contains("hello from port 8080");
          assertAllConfigured(agent);

          // nothing left to repair: a further downstream resync executes nothing
          assertThat(executed(downstreamResync(restPort))).isEmpty();
        } finally {
          listener.destroy();
          listener.waitFor(5, TimeUnit.SECONDS);
        }
      }
    }
  }

  static List<String> concat(List<String> prefix, String... rest) {
    List<String> out = new ArrayList<>(prefix);
    out.addAll(List.of(rest));
    return out;
  }

  /**
   * The demo's step 7: a route change that breaks ping, committed with {@code confirm-within} over
   * REST; the settings' ping probe fails, the agent rolls the change back at once, the file's route
   * is back in the kernel and ping works again.
   */
  @Test
  void aRouteChangeBreakingThePingProbeIsRolledBack() throws Exception {
    try (NetnsSandbox sb = sandbox();
        IpRoute2Calls calls = new IpRoute2Calls(sb.prefix(), Duration.ofSeconds(10))) {
      List<String> ping = new ArrayList<>(sb.prefix());
      ping.addAll(List.of("ip", "netns", "exec", "ns1", "ping", "-c", "1", "-W", "1", "10.0.2.1"));
      AgentConfig cfg =
          AgentConfig.builder()
              .configDir(exampleDir())
              .restAddress("127.0.0.1:0")
              .printTxnSummary(false)
              .enablePlugin("linux")
              .probes(List.of(Probe.command("ping-ns2", ping, null, Duration.ofSeconds(5))))
              .build();
      try (Agent agent = Agent.start(cfg, List.of(new LinuxAgentPlugin(calls)))) {
        int restPort =
            agent.sources().stream()
                .filter(RestNorthbound.class::isInstance)
                .map(RestNorthbound.class::cast)
                .findFirst()
                .orElseThrow()
                .port();
        assertThat(pingWithin(sb, "ns1", "10.0.2.1", Duration.ofSeconds(30))).isTrue();
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(
                        URI.create(
                            "http://127.0.0.1:" + restPort + "/configuration?confirm-within=2m"))
                    .timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/yaml")
                    .PUT(
                        HttpRequest.BodyPublishers.ofString(
                            "linuxConfig:\n  routes:\n  - outgoingInterface: veth1\n"
                                + "    dstNetwork: 10.0.2.0/24\n    gwAddr: 10.0.1.99\n"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        RecordedTxn last;
        do {
          List<RecordedTxn> h = agent.scheduler().transactionHistory();
          last = h.get(h.size() - 1);
          Thread.sleep(50);
        } while (!last.description().startsWith("rollback") && System.nanoTime() < end);
        assertThat(last.description()).startsWith("rollback: probe 'ping-ns2' failed: exit 1");
        assertThat(agent.confirmations().pending()).isEmpty();
        assertThat(calls.routes("ns1", "veth1"))
            .extracting(e -> e.destination() + " via " + e.gateway())
            .containsExactly("10.0.2.0/24 via 10.0.1.2");
        assertThat(ping(sb, "ns1", "10.0.2.1")).as("ping works again").isTrue();
      }
    }
  }
}
