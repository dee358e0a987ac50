package io.kvscheduler.internal.collect;

/**
 * How the engine loops over every value of a large transaction: in short ranges, each range one
 * call of a method of its own.
 *
 * <p>Why: HotSpot compiles a method after a few hundred calls, but a loop that runs inside a single
 * call only once its back-edge count passes a threshold (tens of thousands, raised further while
 * the compiler threads are busy, as they are in a fresh JVM). A loop over 100,000 values that runs
 * once, as in a first resync, would run mostly interpreted; split into ranges of {@link #RANGE}
 * values, its body is compiled after a few thousand. The outer loop, which stays interpreted, makes
 * one call per range.
 *
 * <p>Kept because of benchmark W3 (a full resync of 100,000 values, {@code bin/kvs-bench W3 --n
 * 100000}, fresh JVMs alternating, 11 runs each): a median of 1.04 s with the ranges, 1.25 s
 * without (+20%). W1 and W2 changed by less than 10%.
 */
public final class Bulk {
  private Bulk() {}

  /**
   * Values per range: 16, or the system property {@code kvs.engine.bulkRange} (read once, for
   * {@code BulkBenchmark}'s "off" variant, which gives a range larger than any transaction).
   */
  public static final int RANGE = Math.max(1, Integer.getInteger("kvs.engine.bulkRange", 16));

  /** End of the range starting at {@code from} of a loop over {@code size} values. */
  public static int end(int from, int size) {
    return (int) Math.min(size, (long) from + RANGE);
  }
}
