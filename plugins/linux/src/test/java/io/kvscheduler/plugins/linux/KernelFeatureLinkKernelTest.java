package io.kvscheduler.plugins.linux;

import static io.kvscheduler.plugins.linux.LinkKernelTest.key;
import static io.kvscheduler.plugins.linux.LinkKernelTest.link;
import static io.kvscheduler.plugins.linux.LinkKernelTest.port;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.Route;
import io.kvscheduler.plugins.linux.model.links.BondLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.Port;
import io.kvscheduler.plugins.linux.model.links.VlanLink;
import io.kvscheduler.plugins.linux.model.links.VrfLink;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * VLAN sub-interfaces, bonds and VRF devices on the real kernel. Each test first makes a link of
 * that kind by hand in its private namespace: a kernel without the feature (its module absent)
 * answers {@code Unknown device type}, and only then is the test skipped, naming the feature; any
 * other failure of the probe fails the test.
 */
class KernelFeatureLinkKernelTest {
  KernelFixture k;

  @BeforeEach
  void start() {
    k = KernelFixture.start();
  }

  @AfterEach
  void stop() {
    if (k != null) {
      k.close();
    }
  }

  /**
   * Makes (and removes) a link with {@code ip link add ARGS}; skips the test when the kernel does
   * not know the kind: {@code feature} names what it lacks.
   */
  void requireKernelFeature(String feature, String... args) {
    String[] argv = new String[args.length + 3];
    argv[0] = "ip";
    argv[1] = "link";
    argv[2] = "add";
    System.arraycopy(args, 0, argv, 3, args.length);
    KernelFixture.Result r = k.run(argv);
    Assumptions.assumeFalse(
        r.code() != 0 && r.err().contains("Unknown device type"),
        "this kernel cannot make " + feature + " (ip link add: " + r.err().strip() + ")");
    assertThat(r.code()).as("probe of %s: %s", feature, r.err()).isZero();
    k.sh("ip", "link", "del", "probe0");
  }

