package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The two ends of a veth pair, whichever the scheduler creates first: each pair below comes twice,
 * mirrored, so that each end is once the one that makes the pair. The ends get their host names and
 * namespaces, carry their aliases, are each other's peer, and no other link is left behind.
 */
class VethPairKernelTest {
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

  private void apply(Interface... ends) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (Interface i : ends) {
      m.put(Values.key(i), i);
    }
    k.change(m);
    for (Interface i : ends) {
      assertThat(k.state(Values.key(i))).as(i.getName()).isEqualTo(ValueState.CONFIGURED);
    }
  }

  /** Asserts that {@code a} of {@code nsA} and {@code b} of {@code nsB} are one pair, as made. */
  private void assertPair(String nsA, String a, String nameA, String nsB, String b, String nameB) {
    JsonNode la = k.link(nsA, a);
    JsonNode lb = k.link(nsB, b);
    assertThat(la).as("link %s in '%s'", a, nsA).isNotNull();
    assertThat(lb).as("link %s in '%s'", b, nsB).isNotNull();
    if (nsA.equals(nsB)) {
      assertThat(la.path("link").asText()).as("peer of " + a).isEqualTo(b);
    } else {
      assertThat(la.path("link_index").asInt())
          .as("peer of " + a)
          .isEqualTo(lb.path("ifindex").asInt());
      assertThat(lb.path("link_index").asInt())
          .as("peer of " + b)
          .isEqualTo(la.path("ifindex").asInt());
    }
    assertThat(la.path("ifalias").asText())
        .isEqualTo(KernelFixture.AGENT_PREFIX + nameA + "/" + nameB);
    assertThat(lb.path("ifalias").asText())
        .isEqualTo(KernelFixture.AGENT_PREFIX + nameB + "/" + nameA);
    assertThat(la.path("flags").toString()).contains("\"UP\"");
    assertThat(lb.path("flags").toString()).contains("\"UP\"");
  }

  @Test
  void aPeerWhoseHostNameIsNotItsInterfaceName() {
    apply(
        Values.veth("pa", "pb", "").build(),
        Values.veth("pb", "pa", "").setHostIfName("pb-host").build(),
        Values.veth("qa", "qb", "").setHostIfName("qa-host").build(),
        Values.veth("qb", "qa", "").build());

    assertPair("", "pa", "pa", "", "pb-host", "pb");
    assertPair("", "qa-host", "qa", "", "qb", "qb");
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "pa", "pb-host", "qa-host", "qb");
  }

  @Test
  void oneEndInTheAgentsNamespaceAndTheOtherInANamedOne() {
    apply(
        Values.veth("ma", "mb", "").setMtu(1400).build(),
        Values.veth("mb", "ma", "nsx").build(),
        Values.veth("na", "nb", "nsx").build(),
        Values.veth("nb", "na", "").setPhysAddress("02:00:00:00:0b:0b").build());

    assertPair("", "ma", "ma", "nsx", "mb", "mb");
    assertPair("nsx", "na", "na", "", "nb", "nb");
    assertThat(k.link("", "ma").path("mtu").asInt()).isEqualTo(1400);
    assertThat(k.link("", "nb").path("address").asText()).isEqualTo("02:00:00:00:0b:0b");
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "ma", "nb");
    assertThat(k.linkNames("nsx")).containsExactlyInAnyOrder("lo", "mb", "na");
  }

  @Test
  void aForeignLinkNamedLikeThePeerIsLeftAlone() {
    k.sh("ip", "link", "add", "name", "pb", "type", "veth", "peer", "name", "pb-foreign");
    k.sh("ip", "link", "add", "name", "qa", "type", "veth", "peer", "name", "qa-foreign");
    apply(
        Values.veth("pa", "pb", "").build(),
        Values.veth("pb", "pa", "").setHostIfName("pb-host").build(),
        Values.veth("qa", "qb", "").setHostIfName("qa-host").build(),
        Values.veth("qb", "qa", "").build());

    assertPair("", "pa", "pa", "", "pb-host", "pb");
    assertPair("", "qa-host", "qa", "", "qb", "qb");
    for (String foreign : List.of("pb", "qa")) {
      JsonNode l = k.link("", foreign);
      assertThat(l.path("ifalias").asText("")).as(foreign + " untouched").isEmpty();
      assertThat(l.path("flags").toString()).doesNotContain("\"UP\"");
    }
    assertThat(k.linkNames(""))
        .containsExactlyInAnyOrder(
            "lo", "pa", "pb", "pb-foreign", "pb-host", "qa", "qa-foreign", "qa-host", "qb");
  }

  @Test
  void aRestartedAgentAdoptsThePairsAsTheyAre() {
    apply(
        Values.veth("pa", "pb", "", "10.7.0.1/24").build(),
        Values.veth("pb", "pa", "").setHostIfName("pb-host").build(),
        Values.veth("ma", "mb", "").build(),
        Values.veth("mb", "ma", "nsx").build());
    k.restartAgent();

    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }

  /**
   * How far the making of a pair (its first end in the agent's namespace) got when the agent was
   * killed: each stage is the kernel state after one more of its requests.
   */
  enum Killed {
    /** The pair made, in the agent's device groups, without aliases. */
    AFTER_THE_PAIR_WAS_MADE,
    /** The first end with its alias, still down. */
    AFTER_THE_FIRST_END_GOT_ITS_ALIAS,
    /** The exchange finished: the first end up, the other end waits for the peer's Create. */
    AFTER_THE_EXCHANGE,
    /** The peer's Create moved the waiting end into the peer's namespace, not yet configured. */
    AFTER_THE_WAITING_END_WAS_MOVED,
    /** As a build that did not put new links in its device groups leaves the exchange. */
    AFTER_THE_EXCHANGE_OF_A_BUILD_BEFORE
  }

  /**
   * Leaves the pair {@code first} (the end that makes it) and {@code waiting} (bound for {@code
   * ns}) as an agent killed at {@code stage} does, with the requests the agent sends.
   */
  private void leftover(Killed stage, String first, String waiting, String ns) {
    int making = InterfaceDescriptor.makingGroup(KernelFixture.AGENT_PREFIX);
    List<List<String>> requests = new ArrayList<>();
    if (stage == Killed.AFTER_THE_EXCHANGE_OF_A_BUILD_BEFORE) {
      requests.add(List.of("add", "name", first, "type", "veth", "peer", "name", waiting));
    } else {
      requests.add(
          List.of(
              "add",
              "name",
              first,
              "group",
              Integer.toString(making),
              "type",
              "veth",
              "peer",
              "name",
              waiting,
              "group",
              Integer.toString(making + 1)));
    }
    if (stage != Killed.AFTER_THE_PAIR_WAS_MADE) {
      requests.add(
          List.of(
              "set", "dev", first, "alias", KernelFixture.AGENT_PREFIX + first + "/" + waiting));
    }
    if (stage.compareTo(Killed.AFTER_THE_EXCHANGE) >= 0) {
      requests.add(List.of("set", "dev", first, "up"));
    }
    if (stage == Killed.AFTER_THE_WAITING_END_WAS_MOVED && !ns.isEmpty()) {
      if (k.run("ip", "netns", "list").out().isBlank()) {
        k.sh("ip", "netns", "add", ns);
      }
      requests.add(List.of("set", "dev", waiting, "netns", ns));
    }
    for (List<String> r : requests) {
      List<String> argv = new ArrayList<>(List.of("ip", "link"));
      argv.addAll(r);
      k.sh(argv.toArray(String[]::new));
    }
  }

  @ParameterizedTest
  @EnumSource(Killed.class)
  void aPairAKilledAgentLeftHalfMadeIsMadeWholeByTheRestartedOne(Killed stage) {
    // xb made the pair xb/xa (both in the agent's namespace), yb made yb/ya (ya bound for nsx),
    // zb made zb/za, which the configuration no longer has
    leftover(stage, "xb", "xa", "");
    leftover(stage, "yb", "ya", "nsx");
    leftover(stage, "zb", "za", "");
    k.restartAgent();
    Interface xa = Values.veth("xa", "xb", "", "10.5.0.1/24").build();
    Interface xb = Values.veth("xb", "xa", "", "10.5.0.2/24").build();
    Interface ya = Values.veth("ya", "yb", "nsx", "10.6.0.1/24").build();
    Interface yb = Values.veth("yb", "ya", "", "10.6.0.2/24").build();
    for (Interface i : List.of(xa, xb, ya, yb)) {
      k.desired.put(Values.key(i), i);
    }

    k.fullResync();

    for (Interface i : List.of(xa, xb, ya, yb)) {
      assertThat(k.state(Values.key(i))).as(i.getName()).isEqualTo(ValueState.CONFIGURED);
    }
    assertPair("", "xb", "xb", "", "xa", "xa");
    assertPair("", "yb", "yb", "nsx", "ya", "ya");
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "xa", "xb", "yb");
    assertThat(k.linkNames("nsx")).containsExactlyInAnyOrder("lo", "ya");
    assertThat(k.addresses("", "xa")).containsExactly("10.5.0.1/24");
    assertThat(k.addresses("nsx", "ya")).containsExactly("10.6.0.1/24");
    assertThat(KernelFixture.sbOperations(k.fullResync())).as("converged").isEmpty();
  }
}
