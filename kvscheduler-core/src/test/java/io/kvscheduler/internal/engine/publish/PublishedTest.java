package io.kvscheduler.internal.engine.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.NodeStore;
import io.kvscheduler.internal.engine.graph.Touched;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.IntFunction;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The published snapshot against the graph it was published from: after every batch, readers see
 * exactly the keys that have a value, with their current content, in key order, by prefix; an older
 * snapshot is unchanged by later batches. Batches mix small changes (updated in place, slots reused
 * after removals) and large ones (merged in one pass), so both paths and their hand-over are
 * covered.
 */
class PublishedTest {
  private static final String[] PREFIXES = {"a/", "b/x/", "b/y/", "c/"};

  @Test
  @DisplayName("snapshot equals the graph after random small and large batches (slots reused)")
  void snapshotMatchesGraph() {
    for (long seed = 1; seed <= 8; seed++) {
      run(seed);
    }
  }

  @Test
  @DisplayName(
      "keys that come and go in many small batches after a large one: the key index is compacted and stays right")
  void manySmallBatchesAfterLargeOne() {
    Random r = new Random(7);
    Graph g = new Graph();
    Published p = new Published();
    TreeMap<String, Object> model = new TreeMap<>();
    for (int i = 0; i < 2000; i++) {
      put(g, "a/k" + i, "v" + i);
      model.put("a/k" + i, "v" + i);
    }
    publish(p, g, 0);
    int compactions = 0;
    int delta = 0;
    for (long seq = 1; seq <= 700; seq++) {
      for (int c = 0; c < 10; c++) {
        String key = PREFIXES[r.nextInt(PREFIXES.length)] + "k" + r.nextInt(6000);
        if (model.containsKey(key)) {
          g.remove(key);
          model.remove(key);
        } else {
          put(g, key, key + "@" + seq);
          model.put(key, key + "@" + seq);
        }
      }
      publish(p, g, seq);
      int now = p.current().slots.deltaSize();
      if (now < delta) {
        compactions++;
      }
      delta = now;
      if (seq % 25 == 0) {
        check(p.current(), model, "batch " + seq);
      }
    }
    check(p.current(), model, "last batch");
    assertThat(compactions).as("compactions of the key index").isPositive();
  }

  @Test
  @DisplayName(
      "a large batch written in key order but for one key is published in key order, wherever that key falls")
  void largeBatchAlmostInKeyOrder() {
    int size = 1500; // a large change: published by a rebuild
    for (int at : new int[] {1, 15, 16, 17, 31, 32, 33, 700, size - 1}) {
      int out = at;
      publishesInKeyOrder(
          size,
          i -> i == out ? "a/0-out-of-place" : String.format("a/k%05d", i),
          "key out of place at " + at);
    }
  }

  @Test
  @DisplayName(
      "a large batch written as two runs in key order (values, then what they derive) is published in key order")
  void largeBatchOfTwoSortedRuns() {
    for (int split : new int[] {1, 100, 750, 1499}) {
      // "b/..." keys first, then "a/..." keys
      publishesInKeyOrder(
          1500,
          i -> i < split ? String.format("b/k%05d", i) : String.format("a/k%05d", i),
          "runs split at " + split);
    }
  }

  /**
   * Writes {@code size} values in one batch to an empty graph, key {@code i} named by {@code
   * keyOf}, publishes them (a rebuild) and checks the snapshot against the written values.
   */
  private static void publishesInKeyOrder(int size, IntFunction<String> keyOf, String where) {
    Graph g = new Graph();
    Published p = new Published();
    TreeMap<String, Object> model = new TreeMap<>();
    for (int i = 0; i < size; i++) {
      String key = keyOf.apply(i);
      put(g, key, "v" + i);
      model.put(key, "v" + i);
    }
    publish(p, g, 0);
    check(p.current(), model, where);
  }

