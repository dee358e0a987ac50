package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Changes applied in place keep the kernel's interface index; changes that need a new link get a
 * new one.
 */
class UpdateKernelTest {
  KernelFixture k;

  @BeforeEach
  void start() {
    k = KernelFixture.start();
    k.change(Topology.values());
  }

  @AfterEach
  void stop() {
    if (k != null) {
      k.close();
    }
  }

  int index(String ns, String name) {
    JsonNode l = k.link(ns, name);
    assertThat(l).as("link %s in %s", name, ns).isNotNull();
    return l.path("ifindex").asInt();
  }

  RecordedTxn update(Interface i) {
    return k.kvs.recordedTransaction(k.put(Values.key(i), i)).orElseThrow();
  }

  @Test
  void mtuMacUpDownAndNameChangeInPlace() {
    int before = index("ns1", "veth1");

    RecordedTxn mtu = update(Topology.VETH1.toBuilder().setMtu(1400).build());
    assertThat(KernelFixture.sbOperations(mtu))
        .containsExactly("UPDATE " + Values.key(Topology.VETH1));
    assertThat(k.link("ns1", "veth1").path("mtu").asInt()).isEqualTo(1400);

    update(Topology.VETH1.toBuilder().setMtu(1400).setPhysAddress("02:00:00:00:0a:0a").build());
    assertThat(k.link("ns1", "veth1").path("address").asText()).isEqualTo("02:00:00:00:0a:0a");

    Interface down =
        Topology.VETH1.toBuilder()
            .setMtu(1400)
            .setPhysAddress("02:00:00:00:0a:0a")
            .setEnabled(false)
            .build();
    update(down);
    assertThat(TopologyKernelTest.flags(k.link("ns1", "veth1"))).doesNotContain("UP");
    // the route and the ARP entry need the interface up: they wait
    assertThat(k.state(Values.key(Topology.ROUTE))).isEqualTo(ValueState.PENDING);
    assertThat(k.state(Values.key(Topology.ARP))).isEqualTo(ValueState.PENDING);

    Interface renamed = down.toBuilder().setEnabled(true).setHostIfName("eth-a").build();
    update(renamed);
    assertThat(k.link("ns1", "veth1")).isNull();
    assertThat(TopologyKernelTest.flags(k.link("ns1", "eth-a"))).contains("UP");
    assertThat(index("ns1", "eth-a")).as("same link, renamed").isEqualTo(before);
    assertThat(k.addresses("ns1", "eth-a")).containsExactly("10.0.1.1/24");
    assertThat(k.state(Values.key(Topology.ROUTE))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.ipJson("ns1", "route", "show", "10.0.2.0/24").get(0).path("dev").asText())
        .isEqualTo("eth-a");
    assertThat(k.plugin.interfaces().lookupByHostName("eth-a")).containsExactly("veth1");
    assertThat(k.ping("ns1", "10.0.2.1")).isTrue();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }

  @Test
  void aNewPeerOrNamespaceRecreatesTheLink() {
    int before = index("ns1", "veth1");
    Interface veth1 =
        Topology.VETH1.toBuilder()
            .setVeth(Topology.VETH1.getVeth().toBuilder().setPeerIfName("veth3"))
            .build();
    Interface veth3 = Values.veth("veth3", "veth1", "ns2", "10.0.1.3/24").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(veth1), veth1);
    m.put(Values.key(veth3), veth3);
    m.put(Values.key(Topology.VETH2), null);
    RecordedTxn txn = k.kvs.recordedTransaction(k.change(m)).orElseThrow();

    List<RecordedTxnOp> recreated =
        txn.executed().stream()
            .filter(op -> op.key().equals(Values.key(veth1)) && !op.is(RecordedTxnOp.Flag.NOOP))
            .toList();
    // the old peer goes first, taking the pair along; veth1 waits, then gets a new pair
    assertThat(recreated)
        .extracting(op -> op.operation().name())
        .containsExactly("DELETE", "CREATE");
    assertThat(index("ns1", "veth1")).as("a new link").isNotEqualTo(before);
    assertThat(k.link("ns2", "veth3")).isNotNull();
    assertThat(k.link("ns2", "veth2")).isNull();
    assertThat(k.ping("ns1", "10.0.1.3")).isTrue();

    // moved to another namespace: a new link there, none left behind
    Interface moved = veth1.toBuilder().setNamespace(Values.ns("ns3")).build();
    txn = k.kvs.recordedTransaction(k.put(Values.key(moved), moved)).orElseThrow();
    assertThat(txn.executed().stream().filter(op -> op.key().equals(Values.key(moved))))
        .extracting(op -> op.operation().name())
        .containsExactly("DELETE", "CREATE");
    assertThat(txn.executed().stream().filter(op -> op.key().equals(Values.key(moved))))
        .allMatch(op -> op.is(RecordedTxnOp.Flag.RECREATE));
    assertThat(k.state(Values.key(veth3))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.link("ns2", "veth3")).as("the peer is re-made with the pair").isNotNull();
    assertThat(k.link("ns1", "veth1")).isNull();
    assertThat(k.link("ns3", "veth1")).isNotNull();
    assertThat(k.addresses("ns3", "veth1")).containsExactly("10.0.1.1/24");
    assertThat(k.state(Values.key(Topology.ROUTE))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.ipJson("ns3", "route", "show", "10.0.2.0/24")).hasSize(1);
  }

  @Test
  void aNewTypeRecreatesTheLink() {
    Assumptions.assumeTrue(
        k.run("ip", "link", "add", "probe0", "type", "dummy").code() == 0,
        "this kernel has no dummy links (module not available)");
    k.sh("ip", "link", "del", "probe0");
    Interface dummy =
        Interface.newBuilder()
            .setName("d1")
            .setType(Interface.Type.DUMMY)
            .setNamespace(Values.ns("ns1"))
            .setEnabled(true)
            .build();
    k.put(Values.key(dummy), dummy);
    int before = index("ns1", "d1");
    Interface veth = Values.veth("d1", "d1-peer", "ns1").build();
    Interface peer = Values.veth("d1-peer", "d1", "ns1").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(veth), veth);
    m.put(Values.key(peer), peer);
    k.change(m);
    assertThat(index("ns1", "d1")).isNotEqualTo(before);
    assertThat(
            k.ipJson("ns1", "-d", "link", "show", "d1")
                .get(0)
                .path("linkinfo")
                .path("info_kind")
                .asText())
        .isEqualTo("veth");
  }

  @Test
  void aNewMetricOrGatewayUpdatesTheRouteInPlace() {
    Route metric = Topology.ROUTE.toBuilder().setMetric(50).build();
    RecordedTxn txn = k.kvs.recordedTransaction(k.put(Values.key(metric), metric)).orElseThrow();
    assertThat(KernelFixture.sbOperations(txn)).containsExactly("UPDATE " + Values.key(metric));
    JsonNode routes = k.ipJson("ns1", "route", "show", "10.0.2.0/24");
    assertThat(routes).hasSize(1);
    assertThat(routes.get(0).path("metric").asInt()).isEqualTo(50);

    Route gw = metric.toBuilder().setGwAddr("10.0.1.3").build();
    txn = k.kvs.recordedTransaction(k.put(Values.key(gw), gw)).orElseThrow();
    assertThat(KernelFixture.sbOperations(txn)).containsExactly("UPDATE " + Values.key(gw));
    routes = k.ipJson("ns1", "route", "show", "10.0.2.0/24");
    assertThat(routes).hasSize(1);
    assertThat(routes.get(0).path("gateway").asText()).isEqualTo("10.0.1.3");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }
}
