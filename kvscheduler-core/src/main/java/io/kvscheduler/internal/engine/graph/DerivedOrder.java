package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.internal.collect.Bulk;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Orders derived values: one sort instead of a sorted set per base value. */
public final class DerivedOrder {
  private DerivedOrder() {}

  private static final Comparator<KeyValuePair> BY_KEY = (a, b) -> a.key().compareTo(b.key());

  /**
   * The derived values of {@code baseKey} with a value and a key other than the base's, sorted by
   * key; of several values with the same key only the first (in {@code derived}'s order) is kept.
   * Already sorted input is not copied twice.
   */
  public static List<KeyValuePair> sortedUnique(List<KeyValuePair> derived, String baseKey) {
    KeyValuePair[] a = new KeyValuePair[derived.size()];
    int n = 0;
    boolean sorted = true;
    for (int i = 0; i < derived.size(); i += Bulk.RANGE) { // in ranges: see Bulk
      int to = Bulk.end(i, derived.size());
      int kept = keep(derived, i, to, baseKey, a, n);
      sorted = sorted && ascending(a, n == 0 ? 0 : n - 1, kept);
      n = kept;
    }
    if (sorted) {
      return Arrays.asList(a).subList(0, n); // strictly ascending: no duplicates
    }
    Arrays.sort(a, 0, n, BY_KEY); // stable: the first of equal keys stays first
    List<KeyValuePair> out = new ArrayList<>(n);
    for (int i = 0; i < n; i += Bulk.RANGE) {
      dropRepeated(a, i, Bulk.end(i, n), out);
    }
    return out;
  }

  /**
   * Adds the values of {@code sorted[from, to)} to {@code out}, but for those whose key is the key
   * of the value added last.
   */
  private static void dropRepeated(
      KeyValuePair[] sorted, int from, int to, List<KeyValuePair> out) {
    String prev = out.isEmpty() ? null : out.get(out.size() - 1).key();
    for (int i = from; i < to; i++) {
      String k = sorted[i].key();
      if (prev == null || !prev.equals(k)) {
        out.add(sorted[i]);
        prev = k;
      }
    }
  }

  /**
   * Copies the values of {@code derived[from, to)} that have a value and a key other than {@code
   * baseKey} to {@code out} from index {@code n}; returns the new count.
   */
  private static int keep(
      List<KeyValuePair> derived, int from, int to, String baseKey, KeyValuePair[] out, int n) {
    for (int i = from; i < to; i++) {
      KeyValuePair kv = derived.get(i);
      if (kv.value() != null && !kv.key().equals(baseKey)) {
        out[n++] = kv;
      }
    }
    return n;
  }

  /**
   * What {@link #sortedUnique} dropped of {@code derived}, for a warning: each dropped entry's key
   * and why, in the order given (at most ten, then how many more).
   */
  public static String dropped(List<KeyValuePair> derived, String baseKey) {
    List<String> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    int count = 0;
    for (KeyValuePair kv : derived) {
      String why;
      if (kv.value() == null) {
        why = "without a value";
      } else if (kv.key().equals(baseKey)) {
        why = "the base's own key";
      } else if (!seen.add(kv.key())) {
        why = "a key given before: the first is kept";
      } else {
        continue;
      }
      if (count++ < 10) {
        out.add(kv.key() + " (" + why + ")");
      }
    }
    return String.join(", ", out) + (count > 10 ? ", and " + (count - 10) + " more" : "");
  }

  /** True when the keys of {@code a[from, to)} are strictly ascending. */
  private static boolean ascending(KeyValuePair[] a, int from, int to) {
    for (int i = from + 1; i < to; i++) {
      if (a[i - 1].key().compareTo(a[i].key()) >= 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * True when a derived value of {@code baseKey} may not take the key of {@code existing} (the
   * key's node, or null): the key holds a value that is not derived from that base.
   */
  public static boolean collides(Node existing, String baseKey) {
    return existing != null && existing.value() != null && !baseKey.equals(existing.derivedFrom());
  }
}
