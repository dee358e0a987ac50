package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.internal.collect.Bulk;
import java.util.Comparator;
import java.util.List;

/**
 * One value to apply: key, value (null = delete), origin, revert marker and, for SB values, the
 * metadata supplied by the southbound.
 */
public record ValueToApply(
    String key, Object value, ValueOrigin origin, boolean revert, Object metadata) {
  public static ValueToApply nb(String key, Object value) {
    return new ValueToApply(key, value, ValueOrigin.FROM_NB, false, null);
  }

  public boolean fromSB() {
    return origin == ValueOrigin.FROM_SB;
  }

  /** Key order. */
  static final Comparator<ValueToApply> BY_KEY = (a, b) -> a.key().compareTo(b.key());

  /** Sorts {@code kvs} by key (stable) unless it is sorted already (checked in one pass). */
  public static void sortByKey(List<ValueToApply> kvs) {
    if (!isSorted(kvs)) {
      kvs.sort(BY_KEY);
    }
  }

  /** True when the keys of {@code kvs} are in ascending order (ties allowed). */
  public static boolean isSorted(List<ValueToApply> kvs) {
    for (int i = 1; i < kvs.size(); i += Bulk.RANGE) {
      if (!isSorted(kvs, i, Bulk.end(i, kvs.size()))) {
        return false;
      }
    }
    return true;
  }

  /** True when each key of {@code kvs[from, to)} is not below the key before it. */
  private static boolean isSorted(List<ValueToApply> kvs, int from, int to) {
    String prev = kvs.get(from - 1).key();
    for (int i = from; i < to; i++) {
      String k = kvs.get(i).key();
      if (prev.compareTo(k) > 0) {
        return false;
      }
      prev = k;
    }
    return true;
  }
}
