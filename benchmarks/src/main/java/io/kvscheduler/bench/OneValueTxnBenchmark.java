package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One-value update transaction on a pre-populated graph: the graph holds {@code size} interfaces
 * plus one bridge domain deriving {@code size} bindings (the W1 graph of {@link ScaleHarness},
 * 2·size+1 nodes); each invocation commits one NB transaction that toggles {@code enabled} of a
 * random interface (fixed seed) and waits for it. The target (a one-value change costs the same
 * whatever the size of the graph): the score at 100000 is about the score at 1000.
 *
 * <p>Run (from the repository root, after {@code ./mvnw -B -q install -DskipTests}, which also
 * generates {@code benchmarks/target/classes/META-INF/BenchmarkList} and copies the dependencies to
 * {@code benchmarks/target/lib}):
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' org.openjdk.jmh.Main OneValueTxnBenchmark
 * </pre>
 *
 * Add e.g. {@code -p size=1000} to run one size, {@code -f 1 -wi 2 -i 3} for a shorter run, or
 * {@code -prof gc} for allocation rates.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xmx4g"})
public class OneValueTxnBenchmark {

  @Param({"1000", "100000"})
  public int size;

  private KVScheduler kvs;
  private boolean[] enabled;
  private Random rnd;

  @Setup(Level.Trial)
  public void populate() {
    kvs = MockModel.newScheduler();
    // Same graph as W1, built in two transactions (interfaces, then the bridge domain, as W2's
    // "--populate split" does): no binding is ever PENDING while the graph is built.
    MockModel.populateInterfacesTxn(kvs, size).commit();
    MockModel.populateBridgeDomainTxn(kvs, size).commit();
    enabled = new boolean[size];
    Arrays.fill(enabled, true);
    rnd = new Random(42);
  }

  @TearDown(Level.Trial)
  public void close() {
    kvs.close();
  }

  /** Returns the sequence number so that JMH consumes it. */
  @Benchmark
  public long toggleOneInterface() {
    int i = rnd.nextInt(size);
    enabled[i] = !enabled[i];
    return kvs.startNBTransaction()
        .setValue(MockModel.ifKey(i), MockModel.iface(i, enabled[i]))
        .commit();
  }
}
