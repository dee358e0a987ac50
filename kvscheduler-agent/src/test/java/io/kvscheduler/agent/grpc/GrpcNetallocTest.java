package io.kvscheduler.agent.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.grpc.GrpcApi;
import io.kvscheduler.grpc.proto.configurator.Config;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import io.kvscheduler.grpc.proto.netalloc.IPAllocation;
import io.kvscheduler.plugins.linux.LinuxAgentPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.interfaces.VethLink;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The gRPC configurator with the Linux plugin on: {@code netalloc_config} carries address
 * allocations, applied with the Linux values that reference them and read back by {@code Get}.
 */
class GrpcNetallocTest {
  static Interface veth(String name, String peer, String ns, String ip) {
    return Interface.newBuilder()
        .setName(name)
        .setType(Interface.Type.VETH)
        .setEnabled(true)
        .setNamespace(
            NetNamespace.newBuilder().setType(NetNamespace.ReferenceType.NSID).setReference(ns))
        .addIpAddresses(ip)
        .setVeth(VethLink.newBuilder().setPeerIfName(peer))
        .build();
  }

  @Test
  void netallocConfigCarriesAllocations() throws Exception {
    NetnsSandbox sb;
    try {
      sb = NetnsSandbox.start();
    } catch (IOException e) {
      Assumptions.abort("the kernel or the system forbids private network namespaces here: " + e);
      return;
    }
    try (sb;
        IpRoute2Calls calls = new IpRoute2Calls(sb.prefix(), Duration.ofSeconds(10))) {
      LinuxAgentPlugin linux = new LinuxAgentPlugin(calls);
      try (Agent agent =
          Agent.start(
              AgentConfig.builder()
                  .restAddress(null)
                  .printTxnSummary(false)
                  .enablePlugin("linux")
                  .build(),
              List.of(linux))) {
        GrpcApi api =
            new GrpcApi(
                agent.scheduler(),
                agent.models(),
                agent.northbound(),
                linux.protoFiles(),
                List.of(),
                null,
                GrpcApi.Limits.DEFAULT,
                false);
        String name = InProcessServerBuilder.generateName();
        Server server = api.addTo(InProcessServerBuilder.forName(name)).build().start();
        ManagedChannel channel = InProcessChannelBuilder.forName(name).build();
        try {
          var configurator =
              ConfiguratorServiceGrpc.newBlockingStub(channel)
                  .withDeadlineAfter(20, TimeUnit.SECONDS);
          IPAllocation alloc =
              IPAllocation.newBuilder()
                  .setNetworkName("net1")
                  .setInterfaceName("veth1")
                  .setAddress("10.0.1.1/24")
                  .setGw("10.0.1.2")
                  .build();
          Config config =
              Config.newBuilder()
                  .setNetallocConfig(
                      io.kvscheduler.grpc.proto.netalloc.ConfigData.newBuilder()
                          .addIpAddresses(alloc))
                  .setLinuxConfig(
                      io.kvscheduler.grpc.proto.linux.ConfigData.newBuilder()
                          .addInterfaces(veth("veth1", "veth2", "ns1", "alloc:net1/veth1"))
                          .addInterfaces(veth("veth2", "veth1", "ns2", "10.0.1.2/24")))
                  .build();
          configurator.update(
              UpdateRequest.newBuilder().setUpdate(config).setWaitDone(true).build());
          String key = "config/netalloc/v1/ip/network/net1/interface/veth1";
          assertThat(agent.scheduler().valueStatus(key).state()).isEqualTo(ValueState.CONFIGURED);
          Link veth1 = calls.link("ns1", "veth1").orElseThrow();
          assertThat(veth1.addresses()).containsExactly("10.0.1.1/24");
          assertThat(
                  configurator
                      .get(GetRequest.getDefaultInstance())
                      .getConfig()
                      .getNetallocConfig()
                      .getIpAddressesList())
              .containsExactly(alloc);
        } finally {
          channel.shutdownNow();
          server.shutdownNow();
          api.close();
        }
      }
    }
  }
}