  @Test
  @DisplayName(
      "a large change of two batches listing keys twice (removed or replaced in one, written in the other) publishes each key once")
  void largeChangeListingKeysTwice() {
    for (boolean removals : new boolean[] {true, false}) {
      Graph g = new Graph();
      Published p = new Published();
      TreeMap<String, Object> model = new TreeMap<>();
      for (int i = 0; i < 2000; i++) {
        put(g, String.format("a/k%04d", i), "v" + i);
        model.put(String.format("a/k%04d", i), "v" + i);
      }
      publish(p, g, 0);
      Touched t = new Touched(1);
      for (int i = 0; i < 1500; i++) { // first batch: removals (a key without a node) or updates
        String key = String.format("a/k%04d", i);
        if (removals) {
          g.remove(key);
          model.remove(key);
        } else {
          put(g, key, "u" + i);
          model.put(key, "u" + i);
        }
      }
      t.add(g.endBatch(), false);
      for (int i = 0; i < 1000; i++) { // second batch: new nodes for most of them
        String key = String.format("a/k%04d", i);
        if (!removals) {
          g.remove(key); // the updated node leaves the graph
        }
        put(g, key, "w" + i);
        model.put(key, "w" + i);
      }
      t.add(g.endBatch(), false);
      assertThat(t.keys()).as("listed").hasSize(2500);
      p.update(t, g);
      check(p.current(), model, removals ? "removed, then written" : "updated, then replaced");
    }
  }

  @Test
  @DisplayName("an older snapshot is unchanged by later updates and removals")
  void olderSnapshotIsImmutable() {
    Graph g = new Graph();
    Published p = new Published();
    long seq = 0;
    for (int i = 0; i < 10; i++) {
      put(g, "a/k" + i, "v" + i);
    }
    publish(p, g, seq++);
    PublishedSnapshot before = p.current();
    g.remove("a/k3");
    put(g, "a/k4", "changed");
    put(g, "a/new", "n");
    publish(p, g, seq++);
    put(g, "a/other", "o"); // may take the slot a/k3 left
    publish(p, g, seq);

    assertThat(before.size()).isEqualTo(10);
    assertThat(before.get("a/k3").value).isEqualTo("v3");
    assertThat(before.get("a/k4").value).isEqualTo("v4");
    assertThat(before.get("a/new")).isNull();
    assertThat(p.current().get("a/k3")).isNull();
    assertThat(p.current().get("a/other").value).isEqualTo("o");
    assertThat(p.current().get("a/k4").value).isEqualTo("changed");
  }

  private static List<String> entries(Iterable<KeyRevision> views) {
    List<String> out = new ArrayList<>();
    for (KeyRevision v : views) {
      out.add(v.key + "=" + v.value);
    }
    return out;
  }

  private static List<String> entries(SortedMap<String, Object> model) {
    List<String> out = new ArrayList<>();
    model.forEach((k, v) -> out.add(k + "=" + v));
    return out;
  }

  @Test
  @DisplayName(
      "a publication that fails midway leaves the snapshot and the slot table as they were")
  void failedPublicationChangesNothing() {
    for (boolean large : new boolean[] {false, true}) {
      Graph g = new Graph();
      Published p = new Published();
      TreeMap<String, Object> model = new TreeMap<>();
      int n = large ? 3000 : 10;
      for (int i = 0; i < n; i++) {
        put(g, "a/k" + i, "v" + i);
        model.put("a/k" + i, "v" + i);
      }
      publish(p, g, 0);
      // removals free their slots, a PENDING value joins the pending keys, then a node the views
      // cannot be made of
      for (int i = 0; i < n / 2; i++) {
        g.remove("a/k" + i);
      }
      put(g, "b/waiting", "w");
      g.get("b/waiting").setState(ValueState.PENDING);
      put(g, "c/broken", "x");
      // making its view fails: a PENDING value's status details ask its any-of selector, whose
      // fatal errors (unlike its other failures) are not contained
      g.get("c/broken").setState(ValueState.PENDING);
      g.setDeps(
          g.get("c/broken"),
          List.of(
              Dependency.anyOf(
                  "dep",
                  List.of(),
                  key -> {
                    throw new InternalError("selector broken");
                  })));
      PublishedSnapshot before = p.current();
      Assertions.assertThatThrownBy(() -> publish(p, g, 1)).isInstanceOf(InternalError.class);
      assertThat(p.current()).isSameAs(before);
      assertThat(p.pendingKeys()).as("pending keys after the failure").isEmpty();
      check(p.current(), model, "after the failure, large=" + large);
      // new keys must not take the slots of the removals that were never published
      g.setDeps(g.write("c/broken"), List.of());
      g.get("c/broken").setState(ValueState.CONFIGURED);
      for (int i = 0; i < 3; i++) {
        put(g, "d/k" + i, "d" + i);
      }
      g.endBatch();
      Touched fresh = new Touched(2);
      for (int i = 0; i < 3; i++) {
        fresh.add("d/k" + i, g.get("d/k" + i));
        model.put("d/k" + i, "d" + i);
      }
      p.update(fresh, g);
      check(p.current(), model, "new keys after the failure, large=" + large);
      // the failed batch published again: the removals and the fixed node
      Touched again = new Touched(3);
      for (int i = 0; i < n / 2; i++) {
        model.remove("a/k" + i);
        again.add("a/k" + i, null);
      }
      model.put("c/broken", "x");
      again.add("c/broken", g.get("c/broken"));
      model.put("b/waiting", "w");
      again.add("b/waiting", g.get("b/waiting"));
      p.update(again, g);
      check(p.current(), model, "after the retry, large=" + large);
      assertThat(p.pendingKeys()).containsExactly("b/waiting");
    }
  }

