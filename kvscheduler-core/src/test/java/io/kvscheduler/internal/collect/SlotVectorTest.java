package io.kvscheduler.internal.collect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The views vector of the published snapshot against a list: reads, changes and appends across the
 * sizes where the trie gains a level, bulk builds, and older vectors unchanged by newer ones.
 */
class SlotVectorTest {

  @Test
  @DisplayName("appends one by one read back at every size, across new levels (32, 1024, 32768)")
  void appendsAcrossLevels() {
    SlotVector<Integer> v = SlotVector.empty();
    List<Integer> model = new ArrayList<>();
    for (int i = 0; i < 40_000; i++) {
      v = v.append(i);
      model.add(i);
      assertThat(v.size()).isEqualTo(i + 1);
      assertThat(v.get(i)).isEqualTo(i);
      if (i == 31 || i == 32 || i == 1023 || i == 1024 || i == 32_767 || i == 32_768) {
        check(v, model, "after append " + i);
      }
    }
    check(v, model, "end");
  }

  @Test
  @DisplayName("a vector equals a list after random sets, appends (nulls too) and bulk builds")
  void matchesList() {
    for (long seed = 1; seed <= 20; seed++) {
      Random r = new Random(seed);
      List<String> model = new ArrayList<>();
      SlotVector<String> v = SlotVector.empty();
      for (int round = 0; round < 60; round++) {
        int what = r.nextInt(6);
        if (what == 0) {
          String[] all = model.toArray(new String[model.size() + r.nextInt(3)]);
          v = SlotVector.of(all, model.size()); // a bulk build; extra array room is left out
        } else if (what == 1 || model.isEmpty()) {
          for (int c = r.nextInt(1500); c > 0; c--) {
            String e = r.nextInt(10) == 0 ? null : "e" + r.nextInt(1000);
            v = v.append(e);
            model.add(e);
          }
        } else {
          for (int c = r.nextInt(200); c > 0; c--) {
            int i = r.nextInt(model.size());
            String e = r.nextInt(10) == 0 ? null : "s" + r.nextInt(1000);
            v = v.set(i, e);
            model.set(i, e);
          }
        }
        check(v, model, "seed " + seed + ", round " + round);
      }
    }
  }

  @Test
  @DisplayName("an older vector is unchanged by sets and appends on newer ones")
  void olderVectorUnchanged() {
    Integer[] init = new Integer[1100];
    for (int i = 0; i < init.length; i++) {
      init[i] = i;
    }
    SlotVector<Integer> base = SlotVector.of(init, init.length);
    init[5] = -1; // the array was copied
    SlotVector<Integer> changed = base.set(5, 500).set(1099, 10_990).append(1100);
    for (int i = 0; i < 1100; i++) {
      assertThat(base.get(i)).as("base %d", i).isEqualTo(i);
    }
    assertThat(base.size()).isEqualTo(1100);
    assertThat(changed.get(5)).isEqualTo(500);
    assertThat(changed.get(1099)).isEqualTo(10_990);
    assertThat(changed.get(1100)).isEqualTo(1100);
    assertThat(changed.get(6)).isEqualTo(6);
    assertThat(changed.size()).isEqualTo(1101);
  }

  @Test
  @DisplayName("an index outside the vector and a bulk size beyond the array are errors")
  void outOfRange() {
    SlotVector<String> v = SlotVector.<String>empty().append("a");
    assertThatThrownBy(() -> v.get(1))
        .isInstanceOf(IndexOutOfBoundsException.class)
        .hasMessage("index 1 of a vector of 1");
    assertThatThrownBy(() -> v.get(-1)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> v.set(1, "b")).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> SlotVector.of(new String[2], 3))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("size 3 outside the array of length 2");
    assertThat(SlotVector.of(new String[4], 0).size()).isZero();
  }

  private static <T> void check(SlotVector<T> v, List<T> model, String where) {
    assertThat(v.size()).as(where).isEqualTo(model.size());
    Object[] all = new Object[model.size() + 1];
    all[model.size()] = "untouched";
    v.copyTo(all);
    for (int i = 0; i < model.size(); i++) {
      assertThat(v.get(i)).as("%s: get(%d)", where, i).isEqualTo(model.get(i));
      assertThat(all[i]).as("%s: copyTo[%d]", where, i).isEqualTo(model.get(i));
    }
    assertThat(all[model.size()]).as(where).isEqualTo("untouched");
  }
}
