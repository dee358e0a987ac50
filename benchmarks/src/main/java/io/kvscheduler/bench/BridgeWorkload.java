package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.interfaces.VethLink;
import io.kvscheduler.plugins.linux.model.links.BridgeLink;
import io.kvscheduler.plugins.linux.model.links.Link;
import io.kvscheduler.plugins.linux.model.links.Port;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W12: bridges on the real kernel. In a fresh private network namespace, one transaction creates N
 * bridges, each with an address ({@code 10.a.b.1/24}) and {@value #PORTS} veth pairs whose first
 * end is a port of the bridge (N × 10 pairs). Reports {@code seconds} (the commit), {@code ops}
 * (southbound operations executed), {@code per_op_ms}, and {@code batch_seconds}: the time {@code
 * ip -batch} takes to make the same bridges, pairs, ports and addresses in another fresh namespace.
 */
final class BridgeWorkload {
  private BridgeWorkload() {}

  /** Veth pairs per bridge. */
  static final int PORTS = 10;

  static String bridge(int i) {
    return "br" + i;
  }

  static String end(int i, int j, char side) {
    return "b" + i + "p" + j + side;
  }

  static String address(int i) {
    return "10." + ((i >> 8) & 255) + "." + (i & 255) + ".1/24";
  }

  static Map<String, Object> values(int n) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      Link br =
          Link.newBuilder()
              .setName(bridge(i))
              .setEnabled(true)
              .addIpAddresses(address(i))
              .setBridge(BridgeLink.getDefaultInstance())
              .build();
      m.put(LinuxKeys.linkKey(br.getName()), br);
      for (int j = 0; j < PORTS; j++) {
        Interface a = veth(end(i, j, 'a'), end(i, j, 'b'));
        Interface b = veth(end(i, j, 'b'), end(i, j, 'a'));
        m.put(LinuxKeys.interfaceKey(a.getName()), a);
        m.put(LinuxKeys.interfaceKey(b.getName()), b);
        Port p = Port.newBuilder().setInterface(a.getName()).setMaster(bridge(i)).build();
        m.put(LinuxKeys.portKey(p.getInterface()), p);
      }
    }
    return m;
  }

  private static Interface veth(String name, String peer) {
    return Interface.newBuilder()
        .setName(name)
        .setType(Interface.Type.VETH)
        .setEnabled(true)
        .setVeth(VethLink.newBuilder().setPeerIfName(peer))
        .build();
  }

  static String batchScript(int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append("link add ").append(bridge(i)).append(" type bridge\n");
      sb.append("link set ").append(bridge(i)).append(" up\n");
      sb.append("addr add ").append(address(i)).append(" dev ").append(bridge(i)).append('\n');
      for (int j = 0; j < PORTS; j++) {
        String a = end(i, j, 'a');
        String b = end(i, j, 'b');
        sb.append("link add ").append(a).append(" type veth peer name ").append(b).append('\n');
        sb.append("link set ").append(a).append(" master ").append(bridge(i)).append(" up\n");
        sb.append("link set ").append(b).append(" up\n");
      }
    }
    return sb.toString();
  }

  static Map<String, Object> run(int n) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (NetnsSandbox sandbox = NetnsSandbox.start();
        IpRoute2Calls calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofSeconds(60))) {
      try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
          LinuxPlugin plugin = LinuxPlugin.register(kvs, calls, "/vnf-agent/bench/")) {
        plugin.startWatching();
        Map<String, Object> values = values(n);
        QuietMachine.await();
        TimedCommit commit = TimedCommit.of(kvs, values);
        out.put("bridges", n);
        out.put("veth_pairs", n * PORTS);
        out.put("seconds", ScaleHarness.round(commit.seconds(), 3));
        out.put("ops", commit.ops());
        out.put(
            "per_op_ms",
            ScaleHarness.round(commit.ops() == 0 ? 0 : commit.seconds() * 1000 / commit.ops(), 3));
        out.put("not_configured", commit.failed());
      }
    } catch (IOException | LinuxCallException e) {
      throw new IllegalStateException("W12 needs private network namespaces: " + e.getMessage(), e);
    }
    try (NetnsSandbox sandbox = NetnsSandbox.start();
        IpRoute2Calls calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofMinutes(10))) {
      String script = batchScript(n);
      QuietMachine.await();
      long t0 = System.nanoTime();
      calls.batch("", script);
      out.put("batch_seconds", ScaleHarness.round((System.nanoTime() - t0) / 1e9, 3));
    } catch (IOException | LinuxCallException e) {
      throw new IllegalStateException("W12: ip -batch failed: " + e.getMessage(), e);
    }
    out.put(
        "ratio",
        ScaleHarness.round(
            (double) out.get("seconds") / Math.max(1e-9, (double) out.get("batch_seconds")), 2));
    return out;
  }
}
