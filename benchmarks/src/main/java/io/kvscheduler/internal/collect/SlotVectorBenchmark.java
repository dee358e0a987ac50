package io.kvscheduler.internal.collect;

import java.util.Arrays;
import java.util.Random;
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
import org.pcollections.TreePVector;

/**
 * {@link SlotVector} (a 32-way persistent trie) against the persistent vector of the library the
 * engine already uses ({@code TreePVector}), for the published snapshot's views by slot:
 *
 * <ul>
 *   <li>{@code build}: the vector of {@code size} views, as a first resync publishes it;
 *   <li>{@code get}: a random slot's view, as a reader answers a key;
 *   <li>{@code set}: one slot's view changed, as a one-value transaction publishes.
 * </ul>
 *
 * <pre>java -cp "$cp" org.openjdk.jmh.Main SlotVectorBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class SlotVectorBenchmark {
  private static final int QUERIES = 1 << 14;

  @Param({"SlotVector", "TreePVector"})
  public String impl;

  /** Views in the vector ({@code build} counts per view at this size only). */
  @Param({"100000"})
  public int size;

  private Object[] views;
  private int[] queries;
  private SlotVector<Object> vector;
  private TreePVector<Object> tree;
  private int next;

  @Setup
  public void setUp() {
    views = new Object[size];
    for (int i = 0; i < size; i++) {
      views[i] = "view" + i;
    }
    Random rnd = new Random(42);
    queries = new int[QUERIES];
    for (int i = 0; i < QUERIES; i++) {
      queries[i] = rnd.nextInt(size);
    }
    vector = SlotVector.of(views, size);
    tree = TreePVector.from(Arrays.asList(views));
  }

  @Benchmark
  @OperationsPerInvocation(100_000)
  public Object build() {
    return impl.equals("SlotVector")
        ? SlotVector.of(views, size)
        : TreePVector.from(Arrays.asList(views));
  }

  @Benchmark
  @OperationsPerInvocation(QUERIES)
  public int get() {
    int h = 0;
    if (impl.equals("SlotVector")) {
      for (int q : queries) {
        h += vector.get(q).hashCode();
      }
    } else {
      for (int q : queries) {
        h += tree.get(q).hashCode();
      }
    }
    return h;
  }

  @Benchmark
  public Object set() {
    int slot = queries[next++ & (QUERIES - 1)];
    return impl.equals("SlotVector") ? vector.set(slot, "changed") : tree.with(slot, "changed");
  }
}
