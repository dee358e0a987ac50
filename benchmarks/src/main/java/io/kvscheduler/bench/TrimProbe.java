package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.testkit.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the history's once-a-minute trim costs the transaction that triggers it: {@code java -cp
 * 'benchmarks/target/classes:benchmarks/target/lib/*' io.kvscheduler.bench.TrimProbe N [PASSES]}.
 *
 * <p>Builds the W1 graph of N interfaces on a scheduler with a manual clock (history age limit 10
 * minutes, no permanent period), commits 20,000 one-value transactions, then PASSES times (default
 * 5): moves the clock 61 s on, commits one transaction (it runs the trims), commits another (no
 * trim). Prints one JSON object per pass with both times ({@code trim_txn_ms}, {@code
 * next_txn_ms}). Nothing is old enough to be dropped, so the figure is what a trim pass costs by
 * itself.
 */
public final class TrimProbe {
  private TrimProbe() {}

  public static void main(String[] args) {
    int n = Integer.parseInt(args[0]);
    int passes = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    ManualClock clock = new ManualClock(Instant.parse("2026-01-01T00:00:00Z"), Duration.ZERO);
    try (KVScheduler kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .threadName(MockModel.ENGINE_THREAD)
            .clock(clock)
            .permanentHistoryPeriod(Duration.ZERO)
            .historyAgeLimit(Duration.ofMinutes(10))
            .build()) {
      kvs.registerDescriptors(
          MockModel.interfaceDescriptor(),
          MockModel.bridgeDomainDescriptor(),
          MockModel.bindingDescriptor());
      MockModel.populateTxn(kvs, n).commit();
      for (int i = 0; i < 20_000; i++) {
        toggle(kvs, i % n, i % 2 == 0);
      }
      for (int pass = 1; pass <= passes; pass++) {
        clock.advance(Duration.ofSeconds(61));
        long t0 = System.nanoTime();
        toggle(kvs, pass % n, pass % 2 == 0);
        long t1 = System.nanoTime();
        toggle(kvs, (pass + 1) % n, pass % 2 == 1);
        long t2 = System.nanoTime();
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("probe", "trim");
        line.put("n", n);
        line.put("pass", pass);
        line.put("trim_txn_ms", ScaleHarness.round((t1 - t0) / 1e6, 2));
        line.put("next_txn_ms", ScaleHarness.round((t2 - t1) / 1e6, 3));
        line.put("java", System.getProperty("java.version"));
        System.out.println(ScaleHarness.toJson(line));
      }
    }
  }

  private static void toggle(KVScheduler kvs, int i, boolean enabled) {
    kvs.startNBTransaction().setValue(MockModel.ifKey(i), MockModel.iface(i, enabled)).commit();
  }
}
