package io.kvscheduler.bench;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.testsupport.EtcdCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * W13: a fleet on one etcd cluster. Starts a 3-member etcd cluster (local processes on loopback
 * ports) and {@code agents} agents in this JVM, each with its own scheduler, etcd client, label
 * ({@code w13-<k>}) and lease, status publishing on, and {@code n} interfaces each under its
 * prefix. Then, every time measured from the etcd put to the agent's {@code config-status} of the
 * new value reading CONFIGURED, seen through one watch of {@code /vnf-agent/}:
 *
 * <ul>
 *   <li>at rest, the etcd requests per agent and second, from the members' gRPC counters over 10 s
 *       ({@code rest_kv_per_agent_s}: Range, Put, Txn and DeleteRange; {@code
 *       rest_range_per_agent_s}, {@code rest_put_per_agent_s}; {@code rest_keepalive_per_agent_s}:
 *       lease keep-alive messages);
 *   <li>(a) one new value per agent, one agent after the other, 4 rounds: {@code
 *       propagation_p50_ms}, {@code propagation_p99_ms}, {@code propagation_max_ms};
 *   <li>(b) one new value for every agent at once: {@code all_seconds};
 *   <li>(c) the same while one member is killed (SIGKILL) and started again: {@code
 *       member_loss_all_seconds} and {@code lost} (values with no CONFIGURED status within 60 s,
 *       read from etcd at the end so that a missed watch event does not count).
 * </ul>
 */
final class FleetWorkload {
  private FleetWorkload() {}

  private static final String IF = "config/mock/v1/interfaces/";
  private static final String STATUS = "config-status/mock/v1/interfaces/";
  private static final int ROUNDS = 4;
  private static final long WAIT_MS = 60_000;

