package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.LinuxAgentPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent with the Linux plugin takes address allocations in vpp-agent's YAML configuration
 * format (group {@code netallocConfig}, field {@code ipAddresses}) beside the Linux values that
 * reference them, and configures the kernel of a private namespace with the allocated addresses.
 */
class LinuxNetallocAgentTest {
  static final String CONFIG =
      """
      netallocConfig:
        ipAddresses:
        - networkName: net1
          interfaceName: veth1
          address: 10.0.1.1/24
          gw: 10.0.1.2
      linuxConfig:
        interfaces:
        - name: veth1
          type: VETH
          namespace: {type: NSID, reference: ns1}
          enabled: true
          ipAddresses: ["alloc:net1"]
          veth: {peerIfName: veth2}
        - name: veth2
          type: VETH
          namespace: {type: NSID, reference: ns2}
          enabled: true
          ipAddresses: [10.0.1.2/24]
          veth: {peerIfName: veth1}
        routes:
        - outgoingInterface: veth1
          dstNetwork: 10.0.2.0/24
          gwAddr: alloc:net1/GW
      """;

  @Test
  void allocationsInTheYamlFormatReachTheKernel(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("netalloc.yaml"), CONFIG);
    try (NetnsSandbox sb = LinuxExampleTest.sandbox();
        IpRoute2Calls calls = new IpRoute2Calls(sb.prefix(), Duration.ofSeconds(10))) {
      AgentConfig cfg =
          AgentConfig.builder()
              .configDir(dir)
              .restAddress(null)
              .printTxnSummary(false)
              .enablePlugin("linux")
              .build();
      try (Agent agent = Agent.start(cfg, List.of(new LinuxAgentPlugin(calls)))) {
        assertThat(agent.northbound().desired())
            .containsOnlyKeys(
                "config/netalloc/v1/ip/network/net1/interface/veth1",
                "config/linux/interfaces/v2/interface/veth1",
                "config/linux/interfaces/v2/interface/veth2",
                "config/linux/l3/v2/route/10.0.2.0/24/veth1");
        for (String key : agent.northbound().desired().keySet()) {
          assertThat(agent.scheduler().valueStatus(key).state())
              .as(key)
              .isEqualTo(ValueState.CONFIGURED);
        }
        assertThat(LinuxExampleTest.link(calls, "ns1", "veth1").addresses())
            .containsExactly("10.0.1.1/24");
        assertThat(calls.routes("ns1", "veth1"))
            .extracting(r -> r.destination() + " via " + r.gateway())
            .containsExactly("10.0.2.0/24 via 10.0.1.2");
        assertThat(LinuxExampleTest.ping(sb, "ns1", "10.0.1.2")).isTrue();
      }
    }
  }
}
