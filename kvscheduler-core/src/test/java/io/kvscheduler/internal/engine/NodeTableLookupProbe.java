package io.kvscheduler.internal.engine;

import java.util.Arrays;
import java.util.Random;

/**
 * What a lookup of a present key in the node table ({@link NodeTable#get}) costs: {@code java -cp
 * kvscheduler-core/target/classes:kvscheduler-core/target/test-classes
 * io.kvscheduler.internal.engine.NodeTableLookupProbe [SIZE...]} (default 100000 1000000; run with
 * {@code -Xmx4g} for a million keys).
 *
 * <p>The table holds {@code SIZE} interface keys named as the scale harness names them ({@code
 * config/mock/v1/interfaces/if0}, {@code if1}, ...): counter-named keys, whose {@link
 * String#hashCode()} values cluster and so form long linear-probing runs. Each lookup takes the
 * next of 2<sup>20</sup> random keys, each a separate string equal to a stored key (as a
 * transaction's keys are), so the table, the nodes and the keys are read from memory as in a
 * transaction on a large graph. One round looks every query key up once; after {@value #WARMUP}
 * rounds that let the JIT compile the loop, {@value #ROUNDS} measured rounds follow, and the probe
 * prints one JSON object per size with the median and the best round's nanoseconds per lookup.
 *
 * <p>A plain program in the engine's test sources rather than a JMH benchmark: the table is
 * package-private, and only code of the engine's own package can reach it.
 */
public final class NodeTableLookupProbe {
  private static final String PREFIX = "config/mock/v1/interfaces/if";
  private static final int QUERIES = 1 << 20;
  private static final int WARMUP = 20;
  private static final int ROUNDS = 15;

  private NodeTableLookupProbe() {}

  public static void main(String[] args) {
    int[] sizes =
        args.length == 0
            ? new int[] {100_000, 1_000_000}
            : Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
    for (int size : sizes) {
      probe(size);
    }
  }

  private static void probe(int size) {
    NodeTable table = new NodeTable();
    for (int i = 0; i < size; i++) {
      table.add(new Node(PREFIX + i));
    }
    String[] queries = new String[QUERIES];
    Random rnd = new Random(42);
    for (int i = 0; i < queries.length; i++) {
      queries[i] = PREFIX + rnd.nextInt(size);
    }
    long found = 0;
    for (int r = 0; r < WARMUP; r++) {
      found += round(table, queries);
    }
    double[] nsPerLookup = new double[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
      long start = System.nanoTime();
      found += round(table, queries);
      nsPerLookup[r] = (System.nanoTime() - start) / (double) QUERIES;
    }
    if (found != (long) (WARMUP + ROUNDS) * QUERIES) {
      throw new AssertionError("a present key was not found");
    }
    Arrays.sort(nsPerLookup);
    System.out.printf(
        "{\"size\": %d, \"median_ns\": %.2f, \"best_ns\": %.2f}%n",
        size, nsPerLookup[ROUNDS / 2], nsPerLookup[0]);
  }

  /** Looks every query key up once; returns how many were found (the result is used). */
  private static int round(NodeTable table, String[] queries) {
    int found = 0;
    for (String key : queries) {
      if (table.get(key) != null) {
        found++;
      }
    }
    return found;
  }
}
