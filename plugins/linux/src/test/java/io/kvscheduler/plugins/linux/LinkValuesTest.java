package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.plugins.linux.descriptor.LinkDescriptor;
import io.kvscheduler.plugins.linux.descriptor.PortDescriptor;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.links.BridgeLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.MacvlanLink;
import io.kvscheduler.plugins.linux.model.links.Port;
import io.kvscheduler.plugins.linux.model.links.VlanLink;
import io.kvscheduler.plugins.linux.model.links.VrfLink;
import io.kvscheduler.plugins.linux.model.links.VxlanLink;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import org.junit.jupiter.api.Test;

/**
 * Links and ports of the extension package: a value the kernel would refuse, or whose fields would
 * reach {@code ip} as something else than they say, is INVALID naming exactly its fields; the
 * message shows refused text short and escaped.
 */
class LinkValuesTest {
  static final KVDescriptor.Validator<Link> LINKS =
      LinkDescriptor.create(null, KernelFixture.AGENT_PREFIX, () -> null).validate().orElseThrow();
  static final KVDescriptor.Validator<Port> PORTS =
      PortDescriptor.create(null, () -> null).validate().orElseThrow();

  static Link.Builder bridge(String name) {
    return Link.newBuilder().setName(name).setBridge(BridgeLink.getDefaultInstance());
  }

  static Link vxlan(VxlanLink.Builder v) {
    return Link.newBuilder().setName("vx").setVxlan(v).build();
  }

  static InvalidValueException refused(Link l, String... fields) {
    InvalidValueException e =
        catchThrowableOfType(
            () -> LINKS.validate(LinuxKeys.linkKey(l.getName()), l), InvalidValueException.class);
    assertThat(e).as("%s is refused", l).isNotNull();
    assertThat(e.invalidFields()).containsExactlyInAnyOrder(fields);
    HostileValuesTest.assertNothingRaw(e.getMessage());
    return e;
  }

  static void accepted(Link l) {
    assertThatCode(() -> LINKS.validate(LinuxKeys.linkKey(l.getName()), l))
        .doesNotThrowAnyException();
  }

  @Test
  void namesAndCommonFieldsFollowTheInterfaceRules() {
    accepted(bridge("br0").build());
    refused(Link.newBuilder().setName("br0").build(), "kind");
    refused(bridge("br\tmtu\t1300").build(), "name");
    refused(bridge("br#1").build(), "name");
    refused(bridge("a/b").build(), "name");
    assertThat(refused(bridge("a-very-long-bridge").build(), "name").getMessage()).contains("15");
    refused(bridge("br0").setHostIfName("x%d").build(), "host_if_name");
    refused(bridge("br0").setPhysAddress("02:00:00:00:00").build(), "phys_address");
    refused(bridge("br0").addIpAddresses("10.0.0.1").build(), "ip_addresses");
    refused(
        bridge("br0")
            .setNamespace(
                NetNamespace.newBuilder()
                    .setType(NetNamespace.ReferenceType.NSID)
                    .setReference("../etc"))
            .build(),
        "namespace");
    // namespace references as interfaces take them (see NamespaceRefKernelTest)
    refused(
        bridge("br0")
            .setNamespace(
                NetNamespace.newBuilder().setType(NetNamespace.ReferenceType.PID).setReference("0"))
            .build(),
        "namespace");
    refused(
        bridge("br0")
            .setNamespace(
                NetNamespace.newBuilder()
                    .setType(NetNamespace.ReferenceType.FD)
                    .setReference("relative/ns"))
            .build(),
        "namespace");
    refused(
        bridge("br0").setNamespace(NetNamespace.newBuilder().setReference("ns1")).build(),
        "namespace");
    accepted(
        bridge("br0")
            .setNamespace(
                NetNamespace.newBuilder().setType(NetNamespace.ReferenceType.PID).setReference("1"))
            .build());
    accepted(
        bridge("br0")
            .setNamespace(
                NetNamespace.newBuilder()
                    .setType(NetNamespace.ReferenceType.MICROSERVICE)
                    .setReference("web"))
            .build());
    InvalidValueException e =
        catchThrowableOfType(
            () -> LINKS.validate(LinuxKeys.linkKey("other"), bridge("br0").build()),
            InvalidValueException.class);
    assertThat(e.invalidFields()).containsExactly("name");
  }

  @Test
  void vxlanFieldsAreChecked() {
    VxlanLink.Builder ok = VxlanLink.newBuilder().setVni(42).setRemote("192.0.2.2");
    accepted(vxlan(ok));
    accepted(vxlan(VxlanLink.newBuilder().setVni(7).setGroup("239.1.1.1").setUnderlay("eth0")));
    accepted(vxlan(VxlanLink.newBuilder().setVni(7).setRemote("2001:db8::2").setLocal("::1")));
    refused(vxlan(ok.clone().setVni(0)), "vni");
    refused(vxlan(ok.clone().setVni(1 << 24)), "vni");
    refused(vxlan(ok.clone().setDstPort(70000)), "dst_port");
    refused(vxlan(ok.clone().setRemote("192.0.2.x")), "remote");
    refused(vxlan(ok.clone().setRemote("239.1.1.1")), "remote");
    refused(vxlan(ok.clone().setLocal("nope")), "local");
    refused(vxlan(ok.clone().setLocal("2001:db8::1")), "local");
    refused(vxlan(ok.clone().setGroup("239.1.1.1").setUnderlay("eth0")), "remote", "group");
    refused(vxlan(VxlanLink.newBuilder().setVni(7).setGroup("239.1.1.1")), "underlay");
    refused(
        vxlan(VxlanLink.newBuilder().setVni(7).setGroup("192.0.2.1").setUnderlay("eth0")), "group");
    refused(vxlan(ok.clone().setUnderlay("eth0\nlink del lo")), "underlay");
  }

