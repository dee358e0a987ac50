package io.kvscheduler.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.graph.DerivedOrder;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The key-order helpers that loop in ranges ({@link Bulk}) against plain one-loop references, at
 * sizes around and across range boundaries, so that a pair of keys straddling two ranges is checked
 * like any other.
 */
class KeyOrderTest {
  private static final int[] SIZES = {
    0,
    1,
    2,
    Bulk.RANGE - 1,
    Bulk.RANGE,
    Bulk.RANGE + 1,
    2 * Bulk.RANGE,
    2 * Bulk.RANGE + 1,
    5 * Bulk.RANGE + 7,
    300
  };

  @Test
  @DisplayName(
      "isSorted finds a descent anywhere, also between the last key of a range and the first of the next")
  void isSortedMatchesReference() {
    Random r = new Random(7);
    for (int size : SIZES) {
      List<ValueToApply> sorted = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        sorted.add(ValueToApply.nb(String.format("k%05d", i / 2 * 2), i)); // ties allowed
      }
      assertThat(ValueToApply.isSorted(sorted)).as("sorted, size %d", size).isTrue();
      for (int at = 1; at < size; at++) { // one descent at every position
        List<ValueToApply> kvs = new ArrayList<>(sorted);
        kvs.set(at, ValueToApply.nb("a", at));
        assertThat(ValueToApply.isSorted(kvs)).as("descent at %d of %d", at, size).isFalse();
      }
      List<ValueToApply> shuffled = new ArrayList<>(sorted);
      Collections.shuffle(shuffled, r);
      assertThat(ValueToApply.isSorted(shuffled)).isEqualTo(referenceSorted(shuffled));
    }
  }

  @Test
  @DisplayName("sortByKey leaves sorted input as it is and sorts other input stably")
  void sortByKeyIsStable() {
    Random r = new Random(11);
    for (int size : SIZES) {
      List<ValueToApply> kvs = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        kvs.add(ValueToApply.nb("k" + r.nextInt(Math.max(1, size / 3)), i));
      }
      List<ValueToApply> expected = new ArrayList<>(kvs);
      expected.sort(Comparator.comparing(ValueToApply::key)); // List.sort is stable
      ValueToApply.sortByKey(kvs);
      assertThat(kvs).as("size %d", size).containsExactlyElementsOf(expected);
    }
  }

  @Test
  @DisplayName(
      "sortedUnique equals a one-loop reference: values kept, base key and null values left out, first of equal keys wins")
  void sortedUniqueMatchesReference() {
    for (long seed = 1; seed <= 30; seed++) {
      Random r = new Random(seed);
      for (int size : SIZES) {
        List<KeyValuePair> derived = new ArrayList<>();
        boolean ascendingKeys = r.nextBoolean();
        for (int i = 0; i < size; i++) {
          String key = ascendingKeys ? String.format("d%05d", i) : "d" + r.nextInt(size + 1);
          if (r.nextInt(10) == 0) {
            key = "base";
          }
          Object value = r.nextInt(12) == 0 ? null : "v" + i;
          derived.add(new KeyValuePair(key, value));
        }
        List<KeyValuePair> expected = referenceSortedUnique(derived, "base");
        assertThat(DerivedOrder.sortedUnique(derived, "base"))
            .as("seed %d size %d", seed, size)
            .containsExactlyElementsOf(expected);
        assertThat(DerivedOrder.sortedUnique(new LinkedList<>(derived), "base"))
            .as("sequential list, seed %d size %d", seed, size)
            .containsExactlyElementsOf(expected);
      }
    }
  }

  @Test
  @DisplayName(
      "Derivation.sameKeys equals List.equals: same lists, equal copies, a difference at any position, other sizes")
  void sameKeysMatchesListEquals() {
    for (int size : SIZES) {
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < size; i++) {
        keys.add("k" + i);
      }
      List<String> copy = new ArrayList<>();
      for (String k : keys) {
        copy.add(new String(k)); // equal, not the same strings
      }
      assertThat(Derivation.sameKeys(keys, keys)).isTrue();
      assertThat(Derivation.sameKeys(List.copyOf(keys), copy)).as("size %d", size).isTrue();
      for (int at = 0; at < size; at++) {
        List<String> other = new ArrayList<>(copy);
        other.set(at, "other");
        assertThat(Derivation.sameKeys(keys, other))
            .as("difference at %d of %d", at, size)
            .isFalse();
      }
      List<String> longer = new ArrayList<>(keys);
      longer.add("last");
      assertThat(Derivation.sameKeys(keys, longer)).isFalse();
      assertThat(Derivation.sameKeys(longer, keys)).isFalse();
    }
  }

  @Test
  @DisplayName("sortedUnique sorts ascending input with one descent, wherever the descent falls")
  void sortedUniqueFindsEveryDescent() {
    for (int size : SIZES) {
      for (int at = 1; at < size; at++) {
        List<KeyValuePair> derived = new ArrayList<>();
        for (int i = 0; i < size; i++) {
          derived.add(new KeyValuePair(i == at ? "a" : String.format("d%05d", i), "v" + i));
        }
        assertThat(DerivedOrder.sortedUnique(derived, "base"))
            .as("descent at %d of %d", at, size)
            .containsExactlyElementsOf(referenceSortedUnique(derived, "base"));
      }
    }
  }

  private static boolean referenceSorted(List<ValueToApply> kvs) {
    for (int i = 1; i < kvs.size(); i++) {
      if (kvs.get(i - 1).key().compareTo(kvs.get(i).key()) > 0) {
        return false;
      }
    }
    return true;
  }

  private static List<KeyValuePair> referenceSortedUnique(
      List<KeyValuePair> derived, String baseKey) {
    Map<String, KeyValuePair> first = new LinkedHashMap<>();
    for (KeyValuePair kv : derived) {
      if (kv.value() != null && !kv.key().equals(baseKey)) {
        first.putIfAbsent(kv.key(), kv);
      }
    }
    List<KeyValuePair> out = new ArrayList<>(first.values());
    out.sort(Comparator.comparing(KeyValuePair::key));
    return out;
  }
}
