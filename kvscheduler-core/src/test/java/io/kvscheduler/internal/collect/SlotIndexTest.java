package io.kvscheduler.internal.collect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The key index of the published snapshot against a sorted map: lookups, size, iteration in key
 * order and bounded ranges after random additions and removals on top of bulk-built bases,
 * compactions in between, and older indexes unchanged by newer ones.
 */
class SlotIndexTest {

  @Test
  @DisplayName(
      "index equals a sorted map after random changes on bulk-built bases, with compactions")
  void matchesSortedMap() {
    for (long seed = 1; seed <= 20; seed++) {
      Random r = new Random(seed);
      TreeMap<String, Integer> model = new TreeMap<>();
      SlotIndex idx = SlotIndex.EMPTY;
      int nextSlot = 0;
      for (int round = 0; round < 40; round++) {
        int what = r.nextInt(8);
        if (what == 0) {
          idx = bulk(model); // a large change: a new base
        } else if (what == 1) {
          idx = idx.compacted();
        } else {
          for (int c = r.nextInt(30); c > 0; c--) {
            String key = "k" + r.nextInt(400);
            if (model.containsKey(key)) {
              idx = idx.minus(key);
              model.remove(key);
            } else {
              idx = idx.plus(key, nextSlot);
              model.put(key, nextSlot++);
            }
          }
        }
        check(idx, model, r, "seed " + seed + ", round " + round);
      }
    }
  }

  @Test
  @DisplayName("an older index is unchanged by changes made to newer ones")
  void olderIndexUnchanged() {
    TreeMap<String, Integer> model = new TreeMap<>();
    for (int i = 0; i < 50; i++) {
      model.put("k" + (100 + i), i);
    }
    SlotIndex base = bulk(model);
    SlotIndex changed = base.minus("k120").minus("k121").plus("k121", 77).plus("k000", 78);
    SlotIndex compacted = changed.compacted().minus("k130");

    TreeMap<String, Integer> expected = new TreeMap<>(model);
    check(base, expected, new Random(1), "base");
    expected.remove("k120");
    expected.put("k121", 77);
    expected.put("k000", 78);
    check(changed, expected, new Random(2), "changed");
    expected.remove("k130");
    check(compacted, expected, new Random(3), "compacted");
    assertThat(compacted.deltaSize()).isEqualTo(1);
  }

  @Test
  @DisplayName("a base whose keys and slots differ in length is refused")
  void mismatchedBaseRefused() {
    assertThatThrownBy(() -> SlotIndex.ofSorted(new String[] {"a", "b"}, new int[] {0}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("2 and 1");
  }

  @Test
  @DisplayName("a negative slot is refused with the key named")
  void negativeSlotRefused() {
    assertThatThrownBy(() -> SlotIndex.EMPTY.plus("a/key", -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a/key");
  }

  private static SlotIndex bulk(TreeMap<String, Integer> model) {
    String[] keys = new String[model.size()];
    int[] slots = new int[keys.length];
    int n = 0;
    for (Map.Entry<String, Integer> e : model.entrySet()) {
      keys[n] = e.getKey();
      slots[n++] = e.getValue();
    }
    return SlotIndex.ofSorted(keys, slots);
  }

  private static List<String> entries(SlotIndex idx, String from, String to) {
    List<String> out = new ArrayList<>();
    for (SlotIndex.Cursor c = idx.cursor(from, to); c.next(); ) {
      out.add(c.key() + "=" + c.slot());
    }
    return out;
  }

  private static List<String> entries(SortedMap<String, Integer> m) {
    List<String> out = new ArrayList<>();
    m.forEach((k, v) -> out.add(k + "=" + v));
    return out;
  }

  private static void check(SlotIndex idx, TreeMap<String, Integer> model, Random r, String where) {
    assertThat(idx.size()).as(where).isEqualTo(model.size());
    assertThat(entries(idx, null, null)).as(where).isEqualTo(entries(model));
    for (int i = 0; i < 500; i++) {
      String key = "k" + i;
      assertThat(idx.get(key)).as(where + ": " + key).isEqualTo(model.getOrDefault(key, -1));
    }
    for (int i = 0; i < 10; i++) {
      String a = "k" + r.nextInt(450);
      String b = "k" + r.nextInt(450);
      String from = a.compareTo(b) <= 0 ? a : b;
      String to = a.compareTo(b) <= 0 ? b : a;
      assertThat(entries(idx, from, to))
          .as(where + ": [" + from + ", " + to + ")")
          .isEqualTo(entries(model.subMap(from, to)));
      assertThat(entries(idx, from, null))
          .as(where + ": [" + from + ", ...)")
          .isEqualTo(entries(model.tailMap(from)));
      assertThat(entries(idx, null, to))
          .as(where + ": [..., " + to + ")")
          .isEqualTo(entries(model.headMap(to)));
    }
  }
}