  Map<String, Object> vethPair(String a, String b, String ns) {
    Interface x = Values.veth(a, b, ns).build();
    Interface y = Values.veth(b, a, ns).build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(x), x);
    m.put(Values.key(y), y);
    return m;
  }

  RecordedTxn put(String key, Object value) {
    return k.kvs.recordedTransaction(k.put(key, value)).orElseThrow();
  }

  JsonNode details(String ns, String name) {
    JsonNode l = k.ipJson(ns, "-d", "link", "show", "dev", name);
    assertThat(l).hasSize(1);
    return l.get(0);
  }

  void assertAdoptedAfterRestart() {
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).as("adopted").isEmpty();
    assertThat(KernelFixture.sbOperations(k.fullResync())).as("second resync").isEmpty();
  }

  @Test
  void vlanSubInterfaces() {
    k.sh("ip", "link", "add", "probe-p", "type", "veth", "peer", "name", "probe-q");
    requireKernelFeature(
        "VLAN links (802.1Q, kernel module 8021q)",
        "link",
        "probe-p",
        "name",
        "probe0",
        "type",
        "vlan",
        "id",
        "5");
    k.sh("ip", "link", "del", "probe-p");
    k.change(vethPair("e1", "e2", "ns1"));
    Link vlan =
        link("e1.5", "ns1", "10.0.5.1/24")
            .setVlan(VlanLink.newBuilder().setParent("e1").setId(5))
            .build();
    put(key(vlan), vlan);
    assertThat(k.state(key(vlan))).isEqualTo(ValueState.CONFIGURED);
    JsonNode d = details("ns1", "e1.5");
    assertThat(d.path("link").asText()).isEqualTo("e1");
    assertThat(d.path("linkinfo").path("info_data").path("id").asInt()).isEqualTo(5);
    assertAdoptedAfterRestart();
    int before = d.path("ifindex").asInt();
    Link mtu = vlan.toBuilder().setMtu(1400).build();
    assertThat(KernelFixture.sbOperations(put(key(mtu), mtu)))
        .containsExactly("UPDATE " + key(mtu));
    assertThat(details("ns1", "e1.5").path("ifindex").asInt()).isEqualTo(before);
    Link id = mtu.toBuilder().setVlan(VlanLink.newBuilder().setParent("e1").setId(6)).build();
    assertThat(KernelFixture.sbOperations(put(key(id), id)))
        .containsSubsequence("DELETE " + key(id), "CREATE " + key(id));
    assertThat(details("ns1", "e1.5").path("linkinfo").path("info_data").path("id").asInt())
        .isEqualTo(6);
    k.sh("ip", "-n", "ns1", "link", "del", "e1.5");
    assertThat(KernelFixture.sbOperations(k.downstreamResync())).contains("CREATE " + key(id));
    put(key(id), null);
    assertThat(k.link("ns1", "e1.5")).isNull();
  }

  @Test
  void bondsWithMembers() {
    requireKernelFeature("bonds (kernel module bonding)", "probe0", "type", "bond");
    k.change(vethPair("b1", "b2", "ns1"));
    Link bond = link("bond0", "ns1").setBond(BondLink.newBuilder()).build();
    Port member = port("b1", "bond0");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(LinuxKeys.portKey("b1"), member);
    m.put(key(bond), bond);
    k.change(m);
    assertThat(k.state(LinuxKeys.portKey("b1"))).isEqualTo(ValueState.CONFIGURED);
    assertThat(details("ns1", "b1").path("master").asText()).isEqualTo("bond0");
    assertThat(details("ns1", "bond0").path("linkinfo").path("info_data").path("mode").asText())
        .isEqualTo("balance-rr");
    assertAdoptedAfterRestart();
    Link backup =
        bond.toBuilder()
            .setBond(BondLink.newBuilder().setMode(BondLink.Mode.ACTIVE_BACKUP))
            .build();
    assertThat(KernelFixture.sbOperations(put(key(backup), backup)))
        .containsSubsequence("DELETE " + key(bond), "CREATE " + key(bond));
    assertThat(details("ns1", "bond0").path("linkinfo").path("info_data").path("mode").asText())
        .isEqualTo("active-backup");
    assertThat(details("ns1", "b1").path("master").asText()).isEqualTo("bond0");
    k.sh("ip", "-n", "ns1", "link", "set", "dev", "b1", "nomaster");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("CREATE " + LinuxKeys.portKey("b1"));
    put(key(backup), null);
    assertThat(k.link("ns1", "bond0")).isNull();
    assertThat(k.state(LinuxKeys.portKey("b1"))).isEqualTo(ValueState.PENDING);
  }

  @Test
  void vrfDevicesWithMembersAndRoutesInTheirTable() {
    requireKernelFeature("VRF devices (kernel module vrf)", "probe0", "type", "vrf", "table", "10");
    Map<String, Object> m = vethPair("r1", "r2", "ns1");
    Interface r1 = Values.veth("r1", "r2", "ns1", "10.0.8.1/24").build();
    m.put(Values.key(r1), r1);
    Link vrf = link("vrf-blue", "ns1").setVrf(VrfLink.newBuilder().setRoutingTable(10)).build();
    m.put(key(vrf), vrf);
    m.put(LinuxKeys.portKey("r1"), port("r1", "vrf-blue"));
    Route route =
        Route.newBuilder()
            .setOutgoingInterface("r1")
            .setDstNetwork("10.0.80.0/24")
            .setGwAddr("10.0.8.2")
            .setTable(10)
            .build();
    m.put(Values.key(route), route);
    k.change(m);
    assertThat(k.state(Values.key(route))).isEqualTo(ValueState.CONFIGURED);
    assertThat(details("ns1", "r1").path("master").asText()).isEqualTo("vrf-blue");
    assertThat(k.ipJson("ns1", "route", "show", "table", "10", "10.0.80.0/24")).hasSize(1);
    assertAdoptedAfterRestart();
    Link other = vrf.toBuilder().setVrf(VrfLink.newBuilder().setRoutingTable(11)).build();
    assertThat(KernelFixture.sbOperations(put(key(other), other)))
        .containsSubsequence("DELETE " + key(vrf), "CREATE " + key(vrf));
    assertThat(details("ns1", "vrf-blue").path("linkinfo").path("info_data").path("table").asInt())
        .isEqualTo(11);
    put(key(other), null);
    assertThat(k.link("ns1", "vrf-blue")).isNull();
  }

  @Test
  void vrfDeviceInterfacesAsVppAgentHasThem() {
    requireKernelFeature("VRF devices (kernel module vrf)", "probe0", "type", "vrf", "table", "10");
    Interface vrf =
        Interface.newBuilder()
            .setName("vrf1")
            .setType(Interface.Type.VRF_DEVICE)
            .setNamespace(Values.ns("ns1"))
            .setEnabled(true)
            .setVrfDev(
                io.kvscheduler.plugins.linux.model.interfaces.VrfDevLink.newBuilder()
                    .setRoutingTable(10))
            .build();
    Interface v1 =
        Values.veth("v1", "v2", "ns1", "10.0.6.1/24").setVrfMasterInterface("vrf1").build();
    Interface v2 = Values.veth("v2", "v1", "ns1").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(v1), v1);
    m.put(Values.key(v2), v2);
    k.change(m);
    String binding = LinuxKeys.vrfKey("v1", "vrf1");
    assertThat(k.state(binding)).as("waits for its VRF").isEqualTo(ValueState.PENDING);
    put(Values.key(vrf), vrf);
    assertThat(k.state(binding)).isEqualTo(ValueState.CONFIGURED);
    assertThat(details("ns1", "v1").path("master").asText()).isEqualTo("vrf1");
    assertThat(details("ns1", "vrf1").path("linkinfo").path("info_data").path("table").asInt())
        .isEqualTo(10);
    assertThat(k.addresses("ns1", "v1")).containsExactly("10.0.6.1/24");
    assertAdoptedAfterRestart();
    Interface other =
        vrf.toBuilder().setVrfDev(vrf.getVrfDev().toBuilder().setRoutingTable(11)).build();
    assertThat(KernelFixture.sbOperations(put(Values.key(other), other)))
        .containsSubsequence("DELETE " + Values.key(vrf), "CREATE " + Values.key(vrf));
    assertThat(details("ns1", "v1").path("master").asText()).isEqualTo("vrf1");
    put(Values.key(other), null);
    assertThat(k.link("ns1", "vrf1")).isNull();
    assertThat(k.state(binding)).isEqualTo(ValueState.PENDING);
  }
}
