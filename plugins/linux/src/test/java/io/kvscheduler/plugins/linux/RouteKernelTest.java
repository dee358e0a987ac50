package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Routes on the real kernel: a new metric changes the route in place (one update, one route in the
 * kernel), IPv6 LINK-scope routes carry the gateways of other routes, and routes of other tables
 * than main are made, adopted and repaired.
 */
class RouteKernelTest {
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

  RecordedTxn put(Route r) {
    return k.kvs.recordedTransaction(k.put(Values.key(r), r)).orElseThrow();
  }

  @Test
  void aNewMetricIsOneUpdateAndLeavesOneRoute() {
    for (int metric : new int[] {50, 70, 0}) {
      Route r = Topology.ROUTE.toBuilder().setMetric(metric).build();
      assertThat(KernelFixture.sbOperations(put(r))).containsExactly("UPDATE " + Values.key(r));
      JsonNode routes = k.ipJson("ns1", "route", "show", "10.0.2.0/24");
      assertThat(routes).as("routes after metric %d", metric).hasSize(1);
      assertThat(routes.get(0).path("metric").asInt(0)).isEqualTo(metric);
      assertThat(k.ping("ns1", "10.0.2.1")).isTrue();
    }
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }

  @Test
  void ipv6LinkScopeRoutesCarryTheGatewaysOfOtherRoutes() {
    Interface veth1 = Topology.VETH1.toBuilder().addIpAddresses("2001:db8:1::1/64").build();
    Route link =
        Route.newBuilder()
            .setOutgoingInterface("veth1")
            .setDstNetwork("2001:db8:5::/64")
            .setScope(Route.Scope.LINK)
            .build();
    Route via = Values.route("veth1", "2001:db8:6::/64", "2001:db8:5::7");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(via), via); // waits for the LINK-scope route holding its gateway
    m.put(Values.key(veth1), veth1);
    k.change(m);
    assertThat(k.state(Values.key(via))).isEqualTo(ValueState.PENDING);
    k.put(Values.key(link), link);
    assertThat(k.state(Values.key(link))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(via))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.ipJson("ns1", "-6", "route", "show", "2001:db8:5::/64")).hasSize(1);
    JsonNode v = k.ipJson("ns1", "-6", "route", "show", "2001:db8:6::/64");
    assertThat(v).hasSize(1);
    assertThat(v.get(0).path("gateway").asText()).isEqualTo("2001:db8:5::7");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    Route metric = via.toBuilder().setMetric(300).build();
    assertThat(KernelFixture.sbOperations(put(metric)))
        .containsExactly("UPDATE " + Values.key(metric));
    v = k.ipJson("ns1", "-6", "route", "show", "2001:db8:6::/64");
    assertThat(v).hasSize(1);
    assertThat(v.get(0).path("metric").asInt()).isEqualTo(300);

    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    k.put(Values.key(link), null); // the gateway is no longer reachable: the route goes
    assertThat(k.state(Values.key(metric))).isEqualTo(ValueState.PENDING);
    assertThat(k.ipJson("ns1", "-6", "route", "show", "2001:db8:6::/64")).isEmpty();
  }

  @Test
  void aRouteOfAnotherTableIsMadeAdoptedAndRepaired() {
    Route t100 = Topology.ROUTE.toBuilder().setTable(100).build();
    assertThat(Values.key(t100)).endsWith("/10.0.2.0/24/veth1/table/100");
    assertThat(KernelFixture.sbOperations(put(t100))).containsExactly("CREATE " + Values.key(t100));
    JsonNode inTable = k.ipJson("ns1", "route", "show", "table", "100");
    assertThat(inTable).hasSize(1);
    assertThat(inTable.get(0).path("dst").asText()).isEqualTo("10.0.2.0/24");
    assertThat(inTable.get(0).path("gateway").asText()).isEqualTo("10.0.1.2");
    // the main table's route is a value of its own
    assertThat(k.ipJson("ns1", "route", "show", "10.0.2.0/24")).hasSize(1);
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // a restarted agent adopts it
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // removed behind the agent's back: a downstream resync puts it back
    k.sh("ip", "-n", "ns1", "route", "del", "10.0.2.0/24", "table", "100");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("CREATE " + Values.key(t100));
    assertThat(k.ipJson("ns1", "route", "show", "table", "100")).hasSize(1);

    // a new metric in that table: in place
    Route metric = t100.toBuilder().setMetric(9).build();
    assertThat(KernelFixture.sbOperations(put(metric)))
        .containsExactly("UPDATE " + Values.key(metric));
    inTable = k.ipJson("ns1", "route", "show", "table", "100");
    assertThat(inTable).hasSize(1);
    assertThat(inTable.get(0).path("metric").asInt()).isEqualTo(9);

    // one left by an agent that no longer configures it: the resync deletes it
    k.desired.remove(Values.key(metric));
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync()))
        .containsExactly("DELETE " + Values.key(metric));
    assertThat(k.ipJson("ns1", "route", "show", "table", "100")).isEmpty();
    assertThat(k.ipJson("ns1", "route", "show", "10.0.2.0/24")).hasSize(1);
  }

  @Test
  void theMainAndTheLocalTableAreRefusedByNumber() throws Exception {
    var validator =
        io.kvscheduler.plugins.linux.descriptor.RouteDescriptor.create(null, null)
            .validate()
            .orElseThrow();
    for (int table : new int[] {254, 255}) {
      Route r = Topology.ROUTE.toBuilder().setTable(table).build();
      try {
        validator.validate(Values.key(r), r);
        throw new AssertionError("table " + table + " accepted");
      } catch (InvalidValueException e) {
        assertThat(e.invalidFields()).containsExactly("table");
      }
    }
  }
}
