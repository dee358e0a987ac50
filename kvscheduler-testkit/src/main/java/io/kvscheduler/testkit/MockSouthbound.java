package io.kvscheduler.testkit;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.ValueOrigin;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * An in-memory southbound for tests and experiments. It stores key → (value, metadata, origin),
 * records every descriptor call in order, checks that the scheduler never makes an inconsistent
 * call (Create of an existing key, Update/Delete of a missing key or with another old value), and
 * fails calls on request ({@link #planError}).
 *
 * <p>Calls may take time ({@link #latency}, or per descriptor {@link
 * MockDescriptorBuilder#latency}) and may come from several threads at once. The southbound then
 * also records as inconsistent: two calls overlapping in time for the same key, or for a base value
 * and a value derived from it (values derived from one base may overlap each other); more calls of
 * one descriptor running at once than its {@code maxConcurrency}; a Create or Update started while
 * a value it depends on is absent (a static key counts only when a descriptor of this southbound
 * selects it; an any-of dependency needs one stored target). A value is stored, updated or removed
 * when its call ends. {@link #peakConcurrency()} tells the highest number of calls seen running at
 * once.
 *
 * <p>Descriptors operating on it are built with {@link #descriptor(String, Class)}. Thread-safe:
 * the state is guarded by the southbound's lock, held for the bookkeeping of a call but not during
 * its latency, so tests may read it while the engine runs.
 */
public final class MockSouthbound {

  /** One stored value. */
  public record Entry(
      String key, Object value, Object metadata, ValueOrigin origin, boolean derived) {}

  /** Kinds of recorded calls. */
  public enum CallKind {
    CREATE,
    UPDATE,
    DELETE,
    RETRIEVE
  }

  /**
   * One recorded call.
   *
   * @param kind the operation
   * @param key the key (the descriptor name for RETRIEVE)
   * @param value new value (CREATE/UPDATE) or deleted value (DELETE); null for RETRIEVE
   * @param correlate the correlation input of a RETRIEVE, empty otherwise
   * @param error the planned error the call failed with, or null
   */
  public record Call(
      CallKind kind,
      String key,
      Object value,
      List<KVWithMetadata<Object, Object>> correlate,
      Throwable error) {
    /** {@code "CREATE key"}, {@code "RETRIEVE descriptor"}, ... with {@code " ✗"} for failures. */
    @Override
    public String toString() {
      return kind + " " + key + (error != null ? " ✗" : "");
    }
  }

  private record Planned(Throwable error, Runnable after) {}

  private final TreeMap<String, Entry> values = new TreeMap<>();
  private final List<Call> calls = new ArrayList<>();
  private final List<String> inconsistencies = new ArrayList<>();
  private final Map<String, Deque<Planned>> planned = new HashMap<>();
  private final Map<String, Deque<RuntimeException>> plannedRetrieve = new HashMap<>();
  private final Map<String, DescriptorInfo> descriptors = new HashMap<>();
  private final Map<String, String> baseOf = new HashMap<>();
  private final Map<String, List<String>> runningByBase = new HashMap<>();
  private final Map<String, Integer> runningPerDescriptor = new HashMap<>();
  private final Map<String, Integer> peakPerDescriptor = new HashMap<>();
  private Duration latency = Duration.ZERO;
  private int running;
  private boolean checkDependencies;
  private int peak;

  /** Starts a descriptor whose CRUD and Retrieve operate on this southbound. */
  public <V> MockDescriptorBuilder<V> descriptor(String name, Class<V> valueType) {
    return new MockDescriptorBuilder<>(this, name, valueType);
  }

  /**
   * Makes the next CRUD call for {@code key} fail with {@code error} ({@code null} just consumes
   * one call), then runs {@code after} (e.g. to fake what a failure left in the southbound).
   */
  public synchronized void planError(String key, Throwable error, Runnable after) {
    planned.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(new Planned(error, after));
  }

  /** Makes the next Retrieve of descriptor {@code descriptor} fail with {@code error}. */
  public synchronized void planRetrieveError(String descriptor, RuntimeException error) {
    plannedRetrieve.computeIfAbsent(descriptor, k -> new ArrayDeque<>()).addLast(error);
  }

  /** Same as {@link #planError(String, Throwable, Runnable)} without a callback. */
  public void planError(String key, Throwable error) {
    planError(key, error, null);
  }

  /** Puts a value into the southbound directly (no call is recorded). */
  public synchronized void setValue(
      String key, Object value, Object metadata, ValueOrigin origin, boolean derived) {
    if (value == null) {
      values.remove(key);
    } else {
      values.put(key, new Entry(key, value, metadata, origin, derived));
    }
  }

  /** The stored value of {@code key}. */
  public synchronized Optional<Entry> get(String key) {
    return Optional.ofNullable(values.get(key));
  }

  /** Every stored value, sorted by key. */
  public synchronized Map<String, Entry> values() {
    return Collections.unmodifiableMap(new TreeMap<>(values));
  }

  /** Stored keys, sorted. */
  public synchronized List<String> keys() {
    return List.copyOf(values.keySet());
  }

  /** Every call so far, in order. */
  public synchronized List<Call> calls() {
    return List.copyOf(calls);
  }

  /** The calls as text ({@code "CREATE key"}, ...), in order. */
  public synchronized List<String> callLog() {
    List<String> out = new ArrayList<>(calls.size());
    for (Call c : calls) {
      out.add(c.toString());
    }
    return out;
  }

  /** Forgets the recorded calls. */
  public synchronized void clearCalls() {
    calls.clear();
  }

  /** Inconsistent calls seen so far (empty when the scheduler behaved). */
  public synchronized List<String> inconsistencies() {
    return List.copyOf(inconsistencies);
  }

  /** Forgets everything: values, calls, planned errors, inconsistencies, peak concurrency. */
  public synchronized void reset() {
    values.clear();
    calls.clear();
    inconsistencies.clear();
    planned.clear();
    plannedRetrieve.clear();
    peak = 0;
    peakPerDescriptor.clear();
  }

  /**
   * Makes every call (Create, Update, Delete, Retrieve) take {@code latency}: a real sleep of the
   * calling thread, outside the southbound's lock, so that calls made by several threads overlap as
   * calls to a slow real southbound would. A descriptor's own latency ({@link
   * MockDescriptorBuilder#latency}) takes precedence. Zero (the default) means no sleep.
   */
  public synchronized MockSouthbound latency(Duration latency) {
    this.latency = requireNonNegative(latency, "latency");
    return this;
  }

  /**
   * Makes Create and Update check that every value the call depends on is stored (off by default).
   * The check asks the descriptor's Dependencies callback once more per call. A dependency cycle is
   * created member after member, so its members are reported: use it without cycles.
   */
  public synchronized MockSouthbound checkDependencies(boolean check) {
    this.checkDependencies = check;
    return this;
  }

  synchronized boolean checksDependencies() {
    return checkDependencies;
  }

  /** The highest number of calls seen running at the same time, over all descriptors. */
  public synchronized int peakConcurrency() {
    return peak;
  }

  /** The highest number of calls of {@code descriptor} seen running at the same time. */
  public synchronized int peakConcurrency(String descriptor) {
    return peakPerDescriptor.getOrDefault(descriptor, 0);
  }

  /** Calls running now (for tests that need calls to overlap). */
  synchronized int running() {
    return running;
  }

  // ----------------------------------------------------------- used by mock descriptors

  /** What the southbound knows of a descriptor built on it. */
  private record DescriptorInfo(KeySelector selector, int maxConcurrency, Duration latency) {}

  synchronized void register(
      String descriptor, KeySelector selector, int maxConcurrency, Duration latency) {
    descriptors.put(descriptor, new DescriptorInfo(selector, maxConcurrency, latency));
  }

  /** Notes that {@code derivedKeys} are derived from {@code baseKey} (for the overlap check). */
  synchronized void noteDerived(String baseKey, List<String> derivedKeys) {
    for (String k : derivedKeys) {
      if (!k.equals(baseKey)) {
        baseOf.put(k, baseKey);
      }
    }
  }

  Object create(
      String descriptor,
      String key,
      Object value,
      Supplier<Object> metadata,
      boolean derived,
      List<Dependency> deps)
      throws Exception {
    Duration d = begin(descriptor, CallKind.CREATE, key, deps);
    InterruptedException cut = null;
    try {
      pause(d);
      return finishCreate(key, value, metadata, derived);
    } catch (InterruptedException e) {
      cut = e;
      throw e;
    } finally {
      end(descriptor, key, CallKind.CREATE, value, cut);
    }
  }

  void update(
      String descriptor,
      String key,
      Object oldValue,
      Object newValue,
      Object metadata,
      boolean derived,
      List<Dependency> deps)
      throws Exception {
    Duration d = begin(descriptor, CallKind.UPDATE, key, deps);
    InterruptedException cut = null;
    try {
      pause(d);
      finishUpdate(key, oldValue, newValue, metadata, derived);
    } catch (InterruptedException e) {
      cut = e;
      throw e;
    } finally {
      end(descriptor, key, CallKind.UPDATE, newValue, cut);
    }
  }

  void delete(String descriptor, String key, Object value) throws Exception {
    Duration d = begin(descriptor, CallKind.DELETE, key, List.of());
    InterruptedException cut = null;
    try {
      pause(d);
      finishDelete(key, value);
    } catch (InterruptedException e) {
      cut = e;
      throw e;
    } finally {
      end(descriptor, key, CallKind.DELETE, value, cut);
    }
  }

  List<Entry> retrieve(
      String descriptor, KeySelector selector, List<KVWithMetadata<Object, Object>> correlate)
      throws InterruptedException {
    Duration d = begin(descriptor, CallKind.RETRIEVE, null, List.of());
    InterruptedException cut = null;
    try {
      pause(d);
      return finishRetrieve(descriptor, selector, correlate);
    } catch (InterruptedException e) {
      cut = e;
      throw e;
    } finally {
      end(descriptor, descriptor, CallKind.RETRIEVE, null, cut);
    }
  }

  /**
   * Starts a call: counts it, checks it against the calls running and, for Create/Update, that
   * every dependency the southbound can see is stored. Returns the latency the call takes.
   */
  private synchronized Duration begin(
      String descriptor, CallKind kind, String key, List<Dependency> deps) {
    DescriptorInfo info = descriptors.get(descriptor);
    int limit = info == null ? 1 : info.maxConcurrency();
    int mine = runningPerDescriptor.merge(descriptor, 1, Integer::sum);
    running++;
    peak = Math.max(peak, running);
    peakPerDescriptor.merge(descriptor, mine, Math::max);
    String what = key == null ? kind + " of descriptor " + descriptor : kind + " of " + key;
    if (mine > limit) {
      inconsistencies.add(
          what
              + " while "
              + (mine - 1)
              + " other call(s) of descriptor "
              + descriptor
              + " run (maxConcurrency "
              + limit
              + ")");
    }
    if (key != null) {
      String group = baseOfKey(key);
      List<String> others = runningByBase.computeIfAbsent(group, g -> new ArrayList<>());
      for (String other : others) {
        String otherKey = other.substring(other.indexOf(" of ") + 4);
        if (otherKey.equals(key)) {
          inconsistencies.add(what + " overlaps " + other + " (same key)");
        } else if (otherKey.equals(group) || key.equals(group)) {
          inconsistencies.add(what + " overlaps " + other + " (a base and its derived value)");
        } // values derived from one base may overlap each other
      }
      others.add(kind + " of " + key);
    }
    for (Dependency dep : deps) {
      if (!dependencyStored(dep)) {
        inconsistencies.add(
            what
                + " while its dependency '"
                + dep.label()
                + "' ("
                + (dep.isAnyOf() ? "any of " + dep.keyPrefixes() : dep.key())
                + ") is absent from the southbound");
      }
    }
    Duration own = info == null ? null : info.latency();
    return own != null ? own : latency;
  }

  /**
   * Ends a call started by {@link #begin}; records it as failed when its latency was cut short by
   * an interrupt ({@code cut}).
   */
  private synchronized void end(
      String descriptor, String key, CallKind kind, Object value, InterruptedException cut) {
    running--;
    runningPerDescriptor.merge(descriptor, -1, Integer::sum);
    if (kind != CallKind.RETRIEVE) {
      String group = baseOfKey(key);
      List<String> others = runningByBase.get(group);
      others.remove(kind + " of " + key);
      if (others.isEmpty()) {
        runningByBase.remove(group);
      }
    }
    if (cut != null) {
      calls.add(new Call(kind, key, value, List.of(), cut));
    }
  }

  /** The value {@code key} is derived from, through any number of steps; itself for a base. */
  private String baseOfKey(String key) {
    String k = key;
    // bounded: a descriptor may derive in a cycle (A gives B, B gives A)
    for (int steps = 0; steps <= baseOf.size(); steps++) {
      String parent = baseOf.get(k);
      if (parent == null) {
        return k;
      }
      k = parent;
    }
    return k;
  }

  /**
   * True when {@code dep} has a target stored here, or cannot be judged here: a static key no
   * descriptor of this southbound selects belongs to another southbound.
   */
  private boolean dependencyStored(Dependency dep) {
    if (!dep.isAnyOf()) {
      if (values.containsKey(dep.key())) {
        return true;
      }
      for (DescriptorInfo info : descriptors.values()) {
        if (info.selector().test(dep.key())) {
          return false;
        }
      }
      return true;
    }
    for (String prefix : dep.keyPrefixes().isEmpty() ? List.of("") : dep.keyPrefixes()) {
      for (String k : values.tailMap(prefix, true).keySet()) {
        if (!k.startsWith(prefix)) {
          break;
        }
        try {
          if (dep.matches(k)) {
            return true;
          }
        } catch (RuntimeException e) {
          return true; // a failing selector is the engine's to report, not judged here
        }
      }
    }
    return false;
  }

  private void pause(Duration d) throws InterruptedException {
    if (d.isZero()) {
      return;
    }
    try {
      Thread.sleep(d.toMillis(), d.toNanosPart() % 1_000_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw e;
    }
  }

  private static Duration requireNonNegative(Duration d, String what) {
    Objects.requireNonNull(d, what);
    if (d.isNegative()) {
      throw new IllegalArgumentException(what + " must not be negative, got " + d);
    }
    return d;
  }

  private synchronized Object finishCreate(
      String key, Object value, Supplier<Object> metadata, boolean derived) throws Exception {
    Throwable err = consumePlanned(key, CallKind.CREATE, value);
    if (err != null) {
      throwAny(err);
    }
    if (values.containsKey(key)) {
      inconsistencies.add("CREATE of existing key " + key);
    }
    Object m = metadata.get();
    values.put(key, new Entry(key, value, m, ValueOrigin.FROM_NB, derived));
    calls.add(new Call(CallKind.CREATE, key, value, List.of(), null));
    return m;
  }

  private synchronized void finishUpdate(
      String key, Object oldValue, Object newValue, Object metadata, boolean derived)
      throws Exception {
    Throwable err = consumePlanned(key, CallKind.UPDATE, newValue);
    if (err != null) {
      throwAny(err);
    }
    Entry e = values.get(key);
    if (e == null) {
      inconsistencies.add("UPDATE of missing key " + key);
    } else if (!Objects.equals(e.value(), oldValue)) {
      inconsistencies.add(
          "UPDATE of " + key + " with old value " + oldValue + " but SB has " + e.value());
    }
    values.put(key, new Entry(key, newValue, metadata, ValueOrigin.FROM_NB, derived));
    calls.add(new Call(CallKind.UPDATE, key, newValue, List.of(), null));
  }

  private synchronized void finishDelete(String key, Object value) throws Exception {
    Throwable err = consumePlanned(key, CallKind.DELETE, value);
    if (err != null) {
      throwAny(err);
    }
    Entry e = values.get(key);
    if (e == null) {
      inconsistencies.add("DELETE of missing key " + key);
    } else if (!Objects.equals(e.value(), value)) {
      inconsistencies.add("DELETE of " + key + " with value " + value + " but SB has " + e.value());
    }
    values.remove(key);
    calls.add(new Call(CallKind.DELETE, key, value, List.of(), null));
  }

  private synchronized List<Entry> finishRetrieve(
      String descriptor, KeySelector selector, List<KVWithMetadata<Object, Object>> correlate) {
    Deque<RuntimeException> failing = plannedRetrieve.get(descriptor);
    RuntimeException error = failing == null ? null : failing.pollFirst();
    calls.add(new Call(CallKind.RETRIEVE, descriptor, null, List.copyOf(correlate), error));
    if (error != null) {
      throw error;
    }
    List<Entry> out = new ArrayList<>();
    for (Entry e : values.values()) {
      if (!e.derived() && selector.test(e.key())) {
        out.add(e);
      }
    }
    return out;
  }

  private Throwable consumePlanned(String key, CallKind kind, Object value) {
    Deque<Planned> q = planned.get(key);
    if (q == null || q.isEmpty()) {
      return null;
    }
    Planned p = q.pollFirst();
    if (p.error() != null) {
      calls.add(new Call(kind, key, value, List.of(), p.error()));
    }
    if (p.after() != null) {
      p.after().run();
    }
    return p.error();
  }

  private static void throwAny(Throwable t) throws Exception {
    if (t instanceof Exception e) {
      throw e;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new RuntimeException(t);
  }
}
