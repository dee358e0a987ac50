package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.linuxcalls.BatchLine;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.LinkSettings;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Names and aliases built to smuggle options into {@code ip -batch} lines, run through the real
 * command path: those no line can carry are INVALID and change nothing; odd but legal text reaches
 * the kernel exactly as written.
 */
class HostileNamesKernelTest {
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

  static Interface loopback(String name) {
    return Interface.newBuilder()
        .setName(name)
        .setType(Interface.Type.LOOPBACK)
        .setEnabled(true)
        .build();
  }

  @Test
  void namesCarryingOptionsOrCommentsAreInvalidAndTouchNothing() {
    int loMtu = k.link("", "lo").path("mtu").asInt();
    List<Interface> loopbacks = new ArrayList<>();
    for (String name :
        List.of(
            "lb\tmtu\t1300",
            "lb\tname\tpwn0",
            "lb\rmtu\r1300",
            "lb\nlink set dev lo mtu 1300",
            "lb # mtu 1300",
            "lb' mtu 1300 \"",
            "lb\0")) {
      loopbacks.add(loopback(name));
    }
    Interface badPeer = Values.veth("h1", "h2\tmtu\t1300", "").build();
    Interface badHost = Values.veth("h3", "h4", "").setHostIfName("h3\tmtu\t1300").build();
    Interface badNs = Values.veth("h5", "h6", "..").build();
    Map<String, Object> m = new LinkedHashMap<>();
    for (Interface i : loopbacks) {
      m.put(Values.key(i), i);
    }
    for (Interface i : List.of(badPeer, badHost, badNs)) {
      m.put(Values.key(i), i);
    }
    long started = System.nanoTime();
    k.change(m);
    assertThat(k.linkNames("")).as("lo keeps its name, no link made").containsExactly("lo");
    assertThat(k.link("", "lo").path("mtu").asInt()).as("lo's MTU").isEqualTo(loMtu);
    assertThat(k.link("", "lo").path("ifalias").asText("")).isEmpty();
    assertThat(k.sh("ip", "netns", "list")).as("no namespace made").isBlank();
    for (Interface i : loopbacks) {
      assertThat(k.state(Values.key(i))).as(i.getName()).isEqualTo(ValueState.INVALID);
      assertThat(k.status(Values.key(i)).value().details()).containsExactly("name");
    }
    assertThat(k.status(Values.key(badPeer)).value().details()).containsExactly("peer_if_name");
    assertThat(k.status(Values.key(badHost)).value().details()).containsExactly("host_if_name");
    assertThat(k.status(Values.key(badNs)).value().details()).containsExactly("namespace");
    assertThat(k.status(Values.key(badHost)).value().error())
        .contains("'h3\\tmtu\\t1300'")
        .doesNotContain("\t");

    assertThat((System.nanoTime() - started) / 1_000_000)
        .as("ms for the refused values (no ip call waits for its limit)")
        .isLessThan(5000);
  }

  @Test
  void oddButLegalTextIsTheAliasExactly() {
    String quoteTrap = "x\" mtu 1300 \"";
    String backslash = "ends with\\";
    Interface a = Values.veth(quoteTrap, backslash, "").setHostIfName("odd1").build();
    Interface b = Values.veth(backslash, quoteTrap, "").setHostIfName("odd2").build();
    Interface c =
        Values.veth("it's 日本語 😀", "back\\slash ünï", "ns1").setHostIfName("odd3").build();
    Interface d =
        Values.veth("back\\slash ünï", "it's 日本語 😀", "ns1").setHostIfName("odd4").build();
    Interface lo = loopback("lb\" mtu 1300 name pwn0 \"");
    Map<String, Object> m = new LinkedHashMap<>();
    for (Interface i : List.of(a, b, c, d, lo)) {
      m.put(Values.key(i), i);
    }
    long started = System.nanoTime();
    k.change(m);
    assertThat((System.nanoTime() - started) / 1_000_000).isLessThan(5000);
    for (String key : m.keySet()) {
      assertThat(k.state(key)).as("%s: %s", key, k.status(key)).isEqualTo(ValueState.CONFIGURED);
    }
    String p = KernelFixture.AGENT_PREFIX;
    assertThat(k.link("", "odd1").path("ifalias").asText())
        .isEqualTo(p + quoteTrap + "/" + backslash);
    assertThat(k.link("", "odd2").path("ifalias").asText())
        .isEqualTo(p + backslash + "/" + quoteTrap);
    assertThat(k.link("ns1", "odd3").path("ifalias").asText())
        .isEqualTo(p + "it's 日本語 😀/back\\slash ünï");
    assertThat(k.link("ns1", "odd4").path("ifalias").asText())
        .isEqualTo(p + "back\\slash ünï/it's 日本語 😀");
    assertThat(k.link("", "lo").path("ifalias").asText())
        .isEqualTo(p + "lb\" mtu 1300 name pwn0 \"");
    assertThat(k.link("", "lo").path("mtu").asInt()).isEqualTo(65536);
    assertThat(k.link("", "odd1").path("mtu").asInt()).isEqualTo(1500);
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "odd1", "odd2");
    // the plugin reads the aliases back as written: a resync finds every value as configured
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
  }

  /** Characters ip reads specially, and some it does not. */
  static final String[] PIECES = {
    " ", "\t", "\r", "\n", "\0", "\"", "'", "#", "\\", "a", "mtu", "1300", "name", "é", "日", "😀",
    "-", "/", "\ud800", "x y", ";", "$", "`"
  };

  @Test
  void randomAliasesAreRefusedOrSetExactlyThroughRealIp() throws Exception {
    k.calls.addVethPair("r1", "r2", "");
    long seed = new Random().nextLong();
    Random random = new Random(seed);
    List<String> refused = new ArrayList<>();
    int set = 0;
    long started = System.nanoTime();
    for (int n = 0; n < 300; n++) {
      StringBuilder sb = new StringBuilder();
      for (int len = random.nextInt(8); len > 0; len--) {
        sb.append(PIECES[random.nextInt(PIECES.length)]);
      }
      String alias = sb.toString();
      Link l;
      try {
        l = k.calls.configureLink("", "r1", "r1", alias, LinkSettings.none());
      } catch (IllegalArgumentException e) {
        assertThat(BatchLine.problem(alias)).as("seed %s: %s refused", seed, e).isPresent();
        refused.add(alias);
        continue;
      } catch (LinuxCallException e) {
        throw new AssertionError("seed " + seed + ": " + BatchLine.shown(alias) + ": " + e, e);
      }
      assertThat(l.alias()).as("seed %s: %s", seed, BatchLine.shown(alias)).isEqualTo(alias);
      set++;
    }
    assertThat(k.link("", "r1").path("mtu").asInt()).isEqualTo(1500);
    assertThat(k.linkNames("")).containsExactlyInAnyOrder("lo", "r1", "r2");
    assertThat(set).as("aliases set (seed %s)", seed).isGreaterThan(50);
    assertThat(refused).as("aliases refused (seed %s)", seed).isNotEmpty();
    assertThat((System.nanoTime() - started) / 1_000_000)
        .as("ms for 300 aliases (seed %s)", seed)
        .isLessThan(10_000);
  }
}
