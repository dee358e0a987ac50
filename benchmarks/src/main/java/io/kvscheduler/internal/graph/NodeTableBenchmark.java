package io.kvscheduler.internal.graph;

import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Lookup of a present key in the graph's node table ({@link NodeTable#get}) holding {@code size}
 * interface keys named as the scale harness names them ({@code config/mock/v1/interfaces/if0},
 * {@code if1}, ...): counter-named keys, whose {@link String#hashCode()} values cluster and so form
 * long linear-probing runs. Each invocation looks up the next of 2^20 random keys, each a separate
 * string equal to a stored key (as a transaction's keys are), so the table, the nodes and the keys
 * are read from memory as in a transaction on a large graph. In the graph's own package: the table
 * is internal.
 *
 * <p>Run (after {@code ./mvnw -B -q install -DskipTests}):
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main NodeTableBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx4g"})
public class NodeTableBenchmark {
  private static final String PREFIX = "config/mock/v1/interfaces/if";

  @Param({"100000", "1000000"})
  public int size;

  private NodeTable table;
  private String[] queries;
  private int next;

  @Setup
  public void fill() {
    table = new NodeTable();
    for (int i = 0; i < size; i++) {
      table.add(new Node(PREFIX + i));
    }
    queries = new String[1 << 20];
    Random rnd = new Random(42);
    for (int i = 0; i < queries.length; i++) {
      queries[i] = PREFIX + rnd.nextInt(size);
    }
  }

  @Benchmark
  public Node lookup() {
    Node n = table.get(queries[next]);
    next = (next + 1) & (queries.length - 1);
    return n;
  }
}
