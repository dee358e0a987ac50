package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.LinkSettings;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The iproute2 calls on the real kernel of a private namespace. */
class IpRoute2CallsTest {
  NetnsSandbox sandbox;
  IpRoute2Calls calls;

  @BeforeEach
  void start() {
    try {
      sandbox = NetnsSandbox.start();
    } catch (IOException e) {
      Assumptions.abort(
          "the kernel or the system forbids private network namespaces here: " + e.getMessage());
    }
    calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    if (sandbox != null) {
      calls.close();
      sandbox.close();
    }
  }

  @Test
  void findsSeveralLinksInOneCallAndSkipsMissingOnes() throws Exception {
    calls.addVethPair("t1", "t2", "");
    Map<String, Link> found = calls.findLinks("", List.of("nope", "t2", "t1"));
    assertThat(found).containsOnlyKeys("t1", "t2");
    assertThat(found.get("t1").kind()).isEqualTo("veth");
    assertThat(found.get("t1").index()).isPositive();
    assertThat(calls.findLinks("", List.of("nope"))).isEmpty();
  }

  @Test
  void looksUpThousandsOfNamesInOneCall() throws Exception {
    calls.addVethPair("t1", "t2", "");
    List<String> names = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      names.add("nope" + i); // each answered with a few lines of errors: more than a pipe holds
    }
    names.add("t2");
    assertThat(calls.findLinks("", names)).containsOnlyKeys("t2");
  }

  /** The device groups of pairs being made, in these tests. */
  static final int MAKING = 0x6b760010;

  @Test
  void makesAVethPairWithItsFirstEndConfiguredInOneCall() throws Exception {
    Link made =
        calls.addVeth(
            "b", "a", MAKING, "/x/b/a", new LinkSettings(null, 1400, "02:00:00:00:00:0b", true));
    assertThat(made.name()).isEqualTo("b");
    assertThat(made.alias()).isEqualTo("/x/b/a");
    assertThat(made.mtu()).isEqualTo(1400);
    assertThat(made.mac()).isEqualTo("02:00:00:00:00:0b");
    assertThat(made.up()).isTrue();
    assertThat(made.group()).isEqualTo(MAKING);
    Link peer = calls.findLinks("", List.of("a")).get("a");
    assertThat(peer.kind()).isEqualTo("veth");
    assertThat(peer.alias()).isEmpty();
    assertThat(peer.up()).isFalse();
    assertThat(peer.group()).isEqualTo(MAKING + 1);

    assertThatThrownBy(() -> calls.addVeth("c", "a", MAKING, "/x/c/a", LinkSettings.none()))
        .isInstanceOf(LinuxCallException.class)
        .hasMessage("RTNETLINK answers: File exists");
    assertThatThrownBy(
            () -> calls.addVeth("c", "d", MAKING, "/x/c/d", LinkSettings.none().withMtu(70000)))
        .isInstanceOf(LinuxCallException.class)
        .hasMessage("Error: mtu greater than device maximum.");
    assertThat(calls.findLinks("", List.of("c", "d"))).as("nothing left").isEmpty();
  }

  @Test
  void readsTheDeviceGroupOfALink() throws Exception {
    sh(
        "ip",
        "link",
        "add",
        "name",
        "g1",
        "type",
        "veth",
        "peer",
        "name",
        "g2",
        "group",
        "2000000000");
    Map<String, Link> found = calls.findLinks("", List.of("g1", "g2"));
    assertThat(found.get("g1").group()).as("the default group").isZero();
    assertThat(found.get("g2").group()).isEqualTo(2000000000);
    assertThat(calls.links(""))
        .filteredOn(l -> l.name().equals("g2"))
        .singleElement()
        .extracting(Link::group)
        .isEqualTo(2000000000);
  }

  private void sh(String... argv) throws Exception {
    List<String> cmd = new ArrayList<>(sandbox.prefix());
    cmd.addAll(List.of(argv));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
  }

  @Test
  void tellsWhetherItChangedSomethingJustNow() throws Exception {
    calls.links("");
    assertThat(calls.changedWithin(Duration.ofSeconds(5))).as("reading only").isFalse();
    calls.addVethPair("t1", "t2", "");
    assertThat(calls.changedWithin(Duration.ofSeconds(5))).isTrue();
    Thread.sleep(30);
    assertThat(calls.changedWithin(Duration.ofMillis(20))).isFalse();
  }

  @Test
  void configuresALinkInOneCallAndReportsTheKernelsAnswerVerbatim() throws Exception {
    calls.ensureNamespace("a");
    calls.addVethPair("t1", "t2", "a");
    assertThat(calls.findLinks("", List.of("t1"))).isEmpty();
    Link l =
        calls.configureLink(
            "a",
            "t1",
            "x1",
            "/vnf-agent/t/x1",
            LinkSettings.none().withMtu(1400).withMac("02:00:00:00:00:01").withUp(true));
    assertThat(l.name()).isEqualTo("x1");
    assertThat(l.alias()).isEqualTo("/vnf-agent/t/x1");
    assertThat(l.mtu()).isEqualTo(1400);
    assertThat(l.mac()).isEqualTo("02:00:00:00:00:01");
    assertThat(l.up()).isTrue();
    assertThat(l.namespace()).isEqualTo("a");

    calls.addVethPair("t3", "t4", "");
    assertThatThrownBy(() -> calls.configureLink("", "t3", "t4", "x", LinkSettings.none()))
        .isInstanceOf(LinuxCallException.class)
        .hasMessage("RTNETLINK answers: File exists")
        .satisfies(e -> assertThat(((LinuxCallException) e).retriable()).isTrue());
    assertThatThrownBy(
            () -> calls.configureLink("", "t3", "t3", null, LinkSettings.none().withMtu(100000)))
        .isInstanceOf(LinuxCallException.class)
        .hasMessage("Error: mtu greater than device maximum.")
        .satisfies(e -> assertThat(((LinuxCallException) e).retriable()).isFalse());
    assertThatThrownBy(() -> calls.deleteLink("", "nope"))
        .isInstanceOf(LinuxCallException.class)
        .hasMessage("Cannot find device \"nope\"")
        .satisfies(e -> assertThat(((LinuxCallException) e).notFound()).isTrue());
  }

  @Test
  void batchRunsTheKernelsOwnFastPath() throws Exception {
    calls.batch(
        "",
        "link add b1 type veth peer name b2\nlink set b1 up\n" + "addr add 10.5.0.1/24 dev b1\n");
    assertThat(calls.link("", "b1").orElseThrow().addresses()).containsExactly("10.5.0.1/24");
    assertThatThrownBy(() -> calls.batch("", "link add b1 type veth peer name b3\n"))
        .hasMessage("RTNETLINK answers: File exists");
  }

  @Test
  void aLinkReplacedByHandIsFoundUnderItsNameAgain() throws Exception {
    calls.addVethPair("t1", "t2", "");
    int old = calls.link("", "t1").orElseThrow().index();
    byHand("ip", "link", "del", "t1");
    byHand("ip", "link", "add", "t3", "type", "veth", "peer", "name", "t4");
    byHand("ip", "link", "set", "dev", "t3", "name", "t1");

    Link now = calls.link("", "t1").orElseThrow();
    assertThat(now.index()).isNotEqualTo(old);
    calls.setLink("", "t1", LinkSettings.none().withMtu(1400));
    assertThat(calls.link("", "t1").orElseThrow().mtu()).isEqualTo(1400);

    calls.addAddress("", "t1", "10.6.0.1/24");
    byHand("ip", "link", "del", "t1");
    assertThatThrownBy(() -> calls.deleteAddress("", "t1", "10.6.0.1/24"))
        .as("the name is looked up afresh, not through the index of the deleted link")
        .hasMessage("Cannot find device \"t1\"");
    assertThat(calls.link("", "t1")).isEmpty();
    assertThatThrownBy(() -> calls.setLink("", "t1", LinkSettings.none().withUp(true)))
        .hasMessage("Cannot find device \"t1\"");
  }

  @Test
  void manyCallsReuseOneProcessAndStayInStep() throws Exception {
    calls.addVethPair("t1", "t2", "");
    for (int i = 0; i < 50; i++) {
      calls.setLink("", "t1", LinkSettings.none().withMtu(1000 + i));
      assertThat(calls.link("", "t1").orElseThrow().mtu()).isEqualTo(1000 + i);
      assertThat(calls.link("", "nope" + i)).isEmpty();
      assertThat(calls.routes("", "t1")).isEmpty();
    }
  }

  /** Runs a command inside the sandbox, as someone else than the plugin would. */
  private void byHand(String... argv) throws Exception {
    List<String> cmd = new ArrayList<>(sandbox.prefix());
    cmd.addAll(List.of(argv));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
  }
}
