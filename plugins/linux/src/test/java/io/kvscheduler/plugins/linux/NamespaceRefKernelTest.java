package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.links.BridgeLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.Port;
import io.kvscheduler.plugins.linux.model.links.VxlanLink;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Namespaces referred to by process ({@code PID}), by file ({@code FD}) and by microservice label
 * ({@code MICROSERVICE}) on the real kernel: a {@code sleep} in a network namespace of its own
 * stands for a microservice's container. A veth pair joins the agent's namespace to it; when the
 * process ends, the pair waits PENDING on the namespace (no failure, no retries) and is made again
 * in the namespace of the process that takes its place.
 */
class NamespaceRefKernelTest {
  KernelFixture k;
  final List<Process> started = new ArrayList<>();

  /** A label of this test only (tests of other runs may start processes with theirs). */
  final String label = "kvs-test-" + UUID.randomUUID().toString().substring(0, 8);

  @BeforeEach
  void start() {
    k = KernelFixture.start();
  }

  @AfterEach
  void stop() {
    started.forEach(Process::destroyForcibly);
    if (k != null) {
      k.close();
    }
  }

  /**
   * Starts {@code sleep} in a network namespace of its own inside the sandbox, with {@code
   * MICROSERVICE_LABEL=label} in its environment unless {@code label} is null; returns when it is
   * in its namespace.
   */
  Process microservice(String label) throws IOException {
    List<String> cmd = new ArrayList<>(k.sandbox.prefix());
    cmd.addAll(List.of("unshare", "--net", "sleep", "600"));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.environment().remove("MICROSERVICE_LABEL");
    if (label != null) {
      pb.environment().put("MICROSERVICE_LABEL", label);
    }
    Process p = pb.start();
    started.add(p);
    Path own = Path.of("/proc", Long.toString(p.pid()), "ns", "net");
    Path sandbox = Path.of("/proc", Long.toString(k.sandbox.pid()), "ns", "net");
    Awaitility.await()
        .atMost(5, TimeUnit.SECONDS)
        .pollInterval(Duration.ofMillis(10))
        .until(
            () ->
                Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline"))
                        .startsWith("sleep")
                    && !Files.readSymbolicLink(own).equals(Files.readSymbolicLink(sandbox)));
    return p;
  }

  static void kill(Process p) throws InterruptedException {
    p.destroyForcibly();
    assertThat(p.waitFor(5, TimeUnit.SECONDS)).isTrue();
  }

  static NetNamespace ref(NetNamespace.ReferenceType type, String reference) {
    return NetNamespace.newBuilder().setType(type).setReference(reference).build();
  }

  /** A veth pair: {@code outer} in the agent's namespace, {@code inner} (with an address) in ns. */
  void pair(String outer, String inner, NetNamespace ns) {
    Map<String, Object> m = new LinkedHashMap<>();
    Interface o = Values.veth(outer, inner, "").build();
    Interface i = Values.veth(inner, outer, "", "10.77.0.2/24").setNamespace(ns).build();
    m.put(Values.key(o), o);
    m.put(Values.key(i), i);
    k.change(m);
  }

  /** What {@code ip addr show} prints in the namespace of process {@code p}. */
  String inside(Process p) {
    return k.sh("nsenter", "--net=/proc/" + p.pid() + "/ns/net", "ip", "-o", "addr", "show");
  }

  /** Asserts that {@code key} stays PENDING for half a second, without an error. */
  void staysPending(String key) throws InterruptedException {
    for (int n = 0; n < 5; n++) {
      BaseValueStatus s = k.status(key);
      assertThat(s.state()).as("state of %s", key).isEqualTo(ValueState.PENDING);
      assertThat(s.value().error()).as("error of %s", key).isEmpty();
      Thread.sleep(100);
    }
  }

