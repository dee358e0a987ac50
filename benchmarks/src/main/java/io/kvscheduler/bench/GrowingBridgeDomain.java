package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.bench.MockModel.BridgeDomain;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W5: a bridge domain growing by one member per transaction up to N members, on the mock model. A
 * first transaction (not measured) creates N interfaces; then N measured transactions each set the
 * bridge domain to list one more of them (1, 2, … N members): the first creates the bridge domain,
 * each later one updates it, and its derived values gain one binding. A transaction's time runs
 * from {@code startNBTransaction()} to the return of the blocking {@code commit()}; the bridge
 * domain's new value (a list of i names) is built before, as the client's work.
 *
 * <p>The mock bridge domain's DerivedValues lists a binding for every member, so some cost per
 * member is the descriptor's own; what the engine adds should follow the one added binding, not the
 * number of members.
 *
 * <p>Reports, over the last {@value #WINDOW} transactions (at about N members): {@code txn_ms}
 * (mean), {@code p50_ms}, {@code p99_ms}, {@code max_ms}, {@code engine_cpu_ms} (the engine
 * thread's CPU time per transaction, less sensitive than wall time to other load on the machine; -1
 * when the JVM cannot tell), and the collections in that window ({@code gc_count}, {@code gc_ms});
 * {@code txn_ms_half}, the mean of the {@value #WINDOW} transactions ending at N/2 members (N ≥
 * 200: whether the cost grows with the members); {@code seconds}, all N transactions; {@code
 * ops_per_txn}, the executed operations of the last one ("unrecorded" with history off); {@code
 * history}; {@code heap_mb} at the end. From 1,000 members on, progress (and the heap in use,
 * collected or not) goes to stderr every tenth of the run.
 *
 * <p>With history on, the heap grows with every transaction's record and graph revisions: a run to
 * 10,000 members needs a large heap ({@code heap_mb} of the run to 1,000 members, times 100, as
 * long as every binding gets a new revision per transaction).
 */
final class GrowingBridgeDomain {
  private GrowingBridgeDomain() {}

  /** Transactions the figures are taken over, at the end of the run (and at N/2). */
  static final int WINDOW = 100;

  static Map<String, Object> run(int n, boolean recordHistory) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (KVScheduler kvs = MockModel.newScheduler(recordHistory)) {
      MockModel.populateInterfacesTxn(kvs, n).commit();
      List<String> names = MockModel.ifNames(n);
      int window = Math.min(WINDOW, n);
      long[] ns = new long[n];
      long lastSeq = -1;
      ScaleHarness.GcCounter gc = null;
      ScaleHarness.EngineCpu cpu = null;
      long start = System.nanoTime();
      for (int members = 1; members <= n; members++) {
        if (members == n - window + 1) {
          gc = new ScaleHarness.GcCounter();
          cpu = new ScaleHarness.EngineCpu();
        }
        BridgeDomain bd =
            new BridgeDomain(MockModel.BD_NAME, List.copyOf(names.subList(0, members)));
        long t0 = System.nanoTime();
        lastSeq = kvs.startNBTransaction().setValue(MockModel.BD_KEY, bd).commit();
        ns[members - 1] = System.nanoTime() - t0;
        if (n >= 1000 && members % (n / 10) == 0) {
          Runtime rt = Runtime.getRuntime();
          System.err.printf(
              "kvs-bench: W5 %d/%d members, %.1f s, last txn %.3f ms, heap in use %d MB%n",
              members,
              n,
              (System.nanoTime() - start) / 1e9,
              ns[members - 1] / 1e6,
              (rt.totalMemory() - rt.freeMemory()) >> 20);
        }
      }
      long end = System.nanoTime();
      long engineCpuNs = cpu.elapsedNanos();
      long[] last = Arrays.copyOfRange(ns, n - window, n);
      out.put("history", recordHistory ? "on" : "off");
      out.put("window", window);
      putWindow(out, last);
      out.put(
          "engine_cpu_ms",
          engineCpuNs < 0 ? -1 : ScaleHarness.round(engineCpuNs / 1e6 / window, 3));
      gc.putInto(out);
      if (n >= 2 * WINDOW) {
        out.put(
            "txn_ms_half",
            ScaleHarness.round(mean(Arrays.copyOfRange(ns, n / 2 - WINDOW, n / 2)) / 1e6, 3));
      }
      out.put("seconds", ScaleHarness.round((end - start) / 1e9, 3));
      out.put("ops_per_txn", ScaleHarness.executedOps(kvs, lastSeq));
      ScaleHarness.checkPopulated(kvs, n);
      out.put("heap_mb", ScaleHarness.retainedHeapMb());
    }
    return out;
  }

  /** {@code txn_ms}, {@code p50_ms}, {@code p99_ms}, {@code max_ms} of {@code samples} (ns). */
  static void putWindow(Map<String, Object> out, long[] samples) {
    long[] sorted = samples.clone();
    Arrays.sort(sorted);
    out.put("txn_ms", ScaleHarness.round(mean(sorted) / 1e6, 3));
    out.put("p50_ms", ScaleHarness.round(ScaleHarness.percentile(sorted, 0.50) / 1e6, 3));
    out.put("p99_ms", ScaleHarness.round(ScaleHarness.percentile(sorted, 0.99) / 1e6, 3));
    out.put("max_ms", ScaleHarness.round(sorted[sorted.length - 1] / 1e6, 3));
  }

  private static double mean(long[] samples) {
    double sum = 0;
    for (long x : samples) {
      sum += x;
    }
    return sum / samples.length;
  }
}
