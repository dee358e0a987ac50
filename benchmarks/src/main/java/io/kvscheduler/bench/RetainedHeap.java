package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * W4: the heap a populated scheduler retains per value. Measures the heap in use after a full
 * collection, builds a scheduler and commits W1's transaction on it ({@code n} interfaces plus the
 * bridge domain, which derives {@code n} bindings: 2N+1 values), and measures the heap again after
 * a full collection with that scheduler still reachable. The difference is everything the scheduler
 * keeps for these values: the values themselves, the graph, and with history on the transaction's
 * record and the graph's revisions.
 *
 * <p>Reports {@code bytes_per_value} = difference ÷ (2N+1), {@code retained_mb} (the difference),
 * {@code heap_mb} (the heap in use at the second measurement, as the other workloads report it),
 * {@code history} ({@code on} or {@code off}: the scheduler builder's {@code recordHistory}) and
 * {@code populate_seconds}. Before the first measurement a small scheduler is built, populated and
 * closed, so that what the engine's classes set up once per JVM is not charged to the values.
 */
final class RetainedHeap {
  private RetainedHeap() {}

  /** Interfaces in the unmeasured scheduler that loads and initialises the engine's classes. */
  private static final int PRIMING_SIZE = 100;

  static Map<String, Object> run(int n, boolean recordHistory) {
    try (KVScheduler priming = MockModel.newScheduler(recordHistory)) {
      MockModel.populateTxn(priming, PRIMING_SIZE).commit();
    }
    long before = usedAfterFullGc();
    Map<String, Object> out = new LinkedHashMap<>();
    try (KVScheduler kvs = MockModel.newScheduler(recordHistory)) {
      long t0 = System.nanoTime();
      MockModel.populateTxn(kvs, n).commit();
      long t1 = System.nanoTime();
      ScaleHarness.checkPopulated(kvs, n);
      long after = usedAfterFullGc(); // kvs is still reachable: it is closed below
      long values = 2L * n + 1;
      out.put("history", recordHistory ? "on" : "off");
      out.put("values", values);
      out.put("bytes_per_value", Math.round((double) (after - before) / values));
      out.put("retained_mb", ScaleHarness.round((after - before) / 1048576.0, 1));
      out.put("heap_mb", Math.round(after / 1048576.0));
      out.put("populate_seconds", ScaleHarness.round((t1 - t0) / 1e9, 3));
    }
    return out;
  }

  /**
   * Heap in use after full collections: two in a row, so that what the first one only made
   * collectable (objects kept by cleaners or reference queues) is gone too.
   */
  private static long usedAfterFullGc() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
