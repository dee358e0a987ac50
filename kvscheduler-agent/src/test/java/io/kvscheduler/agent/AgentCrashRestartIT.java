package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as a real process (java with the agent's classpath), with the file northbound and the
 * mock southbound kept in a state file, killed with SIGKILL at random points of large transactions
 * and started again. After each restart it must converge: the southbound holds exactly what the
 * configuration asks for (every value configured, nothing twice, nothing left over), and the
 * restart's resync carries out operations only on what was missing or wrong.
 *
 * <p>Each round writes the other of two large configurations (A, B: interfaces, bridge domains with
 * members, FIB entries; B removes, changes and adds a good part of A) while the agent runs, kills
 * the agent once the southbound has carried out a random number of the operations the change needs,
 * looks at what the southbound holds (an oracle of its own reading the state file), starts the
 * agent again on the same configuration and waits until it converged.
 */
class AgentCrashRestartIT {
  static final int KILL_POINTS = 20;
  static final int INTERFACES = 120;
  static final int BRIDGE_DOMAINS = 20;
  static final Duration CONVERGE = Duration.ofSeconds(120);

  @TempDir Path tmp;
  Process agent;

  @AfterEach
  void stop() throws InterruptedException {
    if (agent != null && agent.isAlive()) {
      agent.destroyForcibly();
      agent.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  @DisplayName(
      "killed with SIGKILL at 20 random points of large transactions, the agent restarts"
          + " and converges, its resync doing only what was missing")
  void killedAgentConvergesAfterRestart() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("config"));
    Path state = tmp.resolve("sb.state");
    Random random = new Random(Long.getLong("kvs.crash.seed", System.nanoTime()));
    Config a = Config.a();
    Config b = Config.b();
    long opsBeforeKills = 0;
    long opsOfRestarts = 0;
    int kills = 0;
    for (int round = 0; round < KILL_POINTS; round++) {
      Config target = round % 2 == 0 ? a : b;
      Sb before = Sb.read(state);
      int needed = before.objectsDifferingFrom(target).size();
      assertThat(needed).as("round %d changes something", round).isPositive();
      int killAfter = 1 + random.nextInt(needed); // each differing object needs an operation
      long linesBefore = Sb.lines(state);
      writeAtomically(dir.resolve("config.yaml"), target.yaml());
      if (agent == null) {
        agent = start(dir, state, tmp.resolve("agent-" + round + ".log"));
      }
      long killedAt = waitForLines(state, linesBefore + killAfter);
      agent.destroyForcibly(); // SIGKILL
      assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
      kills++;
      long linesAtKill = Sb.lines(state);
      opsBeforeKills += linesAtKill - linesBefore;

      Sb crashed = Sb.read(state);
      Set<String> missing = crashed.objectsDifferingFrom(target);
      agent = start(dir, state, tmp.resolve("agent-" + round + "-restart.log"));
      Sb converged = waitForConvergence(state, target);
      converged.assertExactly(target);
      List<List<String>> restartOps = Sb.opsAfter(state, linesAtKill);
      opsOfRestarts += restartOps.size();
      Set<String> touched = crashed.objectsTouchedBy(restartOps);
      assertThat(touched)
          .as(
              "round %d: what the restart's resync touched (killed %d operations"
                  + " into the change, at line %d)",
              round, killAfter, killedAt)
          .isEqualTo(missing);
    }
    System.out.printf(
        "crash and restart: %d kill points (SIGKILL), %d southbound operations"
            + " before the kills, %d by the restarts' resyncs%n",
        kills, opsBeforeKills, opsOfRestarts);
    assertThat(kills).isGreaterThanOrEqualTo(20);
  }

  private Process start(Path dir, Path state, Path log) throws IOException {
    // the test's classpath: the agent, its plugins, and the test classes' quiet logging
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    ProcessBuilder pb =
        new ProcessBuilder(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+ExitOnOutOfMemoryError", // as bin/kvs-agent
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classpath,
            "io.kvscheduler.agent.AgentMain",
            "run",
            "--config-dir",
            dir.toString(),
            "--rest",
            "off",
            "--quiet",
            "--file-settle-time",
            "200ms",
            "--state-dir",
            tmp.resolve("state").toString());
    pb.environment().put(MockAgentPlugin.STATE_FILE_ENV, state.toString());
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    return pb.start();
  }

  private long waitForLines(Path state, long lines) throws Exception {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    while (System.nanoTime() < deadline) {
      long n = Sb.lines(state);
      if (n >= lines) {
        return n;
      }
      assertThat(agent.isAlive()).as("the agent runs").isTrue();
      Thread.sleep(1);
    }
    throw new AssertionError("the southbound did not reach " + lines + " operations");
  }

  /** Waits until the southbound equals the target and stays so for a while. */
  private Sb waitForConvergence(Path state, Config target) throws Exception {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    while (System.nanoTime() < deadline) {
      Sb sb = Sb.read(state);
      if (sb.objectsDifferingFrom(target).isEmpty()) {
        long lines = Sb.lines(state);
        Thread.sleep(700);
        if (Sb.lines(state) == lines) {
          return Sb.read(state);
        }
      }
      assertThat(agent.isAlive()).as("the agent runs").isTrue();
      Thread.sleep(50);
    }
    Sb sb = Sb.read(state);
    throw new AssertionError("not converged: differing " + sb.objectsDifferingFrom(target));
  }

  private static void writeAtomically(Path file, String text) throws IOException {
    Path t = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.writeString(t, text);
    Files.move(t, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  // --------------------------------------------------------------------------- configurations

  record Iface(String type, boolean enabled, String mac) {}

  record Fib(String mac, String bd, String action, String out) {}

  /** A configuration: interfaces, bridge domains (members: name → BVI), FIB entries. */
  record Config(Map<String, Iface> ifaces, Map<String, Map<String, Boolean>> bds, Set<Fib> fibs) {

    static Config a() {
      return make(0, INTERFACES, false);
    }

    /** A third of A's interfaces gone, a third changed, new ones; members and FIBs moved. */
    static Config b() {
      return make(INTERFACES / 3, INTERFACES + INTERFACES / 3, true);
    }

    private static Config make(int from, int to, boolean other) {
      Map<String, Iface> ifaces = new TreeMap<>();
      for (int i = from; i < to; i++) {
        boolean changed = other && i < 2 * INTERFACES / 3;
        ifaces.put(
            "if" + i,
            new Iface(
                i % 7 == 0 ? "LOOPBACK" : "TAP",
                !changed || i % 2 == 0,
                i % 7 == 0
                    ? ""
                    : String.format(
                        "02:00:00:00:%02x:%02x", i / 256, (i + (changed ? 128 : 0)) % 256)));
      }
      List<String> names = new ArrayList<>(ifaces.keySet());
      Map<String, Map<String, Boolean>> bds = new TreeMap<>();
      Set<Fib> fibs = new HashSet<>();
      for (int d = 0; d < BRIDGE_DOMAINS; d++) {
        String bd = "bd" + (other ? d + BRIDGE_DOMAINS / 2 : d);
        Map<String, Boolean> members = new TreeMap<>();
        for (int m = 0; m < 4; m++) {
          String iface = names.get((d * 4 + m + (other ? 1 : 0)) % names.size());
          members.put(iface, m == 0 && ifaces.get(iface).type().equals("LOOPBACK"));
        }
        bds.put(bd, members);
        String out = members.keySet().iterator().next();
        fibs.add(new Fib(String.format("aa:00:00:00:%02x:01", d), bd, "FORWARD", out));
        fibs.add(new Fib(String.format("aa:00:00:00:%02x:02", d), bd, "DROP", ""));
      }
      // an interface is in one bridge domain at most
      Set<String> seen = new HashSet<>();
      bds.values().forEach(m -> m.keySet().removeIf(i -> !seen.add(i)));
      fibs.removeIf(f -> !f.out().isEmpty() && !bds.get(f.bd()).containsKey(f.out()));
      return new Config(ifaces, bds, fibs);
    }

    String yaml() {
      StringBuilder b = new StringBuilder();
      ifaces.forEach(
          (n, i) -> {
            b.append("config/mock/v1/interfaces/")
                .append(n)
                .append(":\n  name: ")
                .append(n)
                .append("\n  type: ")
                .append(i.type())
                .append("\n  enabled: ")
                .append(i.enabled())
                .append('\n');
            if (!i.mac().isEmpty()) {
              b.append("  phys_address: \"").append(i.mac()).append("\"\n");
            }
          });
      bds.forEach(
          (n, members) -> {
            b.append("config/mock/v1/bridge-domain/")
                .append(n)
                .append(":\n  name: ")
                .append(n)
                .append("\n  interfaces:\n");
            members.forEach(
                (m, bvi) ->
                    b.append("  - name: ")
                        .append(m)
                        .append("\n    bridged_virtual_interface: ")
                        .append(bvi)
                        .append('\n'));
          });
      for (Fib f : fibs) {
        b.append("config/mock/v1/fib/")
            .append(f.bd())
            .append("/mac/")
            .append(f.mac())
            .append(":\n  phys_address: \"")
            .append(f.mac())
            .append("\"\n  bridge_domain: ")
            .append(f.bd())
            .append("\n  action: ")
            .append(f.action())
            .append('\n');
        if (!f.out().isEmpty()) {
          b.append("  outgoing_interface: ").append(f.out()).append('\n');
        }
      }
      return b.toString();
    }
  }

  // ------------------------------------------------------------------- the southbound, read

  /**
   * What the southbound holds, read from its state file by this test's own reading of the
   * operations (independent of the mock plugin's replay): objects by handle, so that one made twice
   * shows.
   */
  static final class Sb {
    final Map<Integer, String[]> ifaces = new TreeMap<>(); // name, type, enabled, mac
    final Map<Integer, String> bdNames = new TreeMap<>();
    final Map<Integer, Map<String, Boolean>> bdMembers = new TreeMap<>();
    final List<Fib> fibs = new ArrayList<>();

    static long lines(Path state) throws IOException {
      if (!Files.exists(state)) {
        return 0;
      }
      byte[] bytes = Files.readAllBytes(state);
      long n = 0;
      for (byte x : bytes) {
        n += x == '\n' ? 1 : 0;
      }
      return n;
    }

    static List<List<String>> opsAfter(Path state, long line) throws IOException {
      List<List<String>> all = SouthboundJournal.read(state);
      return all.subList((int) Math.min(line, all.size()), all.size());
    }

    static Sb read(Path state) throws IOException {
      Sb sb = new Sb();
      SouthboundJournal.read(state).forEach(op -> sb.apply(op, null));
      return sb;
    }

    /** Applies one operation; puts the object it touches into {@code touched} (if not null). */
    void apply(List<String> op, Set<String> touched) {
      String kind = op.get(0);
      if (kind.startsWith("fib-")) {
        Fib f = new Fib(op.get(1), op.get(2), op.get(3), op.get(4));
        if (kind.equals("fib-create")) {
          fibs.add(f);
        } else {
          fibs.remove(f);
        }
        touch(touched, "fib " + f.bd() + "/" + f.mac());
        return;
      }
      int h = Integer.parseInt(op.get(1));
      switch (kind) {
        case "iface-create" -> ifaces.put(h, new String[] {op.get(2), op.get(3), "false", ""});
        case "iface-delete" -> touch(touched, "iface " + ifaces.remove(h)[0]);
        case "iface-up" -> ifaces.get(h)[2] = "true";
        case "iface-down" -> ifaces.get(h)[2] = "false";
        case "iface-mac" -> ifaces.get(h)[3] = op.get(2);
        case "bd-create" -> {
          bdNames.put(h, op.get(2));
          bdMembers.put(h, new TreeMap<>());
        }
        case "bd-delete" -> {
          touch(touched, "bd " + bdNames.remove(h));
          bdMembers.remove(h);
        }
        case "bd-add" -> bdMembers.get(h).put(op.get(2), Boolean.parseBoolean(op.get(3)));
        case "bd-remove" -> bdMembers.get(h).remove(op.get(2));
        default -> throw new AssertionError("unknown operation " + op);
      }
      if (kind.startsWith("iface-") && ifaces.containsKey(h)) {
        touch(touched, "iface " + ifaces.get(h)[0]);
      } else if (kind.startsWith("bd-") && bdNames.containsKey(h)) {
        touch(touched, "bd " + bdNames.get(h));
      }
    }

    private static void touch(Set<String> touched, String object) {
      if (touched != null) {
        touched.add(object);
      }
    }

    /** The objects {@code ops}, applied to this southbound, touch. */
    Set<String> objectsTouchedBy(List<List<String>> ops) {
      Sb copy = new Sb();
      ifaces.forEach((h, i) -> copy.ifaces.put(h, i.clone()));
      copy.bdNames.putAll(bdNames);
      bdMembers.forEach((h, m) -> copy.bdMembers.put(h, new TreeMap<>(m)));
      copy.fibs.addAll(fibs);
      Set<String> touched = new TreeSet<>();
      ops.forEach(op -> copy.apply(op, touched));
      return touched;
    }

    /**
     * The objects (interfaces, bridge domains, FIB entries) that differ from {@code target}:
     * missing, different, left over, or present twice.
     */
    Set<String> objectsDifferingFrom(Config target) {
      Set<String> out = new TreeSet<>();
      Map<String, Integer> count = new HashMap<>();
      Map<String, Iface> byName = new HashMap<>();
      ifaces
          .values()
          .forEach(
              i -> {
                count.merge(i[0], 1, Integer::sum);
                byName.put(i[0], new Iface(i[1], Boolean.parseBoolean(i[2]), i[3]));
              });
      Set<String> names = new HashSet<>(byName.keySet());
      names.addAll(target.ifaces().keySet());
      for (String n : names) {
        if (count.getOrDefault(n, 0) > 1
            || !Objects.equals(byName.get(n), target.ifaces().get(n))) {
          out.add("iface " + n);
        }
      }
      Map<String, Integer> bdCount = new HashMap<>();
      Map<String, Map<String, Boolean>> bds = new HashMap<>();
      bdNames.forEach(
          (h, n) -> {
            bdCount.merge(n, 1, Integer::sum);
            bds.put(n, bdMembers.get(h));
          });
      Set<String> bdSet = new HashSet<>(bds.keySet());
      bdSet.addAll(target.bds().keySet());
      for (String n : bdSet) {
        if (bdCount.getOrDefault(n, 0) > 1 || !Objects.equals(bds.get(n), target.bds().get(n))) {
          out.add("bd " + n);
        }
      }
      Set<Fib> fibSet = new HashSet<>(fibs);
      for (Fib f : fibs) {
        if (!target.fibs().contains(f) || fibs.indexOf(f) != fibs.lastIndexOf(f)) {
          out.add("fib " + f.bd() + "/" + f.mac());
        }
      }
      for (Fib f : target.fibs()) {
        if (!fibSet.contains(f)) {
          out.add("fib " + f.bd() + "/" + f.mac());
        }
      }
      return out;
    }

    void assertExactly(Config target) {
      assertThat(objectsDifferingFrom(target)).isEmpty();
      assertThat(ifaces).hasSameSizeAs(target.ifaces());
      assertThat(bdNames).hasSameSizeAs(target.bds());
      assertThat(fibs).hasSameSizeAs(target.fibs());
    }
  }
}