  @Test
  void aVethEndInTheNamespaceOfAProcessWaitsWhenTheProcessEnds() throws Exception {
    Process p = microservice(null);
    NetNamespace ns = ref(NetNamespace.ReferenceType.PID, Long.toString(p.pid()));
    pair("h1", "c1", ns);
    k.await(LinuxKeys.interfaceKey("c1"), ValueState.CONFIGURED);
    k.await(LinuxKeys.interfaceKey("h1"), ValueState.CONFIGURED);
    assertThat(inside(p)).contains("c1").contains("10.77.0.2/24");
    assertThat(k.linkNames("")).contains("h1");

    kill(p);
    k.await(LinuxKeys.interfaceKey("c1"), ValueState.PENDING);
    k.await(LinuxKeys.interfaceKey("h1"), ValueState.PENDING);
    assertThat(k.status(LinuxKeys.interfaceKey("c1")).value().details())
        .contains("linux/namespace/pid/" + p.pid());
    staysPending(LinuxKeys.interfaceKey("c1"));
    // the namespace is gone with the process (the agent keeps nothing of it open): so is the pair
    Awaitility.await()
        .atMost(5, TimeUnit.SECONDS)
        .untilAsserted(() -> assertThat(k.linkNames("")).doesNotContain("h1"));
  }

