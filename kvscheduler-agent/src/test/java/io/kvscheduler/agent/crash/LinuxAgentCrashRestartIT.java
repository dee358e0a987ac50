package io.kvscheduler.agent.crash;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as a real process driving the real kernel with the Linux plugin, killed with SIGKILL at
 * varied moments and started again; the kernel state outlives it, as a host's network does.
 *
 * <p>A holder process owns a private network namespace (with named namespaces of its own) for the
 * whole test; every agent process is started inside it with {@code nsenter}, with the file
 * northbound on a directory the test writes. The configurations are veth pairs with addresses and
 * routes ({@link LinuxConfig}); each round switches the file between A and B and kills the agent
 * after a random number of kernel events (counted by an {@code ip monitor} of the test's own) of
 * the change; every few rounds the restarted agent is killed again during its resync, and a
 * converged agent is killed while idle. After each restart the test waits until the agent converged
 * and asserts:
 *
 * <ul>
 *   <li>the kernel, read with {@code ip -json link/addr/route} in every namespace, holds exactly
 *       the configuration: every link (namespace, MAC address, up, paired with its peer), address
 *       and route, none twice, no link, address or route of the agent's that the configuration does
 *       not ask for, no link left under a veth end's temporary name;
 *   <li>{@code GET /scheduler/status} says CONFIGURED for every value (derived values included),
 *       and lists exactly the configuration's keys;
 *   <li>the restart's transactions carried out operations on everything that differed when the
 *       agent was killed, and on nothing else than that and what a re-created link takes along (its
 *       peer, addresses and routes);
 *   <li>after a kill while idle, the restart's resync executes no operation.
 * </ul>
 */
class LinuxAgentCrashRestartIT {
  static final int PAIRS = 24;
  static final int ROUNDS = 16;
  static final Duration CONVERGE = Duration.ofSeconds(120);
  static final String ALIAS_PREFIX = "/vnf-agent/" + AgentProcess.LABEL + "/";

  @TempDir Path tmp;
  NamespaceHolder ns;
  Process monitor;
  AgentProcess agent;
  final AtomicLong events = new AtomicLong();
  final AtomicLong lastEventNanos = new AtomicLong();
  Set<String> allNames;
  int starts;

  @BeforeEach
  void namespace() throws IOException {
    ns =
        NamespaceHolder.startForTest(
            List.of("unshare", "nsenter", "ip", "curl"), "util-linux, iproute2, curl");
    monitor =
        // IPv4 only: IPv6 link-local addresses finish their duplicate address detection seconds
        // after a link comes up, events of the kernel's own that would count as the agent's work
        new ProcessBuilder(
                ns.inside(List.of("ip", "-4", "-o", "monitor", "link", "address", "route")))
            .redirectErrorStream(true)
            .start();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(monitor.getInputStream(), StandardCharsets.UTF_8))) {
                while (r.readLine() != null) {
                  events.incrementAndGet();
                  lastEventNanos.set(System.nanoTime());
                }
              } catch (IOException e) {
                // the monitor ended
              }
            },
            "kernel-events");
    reader.setDaemon(true);
    reader.start();
  }

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.destroy();
    }
    if (monitor != null) {
      monitor.destroyForcibly();
    }
    if (ns != null) {
      ns.close();
    }
  }

  @Test
  @DisplayName(
      "killed with SIGKILL during commits, during resyncs and while idle, the agent with the Linux"
          + " plugin restarts and converges on the real kernel")
  void killedAgentConvergesOnTheKernel() throws Exception {
    long t0 = System.nanoTime();
    long seed = Long.getLong("kvs.crash.seed", System.nanoTime());
    System.out.printf("crash and restart (Linux kernel): seed %d (-Dkvs.crash.seed=...)%n", seed);
    Random random = new Random(seed);
    LinuxConfig a = LinuxConfig.a(PAIRS);
    LinuxConfig b = LinuxConfig.b(PAIRS);
    allNames = new HashSet<>(a.interfaces().keySet());
    allNames.addAll(b.interfaces().keySet());
    Path dir = Files.createDirectories(tmp.resolve("config"));
    Path file = dir.resolve("linux.yaml");

    AgentProcess.writeConfig(file, a.yaml());
    agent = start();
    converge(a, "first start");
    // how many kernel events a change makes per object it changes: A to B, uninterrupted
    int changed = kernel().differingFrom(b.objects()).size();
    long e0 = events.get();
    AgentProcess.writeConfig(file, b.yaml());
    converge(b, "the change from A to B");
    double eventsPerObject = (double) (events.get() - e0) / changed;

    int duringCommit = 0;
    int beforeCommit = 0;
    int afterCommit = 0;
    int duringResync = 0;
    int afterResync = 0;
    int idle = 0;
    int resyncKills = 0;
    long resyncOps = 0;
    for (int round = 0; round < ROUNDS; round++) {
      LinuxConfig target = round % 2 == 0 ? a : b;
      Set<String> before = kernel().differingFrom(target.objects());
      assertThat(before).as("round %d changes something", round).isNotEmpty();
      long killAfter =
          1 + random.nextInt((int) Math.max(1, before.size() * eventsPerObject * 0.95));
      long mark = events.get();
      AgentProcess.writeConfig(file, target.yaml());
      waitForEvents(mark + killAfter, Duration.ofSeconds(30));
      agent.kill();
      long seen = events.get() - mark;
      KernelState crashed = kernel();
      Set<String> differing = crashed.differingFrom(target.objects());
      System.out.printf(
          "round %d: to %s, killed after %d kernel events (aimed at %d): %d of %d objects"
              + " differing%n",
          round, target == a ? "A" : "B", seen, killAfter, differing.size(), before.size());
      if (differing.isEmpty()) {
        afterCommit++;
      } else if (differing.equals(before)) {
        beforeCommit++;
      } else {
        duringCommit++;
      }

      if (differing.size() >= 10 && resyncKills < ROUNDS / 4 && round % 3 != 2) {
        // killed again during the restart's resync
        resyncKills++;
        agent = start();
        mark = events.get();
        long killResyncAfter =
            1 + random.nextInt((int) Math.max(1, differing.size() * eventsPerObject / 2));
        waitForEvents(mark + killResyncAfter, Duration.ofSeconds(30));
        agent.kill();
        crashed = kernel();
        Set<String> left = crashed.differingFrom(target.objects());
        System.out.printf(
            "round %d: the restart killed after %d kernel events of its resync (aimed at %d):"
                + " %d objects differing%n",
            round, events.get() - mark, killResyncAfter, left.size());
        if (left.isEmpty() || left.equals(differing)) {
          afterResync++; // finished before the kill, or killed before its first operation
        } else {
          duringResync++;
        }
        differing = left;
      }

      agent = start();
      List<String> ops = converge(target, "round " + round);
      resyncOps += ops.size();
      assertRestartDidWhatWasMissing(round, crashed, differing, target, ops);

      if (round % 4 == 3) { // killed while idle: the restart has nothing to do
        agent.kill();
        idle++;
        agent = start();
        assertThat(converge(target, "round " + round + ", after an idle kill"))
            .as("round %d: operations of the resync after a kill while idle", round)
            .isEmpty();
      }
    }
    int kills = duringCommit + beforeCommit + afterCommit + duringResync + afterResync + idle;
    System.out.printf(
        "crash and restart (Linux kernel): %d kill points (SIGKILL): %d during commits, %d before"
            + " a commit's first operation, %d after a commit; %d during resyncs, %d before or after"
            + " a resync; %d idle (their resyncs: 0 operations); %d agent starts, %d objects per"
            + " configuration, %d kernel events, %d operations by the restarts' transactions, %d s%n",
        kills,
        duringCommit,
        beforeCommit,
        afterCommit,
        duringResync,
        afterResync,
        idle,
        starts,
        a.objects().size(),
        events.get(),
        resyncOps,
        TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0));
    assertThat(kills).isGreaterThanOrEqualTo(20);
    assertThat(duringCommit).as("kills during commits").isPositive();
  }

  private AgentProcess start() throws IOException {
    starts++;
    return AgentProcess.start(ns, tmp.resolve("config"), tmp.resolve("agent-" + starts + ".log"));
  }

  private KernelState kernel() {
    return KernelState.read(ns, ALIAS_PREFIX, allNames);
  }

  /**
   * Waits until the kernel reported {@code count} events, or the events stopped for two seconds
   * after there were some (the change finished before), or {@code limit} passed.
   */
  private void waitForEvents(long count, Duration limit) throws InterruptedException {
    long start = System.nanoTime();
    long seen = events.get();
    while (events.get() < count && System.nanoTime() - start < limit.toNanos()) {
      if (events.get() > seen
          && System.nanoTime() - lastEventNanos.get() > TimeUnit.SECONDS.toNanos(2)) {
        return;
      }
      assertThat(agent.isAlive()).as("the agent runs:\n%s", agent.tail()).isTrue();
      Thread.sleep(1);
    }
  }

  /**
   * Waits until the agent converged on {@code target}: the kernel holds it, every value is
   * CONFIGURED over REST, the resync is recorded; returns the operations (not properties, not
   * no-ops) of its transactions other than SB notifications.
   */
  private List<String> converge(LinuxConfig target, String when) throws Exception {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    String why = "";
    while (System.nanoTime() < deadline) {
      assertThat(agent.isAlive()).as("%s: the agent runs:\n%s", when, agent.tail()).isTrue();
      KernelState k = kernel();
      if (!k.differingFrom(target.objects()).isEmpty()) {
        why = "the kernel differs:" + k.describeDifferences(target.objects());
      } else {
        JsonNode statuses = agent.get("/scheduler/status");
        JsonNode history = agent.get("/scheduler/txn-history");
        why =
            statuses == null
                ? "the REST API is not up"
                : AgentProcess.statusProblem(statuses, new TreeSet<>(target.keys()));
        if (why.isEmpty() && !AgentProcess.hasFullResync(history)) {
          why = "no full resync recorded";
        }
        if (why.isEmpty()) {
          Thread.sleep(300); // and it stays so
          KernelState again = kernel();
          assertThat(again.differingFrom(target.objects()))
              .as(
                  "%s: the kernel after convergence:%s",
                  when, again.describeDifferences(target.objects()))
              .isEmpty();
          assertThat(
                  AgentProcess.statusProblem(
                      agent.get("/scheduler/status"), new TreeSet<>(target.keys())))
              .isEmpty();
          return AgentProcess.operations(agent.get("/scheduler/txn-history"));
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError(
        when
            + ": not converged in "
            + CONVERGE.toSeconds()
            + " s: "
            + why
            + "\nagent log:\n"
            + agent.tail());
  }

  /**
   * The restart's operations touched every object that differed (or the link it belongs to), and
   * nothing else than those and what a re-created link takes along: its peer, the addresses and
   * routes of both.
   */
  private static void assertRestartDidWhatWasMissing(
      int round, KernelState crashed, Set<String> differing, LinuxConfig target, List<String> ops) {
    Set<String> touched = new TreeSet<>();
    ops.forEach(op -> touched.add(objectOf(op.substring(op.indexOf(' ') + 1))));
    Set<String> links = new HashSet<>(); // links that differed, and their peers
    for (String d : differing) {
      if (d.startsWith("link ")) {
        String name = d.substring(5);
        links.add(name);
        LinuxConfig.Iface i = target.interfaces().get(name);
        if (i != null) {
          links.add(i.peer());
        }
        for (String attributes : crashed.objects.getOrDefault(d, List.of())) {
          int p = attributes.indexOf(" peer=");
          if (p >= 0) {
            links.add(attributes.substring(p + 6).split(" ")[0]);
          }
        }
      }
    }
    Set<String> unexpected = new TreeSet<>();
    for (String t : touched) {
      if (!differing.contains(t) && !links.contains(linkOf(t))) {
        unexpected.add(t);
      }
    }
    Set<String> untouched = new TreeSet<>();
    for (String d : differing) {
      if (!touched.contains(d)
          && !touched.contains("link " + linkOf(d))
          && !d.startsWith("foreign ")) {
        untouched.add(d);
      }
    }
    assertThat(unexpected)
        .as(
            "round %d: objects the restart touched that were fine (differing: %s; ops: %s)",
            round, differing, ops)
        .isEmpty();
    assertThat(untouched)
        .as("round %d: differing objects the restart did not touch (ops: %s)", round, ops)
        .isEmpty();
  }

  /** The object of the oracle that an operation's key names. */
  static String objectOf(String key) {
    String iface = "config/linux/interfaces/v2/interface/";
    String route = "config/linux/l3/v2/route/";
    if (key.startsWith(iface)) {
      return KernelState.link(logical(key.substring(iface.length())));
    }
    if (key.startsWith(route)) {
      String rest = key.substring(route.length());
      int slash = rest.lastIndexOf('/');
      return KernelState.route(rest.substring(0, slash), rest.substring(slash + 1));
    }
    int address = key.indexOf("/address/");
    if (key.startsWith("linux/interface/") && address > 0) {
      String name = logical(key.substring("linux/interface/".length(), address));
      String ip = key.substring(address + "/address/".length());
      return KernelState.address(name, ip.substring(ip.indexOf('/') + 1)); // after the source
    }
    return key;
  }

  /**
   * The interface name without the suffixes Retrieve gives links it found amiss; for a link found
   * under the temporary name of a veth end (returned by its host name), the name of that end.
   */
  private static String logical(String name) {
    String base = name.replaceFirst("-(MISSING_PEER|DUPLICATE\\d+|UNFINISHED\\d*)$", "");
    return TEMPORARY.getOrDefault(base, base);
  }

  /** The interfaces of both configurations by the temporary names of their veth ends. */
  private static final Map<String, String> TEMPORARY = new HashMap<>();

  static {
    for (LinuxConfig c : List.of(LinuxConfig.a(PAIRS), LinuxConfig.b(PAIRS))) {
      c.interfaces().keySet().forEach(n -> TEMPORARY.put(KernelState.temporaryName(n), n));
    }
  }

  /** The link an object belongs to (its own name for a link). */
  private static String linkOf(String object) {
    String[] w = object.split(" ");
    return switch (w[0]) {
      case "link" -> w[1];
      case "addr" -> w[1];
      case "route" -> w[2];
      default -> "";
    };
  }
}
