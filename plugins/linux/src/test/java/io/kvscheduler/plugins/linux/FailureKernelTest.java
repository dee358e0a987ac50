package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Invalid values touch nothing; kernel failures carry the kernel's words and can be retried. */
class FailureKernelTest {
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

  ValueStatus status(String key) {
    return k.status(key).value();
  }

  @Test
  void invalidValuesNameTheirFieldsAndTouchNothing() {
    Interface noPeer =
        Interface.newBuilder()
            .setName("v1")
            .setType(Interface.Type.VETH)
            .setNamespace(Values.ns("nsx"))
            .setPhysAddress("not-a-mac")
            .build();
    Interface badNs =
        Interface.newBuilder()
            .setName("v2")
            .setType(Interface.Type.DUMMY)
            .setNamespace(NetNamespace.newBuilder().setType(NetNamespace.ReferenceType.NSID))
            .setHostIfName("a-name-longer-than-15")
            .build();
    Interface noType = Interface.newBuilder().setName("v3").build();
    Route route =
        Route.newBuilder()
            .setOutgoingInterface("")
            .setDstNetwork("10.0.0.0/33")
            .setGwAddr("10.0.0.1")
            .setScope(Route.Scope.LINK)
            .build();
    ARPEntry arp = Values.arp("v1", "10.0.0.300", "zz:00");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(noPeer), noPeer);
    m.put(Values.key(badNs), badNs);
    m.put(Values.key(noType), noType);
    m.put("config/linux/l3/v2/route/10.0.0.0/33/", route);
    m.put(Values.key(arp), arp);
    k.change(m);

    assertThat(status(Values.key(noPeer)).state()).isEqualTo(ValueState.INVALID);
    assertThat(status(Values.key(noPeer)).details())
        .containsExactlyInAnyOrder("phys_address", "peer_if_name");
    assertThat(status(Values.key(noPeer)).error())
        .contains("'not-a-mac' is not a MAC address")
        .contains("a VETH interface needs the name of its peer");
    assertThat(status(Values.key(badNs)).details())
        .containsExactlyInAnyOrder("namespace", "host_if_name");
    assertThat(status(Values.key(noType)).details()).containsExactly("type");
    assertThat(status("config/linux/l3/v2/route/10.0.0.0/33/").state())
        .isEqualTo(ValueState.INVALID);
    assertThat(status("config/linux/l3/v2/route/10.0.0.0/33/").details())
        .containsExactlyInAnyOrder("outgoing_interface", "dst_network", "scope", "gw_addr");
    assertThat(status(Values.key(arp)).details())
        .containsExactlyInAnyOrder("ip_address", "hw_address");

    assertThat(k.sh("ip", "netns", "list")).as("no namespace made").isBlank();
    assertThat(k.linkNames("")).as("no link made").containsExactly("lo");
  }

  @Test
  void aNameTakenByAForeignLinkFailsWithTheKernelsWordsAndARetrySucceedsOnceItIsGone() {
    k.sh("ip", "link", "add", "taken", "type", "veth", "peer", "name", "taken-peer");
    Interface a = Values.veth("a", "b", "").setHostIfName("taken").build();
    Interface b = Values.veth("b", "a", "").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(a), a);
    m.put(Values.key(b), b);
    k.change(
        m, TxnOptions.builder().retry(new RetryOptions(Duration.ofMillis(500), 0, false)).build());

    ValueStatus failed = status(Values.key(a));
    assertThat(failed.state()).isEqualTo(ValueState.RETRYING);
    assertThat(failed.error()).isEqualTo("RTNETLINK answers: File exists");
    assertThat(k.link("", "taken").path("ifalias").asText(""))
        .as("the foreign link is not" + " touched")
        .isEmpty();

    k.sh("ip", "link", "del", "taken");

    k.await(Values.key(a), ValueState.CONFIGURED);
    k.await(Values.key(b), ValueState.CONFIGURED);
    assertThat(k.link("", "taken").path("ifalias").asText()).isEqualTo("/vnf-agent/test/a/b");
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "taken", "b");
  }

  @Test
  void aRequestTheKernelRefusesAsSuchIsNotRetried() {
    Interface big = Values.veth("a", "b", "").setMtu(70000).build();
    Interface b = Values.veth("b", "a", "").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(big), big);
    m.put(Values.key(b), b);
    k.change(
        m, TxnOptions.builder().retry(new RetryOptions(Duration.ofMillis(100), 0, false)).build());

    ValueStatus failed = status(Values.key(big));
    assertThat(failed.state()).isEqualTo(ValueState.FAILED);
    assertThat(failed.error()).isEqualTo("Error: mtu greater than device maximum.");

    Interface fixed = big.toBuilder().setMtu(9000).build();
    k.put(Values.key(fixed), fixed);
    assertThat(k.state(Values.key(fixed))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.link("", "a").path("mtu").asInt()).isEqualTo(9000);
  }

  @Test
  void aRouteTheKernelRejectsFailsWithItsMessage() {
    Map<String, Object> m = new LinkedHashMap<>(Topology.values());
    // a second route to the same destination through the same link and metric
    k.change(m);
    k.sh("ip", "-n", "ns1", "route", "add", "10.0.3.0/24", "via", "10.0.1.2");
    Route clash = Values.route("veth1", "10.0.3.0/24", "10.0.1.2");
    k.put(Values.key(clash), clash);
    assertThat(status(Values.key(clash)).state()).isEqualTo(ValueState.FAILED);
    assertThat(status(Values.key(clash)).error()).isEqualTo("RTNETLINK answers: File exists");

    k.sh("ip", "-n", "ns1", "route", "del", "10.0.3.0/24");
    k.fullResync();
    assertThat(k.state(Values.key(clash))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.ipJson("ns1", "route", "show", "10.0.3.0/24")).hasSize(1);
  }
}
