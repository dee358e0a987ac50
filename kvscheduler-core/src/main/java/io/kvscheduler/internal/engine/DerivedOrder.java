package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.internal.graph.Node;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/** Orders derived values: one sort instead of a sorted set per base value. */
final class DerivedOrder {
  private DerivedOrder() {}

  private static final Comparator<KeyValuePair> BY_KEY = (a, b) -> a.key().compareTo(b.key());

  /**
   * The derived values of {@code baseKey} with a value and a key other than the base's, sorted
   * by key; of several values with the same key only the first (in {@code derived}'s order) is
   * kept. Already sorted input is not copied twice.
   */
  static List<KeyValuePair> sortedUnique(List<KeyValuePair> derived, String baseKey) {
    KeyValuePair[] a = new KeyValuePair[derived.size()];
    int n = 0;
    boolean sorted = true;
    for (KeyValuePair kv : derived) {
      if (kv.value() == null || kv.key().equals(baseKey)) {
        continue;
      }
      if (sorted && n > 0 && a[n - 1].key().compareTo(kv.key()) >= 0) {
        sorted = false;
      }
      a[n++] = kv;
    }
    if (sorted) {
      return Arrays.asList(a).subList(0, n); // strictly ascending: no duplicates
    }
    Arrays.sort(a, 0, n, BY_KEY); // stable: the first of equal keys stays first
    List<KeyValuePair> out = new ArrayList<>(n);
    String prev = null;
    for (int i = 0; i < n; i++) {
      String k = a[i].key();
      if (prev == null || !prev.equals(k)) {
        out.add(a[i]);
        prev = k;
      }
    }
    return out;
  }

  /**
   * True when a derived value of {@code baseKey} may not take the key of {@code existing} (the
   * key's node, or null): the key holds a value that is not derived from that base.
   */
  static boolean collides(Node existing, String baseKey) {
    return existing != null && existing.value != null && !baseKey.equals(existing.derivedFrom);
  }

  /** True when the keys of {@code kvs} are in ascending order. */
  static boolean isSorted(List<Kv> kvs) {
    for (int i = 1; i < kvs.size(); i++) {
      if (kvs.get(i - 1).key().compareTo(kvs.get(i).key()) > 0) {
        return false;
      }
    }
    return true;
  }
}
