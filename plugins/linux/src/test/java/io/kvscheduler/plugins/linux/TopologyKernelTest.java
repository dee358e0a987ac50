package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The example topology on the real kernel: built, checked with ip -json, pinged, adopted. */
class TopologyKernelTest {
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
  void buildsTheTopologyAndPingCrossesIt() {
    k.change(Topology.values());
    for (String key : Topology.values().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(k.sh("ip", "netns", "list")).contains("ns1").contains("ns2");

    JsonNode veth1 = k.link("ns1", "veth1");
    assertThat(veth1).isNotNull();
    assertThat(veth1.path("address").asText()).isEqualTo(Topology.MAC1);
    assertThat(veth1.path("ifalias").asText()).isEqualTo("/vnf-agent/test/veth1/veth2");
    assertThat(flags(veth1)).contains("UP");
    assertThat(k.addresses("ns1", "veth1")).containsExactly("10.0.1.1/24");
    assertThat(k.link("ns2", "veth2").path("address").asText()).isEqualTo(Topology.MAC2);
    assertThat(k.addresses("ns2", "veth2")).containsExactly("10.0.1.2/24");
    assertThat(k.addresses("ns2", "lo")).contains("10.0.2.1/32");
    assertThat(k.link("ns2", "lo").path("ifalias").asText()).isEqualTo("/vnf-agent/test/lo2");
    // nothing left behind under a temporary name, nothing in the agent's own namespace
    assertThat(k.linkNames("")).containsExactly("lo");

    JsonNode routes = k.ipJson("ns1", "route", "show", "10.0.2.0/24");
    assertThat(routes).hasSize(1);
    assertThat(routes.get(0).path("gateway").asText()).isEqualTo("10.0.1.2");
    assertThat(routes.get(0).path("dev").asText()).isEqualTo("veth1");
    JsonNode neigh = k.ipJson("ns1", "neigh", "show", "dev", "veth1", "nud", "permanent");
    assertThat(neigh).hasSize(1);
    assertThat(neigh.get(0).path("dst").asText()).isEqualTo("10.0.1.2");
    assertThat(neigh.get(0).path("lladdr").asText()).isEqualTo(Topology.MAC2);

    assertThat(k.ping("ns1", "10.0.2.1")).as("ping ns1 -> 10.0.2.1 (lo of ns2)").isTrue();
    assertThat(k.ping("ns2", "10.0.1.1")).as("ping ns2 -> 10.0.1.1").isTrue();
  }

  @Test
  void aRestartedAgentAdoptsTheKernelStateWithNoOperation() {
    k.change(Topology.values());
    int index1 = k.link("ns1", "veth1").path("ifindex").asInt();
    int index2 = k.link("ns2", "veth2").path("ifindex").asInt();

    k.restartAgent();
    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync)).isEmpty();
    for (String key : Topology.values().keySet()) {
      assertThat(k.state(key)).as(key).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(k.link("ns1", "veth1").path("ifindex").asInt()).isEqualTo(index1);
    assertThat(k.link("ns2", "veth2").path("ifindex").asInt()).isEqualTo(index2);
    assertThat(k.plugin.interfaces().lookup("veth1").orElseThrow().ifIndex()).isEqualTo(index1);
    assertThat(k.plugin.interfaces().lookupByHostName("veth2")).containsExactly("veth2");
    // a second resync changes nothing either
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    assertThat(k.ping("ns1", "10.0.2.1")).isTrue();
  }

  @Test
  void removingTheConfigurationRemovesEverythingItMade() {
    k.change(Topology.values());
    Map<String, Object> none = new LinkedHashMap<>();
    Topology.values().keySet().forEach(key -> none.put(key, null));
    k.change(none);
    assertThat(k.linkNames("ns1")).containsExactly("lo");
    assertThat(k.linkNames("ns2")).containsExactly("lo");
    assertThat(k.addresses("ns2", "lo")).doesNotContain("10.0.2.1/32");
    assertThat(k.link("ns2", "lo").path("ifalias").asText("")).isEmpty();
  }

  static List<String> flags(JsonNode link) {
    List<String> out = new ArrayList<>();
    link.path("flags").forEach(f -> out.add(f.asText()));
    return out;
  }

  @Test
  void aRouteRemovedFromTheConfigurationWhileTheAgentWasDownIsDeletedOnRestart() {
    k.change(Topology.values());
    k.sh("ip", "-n", "ns1", "route", "add", "10.0.9.0/24", "via", "10.0.1.2"); // someone else's
    assertThat(k.ipJson("ns1", "route", "show", "10.0.2.0/24").get(0).path("protocol").asText())
        .as("the agent's route carries its protocol number")
        .isEqualTo("200");

    k.restartAgent();
    k.desired.remove(Values.key(Topology.ROUTE));
    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync))
        .containsExactly("DELETE " + Values.key(Topology.ROUTE));
    assertThat(k.ipJson("ns1", "route", "show", "10.0.2.0/24")).isEmpty();
    assertThat(k.ipJson("ns1", "route", "show", "10.0.9.0/24"))
        .as("a foreign route stays")
        .hasSize(1);
  }
}
