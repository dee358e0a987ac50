package io.kvscheduler.testkit;

import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.ValueOrigin;
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

/**
 * An in-memory southbound for tests and experiments. It stores key → (value, metadata, origin),
 * records every descriptor call in order, checks that the scheduler never makes an inconsistent
 * call (Create of an existing key, Update/Delete of a missing key or with another old value), and
 * fails calls on request ({@link #planError}).
 *
 * <p>Descriptors operating on it are built with {@link #descriptor(String, Class)}. Thread-safe
 * (all methods synchronized), so tests may read it while the engine runs.
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

  /** Forgets everything: values, calls, planned errors, inconsistencies. */
  public synchronized void reset() {
    values.clear();
    calls.clear();
    inconsistencies.clear();
    planned.clear();
    plannedRetrieve.clear();
  }

  // ----------------------------------------------------------- used by mock descriptors

  synchronized Object create(String key, Object value, Object metadata, boolean derived)
      throws Exception {
    Throwable err = consumePlanned(key, CallKind.CREATE, value);
    if (err != null) {
      throwAny(err);
    }
    if (values.containsKey(key)) {
      inconsistencies.add("CREATE of existing key " + key);
    }
    values.put(key, new Entry(key, value, metadata, ValueOrigin.FROM_NB, derived));
    calls.add(new Call(CallKind.CREATE, key, value, List.of(), null));
    return metadata;
  }

  synchronized void update(
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

  synchronized void delete(String key, Object value) throws Exception {
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

  synchronized List<Entry> retrieve(
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
