package io.kvscheduler.agent.crash;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent with the Linux plugin, configured with iptables rule chains in a named namespace, is
 * killed with SIGKILL while it rewrites them, restarted, and converges: every chain holds exactly
 * its configured rules, every value is CONFIGURED, and a restart after a kill while idle executes
 * no operation. Needs the iptables commands ({@code bin/test} installs them).
 */
class RuleChainCrashRestartIT {
  static final int CHAINS = 30;
  static final int RULES = 20;
  static final int ROUNDS = 6;
  static final Duration CONVERGE = Duration.ofSeconds(120);

  @TempDir Path tmp;
  NamespaceHolder ns;
  AgentProcess agent;
  int starts;

  @BeforeEach
  void namespace() {
    ns =
        NamespaceHolder.startForTest(
            List.of("unshare", "nsenter", "ip", "curl", "iptables-restore"),
            "util-linux, iproute2, curl, iptables");
  }

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.destroy();
    }
    if (ns != null) {
      ns.close();
    }
  }

  /** Chain {@code c}'s rules in configuration {@code version}, as iptables-save prints them. */
  static List<String> rules(int c, int version) {
    List<String> out = new ArrayList<>();
    for (int r = 0; r < RULES; r++) {
      out.add(
          "-s 10."
              + version
              + "."
              + c
              + "."
              + r
              + "/32 -p tcp -m tcp --dport "
              + (1000 + r)
              + " -j ACCEPT");
    }
    return out;
  }

  static String chain(int c) {
    return "KVS-CRASH" + c;
  }

  /** The configuration file of {@code version}: every chain in namespace ns1. */
  static String yaml(int version) {
    StringBuilder sb = new StringBuilder("linuxConfig:\n  RuleChain_list:\n");
    for (int c = 0; c < CHAINS; c++) {
      sb.append("  - {\"name\": \"c")
          .append(c)
          .append("\", \"namespace\": {\"type\": \"NSID\",")
          .append(" \"reference\": \"ns1\"}, \"chain_type\": \"CUSTOM\", \"chain_name\": \"")
          .append(chain(c))
          .append("\", \"rules\": [");
      List<String> rs = rules(c, version);
      for (int r = 0; r < rs.size(); r++) {
        sb.append(r == 0 ? "" : ", ").append('"').append(rs.get(r)).append('"');
      }
      sb.append("]}\n");
    }
    return sb.toString();
  }

  /** The rules of each chain of the configuration in ns1's kernel, by chain. */
  Map<String, List<String>> kernel() {
    Map<String, List<String>> out = new LinkedHashMap<>();
    String saved;
    try {
      saved = ns.run("nsenter", "--net=/run/netns/ns1", "iptables-save", "-t", "filter");
    } catch (IllegalStateException e) {
      return out; // no namespace yet
    }
    for (String line : saved.split("\n")) {
      if (line.startsWith(":KVS-CRASH")) {
        out.putIfAbsent(line.substring(1, line.indexOf(' ')), new ArrayList<>());
      } else if (line.startsWith("-A KVS-CRASH")) {
        String rest = line.substring(3);
        String name = rest.substring(0, rest.indexOf(' '));
        out.computeIfAbsent(name, k -> new ArrayList<>()).add(rest.substring(name.length() + 1));
      }
    }
    return out;
  }

  static Map<String, List<String>> expected(int version) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (int c = 0; c < CHAINS; c++) {
      out.put(chain(c), rules(c, version));
    }
    return out;
  }

  @Test
  @DisplayName("killed with SIGKILL while rewriting rule chains, the agent restarts and converges")
  void killedAgentConvergesOnTheChains() throws Exception {
    long seed = Long.getLong("kvs.crash.seed", System.nanoTime());
    System.out.printf("crash and restart (rule chains): seed %d%n", seed);
    Random random = new Random(seed);
    Path dir = Files.createDirectories(tmp.resolve("config"));
    Path file = dir.resolve("linux.yaml");
    AgentProcess.writeConfig(file, yaml(1));
    agent = start();
    converge(1, "first start");
    int midway = 0;
    for (int round = 0; round < ROUNDS; round++) {
      int version = round % 2 == 0 ? 2 : 1;
      AgentProcess.writeConfig(file, yaml(version));
      Thread.sleep(200 + random.nextInt(600)); // the file's settle time is 200 ms
      agent.kill();
      Map<String, List<String>> crashed = kernel();
      long done =
          expected(version).entrySet().stream()
              .filter(e -> e.getValue().equals(crashed.get(e.getKey())))
              .count();
      System.out.printf("round %d: killed with %d of %d chains rewritten%n", round, done, CHAINS);
      if (done > 0 && done < CHAINS) {
        midway++;
      }
      agent = start();
      converge(version, "round " + round);
      if (round % 2 == 1) {
        agent.kill();
        agent = start();
        List<String> ops = converge(version, "round " + round + ", after an idle kill");
        assertThat(ops).as("round %d: operations after a kill while idle", round).isEmpty();
      }
    }
    System.out.printf("crash and restart (rule chains): %d of %d kills midway%n", midway, ROUNDS);
  }

  private AgentProcess start() throws IOException {
    starts++;
    return AgentProcess.start(ns, tmp.resolve("config"), tmp.resolve("agent-" + starts + ".log"));
  }

  /**
   * Waits until the kernel holds configuration {@code version} and every value is CONFIGURED after
   * a full resync; returns the operations of the agent's transactions (not SB notifications).
   */
  private List<String> converge(int version, String when) throws Exception {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    String why = "";
    while (System.nanoTime() < deadline) {
      assertThat(agent.isAlive()).as("%s: the agent runs:\n%s", when, agent.tail()).isTrue();
      Map<String, List<String>> k = kernel();
      if (!k.equals(expected(version))) {
        why = "the kernel differs: " + k.keySet().size() + " chains";
      } else {
        JsonNode statuses = agent.get("/scheduler/status");
        JsonNode history = agent.get("/scheduler/txn-history");
        why = statuses == null || history == null ? "the REST API is not up" : problem(statuses);
        if (why.isEmpty() && !AgentProcess.hasFullResync(history)) {
          why = "no full resync recorded";
        }
        if (why.isEmpty()) {
          return AgentProcess.operations(history);
        }
      }
      Thread.sleep(100);
    }
    throw new AssertionError(when + ": not converged: " + why + "\nagent log:\n" + agent.tail());
  }

  private static String problem(JsonNode statuses) {
    List<String> wrong = new ArrayList<>();
    int chains = 0;
    for (JsonNode s : statuses) {
      JsonNode v = s.path("value");
      String key = v.path("key").asText();
      if (key.startsWith("config/linux/iptables/")) {
        chains++;
        if (!"CONFIGURED".equals(v.path("state").asText())) {
          wrong.add(key + " " + v.path("state").asText() + " " + v.path("error").asText());
        }
      }
    }
    if (chains != CHAINS) {
      return chains + " rule chain statuses";
    }
    return wrong.isEmpty() ? "" : "not CONFIGURED: " + wrong;
  }
}
