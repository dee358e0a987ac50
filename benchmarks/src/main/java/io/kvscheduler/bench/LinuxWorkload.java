package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.linux.LinuxPlugin;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import io.kvscheduler.plugins.linux.model.interfaces.VethLink;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W8: the Linux plugin on the real kernel. In a fresh private network namespace, one transaction
 * creates N veth pairs, an address on one end of each ({@code 10.x.y.z/30}) and a route through it
 * ({@code 100.a.b.0/24} via the other address of the /30). Reports {@code seconds} (the commit),
 * {@code ops} (southbound operations executed), {@code per_op_ms}, and {@code batch_seconds}: the
 * time {@code ip -batch} takes to make the same links, addresses and routes in another fresh
 * namespace — what the kernel and iproute2 need without the agent.
 */
final class LinuxWorkload {
  private LinuxWorkload() {}

  static String end(int i, char side) {
    return "v" + i + side;
  }

  /** The address of pair {@code i}'s first end (last octet 1) or its gateway (2), /30. */
  static String address(int i, int host) {
    int base = i * 4;
    return "10." + ((base >> 16) & 255) + "." + ((base >> 8) & 255) + "." + ((base & 255) + host);
  }

  static String destination(int i) {
    return "100." + ((i >> 8) & 255) + "." + (i & 255) + ".0/24";
  }

  static Map<String, Object> values(int n) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      Interface a =
          Interface.newBuilder()
              .setName(end(i, 'a'))
              .setType(Interface.Type.VETH)
              .setEnabled(true)
              .addIpAddresses(address(i, 1) + "/30")
              .setVeth(VethLink.newBuilder().setPeerIfName(end(i, 'b')))
              .build();
      Interface b =
          Interface.newBuilder()
              .setName(end(i, 'b'))
              .setType(Interface.Type.VETH)
              .setEnabled(true)
              .setVeth(VethLink.newBuilder().setPeerIfName(end(i, 'a')))
              .build();
      Route r =
          Route.newBuilder()
              .setOutgoingInterface(end(i, 'a'))
              .setDstNetwork(destination(i))
              .setGwAddr(address(i, 2))
              .build();
      m.put(LinuxKeys.interfaceKey(a.getName()), a);
      m.put(LinuxKeys.interfaceKey(b.getName()), b);
      m.put(LinuxKeys.routeKey(r), r);
    }
    return m;
  }

  static String batchScript(int n) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append("link add ")
          .append(end(i, 'a'))
          .append(" type veth peer name ")
          .append(end(i, 'b'))
          .append('\n');
      sb.append("link set ").append(end(i, 'a')).append(" up\n");
      sb.append("link set ").append(end(i, 'b')).append(" up\n");
      sb.append("addr add ")
          .append(address(i, 1))
          .append("/30 dev ")
          .append(end(i, 'a'))
          .append('\n');
      sb.append("route add ")
          .append(destination(i))
          .append(" via ")
          .append(address(i, 2))
          .append(" dev ")
          .append(end(i, 'a'))
          .append('\n');
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
        out.put("seconds", ScaleHarness.round(commit.seconds(), 3));
        out.put("ops", commit.ops());
        out.put(
            "per_op_ms",
            ScaleHarness.round(commit.ops() == 0 ? 0 : commit.seconds() * 1000 / commit.ops(), 3));
        out.put("not_configured", commit.failed());
      }
    } catch (IOException | LinuxCallException e) {
      throw new IllegalStateException("W8 needs private network namespaces: " + e.getMessage(), e);
    }
    try (NetnsSandbox sandbox = NetnsSandbox.start();
        IpRoute2Calls calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofMinutes(10))) {
      String script = batchScript(n);
      QuietMachine.await();
      long t0 = System.nanoTime();
      calls.batch("", script);
      out.put("batch_seconds", ScaleHarness.round((System.nanoTime() - t0) / 1e9, 3));
    } catch (IOException | LinuxCallException e) {
      throw new IllegalStateException("W8: ip -batch failed: " + e.getMessage(), e);
    }
    return out;
  }
}
