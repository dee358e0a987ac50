package io.kvscheduler.bench;

import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.internal.rest.SchedulerRoutes;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.KVScheduler;
import java.io.IOException;
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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * W7: do reads stall the engine? One-value transactions on the W1 graph of {@code n} interfaces,
 * measured first alone ({@code mean_us_no_reader}), then while a client fetches {@code GET
 * /scheduler/status} (every value, over loopback HTTP from the agent's REST server) in a loop
 * ({@code mean_us}); {@code ratio} is the one over the other, {@code status_ms} the reader's mean
 * response time and {@code status_reads} how many answers it read completely during the measured
 * transactions, after {@link #READER_WARMUP} unmeasured ones ({@code status_warmup_reads}) and a
 * second in which the JIT compiled next to nothing: the reader's code is compiled before the series
 * is measured. Each series also reports the engine thread's CPU time per transaction, the
 * collections and where the process's CPU went (the fields of the series without the reader end in
 * {@code _no_reader}).
 */
final class RestReaderBench {
  private RestReaderBench() {}

  /** Unmeasured one-value transactions before each measured series. */
  static final int DEFAULT_WARMUP = 20_000;

  /** Complete status answers the reader reads before the series with the reader is measured. */
  static final int READER_WARMUP = 5;

  /** The longest the reader's warm-up may take. */
  static final Duration READER_WARMUP_LIMIT = Duration.ofMinutes(2);

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
      RestServer rest = new RestServer("127.0.0.1:0");
      SchedulerRoutes.register(
          rest, kvs, new ModelRegistry(), new AgentMetrics(kvs, Clock.systemUTC()));
      try {
        rest.start();
        out.put("txns", txns);
        out.put("warmup", warmup);
        Map<String, Object> alone = measured(kvs, rnd, enabled, txns);
        out.put("mean_us_no_reader", alone.get("mean_us"));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong warmReads = new AtomicLong();
        AtomicLong measureFrom = new AtomicLong(Long.MAX_VALUE);
        AtomicLong reads = new AtomicLong();
        AtomicLong readNanos = new AtomicLong();
        HttpClient http = HttpClient.newHttpClient();
        URI status = URI.create("http://127.0.0.1:" + rest.port() + "/scheduler/status");
        Thread reader =
            new Thread(
                () -> {
                  while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                      HttpResponse<Void> r =
                          http.send(
                              HttpRequest.newBuilder(status)
                                  .timeout(Duration.ofMinutes(5))
                                  .GET()
                                  .build(),
                              HttpResponse.BodyHandlers.discarding());
                      if (r.statusCode() != 200) {
                        throw new IllegalStateException("GET /scheduler/status: " + r.statusCode());
                      }
                    } catch (IOException e) {
                      throw new IllegalStateException(e);
                    } catch (InterruptedException e) {
                      return;
                    }
                    if (stop.get()) {
                      break;
                    }
                    if (t0 >= measureFrom.get()) {
                      readNanos.addAndGet(System.nanoTime() - t0);
                      reads.incrementAndGet();
                    } else {
                      warmReads.incrementAndGet();
                    }
                  }
                },
                "kvs-bench-reader");
        reader.setDaemon(true);
        reader.start();
        // the reader's first answers compile the server's, Jackson's and the client's code:
        // not while the transactions are measured (the series without the reader is warm too)
        long warmUntil = System.nanoTime() + READER_WARMUP_LIMIT.toNanos();
        while (warmReads.get() < READER_WARMUP
            && System.nanoTime() < warmUntil
            && reader.isAlive()) {
          Thread.sleep(10);
        }
        waitForQuietJit(warmUntil);
        out.put("status_warmup_reads", warmReads.get());
        measureFrom.set(System.nanoTime());
        Map<String, Object> with = measured(kvs, rnd, enabled, txns);
        stop.set(true);
        reader.join(Duration.ofMinutes(5).toMillis());
        out.put("mean_us", with.get("mean_us"));
        out.put(
            "ratio",
            ScaleHarness.round((double) with.get("mean_us") / (double) alone.get("mean_us"), 2));
        long r = reads.get();
        out.put("status_reads", r);
        out.put("status_ms", r == 0 ? -1 : ScaleHarness.round(readNanos.get() / 1e6 / r, 1));
        with.forEach(
            (k, v) -> {
              if (!k.equals("mean_us")) {
                out.put(k, v);
              }
            });
        alone.forEach(
            (k, v) -> {
              if (!k.equals("mean_us")) {
                out.put(k + "_no_reader", v);
              }
            });
      } catch (IOException e) {
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

  /**
   * Waits until the JIT compilers spent at most 20 ms compiling in the last second (or until {@code
   * deadline}, a {@link System#nanoTime()}): what the reader's first answers made hot is compiled
   * before the series is measured.
   */
  private static void waitForQuietJit(long deadline) throws InterruptedException {
    java.lang.management.CompilationMXBean jit =
        java.lang.management.ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
      return;
    }
    long before = jit.getTotalCompilationTime();
    while (System.nanoTime() < deadline) {
      Thread.sleep(1000);
      long now = jit.getTotalCompilationTime();
      if (now - before <= 20) {
        return;
      }
      before = now;
    }
  }

  /**
   * {@code mean_us} of {@code txns} one-value transactions, with what the engine thread and the
   * collector did meanwhile: {@code engine_cpu_mean_us} (the engine thread's CPU time per
   * transaction), {@code gc_count}, {@code gc_ms}, and where the process's CPU went ({@code
   * cpu_all_seconds}, {@code cpu_gc_seconds}, {@code engine_wait_seconds}: runnable without a core;
   * Linux only) and {@code steal_pct}.
   */
  private static Map<String, Object> measured(
      KVScheduler kvs, Random rnd, boolean[] enabled, int txns) {
    Map<String, Object> m = new LinkedHashMap<>();
    ScaleHarness.GcCounter gc = new ScaleHarness.GcCounter();
    ScaleHarness.ThreadCpu threads = new ScaleHarness.ThreadCpu();
    ScaleHarness.StealCounter steal = new ScaleHarness.StealCounter();
    ScaleHarness.EngineCpu engine = new ScaleHarness.EngineCpu();
    double mean = meanNanos(kvs, rnd, enabled, txns);
    long engineNs = engine.elapsedNanos();
    m.put("mean_us", ScaleHarness.round(mean / 1e3, 1));
    m.put("engine_cpu_mean_us", engineNs < 0 ? -1 : ScaleHarness.round(engineNs / 1e3 / txns, 1));
    gc.putInto(m);
    threads.putInto(m);
    steal.putInto(m);
    return m;
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
}
