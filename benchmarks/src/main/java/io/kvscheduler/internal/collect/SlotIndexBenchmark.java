package io.kvscheduler.internal.collect;

import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.pcollections.TreePMap;

/**
 * {@link SlotIndex} (a sorted base array plus a persistent delta) against the persistent sorted map
 * it replaces ({@code TreePMap<String, Integer>}), for the published snapshot's key index:
 *
 * <ul>
 *   <li>{@code build}: the index of {@code size} sorted keys, as a first resync publishes it;
 *   <li>{@code lookup}: a present key's slot;
 *   <li>{@code change}: one key added and one removed, as a one-value transaction publishes.
 * </ul>
 *
 * <pre>java -cp "$cp" org.openjdk.jmh.Main SlotIndexBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class SlotIndexBenchmark {
  private static final String PREFIX = "config/mock/v1/interfaces/if";
  private static final int QUERIES = 1 << 14;

  @Param({"SlotIndex", "TreePMap"})
  public String impl;

  /** Keys in the index ({@code build} counts per key at this size only). */
  @Param({"100000"})
  public int size;

  private String[] keys;
  private int[] slots;
  private String[] queries;
  private SlotIndex index;
  private TreePMap<String, Integer> tree;
  private int next;

  @Setup
  public void setUp() {
    keys = new String[size];
    slots = new int[size];
    for (int i = 0; i < size; i++) {
      keys[i] = PREFIX + i;
    }
    Arrays.sort(keys);
    for (int i = 0; i < size; i++) {
      slots[i] = i;
    }
    Random rnd = new Random(42);
    queries = new String[QUERIES];
    for (int i = 0; i < QUERIES; i++) {
      queries[i] = PREFIX + rnd.nextInt(size);
    }
    index = SlotIndex.ofSorted(keys.clone(), slots.clone());
    tree = buildTree();
  }

  private TreePMap<String, Integer> buildTree() {
    Map<String, Integer> m = new TreeMap<>();
    for (int i = 0; i < keys.length; i++) {
      m.put(keys[i], slots[i]);
    }
    return TreePMap.from(m);
  }

  @Benchmark
  @OperationsPerInvocation(100_000)
  public Object build() {
    return impl.equals("SlotIndex") ? SlotIndex.ofSorted(keys.clone(), slots.clone()) : buildTree();
  }

  @Benchmark
  @OperationsPerInvocation(QUERIES)
  public long lookup() {
    long sum = 0;
    if (impl.equals("SlotIndex")) {
      for (String q : queries) {
        sum += index.get(q);
      }
    } else {
      for (String q : queries) {
        sum += tree.get(q);
      }
    }
    return sum;
  }

  @Benchmark
  public Object change() {
    String added = "config/mock/v1/interfaces/new" + (next++ & 1023);
    String removed = queries[next & (QUERIES - 1)];
    if (impl.equals("SlotIndex")) {
      SlotIndex i = index.get(added) < 0 ? index.plus(added, size) : index;
      return i.minus(removed);
    }
    return tree.plus(added, size).minus(removed);
  }
}
