package io.kvscheduler.bench;

import io.kvscheduler.agent.Probe;
import io.kvscheduler.agent.internal.confirm.CommitConfirmer;
import io.kvscheduler.agent.internal.confirm.ProbeRunner;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ValueState;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * W10's {@code rollback_ms}: a confirmed commit changing N values (of the REST source, through the
 * agent's orchestrator and its confirmed commits) whose probe fails; measured from the moment the
 * probe reports its failure to the rollback's transaction finished, every value back in the
 * southbound (a map) and CONFIGURED as before. One unmeasured commit and rollback first (the JIT).
 */
final class ConfirmedRollback {
  private static final String PREFIX = "config/bench/v1/values/";

  private ConfirmedRollback() {}

  static Map<String, Object> run(int n) {
    try {
      return measure(n);
    } catch (Exception e) {
      throw new IllegalStateException("W10: " + e, e);
    }
  }

  private static Map<String, Object> measure(int n) throws Exception {
    Map<String, String> southbound = new ConcurrentHashMap<>();
    ExecutorService probes = Executors.newSingleThreadExecutor();
    try (KVScheduler kvs =
        KVScheduler.builder().printTxnSummary(false).threadName(MockModel.ENGINE_THREAD).build()) {
      kvs.registerDescriptors(
          KVDescriptor.builder("value", String.class)
              .nbKeyPrefix(PREFIX)
              .create(
                  (key, v) -> {
                    southbound.put(key, v);
                    return null;
                  })
              .update(
                  (key, before, after, meta) -> {
                    southbound.put(key, after);
                    return null;
                  })
              .delete((key, v, meta) -> southbound.remove(key))
              .build());
      Orchestrator nb = new Orchestrator(kvs);
      Map<String, Object> before = values(n, "before-");
      nb.resync("rest", before).get();

      AtomicLong failedAt = new AtomicLong();
      AtomicReference<CompletableFuture<CompletableFuture<Long>>> rollback =
          new AtomicReference<>();
      CommitConfirmer confirmer =
          new CommitConfirmer(
              nb,
              Clock.systemUTC(),
              (delay, task) -> () -> {}, // the deadline never comes: the probe decides
              List.of(Probe.command("ping-gw", List.of("ping", "10.0.2.1"), null, null)),
              probe -> {
                failedAt.set(System.nanoTime());
                return new ProbeRunner.Outcome(false, "exit 1: 100% packet loss");
              },
              probes,
              List.of(
                  new CommitConfirmer.Listener() {
                    @Override
                    public void rolledBack(
                        ConfirmedCommits.Pending p, String d, CompletableFuture<Long> f) {
                      rollback.get().complete(f);
                    }
                  }));
      double commitMs = 0;
      double rollbackMs = 0;
      for (int round = 0; round < 2; round++) { // the first is not measured: the JIT
        rollback.set(new CompletableFuture<>());
        long t0 = System.nanoTime();
        confirmer
            .commit("rest", values(n, "after-" + round + "-"), false, Duration.ofMinutes(1))
            .get();
        commitMs = (System.nanoTime() - t0) / 1e6;
        rollback.get().get(60, TimeUnit.SECONDS).get(60, TimeUnit.SECONDS);
        rollbackMs = (System.nanoTime() - failedAt.get()) / 1e6;
        check(kvs, southbound, before);
      }
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("values", n);
      out.put("commit_ms", Math.round(commitMs * 100) / 100.0);
      out.put("rollback_ms", Math.round(rollbackMs * 100) / 100.0);
      return out;
    } finally {
      probes.shutdownNow();
    }
  }

  private static Map<String, Object> values(int n, String prefix) {
    Map<String, Object> out = new HashMap<>();
    for (int i = 0; i < n; i++) {
      out.put(PREFIX + i, prefix + i);
    }
    return out;
  }

  /** Every value back as before and CONFIGURED, or an exception. */
  private static void check(
      KVScheduler kvs, Map<String, String> southbound, Map<String, Object> before) {
    if (!southbound.equals(before)) {
      throw new IllegalStateException("the southbound was not restored");
    }
    for (String key : before.keySet()) {
      if (kvs.valueStatus(key).state() != ValueState.CONFIGURED) {
        throw new IllegalStateException(key + " is " + kvs.valueStatus(key).state());
      }
    }
  }
}
