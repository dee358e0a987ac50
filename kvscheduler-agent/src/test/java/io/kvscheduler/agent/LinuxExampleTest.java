package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.LinuxAgentPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The agent with the Linux plugin enabled, reading {@code examples/linux/config} through the file
 * northbound, configures the real kernel of a private network namespace: the example's ping works,
 * and a restarted agent's first resync executes no operation.
 */
class LinuxExampleTest {

  static Path exampleDir() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isDirectory(p.resolve("examples/linux/config"))) {
        return p.resolve("examples/linux/config");
      }
    }
    throw new AssertionError(
        "examples/linux/config not found above " + Path.of("").toAbsolutePath());
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
}
