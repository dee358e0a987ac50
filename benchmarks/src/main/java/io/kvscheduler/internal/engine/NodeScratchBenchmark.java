package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.List;
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
 * A node's scratch fields against the hash map they replace, where they are used on every large
 * transaction: {@link Compression#compress} links each operation to the next one on the same key,
 * through the nodes' scratch fields ({@code scratch}) or a map from key to position ({@code
 * HashMap}). The operations are those of W1: {@code size} CREATEs of distinct keys, each key's
 * operation once.
 *
 * <pre>java -cp "$cp" org.openjdk.jmh.Main NodeScratchBenchmark</pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class NodeScratchBenchmark {
  private static final String PREFIX = "config/mock/v1/interfaces/if";

  @Param({"scratch", "HashMap"})
  public String impl;

  /** Operations ({@code compress} counts per operation at this size only). */
  @Param({"100000"})
  public int size;

  private List<OpRecord> ops;

  @Setup
  public void setUp() {
    ops = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      OpRecord op = new OpRecord();
      op.op = TxnOperation.CREATE;
      op.key = PREFIX + i;
      op.baseKey = op.key;
      op.node = new Node(op.key);
      // a pending create: the kind of operation compression links
      op.prevState = ValueState.NONEXISTENT;
      op.newState = ValueState.PENDING;
      ops.add(op);
    }
  }

  @Benchmark
  @OperationsPerInvocation(100_000)
  public List<OpRecord> compress() {
    return Compression.compress(ops, impl.equals("scratch"));
  }
}
