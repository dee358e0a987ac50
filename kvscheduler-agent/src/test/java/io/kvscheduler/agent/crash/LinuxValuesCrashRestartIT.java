package io.kvscheduler.agent.crash;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent with the Linux plugin, killed with SIGKILL while it changes links and ports, values in
 * the namespaces of processes, and address allocations with the addresses and routes that refer to
 * them, then started again: it converges. Each test switches the configuration file between two
 * versions, kills the agent at a random moment after the change, restarts it and waits until the
 * kernel (read with {@code ip -d -json} in every namespace involved, independent of the agent)
 * holds exactly the version, every value (derived ones included) is CONFIGURED and a full resync is
 * recorded; every other round the converged agent is killed while idle and its restart's resync
 * executes no operation.
 */
class LinuxValuesCrashRestartIT {
  static final int ROUNDS = 6;
  static final Duration CONVERGE = Duration.ofSeconds(120);
  static final String ALIAS = "/vnf-agent/" + AgentProcess.LABEL;
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;
  NamespaceHolder ns;
  AgentProcess agent;
  final List<Process> started = new ArrayList<>();
  int starts;

  @BeforeEach
  void namespace() {
    ns =
        NamespaceHolder.startForTest(
            List.of("unshare", "nsenter", "ip", "curl"), "util-linux, iproute2, curl");
  }

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.destroy();
    }
    started.forEach(Process::destroyForcibly);
    if (ns != null) {
      ns.close();
    }
  }

  // ---- the configurations

  /** One configuration version: its YAML, its keys, the kernel objects it makes. */
  record Version(String yaml, Set<String> keys, Map<String, String> kernel) {}

  /** Builds a version: YAML lines by section, keys, kernel objects. */
  static final class Builder {
    final Map<String, List<String>> sections = new LinkedHashMap<>();
    final Set<String> keys = new TreeSet<>();
    final Map<String, String> kernel = new TreeMap<>();

    Builder add(String group, String section, String key, String item) {
      sections.computeIfAbsent(group + "." + section, s -> new ArrayList<>()).add(item);
      keys.add(key);
      return this;
    }

    Builder iface(String item, String name) {
      return add("linuxConfig", "interfaces", "config/linux/interfaces/v2/interface/" + name, item);
    }

    Builder link(String item, String name) {
      return add("linuxConfig", "links", "config/linux/links/v1/link/" + name, item);
    }

    Builder port(String iface, String master) {
      return add(
          "linuxConfig",
          "ports",
          "config/linux/links/v1/port/" + iface,
          "{interface: " + iface + ", master: " + master + "}");
    }

    /** The kernel link {@code ns:host} with its attributes as {@link #kernel} reads them. */
    Builder expect(String where, String host, String attributes) {
      kernel.put("link " + where + ":" + host, attributes);
      return this;
    }

    Version build() {
      StringBuilder sb = new StringBuilder();
      String group = "";
      for (Map.Entry<String, List<String>> e : sections.entrySet()) {
        String[] gs = e.getKey().split("\\.");
        if (!gs[0].equals(group)) {
          group = gs[0];
          sb.append(group).append(":\n");
        }
        sb.append("  ").append(gs[1]).append(":\n");
        e.getValue().forEach(item -> sb.append("  - ").append(item).append('\n'));
      }
      return new Version(sb.toString(), keys, kernel);
    }
  }

  static String veth(String name, String peer, String namespace, String... addresses) {
    return "{name: "
        + name
        + ", type: VETH, enabled: true"
        + (namespace.isEmpty() ? "" : ", namespace: " + namespace)
        + (addresses.length == 0 ? "" : ", ipAddresses: [" + String.join(", ", addresses) + "]")
        + ", veth: {peerIfName: "
        + peer
        + "}}";
  }

  /** Attributes of a link as {@link #kernel} reads them. */
  static String attributes(String kind, String master, String detail, String... addresses) {
    List<String> sorted = new ArrayList<>(Arrays.asList(addresses));
    sorted.sort(null);
    return "kind="
        + kind
        + " master="
        + master
        + " up=true"
        + (detail.isEmpty() ? "" : " " + detail)
        + " addrs="
        + sorted;
  }

  // ---- links and ports

  static final int PORTS = 12;
  static final int TUNNELS = 4;

  /**
   * Bridges br0 and br1 with veth ends as ports (the odd ones move from br0 to br1 in version 2: a
   * new master in place), br0's address changes, br1's STP turns on (in place); VXLAN tunnels
   * (ports of br1) change their VNI (re-created with their port); a macvlan on a veth end changes
   * its mode (in place) and its address; a bridge in the named namespace ns1 with a veth end as
   * port changes its address.
   */
  static Version links(int v) {
    Builder b = new Builder();
    b.link("{name: br0, enabled: true, ipAddresses: [10.20." + v + ".1/24], bridge: {}}", "br0")
        .expect("", "br0", attributes("bridge", "-", "stp=0", "10.20." + v + ".1/24"));
    b.link("{name: br1, enabled: true, bridge: {stp: " + (v == 2) + "}}", "br1")
        .expect("", "br1", attributes("bridge", "-", "stp=" + (v == 2 ? 1 : 0)));
    for (int i = 0; i < PORTS; i++) {
      String master = i % 2 == 1 && v == 2 ? "br1" : "br0";
      b.iface(veth("e" + i, "f" + i, ""), "e" + i).iface(veth("f" + i, "e" + i, ""), "f" + i);
      b.port("e" + i, master);
      b.expect("", "e" + i, attributes("veth", master, ""));
      if (i > 0) {
        b.expect("", "f" + i, attributes("veth", "-", ""));
      }
    }
    for (int t = 0; t < TUNNELS; t++) {
      int vni = 100 + 10 * v + t;
      b.link(
          "{name: vx"
              + t
              + ", enabled: true, vxlan: {vni: "
              + vni
              + ", remote: 192.0.2."
              + (t + 1)
              + "}}",
          "vx" + t);
      b.port("vx" + t, "br1");
      b.expect("", "vx" + t, attributes("vxlan", "br1", "vni=" + vni));
    }
    String mode = v == 1 ? "BRIDGE" : "PRIVATE";
    b.link(
        "{name: mv0, enabled: true, ipAddresses: [10.21."
            + v
            + ".1/24], macvlan: {parent: f0, mode: "
            + mode
            + "}}",
        "mv0");
    b.expect(
        "",
        "mv0",
        attributes("macvlan", "-", "mode=" + mode.toLowerCase(), "10.21." + v + ".1/24"));
    b.expect("", "f0", attributes("veth", "-", ""));
    String ns1 = "{type: NSID, reference: ns1}";
    b.link(
        "{name: nbr, namespace: "
            + ns1
            + ", enabled: true, ipAddresses: [10.22."
            + v
            + ".1/24], bridge: {}}",
        "nbr");
    b.expect("ns1", "nbr", attributes("bridge", "-", "stp=0", "10.22." + v + ".1/24"));
    b.iface(veth("g0", "h0", ns1), "g0").iface(veth("h0", "g0", ""), "h0").port("g0", "nbr");
    b.expect("ns1", "g0", attributes("veth", "nbr", ""));
    b.expect("", "h0", attributes("veth", "-", ""));
    return b.build();
  }

  @Test
  @DisplayName(
      "killed while changing bridges, VXLAN and macvlan links and ports, the agent converges")
  void linksAndPortsConverge() throws Exception {
    rounds("links and ports", LinuxValuesCrashRestartIT::links, List.of("", "ns1"));
  }

  // ---- namespaces of processes

  static final int PAIRS = 6;

  /**
   * veth pairs from the agent's namespace into a microservice's namespace (by label), a process's
   * (by PID) and a namespace file (FD, a bind mount of a third process's namespace file); the ends
   * inside change their addresses. In the microservice's namespace a bridge (its address changes)
   * has three of those ends as ports, four in version 2; in the process's a VXLAN tunnel over one
   * of them changes its VNI (re-created); in the file's namespace a bridge has one port.
   */
  static Version referred(int v, String label, long pid, String file) {
    Builder b = new Builder();
    Map<String, String> refs = new LinkedHashMap<>();
    refs.put("m", "{type: MICROSERVICE, reference: " + label + "}");
    refs.put("p", "{type: PID, reference: '" + pid + "'}");
    refs.put("d", "{type: FD, reference: '" + file + "'}");
    int n = 0;
    for (Map.Entry<String, String> r : refs.entrySet()) {
      String where = r.getKey();
      for (int i = 0; i < PAIRS; i++, n++) {
        String inner = r.getKey() + "c" + i;
        String outer = r.getKey() + "h" + i;
        String ip = "10.30." + n + "." + v + "/24";
        String master = "-";
        if (r.getKey().equals("m") && (i < 3 || (i == 3 && v == 2))) {
          master = "mbr";
        } else if (r.getKey().equals("d") && i == 0) {
          master = "dbr";
        }
        if (!master.equals("-")) {
          b.port(inner, master);
        }
        b.iface(veth(inner, outer, r.getValue(), ip), inner)
            .iface(veth(outer, inner, ""), outer)
            .expect(where, inner, attributes("veth", master, "", ip))
            .expect("", outer, attributes("veth", "-", ""));
      }
    }
    String mbrIp = "10.31.0." + v + "/24";
    b.link(
            "{name: mbr, namespace: "
                + refs.get("m")
                + ", enabled: true, ipAddresses: ["
                + mbrIp
                + "], bridge: {}}",
            "mbr")
        .expect("m", "mbr", attributes("bridge", "-", "stp=0", mbrIp));
    int vni = 200 + v;
    b.link(
            "{name: pvx, namespace: "
                + refs.get("p")
                + ", enabled: true, vxlan: {vni: "
                + vni
                + ", remote: 192.0.2.9, underlay: pc0}}",
            "pvx")
        .expect("p", "pvx", attributes("vxlan", "-", "vni=" + vni));
    b.link("{name: dbr, namespace: " + refs.get("d") + ", enabled: true, bridge: {}}", "dbr")
        .expect("d", "dbr", attributes("bridge", "-", "stp=0"));
    return b.build();
  }

  @Test
  @DisplayName(
      "killed while changing interfaces, links and ports in the namespaces of a microservice, a"
          + " process and a file, the agent converges")
  void valuesInNamespacesOfProcessesConverge() throws Exception {
    String label = "kvs-crash-ms";
    Process ms = sleeper(label);
    Process other = sleeper(null);
    Process third = sleeper(null);
    String file = tmp.resolve("ns-file").toString();
    ns.run(
        "sh",
        "-c",
        "touch '" + file + "' && mount --bind /proc/" + third.pid() + "/ns/net '" + file + "'");
    Map<String, String> where = new LinkedHashMap<>();
    where.put("", "");
    where.put("m", "/proc/" + ms.pid() + "/ns/net");
    where.put("p", "/proc/" + other.pid() + "/ns/net");
    where.put("d", file);
    rounds("namespaces of processes", v -> referred(v, label, other.pid(), file), where);
  }

  /**
   * Starts {@code sleep} in a network namespace of its own inside the holder's, with {@code
   * MICROSERVICE_LABEL=label} in its environment unless {@code label} is null; returns when it is
   * in its namespace.
   */
  Process sleeper(String label) throws Exception {
    List<String> argv = new ArrayList<>(List.of("unshare", "--net", "sleep", "3600"));
    ProcessBuilder pb = new ProcessBuilder(ns.inside(argv));
    pb.environment().remove("MICROSERVICE_LABEL");
    if (label != null) {
      pb.environment().put("MICROSERVICE_LABEL", label);
    }
    Process p = pb.start();
    started.add(p);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    Path own = Path.of("/proc", Long.toString(p.pid()), "ns", "net");
    while (System.nanoTime() < deadline) {
      try {
        if (Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline"))
                .startsWith("sleep")
            && !Files.readSymbolicLink(own)
                .equals(Files.readSymbolicLink(Path.of("/proc/self/ns/net")))) {
          return p;
        }
      } catch (IOException e) {
        // not there yet
      }
      Thread.sleep(10);
    }
    throw new AssertionError("the process did not reach a namespace of its own");
  }

  // ---- address allocations

  static final int ALLOCATIONS = 32;

  /**
   * Allocations in network net1 for veth ends a0.., each end's address {@code alloc:net1} and a
   * route via {@code alloc:net1/GW}; version 2 allocates other addresses and gateways (the
   * allocations re-created, their users with them).
   */
  static Version allocations(int v) {
    Builder b = new Builder();
    for (int i = 0; i < ALLOCATIONS; i++) {
      String a = "a" + i;
      String address = "10.40." + i + "." + v + "/24";
      String gw = "10.40." + i + "." + (250 + v);
      b.add(
          "netallocConfig",
          "ipAddresses",
          "config/netalloc/v1/ip/network/net1/interface/" + a,
          "{networkName: net1, interfaceName: "
              + a
              + ", address: "
              + address
              + ", gw: "
              + gw
              + "}");
      b.iface(veth(a, "b" + i, "", "\"alloc:net1\""), a).iface(veth("b" + i, a, ""), "b" + i);
      String dst = "10.50." + i + ".0/24";
      b.add(
          "linuxConfig",
          "routes",
          "config/linux/l3/v2/route/" + dst + "/" + a,
          "{outgoingInterface: " + a + ", dstNetwork: " + dst + ", gwAddr: \"alloc:net1/GW\"}");
      b.expect("", a, attributes("veth", "-", "", address))
          .expect("", "b" + i, attributes("veth", "-", ""));
      b.kernel.put("route :" + dst, "via " + gw + " dev " + a);
    }
    return b.build();
  }

  @Test
  @DisplayName("killed while changing address allocations and their users, the agent converges")
  void allocationsAndTheirUsersConverge() throws Exception {
    rounds("allocations", LinuxValuesCrashRestartIT::allocations, List.of(""));
  }

  // ---- rounds

  private void rounds(String what, IntFunction<Version> versions, List<String> named)
      throws Exception {
    Map<String, String> where = new LinkedHashMap<>();
    named.forEach(n -> where.put(n, n));
    rounds(what, versions, where);
  }

  /**
   * Writes version 1, converges, and times the uninterrupted change to version 2; then each round
   * writes the other version, kills the agent at a random moment within that time, restarts and
   * converges; every other round kills the converged agent while idle. {@code where} maps the names
   * the expected objects use for namespaces to "" (the agent's), a named namespace's name or a
   * namespace file.
   */
  private void rounds(String what, IntFunction<Version> versions, Map<String, String> where)
      throws Exception {
    long seed = Long.getLong("kvs.crash.seed", System.nanoTime());
    System.out.printf("crash and restart (%s): seed %d%n", what, seed);
    Random random = new Random(seed);
    Path dir = Files.createDirectories(tmp.resolve("config"));
    Path file = dir.resolve("linux.yaml");
    AgentProcess.writeConfig(file, versions.apply(1).yaml());
    agent = start();
    converge(versions.apply(1), where, what + ": first start");
    // when an uninterrupted change begins and ends in the kernel: the kills aim between the two
    Map<String, String> first = kernel(where);
    long t0 = System.nanoTime();
    AgentProcess.writeConfig(file, versions.apply(2).yaml());
    long begins = -1;
    Map<String, String> now = first;
    while (!now.equals(versions.apply(2).kernel()) && System.nanoTime() - t0 < CONVERGE.toNanos()) {
      Thread.sleep(5);
      now = kernel(where);
      if (begins < 0 && !now.equals(first)) {
        begins = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      }
    }
    long ends = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    // a later change may be quicker (the agent's ip processes run already): from two thirds in
    begins = Math.max(0, Math.min(begins < 0 ? ends : begins, ends) * 2 / 3);
    long span = Math.max(20, ends - begins);
    converge(versions.apply(2), where, what + ": the change from 1 to 2");
    System.out.printf(
        "%s: an uninterrupted change reaches the kernel %d to %d ms after the file%n",
        what, begins, ends);
    int midway = 0;
    for (int round = 0; round < ROUNDS; round++) {
      int v = round % 2 == 0 ? 1 : 2;
      Version target = versions.apply(v);
      Map<String, String> before = kernel(where);
      AgentProcess.writeConfig(file, target.yaml());
      Thread.sleep(begins + random.nextInt((int) Math.min(span, 10_000)));
      agent.kill();
      Map<String, String> crashed = kernel(where);
      boolean partly = !crashed.equals(before) && !crashed.equals(target.kernel());
      System.out.printf(
          "%s, round %d: killed %s%n",
          what,
          round,
          partly
              ? "midway"
              : crashed.equals(before) ? "before the change reached the kernel" : "after it");
      if (partly) {
        midway++;
      }
      agent = start();
      converge(target, where, what + ", round " + round);
      if (round % 2 == 1) {
        agent.kill();
        agent = start();
        List<String> ops = converge(target, where, what + ", round " + round + ", idle kill");
        assertThat(ops)
            .as("%s, round %d: operations after a kill while idle", what, round)
            .isEmpty();
      }
    }
    System.out.printf("crash and restart (%s): %d of %d kills midway%n", what, midway, ROUNDS);
  }

  private AgentProcess start() throws IOException {
    starts++;
    return AgentProcess.start(ns, tmp.resolve("config"), tmp.resolve("agent-" + starts + ".log"));
  }

  /**
   * The agent's links (alias of this agent, or a device group of its own without an alias: a link
   * left half made) and routes of routing protocol 200, in each namespace of {@code where}, as
   * {@code link <ns>:<name>} and {@code route <ns>:<dst>}.
   */
  Map<String, String> kernel(Map<String, String> where) {
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, String> w : where.entrySet()) {
      List<String> ip = new ArrayList<>();
      String place = w.getValue();
      if (place.startsWith("/")) {
        ip.addAll(List.of("nsenter", "--net=" + place, "ip"));
      } else if (!place.isEmpty()) {
        ip.addAll(List.of("ip", "-n", place));
      } else {
        ip.add("ip");
      }
      JsonNode links;
      JsonNode addrs;
      JsonNode routes;
      try {
        links = JSON.readTree(run(ip, "-d", "-json", "link", "show"));
        addrs = JSON.readTree(run(ip, "-4", "-json", "addr", "show"));
        routes = JSON.readTree(run(ip, "-4", "-json", "route", "show", "proto", "200"));
      } catch (IllegalStateException | IOException e) {
        continue; // no such namespace (yet)
      }
      Map<String, List<String>> addresses = new TreeMap<>();
      for (JsonNode a : addrs) {
        List<String> list =
            addresses.computeIfAbsent(a.path("ifname").asText(), x -> new ArrayList<>());
        for (JsonNode i : a.path("addr_info")) {
          list.add(i.path("local").asText() + "/" + i.path("prefixlen").asText());
        }
      }
      Map<String, String> indexName = new TreeMap<>();
      for (JsonNode l : links) {
        indexName.put(l.path("ifindex").asText(), l.path("ifname").asText());
      }
      for (JsonNode l : links) {
        String alias = l.path("ifalias").asText("");
        String group = l.path("group").asText("default");
        if (!alias.startsWith(ALIAS) && (group.equals("default") || !alias.isEmpty())) {
          continue;
        }
        String name = l.path("ifname").asText();
        JsonNode info = l.path("linkinfo");
        String kind = info.path("info_kind").asText("?");
        JsonNode data = info.path("info_data");
        String detail =
            switch (kind) {
              case "bridge" -> "stp=" + data.path("stp_state").asText();
              case "vxlan" -> "vni=" + data.path("id").asText();
              case "macvlan" -> "mode=" + data.path("mode").asText();
              default -> "";
            };
        List<String> as = new ArrayList<>(addresses.getOrDefault(name, List.of()));
        as.sort(null);
        String attributes =
            "kind="
                + kind
                + " master="
                + l.path("master").asText("-")
                + " up="
                + containsText(l.path("flags"), "UP")
                + (detail.isEmpty() ? "" : " " + detail)
                + " addrs="
                + as
                + (alias.isEmpty() ? " (no alias)" : "");
        String k = "link " + w.getKey() + ":" + name;
        out.merge(k, attributes, (a, b) -> a + " AND " + b);
      }
      for (JsonNode r : routes) {
        String k = "route " + w.getKey() + ":" + r.path("dst").asText();
        out.merge(
            k,
            "via " + r.path("gateway").asText() + " dev " + r.path("dev").asText(),
            (a, b) -> a + " AND " + b);
      }
    }
    return out;
  }

  private static boolean containsText(JsonNode array, String text) {
    for (JsonNode n : array) {
      if (n.asText().equals(text)) {
        return true;
      }
    }
    return false;
  }

  private String run(List<String> prefix, String... args) {
    List<String> argv = new ArrayList<>(prefix);
    argv.addAll(List.of(args));
    return ns.run(argv.toArray(String[]::new));
  }

  /**
   * Waits until the kernel holds {@code target}, every configured value and its derived values are
   * CONFIGURED and a full resync is recorded; returns the operations of the agent's transactions
   * (not SB notifications).
   */
  private List<String> converge(Version target, Map<String, String> where, String when)
      throws Exception {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    String why = "";
    while (System.nanoTime() < deadline) {
      assertThat(agent.isAlive()).as("%s: the agent runs:\n%s", when, agent.tail()).isTrue();
      Map<String, String> k = kernel(where);
      if (!k.equals(target.kernel())) {
        why = "the kernel differs: " + difference(k, target.kernel());
      } else {
        JsonNode statuses = agent.get("/scheduler/status");
        JsonNode history = agent.get("/scheduler/txn-history");
        why =
            statuses == null || history == null
                ? "the REST API is not up"
                : AgentProcess.statusProblem(statuses, target.keys());
        if (why.isEmpty() && !AgentProcess.hasFullResync(history)) {
          why = "no full resync recorded";
        }
        if (why.isEmpty()) {
          Thread.sleep(300); // and it stays so
          Map<String, String> again = kernel(where);
          assertThat(again).as("%s: the kernel after convergence", when).isEqualTo(target.kernel());
          assertThat(AgentProcess.statusProblem(agent.get("/scheduler/status"), target.keys()))
              .isEmpty();
          return AgentProcess.operations(agent.get("/scheduler/txn-history"));
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError(when + ": not converged: " + why + "\nagent log:\n" + agent.tail());
  }

  private static String difference(Map<String, String> found, Map<String, String> expected) {
    List<String> out = new ArrayList<>();
    Set<String> all = new TreeSet<>(found.keySet());
    all.addAll(expected.keySet());
    for (String k : all) {
      String f = found.get(k);
      String e = expected.get(k);
      if (f == null || !f.equals(e)) {
        out.add(k + ": found " + f + ", expected " + e);
      }
    }
    return String.join("; ", out);
  }
}
