package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Someone changes the kernel by hand: the watcher and the next resync react. */
class ExternalChangeKernelTest {
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

  @Test
  void aVethDeletedByHandIsRecreatedOnTheNextResync() {
    k.change(Topology.values());
    int before = k.link("ns1", "veth1").path("ifindex").asInt();
    k.sh("ip", "-n", "ns1", "link", "del", "veth1"); // takes veth2 along
    assertThat(k.ping("ns1", "10.0.2.1")).isFalse();

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync))
        .contains(
            "CREATE " + Values.key(Topology.VETH1),
            "CREATE " + Values.key(Topology.VETH2),
            "CREATE "
                + LinuxKeys.addressKey("veth1", LinuxKeys.AddressSource.STATIC, "10.0.1.1/24"),
            "CREATE " + Values.key(Topology.ROUTE),
            "CREATE " + Values.key(Topology.ARP));
    for (String key : Topology.values().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(k.link("ns1", "veth1").path("ifindex").asInt()).isNotEqualTo(before);
    assertThat(k.ipJson("ns1", "route", "show", "10.0.2.0/24")).hasSize(1);
    assertThat(k.ping("ns1", "10.0.2.1")).isTrue();
  }

  /** An EXISTING link made by hand in the agent's namespace, with a route and an ARP entry. */
  static final Interface EXT =
      Interface.newBuilder()
          .setName("ext")
          .setHostIfName("ext0")
          .setType(Interface.Type.EXISTING)
          .setEnabled(true)
          .addIpAddresses("10.9.0.1/24")
          .build();

  static final Route EXT_ROUTE = Values.route("ext", "10.10.0.0/16", "10.9.0.254");
  static final ARPEntry EXT_ARP = Values.arp("ext", "10.9.0.254", "02:00:00:00:09:fe");

  Map<String, Object> existingValues() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(EXT), EXT);
    m.put(Values.key(EXT_ROUTE), EXT_ROUTE);
    m.put(Values.key(EXT_ARP), EXT_ARP);
    return m;
  }

  @Test
  void aLinkDeletedByHandLeavesItsDependentsPendingUntilItComesBack() {
    k.sh("ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0-peer");
    k.sh("ip", "link", "set", "ext0", "up");
    k.sh("ip", "link", "set", "ext0-peer", "up");
    k.await(LinuxKeys.hostNameKey("ext0"), ValueState.OBTAINED);
    k.change(existingValues());
    assertThat(k.state(Values.key(EXT))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(EXT_ROUTE))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(EXT_ARP))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.addresses("", "ext0")).containsExactly("10.9.0.1/24");

    k.sh("ip", "link", "del", "ext0");

    k.await(Values.key(EXT), ValueState.PENDING);
    k.await(Values.key(EXT_ROUTE), ValueState.PENDING);
    k.await(Values.key(EXT_ARP), ValueState.PENDING);
    assertThat(k.status(Values.key(EXT)).value().details())
        .containsExactly("host-interface-exists");
    assertThat(k.status(Values.key(EXT_ROUTE)).value().details())
        .containsExactlyInAnyOrder(
            "outgoing-interface-is-up", "outgoing-interface-has-ip-address", "gw-reachable");
    assertThat(k.status(Values.key(EXT_ARP)).value().details())
        .containsExactlyInAnyOrder("interface-is-up", "interface-has-ip-address");

    // the link comes back (by hand again): the agent configures it as the NB says
    k.sh("ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0-peer");
    k.sh("ip", "link", "set", "ext0", "up");
    k.await(Values.key(EXT), ValueState.CONFIGURED);
    k.await(Values.key(EXT_ROUTE), ValueState.CONFIGURED);
    k.await(Values.key(EXT_ARP), ValueState.CONFIGURED);
    assertThat(k.addresses("", "ext0")).containsExactly("10.9.0.1/24");
    assertThat(k.ipJson("", "route", "show", "10.10.0.0/16").get(0).path("gateway").asText())
        .isEqualTo("10.9.0.254");
  }

  @Test
  void routesAndNeighboursSomeoneElseAddsToAConfiguredLinkAreLeftAlone() {
    k.sh("ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0-peer");
    k.sh("ip", "link", "set", "ext0", "up");
    k.await(LinuxKeys.hostNameKey("ext0"), ValueState.OBTAINED);
    k.change(existingValues());
    k.sh("ip", "route", "add", "10.77.0.0/16", "dev", "ext0");
    k.sh(
        "ip",
        "neigh",
        "add",
        "10.9.0.77",
        "lladdr",
        "02:00:00:00:00:77",
        "dev",
        "ext0",
        "nud",
        "permanent");

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync)).isEmpty();
    assertThat(k.state("config/linux/l3/v2/route/10.77.0.0/16/ext")).isEqualTo(ValueState.OBTAINED);
    assertThat(k.state("config/linux/l3/v2/arp/ext/10.9.0.77")).isEqualTo(ValueState.OBTAINED);
    assertThat(k.ipJson("", "route", "show", "10.77.0.0/16")).hasSize(1);
    assertThat(k.ipJson("", "neigh", "show", "10.9.0.77")).hasSize(1);
    assertThat(k.state(Values.key(EXT_ROUTE))).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void anAddressAddedByHandSatisfiesTheRouteOfAWaitingExistingInterface() {
    Interface waiting = EXT.toBuilder().setLinkOnly(true).build(); // waits for its address
    Route route = Values.route("ext", "10.10.0.0/16", "");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(waiting), waiting);
    m.put(Values.key(route), route);
    k.change(m);
    assertThat(k.state(Values.key(waiting))).isEqualTo(ValueState.PENDING);
    assertThat(k.state(Values.key(route))).isEqualTo(ValueState.PENDING);

    k.sh("ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0-peer");
    k.sh("ip", "link", "set", "ext0", "up");
    k.await(Values.key(waiting), ValueState.CONFIGURED);
    String address = LinuxKeys.addressKey("ext", LinuxKeys.AddressSource.EXISTING, "10.9.0.1/24");
    assertThat(k.status(Values.key(waiting)).derivedStatus(address).orElseThrow().state())
        .isEqualTo(ValueState.PENDING);
    assertThat(k.state(Values.key(route))).isEqualTo(ValueState.PENDING);
    assertThat(k.addresses("", "ext0")).as("the agent adds no address itself").isEmpty();

    k.sh("ip", "addr", "add", "10.9.0.1/24", "dev", "ext0");

    k.await(Values.key(route), ValueState.CONFIGURED);
    assertThat(k.ipJson("", "route", "show", "10.10.0.0/16").get(0).path("dev").asText())
        .isEqualTo("ext0");
  }
}
