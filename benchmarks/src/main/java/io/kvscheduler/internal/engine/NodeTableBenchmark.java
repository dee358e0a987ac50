package io.kvscheduler.internal.engine;

import java.util.HashMap;
import java.util.Map;
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

/**
 * {@link NodeTable} against the {@code HashMap<String, Node>} it replaces, on counter-named keys as
 * the scale harness names them ({@code config/mock/v1/interfaces/if0}, ...; their hashes cluster):
 *
 * <ul>
 *   <li>{@code lookup}: a present key, each query a separate string equal to the stored key (as a
 *       transaction's keys are);
 *   <li>{@code build}: {@code size} nodes added to an empty table, with and without the table sized
 *       beforehand ({@code reserve}, what {@link Graph#reserve} does for a first resync).
 * </ul>
 *
 * <pre>java -cp "$cp" org.openjdk.jmh.Main NodeTableBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class NodeTableBenchmark {
  private static final String PREFIX = "config/mock/v1/interfaces/if";
  private static final int QUERIES = 1 << 16;

  @Param({"NodeTable", "HashMap"})
  public String impl;

  /** Nodes in the table ({@code build} counts per node at this size only). */
  @Param({"100000"})
  public int size;

  @Param({"true", "false"})
  public boolean reserve;

  private Node[] nodes;
  private String[] queries;
  private NodeTable table;
  private Map<String, Node> map;

  @Setup
  public void setUp() {
    nodes = new Node[size];
    for (int i = 0; i < size; i++) {
      nodes[i] = new Node(PREFIX + i);
    }
    Random rnd = new Random(42);
    queries = new String[QUERIES];
    for (int i = 0; i < QUERIES; i++) {
      queries[i] = PREFIX + rnd.nextInt(size);
    }
    table = new NodeTable();
    map = new HashMap<>();
    for (Node n : nodes) {
      table.add(n);
      map.put(n.key, n);
    }
  }

  @Benchmark
  @OperationsPerInvocation(QUERIES)
  public int lookup() {
    int found = 0;
    if (impl.equals("NodeTable")) {
      for (String q : queries) {
        if (table.get(q) != null) {
          found++;
        }
      }
    } else {
      for (String q : queries) {
        if (map.get(q) != null) {
          found++;
        }
      }
    }
    return found;
  }

  @Benchmark
  @OperationsPerInvocation(100_000)
  public Object build() {
    if (impl.equals("NodeTable")) {
      NodeTable t = new NodeTable();
      if (reserve) {
        t.reserve(nodes.length);
      }
      for (Node n : nodes) {
        t.add(n);
      }
      return t;
    }
    Map<String, Node> m = reserve ? new HashMap<>(nodes.length * 4 / 3 + 1) : new HashMap<>();
    for (Node n : nodes) {
      m.put(n.key, n);
    }
    return m;
  }
}