  static Map<String, Object> run(int agents, int n) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("agents", agents);
    out.put("etcd_members", 3);
    try (EtcdCluster etcd = EtcdCluster.startNew(3)) {
      List<String> endpoints = etcd.endpoints();
      List<Agent> running = new ArrayList<>();
      try (Client client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build()) {
        KV kv = client.getKVClient();
        long t0 = System.nanoTime();
        populate(kv, agents, n);
        out.put("populate_seconds", seconds(System.nanoTime() - t0));
        System.err.println("kvs-bench: W13: " + agents * n + " values written; starting agents");

        t0 = System.nanoTime();
        ExecutorService starter = Executors.newFixedThreadPool(4);
        try {
          List<Future<Agent>> started = new ArrayList<>();
          for (int a = 0; a < agents; a++) {
            String label = label(a);
            started.add(
                starter.submit(
                    () ->
                        Agent.start(
                            AgentConfig.builder()
                                .label(label)
                                .restAddress(null)
                                .etcdEndpoints(endpoints)
                                .statusPublishing(true)
                                .printTxnSummary(false)
                                .build())));
          }
          for (Future<Agent> f : started) {
            running.add(f.get(10, TimeUnit.MINUTES));
          }
        } finally {
          starter.shutdown();
        }
        awaitStatuses(kv, agents, n);
        out.put("start_seconds", seconds(System.nanoTime() - t0));
        System.err.println("kvs-bench: W13: " + agents + " agents configured: " + out);

        Map<String, Long> seen = new ConcurrentHashMap<>();
        try (Watch.Watcher w =
            client
                .getWatchClient()
                .watch(
                    bytes("/vnf-agent/"),
                    WatchOption.builder().isPrefix(true).build(),
                    r -> {
                      long now = System.nanoTime();
                      for (WatchEvent e : r.getEvents()) {
                        if (e.getEventType() == WatchEvent.EventType.PUT
                            && e.getKeyValue()
                                .getValue()
                                .toString(StandardCharsets.UTF_8)
                                .contains("\"CONFIGURED\"")) {
                          seen.putIfAbsent(
                              e.getKeyValue().getKey().toString(StandardCharsets.UTF_8), now);
                        }
                      }
                    })) {
          Thread.sleep(3000); // the statuses of the start settle
          out.putAll(atRest(etcd, agents));

          // (a) one agent after the other
          List<Long> latencies = new ArrayList<>();
          for (int r = 0; r < ROUNDS; r++) {
            for (int a = 0; a < agents; a++) {
              String name = "one-" + r;
              long put = System.nanoTime();
              kv.put(bytes(key(a, IF + name)), bytes(tap(name))).get(30, TimeUnit.SECONDS);
              String status = key(a, STATUS + name);
              if (!awaitSeen(seen, List.of(status), WAIT_MS)) {
                throw new IllegalStateException("no CONFIGURED status of " + status);
              }
              latencies.add(seen.get(status) - put);
            }
          }
          long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
          out.put("propagation_samples", sorted.length);
          out.put("propagation_p50_ms", millis(sorted[(sorted.length - 1) / 2]));
          out.put("propagation_p99_ms", millis(sorted[(int) Math.ceil(sorted.length * 0.99) - 1]));
          out.put("propagation_max_ms", millis(sorted[sorted.length - 1]));

          // (b) every agent at once
          out.put("all_seconds", seconds(allAtOnce(kv, seen, agents, "all-1", null)));

          // (c) the same while a member is killed and started again
          List<String> statuses = new ArrayList<>();
          for (int a = 0; a < agents; a++) {
            statuses.add(key(a, STATUS + "all-2"));
          }
          long took =
              allAtOnce(
                  kv,
                  seen,
                  agents,
                  "all-2",
                  () -> {
                    etcd.kill(1);
                    Thread.sleep(500);
                  });
          etcd.start(1);
          out.put("member_loss_all_seconds", took < 0 ? null : seconds(took));
          awaitSeen(seen, statuses, WAIT_MS);
          int lost = 0;
          for (String s : statuses) {
            if (!seen.containsKey(s)) {
              var kvs = kv.get(bytes(s)).get(30, TimeUnit.SECONDS).getKvs();
              if (kvs.isEmpty()
                  || !kvs.get(0)
                      .getValue()
                      .toString(StandardCharsets.UTF_8)
                      .contains("CONFIGURED")) {
                lost++;
              }
            }
          }
          out.put("lost", lost);
          System.err.println("kvs-bench: W13: done: " + out);
        }
      } finally {
        running.forEach(Agent::close);
      }
    }
    return out;
  }

  private interface Fault {
    void run() throws Exception;
  }

  /**
   * Puts a new value {@code name} under every agent at once (after {@code fault}, if any); the
   * nanoseconds from the first put to the last CONFIGURED status seen, or -1 when not all were seen
   * within the wait.
   */
  private static long allAtOnce(KV kv, Map<String, Long> seen, int agents, String name, Fault fault)
      throws Exception {
    List<String> statuses = new ArrayList<>();
    for (int a = 0; a < agents; a++) {
      statuses.add(key(a, STATUS + name));
    }
    long start = System.nanoTime();
    List<CompletableFuture<?>> puts = new ArrayList<>();
    for (int a = 0; a < agents; a++) {
      puts.add(kv.put(bytes(key(a, IF + name)), bytes(tap(name))));
      if (fault != null && a == agents / 2) {
        fault.run(); // half written before the member goes, half after
        fault = null;
      }
    }
    for (int a = 0; a < agents; a++) {
      try {
        puts.get(a).get(60, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        // the member that took the put went away: put again, as a controller does
        putRetrying(kv, key(a, IF + name), tap(name));
      }
    }
    if (!awaitSeen(seen, statuses, WAIT_MS)) {
      return -1;
    }
    long last = statuses.stream().mapToLong(seen::get).max().orElse(start);
    return last - start;
  }

  /** Puts until etcd says it is done, at most 60 s. */
  private static void putRetrying(KV kv, String key, String value) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (true) {
      try {
        kv.put(bytes(key), bytes(value)).get(30, TimeUnit.SECONDS);
        return;
      } catch (ExecutionException | TimeoutException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  private static boolean awaitSeen(Map<String, Long> seen, List<String> keys, long waitMs)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
    while (!keys.stream().allMatch(seen::containsKey)) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(1);
    }
    return true;
  }

  /** The etcd requests at rest, per agent and second, from every member's counters over 10 s. */
  private static Map<String, Object> atRest(EtcdCluster etcd, int agents) throws Exception {
    Map<String, Double> before = sum(etcd);
    long t0 = System.nanoTime();
    Thread.sleep(10_000);
    Map<String, Double> after = sum(etcd);
    double s = (System.nanoTime() - t0) / 1e9;
    Map<String, Object> out = new LinkedHashMap<>();
    double kvCalls = 0;
    for (String m : List.of("Range", "Put", "Txn", "DeleteRange")) {
      kvCalls += after.getOrDefault(m, 0.0) - before.getOrDefault(m, 0.0);
    }
    out.put("rest_kv_per_agent_s", round(kvCalls / s / agents));
    out.put(
        "rest_range_per_agent_s",
        round((after.getOrDefault("Range", 0.0) - before.getOrDefault("Range", 0.0)) / s / agents));
    out.put(
        "rest_put_per_agent_s",
        round((after.getOrDefault("Put", 0.0) - before.getOrDefault("Put", 0.0)) / s / agents));
    out.put(
        "rest_keepalive_per_agent_s",
        round(
            (after.getOrDefault("LeaseKeepAlive_msgs", 0.0)
                    - before.getOrDefault("LeaseKeepAlive_msgs", 0.0))
                / s
                / agents));
    return out;
  }

  private static Map<String, Double> sum(EtcdCluster etcd) throws Exception {
    Map<String, Double> out = new LinkedHashMap<>();
    for (int i = 0; i < 3; i++) {
      grpcCounters(etcd.endpoint(i)).forEach((k, v) -> out.merge(k, v, Double::sum));
    }
    return out;
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static final Pattern COUNTER =
      Pattern.compile(
          "^(grpc_server_handled_total|grpc_server_msg_received_total)\\{(.*)} (\\S+)$");
  private static final Pattern METHOD = Pattern.compile("grpc_method=\"([^\"]+)\"");

  /**
   * The gRPC requests the etcd member at {@code endpoint} has handled, by method (its {@code
   * /metrics}): unary calls ({@code Range}, {@code Put}, {@code Txn}, ...) from {@code
   * grpc_server_handled_total}, stream messages ({@code LeaseKeepAlive}, {@code Watch}) from {@code
   * grpc_server_msg_received_total} as {@code <method>_msgs}.
   */
  private static Map<String, Double> grpcCounters(String endpoint) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(endpoint + "/metrics"))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    Map<String, Double> out = new HashMap<>();
    for (String line : r.body().split("\n")) {
      Matcher m = COUNTER.matcher(line);
      if (!m.matches()) {
        continue;
      }
      Matcher method = METHOD.matcher(m.group(2));
      if (!method.find()) {
        continue;
      }
      boolean stream = m.group(1).equals("grpc_server_msg_received_total");
      String name = method.group(1);
      if (stream && !(name.equals("LeaseKeepAlive") || name.equals("Watch"))) {
        continue;
      }
      out.merge(stream ? name + "_msgs" : name, Double.parseDouble(m.group(3)), Double::sum);
    }
    return out;
  }

  /** Writes {@code n} interfaces under every agent's prefix, 100 keys per transaction. */
  private static void populate(KV kv, int agents, int n) throws Exception {
    List<CompletableFuture<?>> pending = new ArrayList<>();
    for (int a = 0; a < agents; a++) {
      List<Op> ops = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        String name = "if" + i;
        ops.add(Op.put(bytes(key(a, IF + name)), bytes(tap(name)), PutOption.DEFAULT));
        if (ops.size() == 100 || i == n - 1) {
          pending.add(kv.txn().Then(ops.toArray(Op[]::new)).commit());
          ops = new ArrayList<>();
        }
        if (pending.size() >= 16) {
          for (CompletableFuture<?> p : pending) {
            p.get(60, TimeUnit.SECONDS);
          }
          pending.clear();
        }
      }
    }
    for (CompletableFuture<?> p : pending) {
      p.get(60, TimeUnit.SECONDS);
    }
  }

  /** Waits until every agent has published {@code n} value statuses. */
  private static void awaitStatuses(KV kv, int agents, int n) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
    boolean[] done = new boolean[agents];
    while (true) {
      boolean all = true;
      for (int a = 0; a < agents; a++) {
        if (done[a]) {
          continue;
        }
        long count =
            kv.get(
                    bytes(key(a, STATUS)),
                    GetOption.builder().isPrefix(true).withCountOnly(true).build())
                .get(30, TimeUnit.SECONDS)
                .getCount();
        done[a] = count >= n;
        all &= done[a];
      }
      if (all) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "agents without all their statuses after 30 min: " + Arrays.toString(done));
      }
      Thread.sleep(500);
    }
  }

  private static String label(int a) {
    return "w13-" + a;
  }

  private static String key(int agent, String rest) {
    return "/vnf-agent/" + label(agent) + "/" + rest;
  }

  private static String tap(String name) {
    return "{\"name\":\"" + name + "\",\"type\":\"TAP\"}";
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static double seconds(long nanos) {
    return round(nanos / 1e9);
  }

  private static double millis(long nanos) {
    return round(nanos / 1e6);
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
