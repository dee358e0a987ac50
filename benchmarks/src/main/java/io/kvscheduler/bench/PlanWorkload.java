package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W10's plan half: what a plan ({@code Txn.plan}) costs against the simulation pass a commit runs
 * when asked to simulate first, for the same change: {@value #CHANGE} interfaces disabled on the
 * graph of W1 with {@value #GRAPH} interfaces (and their bridge domain and bindings).
 *
 * <p>{@code plan_ms}: the median wall time of {@value #ROUNDS} plans of the change. {@code
 * simulation_ms}: the median, over as many rounds, of a commit of the change with {@code
 * simulation(true)} less the same commit without (each commit undone by the next, unmeasured, so
 * every round starts from the same graph): the simulation pass, its compression and its rollback.
 * {@code plan_ratio} = {@code plan_ms} ÷ {@code simulation_ms} (target: under 2). {@value #WARMUP}
 * unmeasured rounds of each come first.
 */
final class PlanWorkload {
  /** Interfaces in the graph. */
  static final int GRAPH = 100_000;

  /** Interfaces the change disables. */
  static final int CHANGE = 10_000;

  static final int ROUNDS = 7;
  static final int WARMUP = 3;

  private PlanWorkload() {}

  /** The workload at its sizes: {@value #CHANGE} of {@value #GRAPH} interfaces. */
  static Map<String, Object> run() {
    return run(GRAPH, CHANGE);
  }

  /** The workload with {@code change} of {@code graph} interfaces disabled. */
  static Map<String, Object> run(int graph, int change) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (KVScheduler kvs = MockModel.newScheduler(false)) {
      MockModel.populateTxn(kvs, graph).commit();
      List<Double> plans = new ArrayList<>();
      List<Double> simulated = new ArrayList<>();
      List<Double> plain = new ArrayList<>();
      int ops = 0;
      for (int r = 0; r < WARMUP + ROUNDS; r++) {
        long t0 = System.nanoTime();
        Plan plan = change(kvs, graph, change, false).plan();
        double planMs = (System.nanoTime() - t0) / 1e6;
        ops = plan.size();
        double sim = commitMs(kvs, graph, change, true);
        double none = commitMs(kvs, graph, change, false);
        if (r >= WARMUP) {
          plans.add(planMs);
          simulated.add(sim);
          plain.add(none);
        }
      }
      double planMs = median(plans);
      List<Double> diffs = new ArrayList<>();
      for (int i = 0; i < simulated.size(); i++) {
        diffs.add(simulated.get(i) - plain.get(i));
      }
      double simulationMs = median(diffs);
      out.put("plan_graph", graph);
      out.put("plan_change", change);
      out.put("plan_ops", ops);
      out.put("plan_ms", ScaleHarness.round(planMs, 2));
      out.put("simulation_ms", ScaleHarness.round(simulationMs, 2));
      out.put("commit_ms", ScaleHarness.round(median(plain), 2));
      out.put("commit_simulated_ms", ScaleHarness.round(median(simulated), 2));
      out.put(
          "plan_ratio", simulationMs > 0 ? ScaleHarness.round(planMs / simulationMs, 2) : "n/a");
    }
    return out;
  }

  /** The change ({@code undo}: its reverse, every interface enabled again) as a transaction. */
  private static Txn change(KVScheduler kvs, int graph, int change, boolean undo) {
    Txn txn = kvs.startNBTransaction();
    for (int i = 0; i < change; i++) {
      int k = i * (graph / change); // spread over the graph
      txn.setValue(MockModel.ifKey(k), MockModel.iface(k, undo));
    }
    return txn;
  }

  /** The wall time of committing the change, in ms; then the change undone (unmeasured). */
  private static double commitMs(KVScheduler kvs, int graph, int change, boolean simulation) {
    Txn txn = change(kvs, graph, change, false);
    TxnOptions options = TxnOptions.builder().simulation(simulation).build();
    long t0 = System.nanoTime();
    txn.commit(options);
    double ms = (System.nanoTime() - t0) / 1e6;
    change(kvs, graph, change, true).commit();
    return ms;
  }

  private static double median(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
