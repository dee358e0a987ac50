package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W6: W1's values (N independent interfaces plus one bridge domain deriving N bindings, each
 * binding depending on its interface) applied in one transaction to a southbound whose every call
 * takes {@value #LATENCY_MS} ms ({@link MockModel.SlowCalls}), by schedulers allowed to run 1, 4,
 * 16 or 64 calls at once ({@code --parallelism}); every descriptor opts in with a {@code
 * maxConcurrency} equal to the scheduler's parallelism.
 *
 * <p>The run at parallelism 1 comes first, in the same JVM, and is the reference of the others. One
 * line per parallelism P: {@code seconds} (wall time of the commit), {@code speedup} (seconds at 1
 * ÷ seconds at P), {@code calls} (southbound calls made), {@code limit_seconds} = calls × latency ÷
 * P + the critical path (two calls: an interface, then its binding), {@code limit_ratio} = seconds
 * ÷ limit_seconds (1 would be the physical limit), {@code peak_concurrency} (most calls seen
 * running at once) and {@code records_identical}: whether the transaction's record lists the same
 * executed operations (operation, key, values, states, errors, flags; not times) in the same order
 * as the run at parallelism 1.
 *
 * <p>With {@code --revert on}, the transaction is committed with revert on failure, by schedulers
 * that run such transactions' calls in parallel too ({@code revertInParallel}); nothing fails, so
 * the records stay those of parallelism 1. Each line then carries {@code "revert": true}.
 */
final class SlowSouthboundApply {
  private SlowSouthboundApply() {}

  static final int LATENCY_MS = 1;

  /** Parallelism levels run when {@code --parallelism} is not given. */
  static final List<Integer> DEFAULT_LEVELS = List.of(1, 4, 16, 64);

  /** Calls on the critical path: an interface, then its binding. */
  static final int CRITICAL_PATH_CALLS = 2;

  static List<Map<String, Object>> run(int n, List<Integer> levels, boolean revert) {
    Duration latency = Duration.ofMillis(LATENCY_MS);
    Run reference = apply(n, 1, latency, revert);
    List<Map<String, Object>> lines = new ArrayList<>();
    for (int p : levels) {
      Run r = p == 1 ? reference : apply(n, p, latency, revert);
      double limit =
          (double) r.calls * latency.toNanos() / p / 1e9
              + CRITICAL_PATH_CALLS * latency.toNanos() / 1e9;
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("parallelism", p);
      line.put("latency_ms", LATENCY_MS);
      if (revert) {
        line.put("revert", true);
      }
      line.put("seconds", ScaleHarness.round(r.seconds, 3));
      line.put("speedup", ScaleHarness.round(reference.seconds / r.seconds, 2));
      line.put("calls", r.calls);
      line.put("ops", r.ops.size());
      line.put("limit_seconds", ScaleHarness.round(limit, 3));
      line.put("limit_ratio", ScaleHarness.round(r.seconds / limit, 2));
      line.put("peak_concurrency", r.peakConcurrency);
      line.put("records_identical", r.ops.equals(reference.ops));
      lines.add(line);
    }
    return lines;
  }

  /** One commit's outcome: wall time, calls, and the executed operations as comparable text. */
  record Run(double seconds, long calls, int peakConcurrency, List<String> ops) {}

  static Run apply(int n, int parallelism, Duration latency, boolean revert) {
    MockModel.SlowCalls sb = new MockModel.SlowCalls(latency);
    try (KVScheduler kvs = MockModel.newSlowScheduler(parallelism, sb, revert)) {
      var txn = MockModel.populateTxn(kvs, n);
      long t0 = System.nanoTime();
      long seq = txn.commit(TxnOptions.builder().revert(revert).build());
      double seconds = (System.nanoTime() - t0) / 1e9;
      ScaleHarness.checkPopulated(kvs, n);
      RecordedTxn rec =
          kvs.recordedTransaction(seq)
              .orElseThrow(
                  () -> new IllegalStateException("W6: transaction " + seq + " unrecorded"));
      System.err.printf(
          "kvs-bench: W6 parallelism %d: %.3f s, %d calls%n", parallelism, seconds, sb.calls());
      return new Run(seconds, sb.calls(), sb.peakConcurrency(), describe(rec.executed()));
    }
  }

  /** What must not differ between parallelism levels: everything of an operation but its times. */
  static List<String> describe(List<RecordedTxnOp> executed) {
    List<String> out = new ArrayList<>(executed.size());
    for (RecordedTxnOp op : executed) {
      out.add(
          op.operation()
              + " "
              + op.key()
              + " "
              + op.prevValue()
              + " -> "
              + op.newValue()
              + " "
              + op.prevState()
              + " -> "
              + op.newState()
              + " "
              + op.prevError()
              + " -> "
              + op.newError()
              + " "
              + op.flags());
    }
    return out;
  }
}
