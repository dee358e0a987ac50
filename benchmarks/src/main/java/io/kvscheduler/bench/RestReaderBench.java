package io.kvscheduler.bench;

import io.kvscheduler.agent.internal.AgentMetrics;
import io.kvscheduler.agent.internal.RestServer;
import io.kvscheduler.agent.internal.SchedulerRoutes;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * W7: do reads stall the engine? One-value transactions on the W1 graph of {@code n} interfaces,
 * measured first alone ({@code mean_us_no_reader}), then while a client fetches {@code GET
 * /scheduler/status} (every value, over loopback HTTP from the agent's REST server) in a loop
 * ({@code mean_us}); {@code status_ms} is the reader's mean response time and {@code
 * status_reads} how many answers it read completely during the measured transactions.
 */
final class RestReaderBench {
  private RestReaderBench() {}

  /** Unmeasured one-value transactions before each measured series. */
  static final int DEFAULT_WARMUP = 20_000;

  static Map<String, Object> run(int n, int txns, int warmup, long seed) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (KVScheduler kvs = MockModel.newScheduler()) {
      MockModel.populateTxn(kvs, n).commit();
      System.gc();
      boolean[] enabled = new boolean[n];
      Arrays.fill(enabled, true);
      Random rnd = new Random(seed);
      for (int i = 0; i < warmup; i++) {
        ScaleHarness.toggle(kvs, rnd, enabled);
      }
      RestServer rest = new RestServer("127.0.0.1:0", new ModelRegistry(), noNorthbound());
      SchedulerRoutes.register(rest, kvs, new ModelRegistry(),
          new AgentMetrics(kvs, Clock.systemUTC()));
      try {
        rest.start();
        out.put("txns", txns);
        out.put("warmup", warmup);
        out.put("mean_us_no_reader", ScaleHarness.round(meanNanos(kvs, rnd, enabled, txns) / 1e3,
            1));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        AtomicLong readNanos = new AtomicLong();
        HttpClient http = HttpClient.newHttpClient();
        URI status = URI.create("http://127.0.0.1:" + rest.port() + "/scheduler/status");
        Thread reader = new Thread(() -> {
          while (!stop.get()) {
            long t0 = System.nanoTime();
            try {
              HttpResponse<Void> r = http.send(HttpRequest.newBuilder(status)
                  .timeout(Duration.ofMinutes(5)).GET().build(),
                  HttpResponse.BodyHandlers.discarding());
              if (r.statusCode() != 200) {
                throw new IllegalStateException("GET /scheduler/status: " + r.statusCode());
              }
            } catch (java.io.IOException e) {
              throw new IllegalStateException(e);
            } catch (InterruptedException e) {
              return;
            }
            if (!stop.get()) {
              readNanos.addAndGet(System.nanoTime() - t0);
              reads.incrementAndGet();
            }
          }
        }, "kvs-bench-reader");
        reader.setDaemon(true);
        reader.start();
        double with = meanNanos(kvs, rnd, enabled, txns);
        stop.set(true);
        reader.join(Duration.ofMinutes(5).toMillis());
        out.put("mean_us", ScaleHarness.round(with / 1e3, 1));
        long r = reads.get();
        out.put("status_reads", r);
        out.put("status_ms", r == 0 ? -1 : ScaleHarness.round(readNanos.get() / 1e6 / r, 1));
      } catch (java.io.IOException e) {
        throw new IllegalStateException("W7: cannot start the REST server: " + e.getMessage(), e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("W7 interrupted", e);
      } finally {
        rest.close();
      }
    }
    return out;
  }

  private static double meanNanos(KVScheduler kvs, Random rnd, boolean[] enabled, int txns) {
    long sum = 0;
    for (int i = 0; i < txns; i++) {
      long t0 = System.nanoTime();
      ScaleHarness.toggle(kvs, rnd, enabled);
      sum += System.nanoTime() - t0;
    }
    return (double) sum / txns;
  }

  /** W7 pushes no configuration through REST. */
  private static Northbound noNorthbound() {
    return new Northbound() {
      @Override
      public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("read only"));
      }

      @Override
      public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("read only"));
      }

      @Override
      public Map<String, Object> desired() {
        return Map.of();
      }
    };
  }
}
