package io.kvscheduler.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The graph's node table against a hash map, including keys whose hashes collide. */
class NodeTableTest {

  /** Keys of few distinct hashes ("Aa" and "BB" share a hash, so do their concatenations). */
  private static String collidingKey(Random rnd) {
    StringBuilder sb = new StringBuilder("/k/");
    for (int i = 0; i < 3; i++) {
      sb.append(rnd.nextBoolean() ? "Aa" : "BB");
    }
    return sb.append(rnd.nextInt(4)).toString();
  }

  private static String spreadKey(Random rnd) {
    return "/k/" + rnd.nextInt(3000);
  }

  @Test
  @DisplayName(
      "random additions, refused second nodes and removals agree with a hash map, with"
          + " colliding and spread keys, through growth and after the table empties")
  void agreesWithAHashMap() {
    for (long seed = 1; seed <= 6; seed++) {
      Random rnd = new Random(seed);
      boolean colliding = seed % 2 == 0;
      NodeTable t = new NodeTable();
      if (seed == 5) {
        t.reserve(1000);
      }
      Map<String, Node> model = new HashMap<>();
      for (int step = 0; step < 20_000; step++) {
        // a fresh String instance each time: lookups compare contents, not identity
        String key = new String(colliding ? collidingKey(rnd) : spreadKey(rnd));
        int op = rnd.nextInt(step < 12_000 ? 3 : 5); // later: mostly removals, the table empties
        if (op == 0) {
          Node n = new Node(key);
          if (model.containsKey(key)) {
            assertThatThrownBy(() -> t.add(n))
                .as("second node for " + key)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(key);
            assertThat(t.get(key)).as("unchanged").isSameAs(model.get(key));
          } else {
            t.add(n);
            model.put(key, n);
          }
        } else if (op == 1) {
          assertThat(t.get(key)).as("get " + key).isSameAs(model.get(key));
        } else {
          assertThat(t.remove(key)).as("remove " + key).isSameAs(model.remove(key));
        }
        assertThat(t.size()).isEqualTo(model.size());
        if (step % 997 == 0) {
          assertSameContent(t, model);
        }
      }
      assertSameContent(t, model);
      for (String key : new ArrayList<>(model.keySet())) {
        assertThat(t.remove(key)).isSameAs(model.remove(key));
      }
      assertThat(t.isEmpty()).isTrue();
      assertThat(t.values()).isEmpty();
    }
  }

  private static void assertSameContent(NodeTable t, Map<String, Node> model) {
    Map<String, Node> listed = new HashMap<>();
    for (Node n : t.values()) {
      assertThat(listed.put(n.key, n)).as("listed twice: " + n.key).isNull();
    }
    assertThat(listed).isEqualTo(model);
    for (Map.Entry<String, Node> e : model.entrySet()) {
      assertThat(t.get(new String(e.getKey()))).isSameAs(e.getValue());
    }
  }

  @Test
  @DisplayName(
      "removing from a run of colliding keys keeps every other key of the run reachable,"
          + " whichever is removed, also when the run wraps around the end of the table")
  void removalInsideAWrappingRun() {
    // keys whose stored hash is the same: one probe run; the prefix is chosen so that the run
    // starts two slots before the end of a table of 16 slots, and wraps
    String prefix = "";
    for (int p = 0; (NodeTable.stored(prefix + "AaAaAa") & 15) != 14; p++) {
      prefix = "p" + p;
    }
    List<String> same = new ArrayList<>();
    for (String a : List.of("Aa", "BB")) {
      for (String b : List.of("Aa", "BB")) {
        for (String c : List.of("Aa", "BB")) {
          same.add(prefix + a + b + c);
        }
      }
    }
    assertThat(same).allMatch(k -> NodeTable.stored(k) == NodeTable.stored(same.get(0)));
    for (int removed = 0; removed < same.size(); removed++) {
      NodeTable t = new NodeTable(); // 16 slots: the run of 8 from the home slot may wrap
      for (String k : same) {
        t.add(new Node(k));
      }
      t.remove(same.get(removed));
      for (int i = 0; i < same.size(); i++) {
        if (i == removed) {
          assertThat(t.get(same.get(i))).isNull();
        } else {
          assertThat(t.get(same.get(i))).as(same.get(i) + " after removing " + removed).isNotNull();
        }
      }
    }
  }

  @Test
  @DisplayName("changing the table while iterating over it is reported, not silently skipped")
  void iterationSeesChanges() {
    NodeTable t = new NodeTable();
    t.add(new Node("/a"));
    t.add(new Node("/b"));
    Iterator<Node> it = t.values().iterator();
    it.next();
    t.add(new Node("/c"));
    assertThatThrownBy(it::next).isInstanceOf(ConcurrentModificationException.class);
  }

  @Test
  @DisplayName("the view of the nodes is read only")
  void valuesAreReadOnly() {
    NodeTable t = new NodeTable();
    Node a = new Node("/a");
    t.add(a);
    assertThatThrownBy(() -> t.values().add(new Node("/b")))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> t.values().remove(a))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> t.values().clear()).isInstanceOf(UnsupportedOperationException.class);
    Iterator<Node> it = t.values().iterator();
    it.next();
    assertThatThrownBy(it::remove).isInstanceOf(UnsupportedOperationException.class);
    assertThat(t.get("/a")).isSameAs(a);
  }
}
