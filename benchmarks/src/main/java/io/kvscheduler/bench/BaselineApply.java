package io.kvscheduler.bench;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KeyValuePair;
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
 *
 * <p>{@link #applyThroughDescriptors} is the same apply through the mock model's descriptors, whose
 * callbacks any engine has to call: W1's second ratio.
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

    return inOrder(values, dependencies, sb);
  }

  /**
   * Kahn's algorithm: calls {@code create} once for each of {@code values} (in their map's order
   * where nothing else decides) whose {@code dependencies} (key to the keys it waits for; none when
   * absent) were all called before it. Returns the number of calls made.
   */
  private static int inOrder(
      Map<String, Object> values, Map<String, List<String>> dependencies, Southbound create) {
    // unapplied-dependency counts, and who waits for whom
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
      create.create(key, values.get(key));
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
   * The same apply through the mock model's descriptors, as any engine must go through them: each
   * key's descriptor found by its key selector, the bridge domain's bindings from its
   * DerivedValues, each value's dependencies from its descriptor's Dependencies (a derived value
   * also waits for its base), and one Create callback per value (they do nothing). Still none of
   * the engine's bookkeeping. Only static-key dependencies are followed (W1 has no other kind).
   *
   * @return the number of Create callbacks made
   */
  static int applyThroughDescriptors(Map<String, Object> nb, List<KVDescriptor<?, ?>> descriptors) {
    Map<String, Object> values = new LinkedHashMap<>(nb);
    Map<String, String> baseOf = new HashMap<>();
    for (Map.Entry<String, Object> e : nb.entrySet()) {
      KVDescriptor<Object, Object> d = descriptorOf(e.getKey(), descriptors);
      if (d.derivedValues().isPresent()) {
        for (KeyValuePair kv : d.derivedValues().get().derive(e.getKey(), e.getValue())) {
          values.put(kv.key(), kv.value());
          baseOf.put(kv.key(), e.getKey());
        }
      }
    }
    Map<String, KVDescriptor<Object, Object>> handlers = new HashMap<>();
    Map<String, List<String>> dependencies = new HashMap<>();
    for (Map.Entry<String, Object> e : values.entrySet()) {
      String key = e.getKey();
      KVDescriptor<Object, Object> d = descriptorOf(key, descriptors);
      handlers.put(key, d);
      List<String> deps = new ArrayList<>();
      String base = baseOf.get(key);
      if (base != null) {
        deps.add(base);
      }
      if (d.dependencies().isPresent()) {
        for (Dependency dep : d.dependencies().get().dependencies(key, e.getValue())) {
          if (dep.key().isEmpty()) {
            throw new IllegalArgumentException(key + ": the baseline follows static keys only");
          }
          deps.add(dep.key());
        }
      }
      if (!deps.isEmpty()) {
        dependencies.put(key, deps);
      }
    }
    return inOrder(
        values,
        dependencies,
        (key, value) -> {
          try {
            handlers.get(key).create().orElseThrow().create(key, value);
          } catch (Exception e) {
            throw new IllegalStateException(key + ": Create failed: " + e, e);
          }
        });
  }

  /** The first of {@code descriptors} whose key selector selects {@code key}. */
  @SuppressWarnings("unchecked")
  private static KVDescriptor<Object, Object> descriptorOf(
      String key, List<KVDescriptor<?, ?>> descriptors) {
    for (KVDescriptor<?, ?> d : descriptors) {
      if (d.keySelector().test(key)) {
        return (KVDescriptor<Object, Object>) d;
      }
    }
    throw new IllegalArgumentException(key + ": no descriptor selects it");
  }

  /** The three mock descriptors the engine runs W1 with. */
  static List<KVDescriptor<?, ?>> w1Descriptors() {
    return List.of(
        MockModel.interfaceDescriptor(),
        MockModel.bridgeDomainDescriptor(),
        MockModel.bindingDescriptor());
  }

  /**
   * Builds W1's values for {@code n} interfaces (not measured, as W1's transaction is built before
   * its commit), then measures their apply ({@code viaDescriptors}: {@link
   * #applyThroughDescriptors}, else {@link #apply} with a no-op southbound): {@code seconds},
   * {@code ops} (2N+1, checked) and the harness's process counters (collections, JIT, page faults,
   * steal, CPU by kind of thread).
   */
  static Map<String, Object> run(int n, boolean viaDescriptors) {
    Map<String, Object> values = w1Values(n);
    Map<String, Object> out = new LinkedHashMap<>();
    ScaleHarness.ProcessCounters counters = new ScaleHarness.ProcessCounters();
    long nanos = timedApply(values, n, viaDescriptors);
    out.put("seconds", ScaleHarness.round(nanos / 1e9, 4));
    out.put("ops", 2 * n + 1);
    out.put("via", viaDescriptors ? "descriptors" : "bare");
    counters.putInto(out);
    return out;
  }

  /**
   * The wall time of one apply of W1's values for {@code n} interfaces with a no-op southbound, in
   * nanoseconds; building the values is not measured.
   */
  static long applyNanos(int n) {
    return timedApply(w1Values(n), n, false);
  }

  private static long timedApply(Map<String, Object> values, int n, boolean viaDescriptors) {
    List<KVDescriptor<?, ?>> descriptors = w1Descriptors();
    long t0 = System.nanoTime();
    int ops =
        viaDescriptors
            ? applyThroughDescriptors(values, descriptors)
            : apply(values, Southbound.noOp());
    long nanos = System.nanoTime() - t0;
    if (ops != 2 * n + 1) {
      throw new IllegalStateException("baseline expected " + (2 * n + 1) + " calls, made " + ops);
    }
    return nanos;
  }
}