  @Test
  void macvlanVlanBondAndVrfFieldsAreChecked() {
    accepted(
        Link.newBuilder()
            .setName("mv")
            .setMacvlan(MacvlanLink.newBuilder().setParent("e"))
            .build());
    refused(Link.newBuilder().setName("mv").setMacvlan(MacvlanLink.newBuilder()).build(), "parent");
    refused(
        Link.newBuilder()
            .setName("mv")
            .setMacvlan(MacvlanLink.newBuilder().setParent("e").setModeValue(9))
            .build(),
        "mode");
    accepted(
        Link.newBuilder()
            .setName("e.5")
            .setVlan(VlanLink.newBuilder().setParent("e").setId(5))
            .build());
    refused(
        Link.newBuilder().setName("e.0").setVlan(VlanLink.newBuilder().setParent("e")).build(),
        "id");
    refused(
        Link.newBuilder()
            .setName("e.5")
            .setVlan(VlanLink.newBuilder().setParent("e").setId(4095))
            .build(),
        "id");
    refused(
        Link.newBuilder().setName("e.5").setVlan(VlanLink.newBuilder().setId(5)).build(), "parent");
    for (int table : new int[] {0, 253, 254, 255}) {
      refused(
          Link.newBuilder()
              .setName("vrf")
              .setVrf(VrfLink.newBuilder().setRoutingTable(table))
              .build(),
          "routing_table");
    }
    accepted(
        Link.newBuilder().setName("vrf").setVrf(VrfLink.newBuilder().setRoutingTable(10)).build());
  }

  static InvalidValueException refused(Port p, String... fields) {
    InvalidValueException e =
        catchThrowableOfType(
            () -> PORTS.validate(LinuxKeys.portKey(p.getInterface()), p),
            InvalidValueException.class);
    assertThat(e).as("%s is refused", p).isNotNull();
    assertThat(e.invalidFields()).containsExactlyInAnyOrder(fields);
    HostileValuesTest.assertNothingRaw(e.getMessage());
    return e;
  }

  @Test
  void portsNameTheirInterfaceAndMaster() {
    assertThatCode(
            () ->
                PORTS.validate(
                    LinuxKeys.portKey("p1"),
                    Port.newBuilder().setInterface("p1").setMaster("br1").build()))
        .doesNotThrowAnyException();
    refused(Port.newBuilder().setInterface("p1").build(), "master");
    refused(Port.newBuilder().setInterface("p1").setMaster("p1").build(), "master");
    refused(Port.newBuilder().setInterface("p1").setMaster("br\u0000").build(), "master");
    refused(Port.newBuilder().setInterface("p\t1").setMaster("br1").build(), "interface");
  }

  @Test
  void vrfDeviceInterfacesAndTheirMembersAsVppAgentHasThem() throws Exception {
    var interfaces = HostileValuesTest.INTERFACES;
    io.kvscheduler.plugins.linux.model.interfaces.Interface vrf =
        io.kvscheduler.plugins.linux.model.interfaces.Interface.newBuilder()
            .setName("vrf1")
            .setType(io.kvscheduler.plugins.linux.model.interfaces.Interface.Type.VRF_DEVICE)
            .setVrfDev(
                io.kvscheduler.plugins.linux.model.interfaces.VrfDevLink.newBuilder()
                    .setRoutingTable(10))
            .build();
    interfaces.validate(Values.key(vrf), vrf);
    for (int table : new int[] {0, 254}) {
      var bad =
          vrf.toBuilder().setVrfDev(vrf.getVrfDev().toBuilder().setRoutingTable(table)).build();
      InvalidValueException e =
          catchThrowableOfType(
              () -> interfaces.validate(Values.key(bad), bad), InvalidValueException.class);
      assertThat(e.invalidFields()).containsExactly("routing_table");
    }
    var member = Values.veth("v1", "v2", "").setVrfMasterInterface("vrf1").build();
    interfaces.validate(Values.key(member), member);
    for (String master : new String[] {"v1", "a/b", "x\ty"}) {
      var bad = member.toBuilder().setVrfMasterInterface(master).build();
      InvalidValueException e =
          catchThrowableOfType(
              () -> interfaces.validate(Values.key(bad), bad), InvalidValueException.class);
      assertThat(e).as(master).isNotNull();
      assertThat(e.invalidFields()).containsExactly("vrf_master_interface");
    }
  }
}