  private void run(long seed) {
    Random r = new Random(seed);
    Graph g = new Graph();
    Published p = new Published();
    TreeMap<String, Object> model = new TreeMap<>();
    for (long seq = 0; seq < 60; seq++) {
      boolean large = r.nextInt(6) == 0;
      int changes = large ? 1100 + r.nextInt(1500) : 1 + r.nextInt(12);
      for (int c = 0; c < changes; c++) {
        String key = PREFIXES[r.nextInt(PREFIXES.length)] + "k" + r.nextInt(large ? 4000 : 300);
        int what = r.nextInt(10);
        if (what < 3 && model.containsKey(key)) {
          g.remove(key);
          model.remove(key);
        } else if (what < 4 && model.containsKey(key)) {
          // removed and created again in one batch: a new node, without a remembered slot
          g.remove(key);
          String v = key + "@" + seq + "." + c;
          put(g, key, v);
          model.put(key, v);
        } else {
          String v = key + "@" + seq + "." + c;
          put(g, key, v);
          model.put(key, v);
        }
      }
      // the slot a node remembers is a hint: a wrong one must not mislead publishing
      for (int c = r.nextInt(4); c > 0 && !model.isEmpty(); c--) {
        Node n =
            g.get(model.ceilingKey(PREFIXES[r.nextInt(PREFIXES.length)] + "k" + r.nextInt(300)));
        if (n != null) {
          n.setPublishedSlot(r.nextInt(50));
        }
      }
      publish(p, g, seq);
      check(p.current(), model, "seed " + seed + ", batch " + seq);
    }
  }

  private static void put(Graph g, String key, Object value) {
    Node n = g.write(key);
    n.setValue(value);
    n.setState(ValueState.CONFIGURED);
  }

  private static void publish(Published p, Graph g, long seq) {
    Touched t = new Touched(seq);
    t.add(g.endBatch(), false);
    p.update(t, g);
  }

  private static void check(PublishedSnapshot s, TreeMap<String, Object> model, String where) {
    assertThat(s.size()).as(where).isEqualTo(model.size());
    assertThat(entries(s.values())).as(where).isEqualTo(entries(model));
    for (String prefix : PREFIXES) {
      assertThat(entries(s.withPrefix(prefix)))
          .as(where + ": prefix " + prefix)
          .isEqualTo(entries(model.subMap(prefix, NodeStore.prefixEnd(prefix))));
    }
    int step = Math.max(1, model.size() / 200);
    int i = 0;
    for (String key : model.keySet()) {
      if (i++ % step != 0) {
        continue;
      }
      KeyRevision v = s.get(key);
      if (v == null || !v.value.equals(model.get(key))) {
        assertThat(v).as(where + ": lookup of " + key).isNotNull();
        assertThat(v.value).as(where + ": lookup of " + key).isEqualTo(model.get(key));
      }
    }
    for (int a = 0; a < 20; a++) {
      String absent = "a/k" + (10_000 + a);
      assertThat(s.get(absent)).isNull();
      assertThat(s.containsKey(absent)).isFalse();
    }
  }
}
