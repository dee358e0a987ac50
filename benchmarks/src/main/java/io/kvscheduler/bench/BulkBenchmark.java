package io.kvscheduler.bench;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engine's loops in short ranges ({@code Bulk}) on and off, where they matter: in a fresh JVM
 * (a first resync runs the loops once, before the JIT has compiled them). Each fork is a fresh JVM
 * that runs W3 (a full resync of 100,000 interfaces and a bridge domain) once; "off" gives a range
 * larger than any transaction, so every loop runs inside one call.
 *
 * <pre>java -Xmx8g -cp "$cp" org.openjdk.jmh.Main BulkBenchmark</pre>
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 0)
@Measurement(iterations = 1)
public class BulkBenchmark {
  private static final int N = 100_000;

  @Benchmark
  @Fork(value = 7, jvmArgsAppend = "-Xmx8g")
  public Map<String, Object> resyncBulkOn() {
    return ScaleHarness.w3(N);
  }

  @Benchmark
  @Fork(
      value = 7,
      jvmArgsAppend = {"-Xmx8g", "-Dkvs.engine.bulkRange=1073741824"})
  public Map<String, Object> resyncBulkOff() {
    return ScaleHarness.w3(N);
  }
}
