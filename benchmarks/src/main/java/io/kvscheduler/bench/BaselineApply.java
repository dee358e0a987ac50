package io.kvscheduler.bench;

import io.kvscheduler.bench.MockModel.Binding;
import io.kvscheduler.bench.MockModel.BridgeDomain;
import io.kvscheduler.bench.MockModel.Interface;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bare baseline beside W1: the same values applied in dependency order with nothing but hash
 * maps and Kahn's algorithm, no engine. It is the floor a transaction engine can reach in this
 * harness, so W1's {@code seconds / baseline_seconds} is the engine's overhead as a ratio.
 *
 * <p>What it does, in one pass and without any of the engine's bookkeeping (no value states, no
 * records, no history, no revert): takes the NB values as a map of key to value, derives one
 * binding per interface listed by a bridge domain (the mock model's derived values), builds the
 * dependencies (a binding waits for its interface and for the bridge domain it was derived from),
 * then repeatedly applies a value whose dependencies are all applied, calling the southbound once
 * per value. A value whose dependency is missing is never applied (the engine would leave it
 * PENDING).
 */
final class BaselineApply {
  private BaselineApply() {}

  /** The southbound as the baseline sees it: one Create per value. */
  @FunctionalInterface
  interface Southbound {
    void create(String key, Object value);

    /** Does nothing, as the mock model's descriptors do. */
    static Southbound noOp() {
      return (key, value) -> {};
    }
  }

  /**
   * The NB values of W1 in the order its transaction sets them: {@code n} interfaces (enabled),
   * then the bridge domain listing them all.
   */
  static Map<String, Object> w1Values(int n) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      values.put(MockModel.ifKey(i), MockModel.iface(i, true));
    }
    values.put(MockModel.BD_KEY, new BridgeDomain(MockModel.BD_NAME, MockModel.ifNames(n)));
    return values;
  }

  /**
   * Applies {@code nb} and the values derived from it in dependency order (Kahn's algorithm),
   * calling {@code sb} once per applied value.
   *
   * @return the number of southbound calls made
   */
  static int apply(Map<String, Object> nb, Southbound sb) {
    Map<String, Object> values = new LinkedHashMap<>(nb);
    Map<String, List<String>> dependencies = new HashMap<>();
    for (Map.Entry<String, Object> e : nb.entrySet()) {
      if (e.getValue() instanceof BridgeDomain bd) {
        for (String iface : bd.interfaces()) {
          String key = MockModel.bindingKey(bd.name(), iface);
          values.put(key, new Binding(bd.name(), iface));
          dependencies.put(key, List.of(e.getKey(), MockModel.IF_PREFIX + iface));
        }
      } else if (!(e.getValue() instanceof Interface)) {
        throw new IllegalArgumentException(
            e.getKey() + ": not a mock interface or bridge domain: " + e.getValue());
      }
    }

    // Kahn's algorithm: unapplied-dependency counts, and who waits for whom
    Map<String, Integer> waitingFor = new HashMap<>();
    Map<String, List<String>> dependents = new HashMap<>();
    for (Map.Entry<String, List<String>> e : dependencies.entrySet()) {
      waitingFor.put(e.getKey(), e.getValue().size());
      for (String dep : e.getValue()) {
        dependents.computeIfAbsent(dep, k -> new ArrayList<>()).add(e.getKey());
      }
    }
    ArrayDeque<String> ready = new ArrayDeque<>();
    for (String key : values.keySet()) {
      if (!waitingFor.containsKey(key)) {
        ready.add(key);
      }
    }
    int calls = 0;
    while (!ready.isEmpty()) {
      String key = ready.poll();
      sb.create(key, values.get(key));
      calls++;
      for (String dependent : dependents.getOrDefault(key, List.of())) {
        if (waitingFor.merge(dependent, -1, Integer::sum) == 0) {
          ready.add(dependent);
        }
      }
    }
    return calls;
  }

  /**
   * Builds W1's values for {@code n} interfaces (not measured, as W1's transaction is built before
   * its commit), then measures their apply with a no-op southbound: {@code seconds}, {@code ops}
   * (2N+1, checked) and the harness's process counters (collections, JIT, page faults, steal, CPU
   * by kind of thread).
   */
  static Map<String, Object> run(int n) {
    Map<String, Object> values = w1Values(n);
    Map<String, Object> out = new LinkedHashMap<>();
    ScaleHarness.ProcessCounters counters = new ScaleHarness.ProcessCounters();
    long nanos = timedApply(values, n);
    out.put("seconds", ScaleHarness.round(nanos / 1e9, 4));
    out.put("ops", 2 * n + 1);
    counters.putInto(out);
    return out;
  }

  /**
   * The wall time of one apply of W1's values for {@code n} interfaces with a no-op southbound, in
   * nanoseconds; building the values is not measured.
   */
  static long applyNanos(int n) {
    return timedApply(w1Values(n), n);
  }

  private static long timedApply(Map<String, Object> values, int n) {
    long t0 = System.nanoTime();
    int ops = apply(values, Southbound.noOp());
    long nanos = System.nanoTime() - t0;
    if (ops != 2 * n + 1) {
      throw new IllegalStateException("baseline expected " + (2 * n + 1) + " calls, made " + ops);
    }
    return nanos;
  }
}
