package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.links.BridgeLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.MacvlanLink;
import io.kvscheduler.plugins.linux.model.links.Port;
import io.kvscheduler.plugins.linux.model.links.VxlanLink;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bridges with veth ports, VXLAN tunnels and macvlan links on the real kernel: made, changed in
 * place or re-created field by field, deleted, adopted by a restarted agent (a second resync
 * executes nothing) and repaired by a downstream resync after changes made by hand.
 */
class LinkKernelTest {
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

  static Link.Builder link(String name, String ns, String... ips) {
    Link.Builder b = Link.newBuilder().setName(name).setEnabled(true);
    if (!ns.isEmpty()) {
      b.setNamespace(Values.ns(ns));
    }
    for (String ip : ips) {
      b.addIpAddresses(ip);
    }
    return b;
  }

  static String key(Link l) {
    return LinuxKeys.linkKey(l.getName());
  }

  static Port port(String iface, String master) {
    return Port.newBuilder().setInterface(iface).setMaster(master).build();
  }

  static String key(Port p) {
    return LinuxKeys.portKey(p.getInterface());
  }

  RecordedTxn put(String key, Object value) {
    return k.kvs.recordedTransaction(k.put(key, value)).orElseThrow();
  }

  JsonNode details(String ns, String name) {
    JsonNode l = k.ipJson(ns, "-d", "link", "show", "dev", name);
    assertThat(l).as("link %s in %s", name, ns).hasSize(1);
    return l.get(0);
  }

  int index(String ns, String name) {
    return details(ns, name).path("ifindex").asInt();
  }

