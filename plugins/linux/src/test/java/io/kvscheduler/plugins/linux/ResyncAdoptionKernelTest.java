package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a resync makes of links the configuration does not describe exactly: addresses someone put
 * on an EXISTING link, a veth end whose peer lost its mark, a second link carrying the mark of a
 * configured interface.
 */
class ResyncAdoptionKernelTest {
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

  static final Interface EXT =
      Interface.newBuilder()
          .setName("ext")
          .setHostIfName("ext0")
          .setType(Interface.Type.EXISTING)
          .setEnabled(true)
          .build();

  /** ext0 made by hand, up, with an address of its own. */
  private void hostLinkWithAnAddress() {
    k.sh("ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0-peer");
    k.sh("ip", "link", "set", "ext0", "up");
    k.sh("ip", "addr", "add", "10.9.0.5/24", "dev", "ext0");
    k.await(LinuxKeys.hostNameKey("ext0"), ValueState.OBTAINED);
  }

  @Test
  void anExistingInterfaceWithoutAddressesIsMadeL2OnlyByTheResync() {
    hostLinkWithAnAddress();
    k.put(Values.key(EXT), EXT);
    assertThat(k.state(Values.key(EXT))).isEqualTo(ValueState.CONFIGURED);
    int index = k.link("", "ext0").path("ifindex").asInt();

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync))
        .containsExactly(
            "DELETE " + LinuxKeys.addressKey("ext", LinuxKeys.AddressSource.STATIC, "10.9.0.5/24"));
    assertThat(k.addresses("", "ext0")).isEmpty();
    assertThat(k.link("", "ext0").path("ifindex").asInt())
        .as("the link itself is kept")
        .isEqualTo(index);
    assertThat(k.state(Values.key(EXT))).isEqualTo(ValueState.CONFIGURED);
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }

  @Test
  void anExistingInterfaceWithAddressesKeepsOnlyThose() {
    hostLinkWithAnAddress();
    Interface withIp = EXT.toBuilder().addIpAddresses("10.9.1.1/24").build();
    k.put(Values.key(withIp), withIp);

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync))
        .containsExactly(
            "DELETE " + LinuxKeys.addressKey("ext", LinuxKeys.AddressSource.STATIC, "10.9.0.5/24"));
    assertThat(k.addresses("", "ext0")).containsExactly("10.9.1.1/24");
  }

  @Test
  void aLinkOnlyExistingInterfaceLeavesTheAddressesAlone() {
    hostLinkWithAnAddress();
    Interface linkOnly = EXT.toBuilder().setLinkOnly(true).build();
    k.put(Values.key(linkOnly), linkOnly);

    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    assertThat(k.addresses("", "ext0")).containsExactly("10.9.0.5/24");
  }

  static final Interface VA = Values.veth("va", "vb", "", "10.8.0.1/24").build();
  static final Interface VB = Values.veth("vb", "va", "").build();

  private void pair() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(Values.key(VA), VA);
    m.put(Values.key(VB), VB);
    k.change(m);
    assertThat(k.state(Values.key(VA))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(VB))).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void aVethEndWhosePeerLostItsMarkIsRemovedAndThePairMadeAgain() {
    pair();
    int before = k.link("", "va").path("ifindex").asInt();
    k.sh("ip", "link", "set", "dev", "vb", "alias", ""); // vb is no longer the agent's
    k.restartAgent();

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync))
        .startsWith(
            "DELETE "
                + LinuxKeys.addressKey(
                    "va-MISSING_PEER", LinuxKeys.AddressSource.STATIC, "10.8.0.1/24"),
            "DELETE " + LinuxKeys.interfaceKey("va-MISSING_PEER"));
    assertThat(KernelFixture.sbOperations(resync))
        .contains("CREATE " + Values.key(VA), "CREATE " + Values.key(VB));
    assertThat(k.state(Values.key(VA))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.state(Values.key(VB))).isEqualTo(ValueState.CONFIGURED);
    assertThat(k.link("", "va").path("ifindex").asInt()).isNotEqualTo(before);
    assertThat(k.link("", "va").path("ifalias").asText())
        .isEqualTo(KernelFixture.AGENT_PREFIX + "va/vb");
    assertThat(k.link("", "vb").path("ifalias").asText())
        .isEqualTo(KernelFixture.AGENT_PREFIX + "vb/va");
    assertThat(k.addresses("", "va")).containsExactly("10.8.0.1/24");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }

  @Test
  void aSecondLinkCarryingTheMarkOfAnInterfaceIsRemoved() {
    pair();
    int before = k.link("", "va").path("ifindex").asInt();
    k.sh("ip", "link", "add", "x1", "type", "veth", "peer", "name", "x2");
    k.sh("ip", "link", "set", "dev", "x1", "alias", KernelFixture.AGENT_PREFIX + "va/vb");

    RecordedTxn resync = k.fullResync();

    assertThat(KernelFixture.sbOperations(resync))
        .containsExactly("DELETE " + LinuxKeys.interfaceKey("va-DUPLICATE1"));
    assertThat(k.linkNames("")).doesNotContain("x1", "x2").contains("va", "vb");
    assertThat(k.link("", "va").path("ifindex").asInt()).isEqualTo(before);
    assertThat(k.state(Values.key(VA))).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void anEndCarryingItsMarkButPairedWithAnotherLinkIsMadeAfresh() {
    // vb as the agent marks it, but its other end is not va: a pair a killed agent left half made
    k.sh("ip", "link", "add", "name", "vb", "type", "veth", "peer", "name", "other");
    k.sh("ip", "link", "set", "dev", "vb", "alias", KernelFixture.AGENT_PREFIX + "vb/va");
    k.sh("ip", "link", "set", "dev", "vb", "up");
    int before = k.link("", "vb").path("ifindex").asInt();
    k.restartAgent();
    k.desired.put(Values.key(VA), VA);
    k.desired.put(Values.key(VB), VB);

    k.fullResync();

    k.await(Values.key(VA), ValueState.CONFIGURED);
    k.await(Values.key(VB), ValueState.CONFIGURED);
    assertThat(k.link("", "vb").path("ifindex").asInt()).isNotEqualTo(before);
    assertThat(k.link("", "va").path("link").asText()).as("peer of va").isEqualTo("vb");
    assertThat(k.link("", "vb").path("ifalias").asText())
        .isEqualTo(KernelFixture.AGENT_PREFIX + "vb/va");
    assertThat(k.link("", "va").path("ifalias").asText())
        .isEqualTo(KernelFixture.AGENT_PREFIX + "va/vb");
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "va", "vb");
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }
}
