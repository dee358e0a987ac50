package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.IptablesCalls;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.iptables.RuleChain;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W11: iptables rule chains on the real kernel. In a fresh private network namespace, one
 * transaction makes N rules in {@value #CHAINS} CUSTOM chains of the filter table spread over
 * {@value #NAMESPACES} fresh named namespaces made beforehand (N / 100 rules a chain). Reports
 * {@code seconds} (the commit), {@code restores} (the {@code iptables-restore} processes the plugin
 * started), {@code not_configured}, and {@code restore_seconds}: the time plain {@code
 * iptables-restore --noflush} takes to load the same chains, one process per namespace, into fresh
 * namespaces made beforehand — what the kernel and iptables need without the agent. One line per
 * scheduler parallelism ({@code --parallelism}, default 1 and 16).
 */
final class IptablesWorkload {
  private IptablesWorkload() {}

  static final int CHAINS = 100;
  static final int NAMESPACES = 10;

  /** Default parallelism levels: calls one at a time, and as many as the descriptor allows. */
  static final List<Integer> DEFAULT_LEVELS = List.of(1, LinuxPlugin.MAX_CONCURRENCY);

  static String namespace(int chain) {
    return "ipt" + (chain % NAMESPACES);
  }

  static String chainName(int chain) {
    return "KVS-C" + chain;
  }

  static List<String> rules(int chain, int perChain) {
    List<String> out = new ArrayList<>(perChain);
    for (int r = 0; r < perChain; r++) {
      int host = chain * perChain + r;
      out.add(
          "-s 10."
              + ((host >> 16) & 255)
              + "."
              + ((host >> 8) & 255)
              + "."
              + (host & 255)
              + " -p tcp --dport "
              + (1024 + r)
              + " -j ACCEPT");
    }
    return out;
  }

  static Map<String, Object> values(int n) {
    int perChain = Math.max(1, n / CHAINS);
    Map<String, Object> m = new LinkedHashMap<>();
    for (int c = 0; c < CHAINS; c++) {
      RuleChain chain =
          RuleChain.newBuilder()
              .setName("c" + c)
              .setNamespace(
                  NetNamespace.newBuilder()
                      .setType(NetNamespace.ReferenceType.NSID)
                      .setReference(namespace(c)))
              .setChainType(RuleChain.ChainType.CUSTOM)
              .setChainName(chainName(c))
              .addAllRules(rules(c, perChain))
              .build();
      m.put(LinuxKeys.ruleChainKey(chain.getName()), chain);
    }
    return m;
  }

  /**
   * The restore input of namespace {@code ns}: its chains, a table block each (a block of 1,000
   * rules is more than the kernel takes in one netlink message inside a user namespace).
   */
  static String restoreInput(int ns, int n) {
    int perChain = Math.max(1, n / CHAINS);
    StringBuilder sb = new StringBuilder();
    for (int c = ns; c < CHAINS; c += NAMESPACES) {
      sb.append("*filter\n:").append(chainName(c)).append(" - [0:0]\n");
      for (String r : rules(c, perChain)) {
        sb.append("-A ").append(chainName(c)).append(' ').append(r).append('\n');
      }
      sb.append("COMMIT\n");
    }
    return sb.toString();
  }

  static List<Map<String, Object>> run(int n, List<Integer> levels) {
    double restoreSeconds = plainRestore(n);
    List<Map<String, Object>> out = new ArrayList<>();
    for (int parallelism : levels) {
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("parallelism", parallelism);
      line.putAll(agent(n, parallelism));
      line.put("restore_seconds", ScaleHarness.round(restoreSeconds, 3));
      line.put("ratio", ScaleHarness.round((Double) line.get("seconds") / restoreSeconds, 2));
      out.add(line);
    }
    return out;
  }

  private static Map<String, Object> agent(int n, int parallelism) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (NetnsSandbox sandbox = NetnsSandbox.start();
        IpRoute2Calls calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofSeconds(120))) {
      IptablesCalls iptables = calls.iptables();
      try (KVScheduler kvs =
              KVScheduler.builder().printTxnSummary(false).parallelism(parallelism).build();
          LinuxPlugin plugin = LinuxPlugin.register(kvs, calls, iptables, "/vnf-agent/bench/")) {
        for (int ns = 0; ns < NAMESPACES; ns++) {
          calls.ensureNamespace("ipt" + ns); // fresh namespaces, as for plain iptables-restore
        }
        Map<String, Object> values = values(n);
        QuietMachine.await();
        TimedCommit commit = TimedCommit.of(kvs, values);
        out.put("seconds", ScaleHarness.round(commit.seconds(), 3));
        out.put("chains", values.size());
        out.put("restores", iptables.restores());
        out.put("not_configured", commit.failed());
      }
    } catch (IOException | LinuxCallException e) {
      throw new IllegalStateException("W11 needs private network namespaces: " + e.getMessage(), e);
    }
    return out;
  }

  /** Plain {@code iptables-restore --noflush}, one process per namespace, one after the other. */
  private static double plainRestore(int n) {
    try (NetnsSandbox sandbox = NetnsSandbox.start();
        IpRoute2Calls calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofSeconds(120))) {
      for (int ns = 0; ns < NAMESPACES; ns++) {
        calls.ensureNamespace("ipt" + ns);
      }
      List<String> inputs = new ArrayList<>();
      for (int ns = 0; ns < NAMESPACES; ns++) {
        inputs.add(restoreInput(ns, n));
      }
      QuietMachine.await();
      long t0 = System.nanoTime();
      for (int ns = 0; ns < NAMESPACES; ns++) {
        List<String> cmd = new ArrayList<>(sandbox.prefix());
        cmd.addAll(
            List.of("nsenter", "--net=/run/netns/ipt" + ns, "iptables-restore", "--noflush"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
          in.write(inputs.get(ns).getBytes(StandardCharsets.UTF_8));
        }
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
          throw new IllegalStateException("W11: iptables-restore failed: " + said.strip());
        }
      }
      return (System.nanoTime() - t0) / 1e9;
    } catch (IOException | LinuxCallException e) {
      throw new IllegalStateException("W11: iptables-restore failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("W11: interrupted", e);
    }
  }
}