  @Test
  void aRestartedAgentAdoptsWhatItMadeInTheNamespacesOfProcesses() throws Exception {
    Process p = microservice(label);
    pair("h6", "c6", ref(NetNamespace.ReferenceType.PID, Long.toString(p.pid())));
    pair("h7", "c7", ref(NetNamespace.ReferenceType.MICROSERVICE, label));
    k.await(LinuxKeys.interfaceKey("c6"), ValueState.CONFIGURED);
    k.await(LinuxKeys.interfaceKey("c7"), ValueState.CONFIGURED);

    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    for (String name : List.of("h6", "c6", "h7", "c7")) {
      assertThat(k.state(LinuxKeys.interfaceKey(name))).as(name).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    // an address removed by hand in the process's namespace is put back by a downstream resync
    k.sh("nsenter", "--net=/proc/" + p.pid() + "/ns/net", "ip", "addr", "flush", "dev", "c6");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("CREATE linux/interface/c6/address/static/10.77.0.2/24");
    assertThat(inside(p)).contains("c6").contains("10.77.0.2/24");
  }

  @Test
  void aMicroservicesValuesAreMadeAgainInTheProcessThatTakesItsPlace() throws Exception {
    Process first = microservice(label);
    pair("h2", "c2", ref(NetNamespace.ReferenceType.MICROSERVICE, label));
    k.await(LinuxKeys.interfaceKey("c2"), ValueState.CONFIGURED);
    k.await(LinuxKeys.interfaceKey("h2"), ValueState.CONFIGURED);
    assertThat(inside(first)).contains("c2").contains("10.77.0.2/24");

    kill(first);
    k.await(LinuxKeys.interfaceKey("c2"), ValueState.PENDING);
    assertThat(k.status(LinuxKeys.interfaceKey("c2")).value().details())
        .contains("linux/namespace/microservice/" + label);
    staysPending(LinuxKeys.interfaceKey("c2"));

    Process second = microservice(label);
    k.await(LinuxKeys.interfaceKey("c2"), ValueState.CONFIGURED);
    k.await(LinuxKeys.interfaceKey("h2"), ValueState.CONFIGURED);
    assertThat(inside(second)).contains("c2").contains("10.77.0.2/24");
    assertThat(k.linkNames("")).contains("h2");
    // a second resync finds everything as configured
    assertThat(KernelFixture.sbOperations(k.downstreamResync())).isEmpty();
  }

  @Test
  void aRuleChainInAMicroserviceWaitsForItAndComesBackWithIt() throws Exception {
    assertThat(k.run("iptables-restore", "--version").code())
        .as("iptables-restore must be installed (Debian package iptables)")
        .isZero();
    Process first = microservice(label);
    RuleChain web =
        RuleChain.newBuilder()
            .setName("web")
            .setNamespace(ref(NetNamespace.ReferenceType.MICROSERVICE, label))
            .setChainType(RuleChain.ChainType.CUSTOM)
            .setChainName("KVS-WEB")
            .addRules("-p tcp --dport 80 -j DROP")
            .build();
    String key = LinuxKeys.ruleChainKey("web");
    k.put(key, web);
    k.await(key, ValueState.CONFIGURED);
    assertThat(saved(first)).contains("-A KVS-WEB -p tcp -m tcp --dport 80 -j DROP");

    kill(first);
    k.await(key, ValueState.PENDING);
    assertThat(k.status(key).value().details())
        .containsExactly("linux/namespace/microservice/" + label);
    staysPending(key);

    Process second = microservice(label);
    k.await(key, ValueState.CONFIGURED);
    assertThat(saved(second)).contains("-A KVS-WEB -p tcp -m tcp --dport 80 -j DROP");
    assertThat(KernelFixture.sbOperations(k.downstreamResync())).isEmpty();
  }

  /** What {@code ip -d link show} prints in the namespace of process {@code p}. */
  String linksInside(Process p) {
    return k.sh("nsenter", "--net=/proc/" + p.pid() + "/ns/net", "ip", "-d", "-o", "link", "show");
  }

  /** The line {@code ip -o link show} prints for {@code name} among {@code lines}. */
  static String line(String lines, String name) {
    return lines
        .lines()
        .filter(l -> l.matches("\\d+: " + java.util.regex.Pattern.quote(name) + "[@:].*"))
        .findFirst()
        .orElse("");
  }

  @Test
  void linksAndPortsInAMicroserviceWaitForItAndComeBackWithIt() throws Exception {
    Process first = microservice(label);
    NetNamespace ms = ref(NetNamespace.ReferenceType.MICROSERVICE, label);
    pair("h8", "c8", ms);
    Link bridge =
        LinkKernelTest.link("mbr", "", "10.78.0.1/24")
            .setNamespace(ms)
            .setBridge(BridgeLink.getDefaultInstance())
            .build();
    Link tunnel =
        LinkKernelTest.link("mvx", "")
            .setNamespace(ms)
            .setVxlan(VxlanLink.newBuilder().setVni(78).setRemote("192.0.2.78").setUnderlay("c8"))
            .build();
    Port tunnelPort = LinkKernelTest.port("mvx", "mbr");
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(LinkKernelTest.key(bridge), bridge);
    m.put(LinkKernelTest.key(tunnel), tunnel);
    m.put(LinkKernelTest.key(tunnelPort), tunnelPort);
    k.change(m);
    List<String> keys =
        List.of(
            LinkKernelTest.key(bridge), LinkKernelTest.key(tunnel), LinkKernelTest.key(tunnelPort));
    keys.forEach(key -> k.await(key, ValueState.CONFIGURED));
    String links = linksInside(first);
    assertThat(line(links, "mbr")).contains("bridge");
    assertThat(line(links, "mvx")).contains("vxlan id 78").contains("master mbr");
    assertThat(inside(first)).contains("10.78.0.1/24");
    assertThat(k.linkNames("")).doesNotContain("mbr", "mvx");

    kill(first);
    for (String key : keys.subList(0, 2)) {
      k.await(key, ValueState.PENDING);
      assertThat(k.status(key).value().details())
          .as(key)
          .contains("linux/namespace/microservice/" + label);
    }
    k.await(LinkKernelTest.key(tunnelPort), ValueState.PENDING);
    staysPending(LinkKernelTest.key(bridge));

    Process second = microservice(label);
    keys.forEach(key -> k.await(key, ValueState.CONFIGURED));
    links = linksInside(second);
    assertThat(line(links, "mbr")).contains("bridge");
    assertThat(line(links, "mvx")).contains("vxlan id 78").contains("master mbr");
    assertThat(inside(second)).contains("10.78.0.1/24");
    assertThat(KernelFixture.sbOperations(k.downstreamResync())).isEmpty();

    // a restarted agent adopts them; a port taken out by hand is put back
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    k.sh(
        "nsenter",
        "--net=/proc/" + second.pid() + "/ns/net",
        "ip",
        "link",
        "set",
        "mvx",
        "nomaster");
    assertThat(KernelFixture.sbOperations(k.downstreamResync()))
        .containsExactly("CREATE " + LinkKernelTest.key(tunnelPort));
    assertThat(line(linksInside(second), "mvx")).contains("master mbr");
  }

  @Test
  void linksInTheNamespacesOfAProcessAndOfAFile(@TempDir Path dir) throws Exception {
    Process byPid = microservice(null);
    Process byFile = microservice(null);
    Path file = dir.resolve("ns-file");
    Files.createFile(file);
    k.sh("mount", "--bind", "/proc/" + byFile.pid() + "/ns/net", file.toString());
    Link pbr =
        LinkKernelTest.link("pbr", "", "10.79.0.1/24")
            .setNamespace(ref(NetNamespace.ReferenceType.PID, Long.toString(byPid.pid())))
            .setBridge(BridgeLink.getDefaultInstance())
            .build();
    Link fbr =
        LinkKernelTest.link("fbr", "", "10.79.1.1/24")
            .setNamespace(ref(NetNamespace.ReferenceType.FD, file.toString()))
            .setBridge(BridgeLink.getDefaultInstance())
            .build();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(LinkKernelTest.key(pbr), pbr);
    m.put(LinkKernelTest.key(fbr), fbr);
    k.change(m);
    k.await(LinkKernelTest.key(pbr), ValueState.CONFIGURED);
    k.await(LinkKernelTest.key(fbr), ValueState.CONFIGURED);
    assertThat(line(linksInside(byPid), "pbr")).contains("bridge");
    assertThat(inside(byPid)).contains("10.79.0.1/24");
    assertThat(line(linksInside(byFile), "fbr")).contains("bridge");
    assertThat(inside(byFile)).contains("10.79.1.1/24");

    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();

    kill(byPid);
    k.await(LinkKernelTest.key(pbr), ValueState.PENDING);
    assertThat(k.status(LinkKernelTest.key(pbr)).value().details())
        .contains("linux/namespace/pid/" + byPid.pid());
    k.sh("umount", "--lazy", file.toString());
    k.await(LinkKernelTest.key(fbr), ValueState.PENDING);
    assertThat(k.status(LinkKernelTest.key(fbr)).value().details())
        .contains("linux/namespace/fd" + file);
    staysPending(LinkKernelTest.key(pbr));
    staysPending(LinkKernelTest.key(fbr));
  }

  /** What {@code iptables-save -t filter} prints in the namespace of process {@code p}. */
  String saved(Process p) {
    return k.sh("nsenter", "--net=/proc/" + p.pid() + "/ns/net", "iptables-save", "-t", "filter");
  }

  @Test
  void aNamespaceFileBindMountedSomewhere(@TempDir Path dir) throws Exception {
    Process p = microservice(null);
    Path file = dir.resolve("ns-file");
    Files.createFile(file);
    k.sh("mount", "--bind", "/proc/" + p.pid() + "/ns/net", file.toString());
    pair("h3", "c3", ref(NetNamespace.ReferenceType.FD, file.toString()));
    k.await(LinuxKeys.interfaceKey("c3"), ValueState.CONFIGURED);
    assertThat(inside(p)).contains("c3").contains("10.77.0.2/24");

    // the file no longer holds a namespace: the values wait for it
    k.sh("umount", "--lazy", file.toString());
    k.await(LinuxKeys.interfaceKey("c3"), ValueState.PENDING);
    assertThat(k.status(LinuxKeys.interfaceKey("c3")).value().details())
        .contains("linux/namespace/fd" + file);

    k.sh("mount", "--bind", "/proc/" + p.pid() + "/ns/net", file.toString());
    k.await(LinuxKeys.interfaceKey("c3"), ValueState.CONFIGURED);
    k.await(LinuxKeys.interfaceKey("h3"), ValueState.CONFIGURED);
    assertThat(inside(p)).contains("c3").contains("10.77.0.2/24");
  }

  @Test
  void aNamespaceReferredToByProcessAndByFileIsReadOnceByAResync(@TempDir Path dir)
      throws Exception {
    Process p = microservice(null);
    Path file = dir.resolve("ns-file");
    Files.createFile(file);
    k.sh("mount", "--bind", "/proc/" + p.pid() + "/ns/net", file.toString());
    pair("h9", "c9", ref(NetNamespace.ReferenceType.PID, Long.toString(p.pid())));
    Map<String, Object> m = new LinkedHashMap<>();
    Interface o = Values.veth("h10", "c10", "").build();
    Interface i =
        Values.veth("c10", "h10", "", "10.77.1.2/24")
            .setNamespace(ref(NetNamespace.ReferenceType.FD, file.toString()))
            .build();
    m.put(Values.key(o), o);
    m.put(Values.key(i), i);
    Link bridge =
        LinkKernelTest.link("b10", "", "10.77.2.1/24")
            .setNamespace(ref(NetNamespace.ReferenceType.FD, file.toString()))
            .setBridge(BridgeLink.getDefaultInstance())
            .build();
    Port port = LinkKernelTest.port("c10", "b10"); // both through the file
    m.put(LinkKernelTest.key(bridge), bridge);
    m.put(LinkKernelTest.key(port), port);
    k.change(m);
    for (String key :
        List.of(
            LinuxKeys.interfaceKey("c9"),
            LinuxKeys.interfaceKey("c10"),
            LinkKernelTest.key(bridge),
            LinkKernelTest.key(port))) {
      k.await(key, ValueState.CONFIGURED);
    }

    // the links of the one namespace are found once, not once per reference (as duplicates)
    k.restartAgent();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    assertThat(KernelFixture.sbOperations(k.fullResync())).isEmpty();
    String links = linksInside(p);
    assertThat(line(links, "c9")).isNotEmpty();
    assertThat(line(links, "c10")).contains("master b10");
    assertThat(inside(p)).contains("10.77.0.2/24", "10.77.1.2/24", "10.77.2.1/24");
    assertThat(line(links, "b10")).contains("bridge");
  }

  @Test
  void aProcessThatIsNotThereAndALabelNoProcessCarriesArePending() {
    pair("h4", "c4", ref(NetNamespace.ReferenceType.PID, Integer.toString(Integer.MAX_VALUE)));
    pair("h5", "c5", ref(NetNamespace.ReferenceType.MICROSERVICE, label + "-nobody"));
    assertThat(k.state(LinuxKeys.interfaceKey("c4"))).isEqualTo(ValueState.PENDING);
    assertThat(k.status(LinuxKeys.interfaceKey("c4")).value().details())
        .contains("linux/namespace/pid/" + Integer.MAX_VALUE);
    assertThat(k.state(LinuxKeys.interfaceKey("c5"))).isEqualTo(ValueState.PENDING);
    assertThat(k.status(LinuxKeys.interfaceKey("c5")).value().details())
        .contains("linux/namespace/microservice/" + label + "-nobody");
    assertThat(k.state(LinuxKeys.interfaceKey("h4"))).isEqualTo(ValueState.PENDING);
  }

  @Test
  void badReferencesAreInvalidNamingTheField() {
    Map<String, NetNamespace> bad = new LinkedHashMap<>();
    bad.put("b1", ref(NetNamespace.ReferenceType.PID, "0"));
    bad.put("b2", ref(NetNamespace.ReferenceType.PID, "-3"));
    bad.put("b3", ref(NetNamespace.ReferenceType.PID, "abc"));
    bad.put("b4", ref(NetNamespace.ReferenceType.FD, "relative/ns"));
    bad.put("b5", ref(NetNamespace.ReferenceType.MICROSERVICE, ""));
    bad.put("b6", ref(NetNamespace.ReferenceType.FD, "/run/x\nip link del lo"));
    Map<String, Object> m = new LinkedHashMap<>();
    bad.forEach(
        (name, ns) -> {
          Interface i = Values.veth(name, name + "p", "").setNamespace(ns).build();
          m.put(Values.key(i), i);
        });
    k.change(m);
    bad.forEach(
        (name, ns) -> {
          BaseValueStatus s = k.status(LinuxKeys.interfaceKey(name));
          assertThat(s.state()).as(name).isEqualTo(ValueState.INVALID);
          assertThat(s.value().details()).as(name).containsExactly("namespace");
        });
    assertThat(k.status(LinuxKeys.interfaceKey("b1")).value().error())
        .contains("PID reference '0'");
    assertThat(k.status(LinuxKeys.interfaceKey("b4")).value().error())
        .contains("FD reference 'relative/ns' is not an absolute path");
    assertThat(k.status(LinuxKeys.interfaceKey("b5")).value().error())
        .contains("needs a type and a reference");
  }
}
