package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.testsupport.EtcdFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Load over real HTTP and a real etcd: 64 REST clients, each its own JDK {@link HttpClient}, push
 * one-interface changes with {@code PUT /configuration} while an etcd writer changes other
 * interfaces and status readers poll {@code /scheduler/status}, for {@value #DEFAULT_SECONDS} s
 * (system property {@code kvs.load.seconds}).
 *
 * <p>Asserted: every PUT is either applied (200) or refused with a reason the client sees (503 with
 * a JSON error, each counted in {@code kvs_commits_refused_total}), nothing else; the southbound
 * ends with the last accepted value of every key, REST and etcd; readers are served throughout and
 * do not stall the engine (p99 of the one-value transactions, measured at the client, stays
 * bounded). Then, for a sixth of that time, 16 readers poll every status while one client changes
 * one value at a time: its p99 stays under {@link #PROBE_P99_BOUND} (statuses are read from the
 * engine's published snapshot, never queued behind or ahead of transactions). Throughput and
 * latency percentiles are printed as {@code [figure] load} lines.
 */
class RestEtcdLoadIT {
  static final int DEFAULT_SECONDS = 60;
  static final int CLIENTS = 64;
  static final int KEYS_PER_CLIENT = 4;
  static final int READERS = 4;
  static final int ETCD_KEYS = 32;

  /** Bound of the p99 latency of a one-value change, on a busy shared machine. */
  static final Duration P99_BOUND = Duration.ofSeconds(5);

  /** Readers polling every status while one client changes one value at a time. */
  static final int PROBE_READERS = 16;

  /** Bound of the p99 latency of that client's one-value changes. */
  static final Duration PROBE_P99_BOUND = Duration.ofSeconds(2);

  static final String LABEL = "load";
  static final String IF = "config/mock/v1/interfaces/";
  static final ObjectMapper JSON = new ObjectMapper();

  /** A distinct, valid MAC address per change: the value that identifies the intent. */
  static String mac(long n) {
    return String.format(
        "02:%02x:%02x:%02x:%02x:%02x",
        (n >> 32) & 0xff, (n >> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff);
  }

  /** Latencies in nanoseconds, collected per thread and merged at the end. */
  static final class Latencies {
    final ConcurrentLinkedQueue<long[]> parts = new ConcurrentLinkedQueue<>();

    long[] sorted() {
      long[] all = parts.stream().flatMapToLong(Arrays::stream).toArray();
      Arrays.sort(all);
      return all;
    }

    static double ms(long[] sorted, double q) {
      if (sorted.length == 0) {
        return 0;
      }
      int i = (int) Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
      return sorted[Math.max(0, i)] / 1e6;
    }
  }

  /** A growable array of longs for one thread. */
  static final class LongList {
    long[] a = new long[1024];
    int n;

    void add(long v) {
      if (n == a.length) {
        a = Arrays.copyOf(a, n * 2);
      }
      a[n++] = v;
    }

    long[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void manyRestClientsAndAnEtcdWriterAreAppliedOrRefusedVisiblyWhileReadersPoll() throws Exception {
    long seconds = Long.getLong("kvs.load.seconds", DEFAULT_SECONDS);
    MockAgentPlugin mock = new MockAgentPlugin();
    try (EtcdFixture etcd = EtcdFixture.startNew();
        Client etcdClient = Client.builder().endpoints(etcd.endpoint()).build();
        Agent agent =
            Agent.start(
                AgentConfig.builder()
                    .label(LABEL)
                    .restAddress("127.0.0.1:0")
                    .etcdEndpoints(List.of(etcd.endpoint()))
                    .printTxnSummary(false)
                    .build(),
                List.of(mock))) {
      int port =
          agent.sources().stream()
              .filter(RestNorthbound.class::isInstance)
              .map(RestNorthbound.class::cast)
              .findFirst()
              .orElseThrow()
              .port();
      String base = "http://127.0.0.1:" + port;
      AtomicLong changeCounter = new AtomicLong();

      // the intents: the last accepted value (MAC) of each key
      Map<String, String> restIntent = new ConcurrentHashMap<>();
      Map<String, String> etcdIntent = new ConcurrentHashMap<>();
      AtomicLong applied = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      ConcurrentLinkedQueue<String> unexpected = new ConcurrentLinkedQueue<>();
      Latencies putLatency = new Latencies();
      Latencies readLatency = new Latencies();
      AtomicLong reads = new AtomicLong();
      AtomicLong etcdPuts = new AtomicLong();

      long start = System.nanoTime();
      long end = start + TimeUnit.SECONDS.toNanos(seconds);
      CountDownLatch go = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();

      for (int c = 0; c < CLIENTS; c++) {
        int client = c;
        threads.add(
            new Thread(
                () -> {
                  HttpClient http =
                      HttpClient.newBuilder()
                          .version(HttpClient.Version.HTTP_1_1)
                          .connectTimeout(Duration.ofSeconds(10))
                          .build();
                  LongList lat = new LongList();
                  try {
                    go.await();
                    while (System.nanoTime() < end) {
                      String name =
                          "c" + client + "k" + ThreadLocalRandom.current().nextInt(KEYS_PER_CLIENT);
                      String mac = mac(changeCounter.incrementAndGet());
                      String body =
                          "mockConfig:\n  Interface_list:\n  - name: "
                              + name
                              + "\n    type: TAP\n    enabled: true\n    physAddress: \""
                              + mac
                              + "\"\n";
                      long t0 = System.nanoTime();
                      HttpResponse<String> r =
                          http.send(
                              HttpRequest.newBuilder(URI.create(base + "/configuration"))
                                  .timeout(Duration.ofSeconds(120))
                                  .header("Content-Type", "application/yaml")
                                  .PUT(HttpRequest.BodyPublishers.ofString(body))
                                  .build(),
                              HttpResponse.BodyHandlers.ofString());
                      lat.add(System.nanoTime() - t0);
                      if (r.statusCode() == 200) {
                        restIntent.put(IF + name, mac);
                        applied.incrementAndGet();
                      } else if (r.statusCode() == 503 && isJsonError(r, "queue is full")) {
                        refused.incrementAndGet();
                      } else {
                        unexpected.add("PUT " + name + ": " + r.statusCode() + " " + r.body());
                      }
                    }
                  } catch (Exception e) {
                    unexpected.add("REST client " + client + ": " + e);
                  } finally {
                    putLatency.parts.add(lat.toArray());
                  }
                },
                "load-rest-" + client));
      }

      threads.add(
          new Thread(
              () -> {
                try {
                  go.await();
                  while (System.nanoTime() < end) {
                    String name = "e" + ThreadLocalRandom.current().nextInt(ETCD_KEYS);
                    String mac = mac(changeCounter.incrementAndGet());
                    String value =
                        "{\"name\":\""
                            + name
                            + "\",\"type\":\"TAP\",\"enabled\":true,"
                            + "\"physAddress\":\""
                            + mac
                            + "\"}";
                    etcdClient
                        .getKVClient()
                        .put(
                            ByteSequence.from(
                                "/vnf-agent/" + LABEL + "/" + IF + name, StandardCharsets.UTF_8),
                            ByteSequence.from(value, StandardCharsets.UTF_8))
                        .get(30, TimeUnit.SECONDS);
                    etcdIntent.put(IF + name, mac);
                    etcdPuts.incrementAndGet();
                  }
                } catch (Exception e) {
                  unexpected.add("etcd writer: " + e);
                }
              },
              "load-etcd-writer"));

      for (int i = 0; i < READERS; i++) {
        int reader = i;
        threads.add(
            new Thread(
                () -> {
                  HttpClient http =
                      HttpClient.newBuilder()
                          .version(HttpClient.Version.HTTP_1_1)
                          .connectTimeout(Duration.ofSeconds(10))
                          .build();
                  LongList lat = new LongList();
                  try {
                    go.await();
                    while (System.nanoTime() < end) {
                      // half read every status, half one key's status
                      String q =
                          reader % 2 == 0
                              ? "/scheduler/status"
                              : "/scheduler/status?key="
                                  + IF
                                  + "c"
                                  + ThreadLocalRandom.current().nextInt(CLIENTS)
                                  + "k0";
                      long t0 = System.nanoTime();
                      HttpResponse<String> r =
                          http.send(
                              HttpRequest.newBuilder(URI.create(base + q))
                                  .timeout(Duration.ofSeconds(120))
                                  .GET()
                                  .build(),
                              HttpResponse.BodyHandlers.ofString());
                      lat.add(System.nanoTime() - t0);
                      if (r.statusCode() != 200) {
                        unexpected.add("GET " + q + ": " + r.statusCode() + " " + r.body());
                      } else {
                        JSON.readTree(r.body());
                      }
                      reads.incrementAndGet();
                    }
                  } catch (Exception e) {
                    unexpected.add("status reader " + reader + ": " + e);
                  } finally {
                    readLatency.parts.add(lat.toArray());
                  }
                },
                "load-reader-" + reader));
      }

      threads.forEach(Thread::start);
      go.countDown();
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(seconds + 180));
        assertThat(t.isAlive()).as(t.getName() + " still running").isFalse();
      }
      double elapsed = (System.nanoTime() - start) / 1e9;

      long[] puts = putLatency.sorted();
      long[] gets = readLatency.sorted();
      System.out.printf(
          "[figure] load rest: %d clients, %d PUT /configuration in %.1f s"
              + " (%.0f/s): %d applied, %d refused (503); latency p50 %.1f ms, p99 %.1f ms,"
              + " max %.1f ms%n",
          CLIENTS,
          puts.length,
          elapsed,
          puts.length / elapsed,
          applied.get(),
          refused.get(),
          Latencies.ms(puts, 0.5),
          Latencies.ms(puts, 0.99),
          Latencies.ms(puts, 1.0));
      System.out.printf(
          "[figure] load etcd: %d puts in %.1f s (%.0f/s)%n",
          etcdPuts.get(), elapsed, etcdPuts.get() / elapsed);
      System.out.printf(
          "[figure] load status: %d readers, %d GET /scheduler/status in %.1f s"
              + " (%.0f/s); latency p50 %.1f ms, p99 %.1f ms%n",
          READERS,
          gets.length,
          elapsed,
          gets.length / elapsed,
          Latencies.ms(gets, 0.5),
          Latencies.ms(gets, 0.99));

      // every change was applied or refused visibly
      assertThat(unexpected).as("answers other than 200 or a 503 JSON error").isEmpty();
      assertThat(applied.get() + refused.get()).isEqualTo(puts.length);
      assertThat(applied.get()).isPositive();
      assertThat(etcdPuts.get()).isPositive();
      assertThat(reads.get()).isPositive();
      // a refusal is counted where operators look
      HttpClient http = HttpClient.newHttpClient();
      String metrics =
          http.send(
                  HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      Matcher m = Pattern.compile("(?m)^kvs_commits_refused_total (\\S+)$").matcher(metrics);
      assertThat(m.find()).as(metrics).isTrue();
      assertThat((long) Double.parseDouble(m.group(1))).isEqualTo(refused.get());
      // the engine was not stalled by the readers: one-value changes stayed fast
      assertThat(Latencies.ms(puts, 0.99)).isLessThan((double) P99_BOUND.toMillis());

      // readers alone do not hold the engine: one client's one-value changes stay fast while
      // many readers poll every status
      long probeEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(3, seconds / 6));
      List<Thread> probeReaders = new ArrayList<>();
      AtomicLong probeReads = new AtomicLong();
      for (int i = 0; i < PROBE_READERS; i++) {
        probeReaders.add(
            new Thread(
                () -> {
                  HttpClient h =
                      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                  try {
                    while (System.nanoTime() < probeEnd) {
                      HttpResponse<String> r =
                          h.send(
                              HttpRequest.newBuilder(URI.create(base + "/scheduler/status"))
                                  .timeout(Duration.ofSeconds(60))
                                  .build(),
                              HttpResponse.BodyHandlers.ofString());
                      if (r.statusCode() != 200) {
                        unexpected.add("GET /scheduler/status: " + r.statusCode() + " " + r.body());
                      }
                      probeReads.incrementAndGet();
                    }
                  } catch (Exception e) {
                    unexpected.add("probe reader: " + e);
                  }
                },
                "load-probe-reader-" + i));
      }
      probeReaders.forEach(Thread::start);
      LongList probe = new LongList();
      HttpClient probeClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      while (System.nanoTime() < probeEnd) {
        String mac = mac(changeCounter.incrementAndGet());
        long t0 = System.nanoTime();
        HttpResponse<String> r =
            probeClient.send(
                HttpRequest.newBuilder(URI.create(base + "/configuration"))
                    .timeout(Duration.ofSeconds(60))
                    .header("Content-Type", "application/yaml")
                    .PUT(
                        HttpRequest.BodyPublishers.ofString(
                            "mockConfig:\n  Interface_list:\n"
                                + "  - name: probe\n    type: TAP\n    enabled: true\n    physAddress: \""
                                + mac
                                + "\"\n"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        probe.add(System.nanoTime() - t0);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        restIntent.put(IF + "probe", mac);
      }
      for (Thread t : probeReaders) {
        t.join(TimeUnit.SECONDS.toMillis(120));
      }
      long[] probes = probe.toArray();
      Arrays.sort(probes);
      System.out.printf(
          "[figure] load probe: %d one-value PUTs, one at a time, while %d readers"
              + " made %d GET /scheduler/status; latency p50 %.1f ms, p99 %.1f ms%n",
          probes.length,
          PROBE_READERS,
          probeReads.get(),
          Latencies.ms(probes, 0.5),
          Latencies.ms(probes, 0.99));
      assertThat(unexpected).isEmpty();
      assertThat(probeReads.get()).isPositive();
      assertThat(Latencies.ms(probes, 0.99)).isLessThan((double) PROBE_P99_BOUND.toMillis());

      // the final state is the last intent of every key, in the southbound
      Map<String, String> intent = new ConcurrentHashMap<>(restIntent);
      intent.putAll(etcdIntent);
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(
              () -> {
                Map<String, Object> desired = agent.northbound().desired();
                for (Map.Entry<String, String> e : intent.entrySet()) {
                  String name = e.getKey().substring(IF.length());
                  assertThat(desired.get(e.getKey()))
                      .as(e.getKey())
                      .isEqualTo(new Interface(name, Interface.Type.TAP, true, e.getValue()));
                  assertThat(agent.scheduler().valueStatus(e.getKey()).state())
                      .as(e.getKey())
                      .isEqualTo(ValueState.CONFIGURED);
                  Interface sb = EtcdTestSupport.sbInterface(mock, name);
                  assertThat(sb).as(name).isNotNull();
                  assertThat(sb.physAddress()).as(name).isEqualTo(e.getValue());
                }
              });
      assertThat(EtcdTestSupport.sbInterfaces(mock)).hasSize(intent.size());
      // and the status readers see it
      JsonNode status =
          JSON.readTree(
              http.send(
                      HttpRequest.newBuilder(URI.create(base + "/scheduler/status")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .body());
      assertThat(status.size()).isGreaterThanOrEqualTo(intent.size());
    }
  }

  static boolean isJsonError(HttpResponse<String> r, String words) {
    try {
      JsonNode e = JSON.readTree(r.body());
      return e.isObject()
          && e.path("Error").asText().contains(words)
          && r.headers().firstValue("Content-Type").orElse("").contains("json");
    } catch (Exception ex) {
      return false;
    }
  }
}
