package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.grpc.proto.netalloc.IPAllocation;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.LinuxKeys.AddressSource;
import io.kvscheduler.plugins.linux.model.LinuxModels;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Address allocations on the real kernel: an interface address and a route gateway written as
 * {@code alloc:} references wait for their allocation, take its address, follow its changes and go
 * (PENDING) with it.
 */
class NetallocKernelTest {
  static final Interface VETH1 = Values.veth("veth1", "veth2", "ns1", "alloc:net1/veth1").build();
  static final Interface VETH2 = Values.veth("veth2", "veth1", "ns2", "10.0.1.2/24").build();
  static final Interface LO2 = Topology.LO2;
  static final Route ROUTE = Values.route("veth1", "10.0.2.0/24", "alloc:net1/GW");
  static final String ADDRESS =
      LinuxKeys.addressKey("veth1", AddressSource.ALLOC_REF, "alloc:net1/veth1");

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

  static IPAllocation allocation(String address, String gw) {
    return IPAllocation.newBuilder()
        .setNetworkName("net1")
        .setInterfaceName("veth1")
        .setAddress(address)
        .setGw(gw)
        .build();
  }

  static String key(IPAllocation a) {
    return LinuxModels.IP_ALLOCATION.key(a);
  }

  ValueStatus derived(String base, String key) {
    return k.status(base).derivedStatus(key).orElseThrow();
  }

  /** The gateways of the kernel's routes to {@code dst} in ns1. */
  List<String> gateways(String dst) {
    return k.ipJson("ns1", "route", "show", dst).findValuesAsText("gateway");
  }

  @Test
  void theKeyIsVppAgents() {
    assertThat(key(allocation("10.0.1.1/24", "")))
        .isEqualTo("config/netalloc/v1/ip/network/net1/interface/veth1");
  }