  void assertAdoptedAfterRestart() {
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).as("adopted").isEmpty();
    assertThat(KernelFixture.sbOperations(k.fullResync())).as("second resync").isEmpty();
  }

  /** Bridge br1 (10.0.9.1/24) in ns1 with port p1, whose peer p2 (10.0.9.2/24) is in ns2. */
  Map<String, Object> bridgeTopology(Link br) {
    Interface p1 = Values.veth("p1", "p2", "ns1").build();
    Interface p2 = Values.veth("p2", "p1", "ns2", "10.0.9.2/24").build();
    Port port = port("p1", "br1");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(key(port), port); // in any order: dependencies decide
    m.put(Values.key(p1), p1);
    m.put(Values.key(p2), p2);
    m.put(key(br), br);
    return m;
  }

  @Test
  void aBridgeWithAVethPortCarriesTrafficAndChangesInPlace() {
    Link br = link("br1", "ns1", "10.0.9.1/24").setBridge(BridgeLink.getDefaultInstance()).build();
    k.change(bridgeTopology(br));
    assertThat(k.state(key(br))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(LinuxKeys.portKey("p1"))).isEqualTo(ValueState.CONFIGURED);
    JsonNode b = details("ns1", "br1");
    assertThat(b.path("linkinfo").path("info_kind").asText()).isEqualTo("bridge");
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("br1");
    assertThat(k.addresses("ns1", "br1")).containsExactly("10.0.9.1/24");
    assertThat(k.ping("ns2", "10.0.9.1")).isTrue();
    assertAdoptedAfterRestart();

    int before = index("ns1", "br1");
    // each field in place: STP, MTU, MAC, host name, down and up again
    Link stp = br.toBuilder().setBridge(BridgeLink.newBuilder().setStp(true)).build();
    assertThat(KernelFixture.sbOperations(put(key(stp), stp))).containsExactly("UPDATE " + key(br));
    assertThat(details("ns1", "br1").path("linkinfo").path("info_data").path("stp_state").asInt())
        .isEqualTo(1);
    // STP off again (ports would wait 30 s in its listening and learning states)
    Link mtu = br.toBuilder().setMtu(1400).setPhysAddress("02:00:00:00:09:01").build();
    assertThat(KernelFixture.sbOperations(put(key(mtu), mtu))).containsExactly("UPDATE " + key(br));
    assertThat(details("ns1", "br1").path("mtu").asInt()).isEqualTo(1400);
    assertThat(details("ns1", "br1").path("address").asText()).isEqualTo("02:00:00:00:09:01");
    Link renamed = mtu.toBuilder().setHostIfName("bridge-a").build();
    assertThat(KernelFixture.sbOperations(put(key(renamed), renamed)))
        .containsExactly("UPDATE " + key(br));
    assertThat(index("ns1", "bridge-a")).as("same link, renamed").isEqualTo(before);
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("bridge-a");
    Link down = renamed.toBuilder().setEnabled(false).build();
    put(key(down), down);
    assertThat(TopologyKernelTest.flags(details("ns1", "bridge-a"))).doesNotContain("UP");
    put(key(renamed), renamed);
    assertThat(k.ping("ns2", "10.0.9.1")).isTrue();
    assertThat(index("ns1", "bridge-a")).isEqualTo(before);
    assertAdoptedAfterRestart();

    // the port taken out and the bridge's address removed by hand: a downstream resync repairs
    k.sh("ip", "-n", "ns1", "link", "set", "dev", "p1", "nomaster");
    k.sh("ip", "-n", "ns1", "addr", "del", "10.0.9.1/24", "dev", "bridge-a");
    RecordedTxn repair = k.downstreamResync();
    assertThat(KernelFixture.sbOperations(repair))
        .contains("CREATE " + LinuxKeys.portKey("p1"))
        .contains(
            "CREATE " + LinuxKeys.addressKey("br1", LinuxKeys.AddressSource.STATIC, "10.0.9.1/24"));
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("bridge-a");
    assertThat(k.ping("ns2", "10.0.9.1")).isTrue();

    // the bridge deleted by hand: made again with its port and address
    k.sh("ip", "-n", "ns1", "link", "del", "bridge-a");
    repair = k.downstreamResync();
    assertThat(KernelFixture.sbOperations(repair)).contains("CREATE " + key(br));
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("bridge-a");
    assertThat(k.ping("ns2", "10.0.9.1")).isTrue();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // the port removed: no master; the bridge deleted
    put(LinuxKeys.portKey("p1"), null);
    assertThat(details("ns1", "p1").path("master").isMissingNode()).isTrue();
    put(key(br), null);
    assertThat(k.link("ns1", "bridge-a")).isNull();
    assertThat(k.link("ns1", "p1")).isNotNull();
    assertAdoptedAfterRestart();
  }

  @Test
  void aPortWaitsForItsBridgeAndANewMasterIsSetInPlace() {
    Interface p1 = Values.veth("p1", "p2", "ns1").build();
    Interface p2 = Values.veth("p2", "p1", "ns1").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(p1), p1);
    m.put(Values.key(p2), p2);
    m.put(LinuxKeys.portKey("p1"), port("p1", "br1"));
    k.change(m);
    assertThat(k.state(LinuxKeys.portKey("p1"))).isEqualTo(ValueState.PENDING);
    Link br1 = link("br1", "ns1").setBridge(BridgeLink.getDefaultInstance()).build();
    Link br2 = link("br2", "ns1").setBridge(BridgeLink.getDefaultInstance()).build();
    m = new LinkedHashMap<>();
    m.put(key(br1), br1);
    m.put(key(br2), br2);
    k.change(m);
    assertThat(k.state(LinuxKeys.portKey("p1"))).isEqualTo(ValueState.CONFIGURED);
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("br1");
    RecordedTxn moved = put(LinuxKeys.portKey("p1"), port("p1", "br2"));
    assertThat(KernelFixture.sbOperations(moved))
        .containsExactly("UPDATE " + LinuxKeys.portKey("p1"));
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("br2");
    // moved to another bridge by hand: repaired
    k.sh("ip", "-n", "ns1", "link", "set", "dev", "p1", "master", "br1");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("UPDATE " + LinuxKeys.portKey("p1"));
    assertThat(details("ns1", "p1").path("master").asText()).isEqualTo("br2");
    // its bridge deleted: the port waits again
    put(key(br2), null);
    assertThat(k.state(LinuxKeys.portKey("p1"))).isEqualTo(ValueState.PENDING);
    assertThat(details("ns1", "p1").path("master").isMissingNode()).isTrue();
    assertAdoptedAfterRestart();
  }

  static Link vxlan(
      String name, String ns, String local, String remote, String underlay, String ip) {
    return link(name, ns, ip)
        .setVxlan(
            VxlanLink.newBuilder()
                .setVni(42)
                .setLocal(local)
                .setRemote(remote)
                .setUnderlay(underlay))
        .build();
  }

  @Test
  void aVxlanTunnelWaitsForItsUnderlayCarriesTrafficAndIsRecreatedForANewVni() {
    Link vx1 = vxlan("vx1", "ns1", "192.168.50.1", "192.168.50.2", "u1", "10.42.0.1/24");
    Link vx2 = vxlan("vx2", "ns2", "192.168.50.2", "192.168.50.1", "u2", "10.42.0.2/24");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(key(vx1), vx1);
    m.put(key(vx2), vx2);
    k.change(m);
    assertThat(k.state(key(vx1))).as("waits for its underlay").isEqualTo(ValueState.PENDING);
    Interface u1 = Values.veth("u1", "u2", "ns1", "192.168.50.1/24").build();
    Interface u2 = Values.veth("u2", "u1", "ns2", "192.168.50.2/24").build();
    m = new LinkedHashMap<>();
    m.put(Values.key(u1), u1);
    m.put(Values.key(u2), u2);
    k.change(m);
    assertThat(k.state(key(vx1))).isEqualTo(ValueState.CONFIGURED);
    JsonNode data = details("ns1", "vx1").path("linkinfo").path("info_data");
    assertThat(data.path("id").asInt()).isEqualTo(42);
    assertThat(data.path("remote").asText()).isEqualTo("192.168.50.2");
    assertThat(data.path("local").asText()).isEqualTo("192.168.50.1");
    assertThat(data.path("link").asText()).isEqualTo("u1");
    assertThat(data.path("port").asInt()).isEqualTo(4789);
    assertThat(k.ping("ns1", "10.42.0.2")).as("through the tunnel").isTrue();
    assertAdoptedAfterRestart();

    // the remote in place
    int before = index("ns1", "vx1");
    Link remote =
        vx1.toBuilder().setVxlan(vx1.getVxlan().toBuilder().setRemote("192.168.50.9")).build();
    assertThat(KernelFixture.sbOperations(put(key(remote), remote)))
        .containsExactly("UPDATE " + key(vx1));
    assertThat(index("ns1", "vx1")).isEqualTo(before);
    assertThat(details("ns1", "vx1").path("linkinfo").path("info_data").path("remote").asText())
        .isEqualTo("192.168.50.9");
    // changed back by hand: repaired in place
    k.sh("ip", "-n", "ns1", "link", "set", "dev", "vx1", "type", "vxlan", "remote", "192.168.50.2");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("UPDATE " + key(vx1));
    put(key(vx1), vx1);
    assertThat(k.ping("ns1", "10.42.0.2")).isTrue();

    // VNI, port, local address and underlay: the kernel cannot change them; re-created
    for (VxlanLink.Builder v :
        new VxlanLink.Builder[] {
          vx1.getVxlan().toBuilder().setVni(43),
          vx1.getVxlan().toBuilder().setVni(43).setDstPort(4790),
          vx1.getVxlan().toBuilder().setVni(43).setDstPort(4790).setLocal(""),
        }) {
      Link next = vx1.toBuilder().setVxlan(v).build();
      RecordedTxn txn = put(key(next), next);
      assertThat(KernelFixture.sbOperations(txn))
          .containsSubsequence("DELETE " + key(vx1), "CREATE " + key(vx1));
      assertThat(index("ns1", "vx1")).isNotEqualTo(before);
      before = index("ns1", "vx1");
      JsonNode d = details("ns1", "vx1").path("linkinfo").path("info_data");
      assertThat(d.path("id").asInt()).isEqualTo(v.getVni());
      assertThat(d.path("port").asInt()).isEqualTo(v.getDstPort() == 0 ? 4789 : v.getDstPort());
    }
    Interface u3 = Values.veth("u3", "u4", "ns1").build();
    Interface u4 = Values.veth("u4", "u3", "ns1").build();
    m = new LinkedHashMap<>();
    m.put(Values.key(u3), u3);
    m.put(Values.key(u4), u4);
    Link under =
        vx1.toBuilder().setVxlan(vx1.getVxlan().toBuilder().setUnderlay("u3").setLocal("")).build();
    m.put(key(under), under);
    k.change(m);
    assertThat(details("ns1", "vx1").path("linkinfo").path("info_data").path("link").asText())
        .isEqualTo("u3");
    assertAdoptedAfterRestart();

    // deleted by hand: made again; then deleted
    k.sh("ip", "-n", "ns1", "link", "del", "vx1");
    assertThat(KernelFixture.sbOperations(k.downstreamResync())).contains("CREATE " + key(vx1));
    assertThat(k.link("ns1", "vx1")).isNotNull();
    put(key(vx1), null);
    assertThat(k.link("ns1", "vx1")).isNull();
    // its underlay deleted: the tunnel waits
    put(Values.key(u2), null);
    put(Values.key(u1), null);
    assertThat(k.state(key(vx2))).isEqualTo(ValueState.PENDING);
    assertThat(k.link("ns2", "vx2")).isNull();
  }

  @Test
  void aMacvlanChangesItsModeInPlaceAndIsRecreatedOnANewParent() {
    Interface m1 = Values.veth("m1", "m2", "ns1").build();
    Interface m2 = Values.veth("m2", "m1", "ns1").build();
    Link mv =
        link("mv1", "ns1", "10.0.7.1/24")
            .setMacvlan(MacvlanLink.newBuilder().setParent("m1"))
            .build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(key(mv), mv);
    m.put(Values.key(m1), m1);
    m.put(Values.key(m2), m2);
    k.change(m);
    assertThat(k.state(key(mv))).isEqualTo(ValueState.CONFIGURED);
    JsonNode d = details("ns1", "mv1");
    assertThat(d.path("link").asText()).isEqualTo("m1");
    assertThat(d.path("linkinfo").path("info_data").path("mode").asText()).isEqualTo("bridge");
    assertThat(k.addresses("ns1", "mv1")).containsExactly("10.0.7.1/24");
    assertAdoptedAfterRestart();

    int before = index("ns1", "mv1");
    for (MacvlanLink.Mode mode :
        new MacvlanLink.Mode[] {
          MacvlanLink.Mode.PRIVATE, MacvlanLink.Mode.VEPA, MacvlanLink.Mode.BRIDGE
        }) {
      Link next = mv.toBuilder().setMacvlan(mv.getMacvlan().toBuilder().setMode(mode)).build();
      assertThat(KernelFixture.sbOperations(put(key(next), next)))
          .containsExactly("UPDATE " + key(mv));
      assertThat(index("ns1", "mv1")).isEqualTo(before);
      assertThat(details("ns1", "mv1").path("linkinfo").path("info_data").path("mode").asText())
          .isEqualTo(mode.name().toLowerCase(java.util.Locale.ROOT));
    }
    // the mode changed by hand: repaired in place
    k.sh("ip", "-n", "ns1", "link", "set", "dev", "mv1", "type", "macvlan", "mode", "private");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("UPDATE " + key(mv));
    assertThat(details("ns1", "mv1").path("linkinfo").path("info_data").path("mode").asText())
        .isEqualTo("bridge");

    Link parent = mv.toBuilder().setMacvlan(mv.getMacvlan().toBuilder().setParent("m2")).build();
    RecordedTxn txn = put(key(parent), parent);
    assertThat(KernelFixture.sbOperations(txn))
        .containsSubsequence("DELETE " + key(mv), "CREATE " + key(mv));
    assertThat(details("ns1", "mv1").path("link").asText()).isEqualTo("m2");
    assertThat(k.addresses("ns1", "mv1")).containsExactly("10.0.7.1/24");
    assertAdoptedAfterRestart();

    k.sh("ip", "-n", "ns1", "link", "del", "mv1");
    assertThat(KernelFixture.sbOperations(k.downstreamResync())).contains("CREATE " + key(mv));
    assertThat(details("ns1", "mv1").path("link").asText()).isEqualTo("m2");
    put(key(mv), null);
    assertThat(k.link("ns1", "mv1")).isNull();
    assertAdoptedAfterRestart();
  }

  @Test
  void aLinkLeftByAnAgentThatNoLongerConfiguresItIsDeletedAndForeignLinksStay() {
    Link br = link("br1", "").setBridge(BridgeLink.getDefaultInstance()).build();
    put(key(br), br);
    k.sh("ip", "link", "add", "foreign0", "type", "bridge");
    k.desired.remove(key(br));
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).containsExactly("DELETE " + key(br));
    assertThat(k.link("", "br1")).isNull();
    assertThat(k.link("", "foreign0")).isNotNull();
  }

  @Test
  void aLinkLeftHalfMadeByAKilledAgentIsMadeAfreshAndAForeignOneIsLeftAlone() {
    int group =
        io.kvscheduler.plugins.linux.descriptor.LinkDescriptor.makingGroup(
            io.kvscheduler.plugins.linux.descriptor.LinkDescriptor.aliasPrefix(
                KernelFixture.AGENT_PREFIX));
    // made by an agent killed before it gave the link its alias: in its group, no alias
    k.sh("ip", "link", "add", "br1", "group", Integer.toUnsignedString(group), "type", "bridge");
    int before = index("", "br1");
    Link br1 = link("br1", "").setBridge(BridgeLink.getDefaultInstance()).build();
    put(key(br1), br1);
    assertThat(k.state(key(br1))).isEqualTo(ValueState.CONFIGURED);
    assertThat(index("", "br1")).as("made afresh").isNotEqualTo(before);
    assertThat(details("", "br1").path("ifalias").asText()).isEqualTo("/vnf-agent/test+links/br1");

    // a foreign link of that name (default group) is not taken over
    k.sh("ip", "link", "add", "br2", "type", "bridge");
    before = index("", "br2");
    Link br2 = link("br2", "").setBridge(BridgeLink.getDefaultInstance()).build();
    put(key(br2), br2);
    assertThat(k.state(key(br2))).isNotEqualTo(ValueState.CONFIGURED);
    assertThat(k.status(key(br2)).value().error()).contains("File exists");
    assertThat(index("", "br2")).isEqualTo(before);
    assertThat(details("", "br2").path("ifalias").asText("")).isEmpty();
  }
}
