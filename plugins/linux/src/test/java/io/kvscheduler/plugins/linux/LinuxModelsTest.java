package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.linux.model.IpNet;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.interfaces.VethLink;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The Linux models speak vpp-agent's wire and JSON forms: names, numbers, keys, values. */
class LinuxModelsTest {
  final ModelRegistry registry = new ModelRegistry();

  LinuxModelsTest() {
    LinuxModels.registerAll(registry);
  }

  static Map<String, Integer> fields(Descriptor d) {
    Map<String, Integer> out = new LinkedHashMap<>();
    for (FieldDescriptor f : d.getFields()) {
      out.put(f.getName(), f.getNumber());
    }
    return out;
  }

  @Test
  void messagesHaveVppAgentsNamesAndFieldNumbers() {
    assertThat(Interface.getDescriptor().getFullName())
        .isEqualTo("ligato.linux.interfaces.Interface");
    assertThat(fields(Interface.getDescriptor()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.ofEntries(
                Map.entry("name", 1),
                Map.entry("type", 2),
                Map.entry("namespace", 3),
                Map.entry("host_if_name", 4),
                Map.entry("enabled", 5),
                Map.entry("ip_addresses", 6),
                Map.entry("phys_address", 7),
                Map.entry("mtu", 8),
                Map.entry("link_only", 9),
                Map.entry("vrf_master_interface", 10),
                Map.entry("veth", 20),
                Map.entry("tap", 21),
                Map.entry("vrf_dev", 22)));
    assertThat(Interface.Type.DUMMY.getNumber()).isEqualTo(6);
    assertThat(Interface.Type.EXISTING.getNumber()).isEqualTo(4);
    assertThat(fields(VethLink.getDescriptor()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("peer_if_name", 1, "rx_checksum_offloading", 2, "tx_checksum_offloading", 3));
    assertThat(fields(NetNamespace.getDescriptor()))
        .containsExactlyInAnyOrderEntriesOf(Map.of("type", 1, "reference", 2));
    assertThat(NetNamespace.getDescriptor().getFullName())
        .isEqualTo("ligato.linux.namespace.NetNamespace");
    assertThat(Route.getDescriptor().getFullName()).isEqualTo("ligato.linux.l3.Route");
    assertThat(fields(Route.getDescriptor()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "outgoing_interface",
                1,
                "scope",
                2,
                "dst_network",
                3,
                "gw_addr",
                4,
                "metric",
                5,
                "table", // our extension, far above vpp-agent's numbers
                100));
    assertThat(Route.Scope.LINK.getNumber()).isEqualTo(3);
    assertThat(ARPEntry.getDescriptor().getFullName()).isEqualTo("ligato.linux.l3.ARPEntry");
    assertThat(fields(ARPEntry.getDescriptor()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("interface", 1, "ip_address", 2, "hw_address", 3));
  }

  @Test
  void ruleChainHasVppAgentsNamesAndNumbers() throws Exception {
    assertThat(RuleChain.getDescriptor().getFullName())
        .isEqualTo("ligato.linux.iptables.RuleChain");
    assertThat(fields(RuleChain.getDescriptor()))
        .containsExactlyInAnyOrderEntriesOf(
            Map.ofEntries(
                Map.entry("name", 1),
                Map.entry("namespace", 2),
                Map.entry("interfaces", 3),
                Map.entry("protocol", 4),
                Map.entry("table", 5),
                Map.entry("chain_type", 6),
                Map.entry("chain_name", 7),
                Map.entry("default_policy", 8),
                Map.entry("rules", 10)));
    assertThat(RuleChain.Table.SECURITY.getNumber()).isEqualTo(4);
    assertThat(RuleChain.ChainType.POSTROUTING.getNumber()).isEqualTo(5);
    assertThat(RuleChain.Policy.RETURN.getNumber()).isEqualTo(4);
    Object chain =
        registry.decode(
            "config/linux/iptables/v2/rulechain/chain1",
            "{\"name\":\"chain1\",\"namespace\":{\"type\":\"NSID\",\"reference\":\"ns1\"},"
                + "\"protocol\":\"IPV4\",\"table\":\"NAT\",\"chain_type\":\"POSTROUTING\","
                + "\"rules\":[\"-o eth0 -j MASQUERADE\"]}");
    assertThat(registry.keyOf(chain)).isEqualTo("config/linux/iptables/v2/rulechain/chain1");
    assertThat(((RuleChain) chain).getTable()).isEqualTo(RuleChain.Table.NAT);
  }

  @Test
  void decodesVppAgentsCanonicalEtcdValues() throws Exception {
    Object veth =
        registry.decode(
            "config/linux/interfaces/v2/interface/veth1",
            "{\"name\":\"veth1\",\"type\":\"VETH\",\"namespace\":{\"type\":\"NSID\","
                + "\"reference\":\"ns1\"},\"enabled\":true,\"ip_addresses\":[\"192.168.22.1/24\","
                + "\"10.0.2.2/24\"],\"phys_address\":\"D2:74:8C:12:67:D2\",\"mtu\":1500,"
                + "\"veth\":{\"peer_if_name\":\"veth2\"}}");
    assertThat(veth)
        .isEqualTo(
            Interface.newBuilder()
                .setName("veth1")
                .setType(Interface.Type.VETH)
                .setNamespace(Values.ns("ns1"))
                .setEnabled(true)
                .addIpAddresses("192.168.22.1/24")
                .addIpAddresses("10.0.2.2/24")
                .setPhysAddress("D2:74:8C:12:67:D2")
                .setMtu(1500)
                .setVeth(VethLink.newBuilder().setPeerIfName("veth2"))
                .build());
    Object arp =
        registry.decode(
            "config/linux/l3/v2/arp/veth1/130.0.0.1",
            "{\"interface\":\"veth1\",\"ip_address\":\"130.0.0.1\","
                + "\"hw_address\":\"46:06:18:DB:05:3A\"}");
    assertThat(registry.keyOf(arp)).isEqualTo("config/linux/l3/v2/arp/veth1/130.0.0.1");
    Object route =
        registry.decode(
            "config/linux/l3/v2/route/10.0.2.0/24/veth1",
            "{\"outgoingInterface\":\"veth1\",\"scope\":1,\"dstNetwork\":\"10.0.2.0/24\","
                + "\"metric\":100}");
    assertThat(((Route) route).getScope()).isEqualTo(Route.Scope.GLOBAL);
    assertThat(registry.encode(route))
        .isEqualTo(
            "{\"outgoing_interface\":\"veth1\","
                + "\"scope\":\"GLOBAL\",\"dst_network\":\"10.0.2.0/24\",\"metric\":100}");
  }

  @Test
  void routeKeysUseTheNormalisedNetwork() throws Exception {
    assertThat(registry.keyOf(Values.route("veth1", "10.0.2.5/24", "")))
        .isEqualTo("config/linux/l3/v2/route/10.0.2.0/24/veth1");
    assertThat(registry.keyOf(Values.route("e0", "2001:DB8:0:0:1::5/64", "")))
        .isEqualTo("config/linux/l3/v2/route/2001:db8::/64/e0");
    assertThat(registry.keyOf(Values.route("e0", "bogus", "")))
        .isEqualTo("config/linux/l3/v2/route/<invalid>/0/e0");
    assertThatThrownBy(
            () ->
                registry.decode(
                    "config/linux/l3/v2/route/10.0.2.5/24/veth1",
                    "{\"outgoing_interface\":\"veth1\",\"dst_network\":\"10.0.2.5/24\"}"))
        .isInstanceOf(ModelException.class)
        .hasMessageContaining(
            "key does not match the key computed from the value:"
                + " config/linux/l3/v2/route/10.0.2.0/24/veth1");
  }

  @Test
  void yamlFieldsAreVppAgentsOnes() {
    assertThat(LinuxModels.INTERFACE.yamlGroup()).isEqualTo("linuxConfig");
    assertThat(LinuxModels.all())
        .extracting(m -> m.yamlField())
        .containsExactly(
            "interfaces",
            "routes",
            "arpEntries",
            "RuleChain_list",
            "links",
            "ports",
            "ipAddresses");
    assertThat(LinuxModels.IP_ALLOCATION.yamlGroup()).isEqualTo("netallocConfig");
    assertThat(LinuxModels.IP_ALLOCATION.name()).isEqualTo("netalloc.ip");
    assertThat(LinuxModels.IP_ALLOCATION.keyPrefix()).isEqualTo("config/netalloc/v1/ip/");
    assertThat(LinuxModels.LINK.yamlGroup()).isEqualTo("linuxConfig");
    assertThat(LinuxModels.LINK.keyPrefix()).isEqualTo("config/linux/links/v1/link/");
    assertThat(LinuxModels.PORT.keyPrefix()).isEqualTo("config/linux/links/v1/port/");
  }

  @Test
  void aRouteWithoutATableIsVppAgentsAndOneWithATableHasItInItsKey() throws Exception {
    Route main = Values.route("veth1", "10.0.2.0/24", "10.0.1.2");
    assertThat(registry.encode(main)).doesNotContain("table");
    // vpp-agent's binary form (fields 1 to 5) reads back the same
    assertThat(Route.parseFrom(main.toByteArray())).isEqualTo(main);
    Route t = main.toBuilder().setTable(100).build();
    assertThat(registry.keyOf(t)).isEqualTo("config/linux/l3/v2/route/10.0.2.0/24/veth1/table/100");
    assertThat(registry.decode(registry.keyOf(t), registry.encode(t))).isEqualTo(t);
    // a reader without field 100 (vpp-agent) skips it: the rest of the route is intact
    Route withoutTable =
        Route.parseFrom(
            com.google.protobuf.UnknownFieldSet.newBuilder()
                .mergeFrom(t.toByteArray())
                .clearField(100)
                .build()
                .toByteArray());
    assertThat(withoutTable).isEqualTo(main);
  }

  @Test
  void ipv6IsWrittenAsGoWritesIt() {
    assertThat(IpNet.parse("2001:0db8:0000:0000:0000:ff00:0042:8329/64").orElseThrow().toString())
        .isEqualTo("2001:db8::ff00:42:8329/64");
    assertThat(IpNet.parse("::1/128").orElseThrow().toString()).isEqualTo("::1/128");
    assertThat(IpNet.parse("fe80::/10").orElseThrow().network().toString()).isEqualTo("fe80::/10");
    assertThat(IpNet.parse("10.0.0.1/33")).isEmpty();
    assertThat(IpNet.parse("example.com/24")).isEmpty();
  }
}
