package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.KeyConflictException;
import io.kvscheduler.internal.engine.graph.DerivedOrder;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.SettledDerived;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Derivation for the walk: the dependencies and derived values a descriptor computes for a value,
 * and the checks that keep a derived key from taking over a value it was not derived into.
 *
 * <p>A derived key colliding with a value that is not derived from the same base is skipped and
 * reported as a key error of kind CONFLICT naming both keys ({@link #conflict}): the value holding
 * the key keeps it, and the transaction fails.
 */
final class Derivation {
  private static final Logger LOG = LoggerFactory.getLogger(Walker.class);

  private final Graph graph;
  private final Transaction txn;

  Derivation(Graph graph, Transaction txn) {
    this.graph = graph;
    this.txn = txn;
  }

  /**
   * Derived values and dependencies computed for a value. {@code settled}: what matching the
   * derived values against the base's entry of {@link SettledDerived} found (null without one).
   */
  record Relations(
      List<Dependency> deps,
      List<ValueToApply> derived,
      List<String> derivedKeys,
      Throwable error,
      SettledDerived.Match settled) {
    Relations(List<Dependency> deps, Throwable error) {
      this(deps, List.of(), List.of(), error, null);
    }

    /** No dependency, no derived value, no error. */
    static final Relations NONE = new Relations(List.of(), null);

    /** Only dependencies (the shared {@link #NONE} when there are none). */
    static Relations of(List<Dependency> deps) {
      return deps.isEmpty() ? NONE : new Relations(deps, null);
    }
  }

  /**
   * The dependencies of {@code value} for {@code node} and, unless the value is itself derived, its
   * derived values in key order (a key colliding with a value not derived from this one is
   * skipped). A failing descriptor call gives the error instead.
   */
  Relations relations(Node node, DescriptorHandle handle, ValueToApply kv, boolean derived) {
    if (handle == null) {
      return Relations.NONE;
    }
    Object value = kv.value();
    DescriptorHandle.Result<List<Dependency>> deps = handle.dependencies(node, value);
    if (deps.failed()) {
      return new Relations(List.of(), deps.error());
    }
    if (derived) {
      return Relations.of(deps.value());
    }
    // sorted by key, first occurrence of a key wins
    DescriptorHandle.Result<List<KeyValuePair>> der = handle.derivedSorted(node, value);
    if (der.failed()) {
      return new Relations(List.of(), der.error());
    }
    if (der.value().isEmpty()) {
      return Relations.of(deps.value());
    }
    List<KeyValuePair> unique = der.value();
    List<ValueToApply> derivedValues = new ArrayList<>(unique.size());
    String[] keys = new String[unique.size()];
    // matched against what the base's last walk found settled: those keys need no lookup (W5)
    SettledDerived.Matcher settled = graph.settled.matcher(node.key(), unique.size());
    int n = 0;
    for (int i = 0; i < unique.size(); i += Bulk.RANGE) {
      n =
          addDerived(
              unique, i, Bulk.end(i, unique.size()), node, kv, derivedValues, keys, n, settled);
    }
    List<String> derivedKeys = n == keys.length ? List.of(keys) : List.of(Arrays.copyOf(keys, n));
    return new Relations(
        deps.value(), derivedValues, derivedKeys, null, settled == null ? null : settled.match());
  }

  /**
   * Adds the derived values of {@code unique[from, to)} to {@code derived}, but those whose key
   * holds a value not derived from {@code base}; the keys added go to {@code keys} from index
   * {@code n}, each matched by {@code settled} (when not null). Returns the new count of keys.
   */
  private int addDerived(
      List<KeyValuePair> unique,
      int from,
      int to,
      Node base,
      ValueToApply baseKv,
      List<ValueToApply> derived,
      String[] keys,
      int n,
      SettledDerived.Matcher settled) {
    for (int i = from; i < to; i++) {
      KeyValuePair kv = unique.get(i);
      // a key known settled is derived from this base: it cannot collide
      boolean isSettled = settled != null && settled.settled(kv);
      Node existing = isSettled ? null : graph.get(kv.key());
      if (isSettled || !DerivedOrder.collides(existing, base.key())) {
        // the key's string as the graph already holds it: the base's revisions then share one
        // string per derived key instead of each keeping the descriptor's fresh copies (W5 with
        // history at 10,000 members: heap_mb)
        String key =
            isSettled ? settled.matchedKey() : existing != null ? existing.key() : kv.key();
        derived.add(new ValueToApply(key, kv.value(), baseKv.origin(), baseKv.revert(), null));
        if (settled != null) {
          settled.added(isSettled);
        }
        keys[n++] = key;
      } else {
        conflict(kv.key(), base.key(), existing);
      }
    }
    return n;
  }

  /**
   * True when derived value {@code kv} of {@code baseKey} may be applied now ({@code n}: its key's
   * node now, or null): it has a value and its key holds no value of another base.
   */
  boolean validDerived(ValueToApply kv, Node n, String baseKey) {
    if (kv.value() == null) {
      LOG.warn("derived value {} of {} is null; skipped", kv.key(), baseKey);
      return false;
    }
    if (DerivedOrder.collides(n, baseKey)) {
      conflict(kv.key(), baseKey, n);
      return false;
    }
    return true;
  }

  /**
   * Reports derived value {@code key} of {@code baseKey}, skipped because the key holds {@code
   * existing}, a value not derived from that base: a key error of kind CONFLICT naming both keys,
   * once per key and pass of the walk. The value holding the key keeps it; the derived value is
   * applied when its base is applied again once the key is free.
   */
  private void conflict(String key, String baseKey, Node existing) {
    if (!txn.conflicts.add(key)) {
      return;
    }
    String holder =
        existing.isDerived()
            ? "a value derived from " + existing.derivedFrom()
            : existing.origin() == ValueOrigin.FROM_SB
                ? "a value of its own, found in the southbound"
                : "a value of its own, set by the northbound";
    String msg =
        "derived value of "
            + baseKey
            + " not applied: the key holds "
            + holder
            + "; "
            + baseKey
            + " must be applied again once the key is free";
    txn.ignored.add(
        new KeyError(
            key,
            TxnOperation.CREATE,
            msg,
            new KeyConflictException(key + ": " + msg),
            KeyError.Kind.CONFLICT));
  }

  /**
   * {@code a.equals(b)} for two lists of keys, compared in ranges ({@link Bulk}: a base value may
   * derive thousands) and by identity first (keys derived from one remembered answer are the same
   * strings).
   */
  static boolean sameKeys(List<String> a, List<String> b) {
    if (a == b) {
      return true;
    }
    int size = a.size();
    if (size != b.size()) {
      return false;
    }
    for (int i = 0; i < size; i += Bulk.RANGE) {
      if (!sameKeys(a, b, i, Bulk.end(i, size))) {
        return false;
      }
    }
    return true;
  }

  private static boolean sameKeys(List<String> a, List<String> b, int from, int to) {
    for (int i = from; i < to; i++) {
      String x = a.get(i);
      String y = b.get(i);
      if (x != y && !x.equals(y)) {
        return false;
      }
    }
    return true;
  }
}