  @Test
  void usersWaitForTheirAllocationFollowItsChangesAndGoWithIt() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(ROUTE), ROUTE);
    m.put(Values.key(VETH1), VETH1);
    m.put(Values.key(VETH2), VETH2);
    m.put(Values.key(LO2), LO2);
    k.change(m);
    // the link is made, its referenced address and the route wait for the allocation
    assertThat(k.state(Values.key(VETH1))).isEqualTo(ValueState.CONFIGURED);
    ValueStatus address = derived(Values.key(VETH1), ADDRESS);
    assertThat(address.state()).isEqualTo(ValueState.PENDING);
    assertThat(address.details()).containsExactly("allocated alloc:net1/veth1");
    assertThat(k.state(Values.key(ROUTE))).isEqualTo(ValueState.PENDING);
    assertThat(k.status(Values.key(ROUTE)).value().details())
        .contains("gw_addr-alloc:net1/GW", "gw-reachable", "allocated-addr-attached");
    assertThat(k.addresses("ns1", "veth1")).isEmpty();
    assertThat(gateways("10.0.2.0/24")).isEmpty();

    // allocated: the address and the route are applied with it
    IPAllocation first = allocation("10.0.1.1/24", "10.0.1.2");
    k.put(key(first), first);
    assertThat(k.state(key(first))).isEqualTo(ValueState.CONFIGURED);
    assertThat(derived(Values.key(VETH1), ADDRESS).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(ROUTE))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.addresses("ns1", "veth1")).containsExactly("10.0.1.1/24");
    assertThat(gateways("10.0.2.0/24")).containsExactly("10.0.1.2");
    assertThat(k.ping("ns1", "10.0.2.1")).isTrue();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // changed: every user is applied again with the new address and gateway
    IPAllocation second = allocation("10.0.1.5/24", "10.0.1.3");
    assertThat(
            KernelFixture.sbOperations(
                k.kvs.recordedTransaction(k.put(key(second), second)).orElseThrow()))
        .containsSubsequence("DELETE " + Values.key(ROUTE), "CREATE " + Values.key(ROUTE))
        .contains("DELETE " + ADDRESS, "CREATE " + ADDRESS);
    assertThat(derived(Values.key(VETH1), ADDRESS).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(ROUTE))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.addresses("ns1", "veth1")).containsExactly("10.0.1.5/24");
    assertThat(gateways("10.0.2.0/24")).containsExactly("10.0.1.3");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // a restarted agent adopts what the allocation put there
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    assertThat(k.addresses("ns1", "veth1")).containsExactly("10.0.1.5/24");
    assertThat(gateways("10.0.2.0/24")).containsExactly("10.0.1.3");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // the address removed by hand (the kernel drops the route through it): a downstream resync
    // puts both back as allocated
    k.sh("ip", "-n", "ns1", "addr", "del", "10.0.1.5/24", "dev", "veth1");
    assertThat(gateways("10.0.2.0/24")).isEmpty();
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactlyInAnyOrder("CREATE " + ADDRESS, "CREATE " + Values.key(ROUTE));
    assertThat(k.addresses("ns1", "veth1")).containsExactly("10.0.1.5/24");
    assertThat(gateways("10.0.2.0/24")).containsExactly("10.0.1.3");

    // deleted: the users wait again and leave the kernel
    k.put(key(second), null);
    assertThat(derived(Values.key(VETH1), ADDRESS).state()).isEqualTo(ValueState.PENDING);
    assertThat(k.state(Values.key(ROUTE))).isEqualTo(ValueState.PENDING);
    assertThat(k.state(Values.key(VETH1))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.addresses("ns1", "veth1")).isEmpty();
    assertThat(gateways("10.0.2.0/24")).isEmpty();
    JsonNode link = k.link("ns1", "veth1");
    assertThat(link).isNotNull();
  }

  @Test
  void aRouteToTheNetworkOfAnAllocatedAddressWaitsForItAndFollowsIt() {
    Interface veth1 = Values.veth("veth1", "veth2", "ns1", "10.0.1.1/24").build();
    Route route = Values.route("veth1", "alloc:net2/lo2", "10.0.1.2");
    String routeKey = Values.key(route);
    assertThat(routeKey).isEqualTo("config/linux/l3/v2/route/alloc:net2/lo2/veth1");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(routeKey, route);
    m.put(Values.key(veth1), veth1);
    m.put(Values.key(VETH2), VETH2);
    m.put(Values.key(LO2), LO2);
    k.change(m);
    assertThat(k.state(routeKey)).isEqualTo(ValueState.PENDING);
    assertThat(k.status(routeKey).value().details()).containsExactly("dst_network-alloc:net2/lo2");
    assertThat(gateways("10.0.2.0/24")).isEmpty();

    // allocated: the route goes to the network of the allocated address
    IPAllocation lo2 =
        IPAllocation.newBuilder()
            .setNetworkName("net2")
            .setInterfaceName("lo2")
            .setAddress("10.0.2.1/24")
            .build();
    k.put(key(lo2), lo2);
    assertThat(k.state(routeKey)).isEqualTo(ValueState.CONFIGURED);
    assertThat(gateways("10.0.2.0/24")).containsExactly("10.0.1.2");
    assertThat(k.ping("ns1", "10.0.2.1")).isTrue();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // another address allocated: the route moves to its network
    IPAllocation moved = lo2.toBuilder().setAddress("10.0.3.1/24").build();
    assertThat(
            KernelFixture.sbOperations(
                k.kvs.recordedTransaction(k.put(key(moved), moved)).orElseThrow()))
        .containsSubsequence("DELETE " + routeKey, "CREATE " + routeKey);
    assertThat(k.state(routeKey)).isEqualTo(ValueState.CONFIGURED);
    assertThat(gateways("10.0.2.0/24")).isEmpty();
    assertThat(gateways("10.0.3.0/24")).containsExactly("10.0.1.2");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // a restarted agent adopts it; deleted by hand, a downstream resync makes it again
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    k.sh("ip", "-n", "ns1", "route", "del", "10.0.3.0/24");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("CREATE " + routeKey);
    assertThat(gateways("10.0.3.0/24")).containsExactly("10.0.1.2");

    // the allocation deleted: the route waits again and leaves the kernel
    k.put(key(moved), null);
    assertThat(k.state(routeKey)).isEqualTo(ValueState.PENDING);
    assertThat(gateways("10.0.3.0/24")).isEmpty();

    for (String bad : List.of("alloc:net2/lo2/GW", "alloc:net2", "alloc:/lo2")) {
      Route r = Values.route("veth1", bad, "10.0.1.2");
      k.put(Values.key(r), r);
      ValueStatus v = k.status(Values.key(r)).value();
      assertThat(v.state()).as(bad).isEqualTo(ValueState.INVALID);
      assertThat(v.details()).as(bad).containsExactly("dst_network");
      assertThat(v.error()).as(bad).contains(bad);
    }
  }

  @Test
  void anUnknownNetworkIsPendingAndAMalformedReferenceInvalid() {
    Interface unknown = Values.veth("veth1", "veth2", "ns1", "alloc:net9").build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(unknown), unknown);
    m.put(Values.key(VETH2), VETH2);
    k.change(m);
    String pending = LinuxKeys.addressKey("veth1", AddressSource.ALLOC_REF, "alloc:net9");
    ValueStatus s = derived(Values.key(unknown), pending);
    assertThat(s.state()).isEqualTo(ValueState.PENDING);
    assertThat(s.details()).containsExactly("allocated alloc:net9");
    assertThat(k.kvs.explain(pending).toString())
        .contains("config/netalloc/v1/ip/network/net9/interface/veth1");

    for (String bad : List.of("alloc:", "alloc:/veth1", "alloc:net1/veth2", "alloc:net1/GW")) {
      Interface i = Values.veth("veth1", "veth2", "ns1", bad).build();
      k.put(Values.key(i), i);
      ValueStatus v =
          derived(Values.key(i), LinuxKeys.addressKey("veth1", AddressSource.ALLOC_REF, bad));
      assertThat(v.state()).as(bad).isEqualTo(ValueState.INVALID);
      assertThat(v.details()).as(bad).containsExactly("ip_addresses");
      assertThat(v.error()).as(bad).contains(bad);
    }
    for (String bad : List.of("alloc:net1", "alloc:net1/veth2/GW", "alloc:/GW")) {
      Route r = Values.route("veth1", "10.0.2.0/24", bad);
      k.put(Values.key(r), r);
      ValueStatus v = k.status(Values.key(r)).value();
      assertThat(v.state()).as(bad).isEqualTo(ValueState.INVALID);
      assertThat(v.details()).as(bad).containsExactly("gw_addr");
      assertThat(v.error()).as(bad).contains(bad);
    }
    Interface existing =
        Interface.newBuilder()
            .setName("eth9")
            .setType(Interface.Type.EXISTING)
            .setLinkOnly(true)
            .addIpAddresses("alloc:net1")
            .build();
    k.put(Values.key(existing), existing);
    ValueStatus e = k.status(Values.key(existing)).value();
    assertThat(e.state()).isEqualTo(ValueState.INVALID);
    assertThat(e.details()).containsExactly("type", "link_only", "ip_addresses");

    IPAllocation noAddress = allocation("10.0.1.300", "").toBuilder().setNetworkName("").build();
    k.put("config/netalloc/v1/ip/network//interface/veth1", noAddress);
    ValueStatus v = k.status("config/netalloc/v1/ip/network//interface/veth1").value();
    assertThat(v.state()).isEqualTo(ValueState.INVALID);
    assertThat(v.details()).containsExactly("network_name", "address");
  }
}
