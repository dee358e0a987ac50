package io.kvscheduler.internal.engine.graph;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Our equivalents of the catalogue's graph guarantees (behaviors.md §4 and §5). The Go graph keeps
 * explicit edges, copy-on-write write handles and an edge-lookup index with overlays; we keep the
 * dependencies on the node, a reverse index (exact keys, key prefixes, selector-only any-of) and a
 * per-batch write journal whose {@link Graph#rollback()} replaces the overlays (simulation runs on
 * the live graph and is rolled back). Targets are resolved on demand ({@link Graph#targetsOf},
 * {@link Graph#anyTarget}), reverse edges through {@link Graph#dependentsOf}.
 *
 * <p>Fixture names follow the catalogue (§4): kA1..kA3 under /prefixA/, kB1 under /prefixB/. Long
 * because it covers two catalogue sections with one shared consistency checker.
 */
class GraphTest {
  static final String KA1 = "/prefixA/key1";
  static final String KA2 = "/prefixA/key2";
  static final String KA3 = "/prefixA/key3";
  static final String KB1 = "/prefixB/key4";

  // ------------------------------------------------------------------ helpers

  /** Writes {@code key} with a value (string "v:key") and dependencies. */
  private static Node put(Graph g, String key, Dependency... deps) {
    Node n = g.write(key);
    n.setValue("v:" + key);
    g.setDeps(n, List.of(deps));
    return n;
  }

  private static List<String> keys(Collection<Node> nodes) {
    List<String> out = new ArrayList<>();
    for (Node n : nodes) {
      out.add(n.key());
    }
    return out;
  }

  /** Keys of one part of {@link #index}, in order. */
  static List<Object> keysOf(Object map) {
    return new ArrayList<>(((Map<?, ?>) map).keySet());
  }

  /** The entries of a closed batch's journal: key → content before the batch, in order. */
  static Map<String, Node> entries(BatchJournal j) {
    Map<String, Node> out = new LinkedHashMap<>();
    for (int i = 0; i < j.size(); i++) {
      assertThat(out.put(j.key(i), j.before(i))).as("key listed twice: " + j.key(i)).isNull();
    }
    return out;
  }

  /**
   * Every instance field of a node, by name (picks up fields added later, too; the private ones,
   * kept for other subsystems behind accessors, are read with an access override).
   */
  static Map<String, Object> content(Node n) {
    Map<String, Object> out = new TreeMap<>();
    for (Field f : Node.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        continue;
      }
      try {
        f.setAccessible(true);
        out.put(f.getName(), f.get(n));
      } catch (IllegalAccessException e) {
        throw new AssertionError(e);
      }
    }
    return out;
  }

  /** Deep copy of the reverse dependency index (its package-private structures, exactly). */
  @SuppressWarnings("unchecked")
  static Map<String, Object> index(Graph g) {
    DependencyIndex idx = g.dependencies;
    Map<String, Object> out = new LinkedHashMap<>();
    Map<String, Map<String, ?>> maps = new LinkedHashMap<>();
    maps.put("keyDependents", idx.keyDependents);
    maps.put("prefixDependents", idx.prefixDependents);
    maps.forEach(
        (name, m) -> {
          // keyDependents keeps a single dependent as a String, several as a TreeSet
          TreeMap<String, List<String>> copy = new TreeMap<>();
          m.forEach(
              (k, v) ->
                  copy.put(
                      k, v instanceof String s ? List.of(s) : List.copyOf((Collection<String>) v)));
          out.put(name, copy);
        });
    out.put("prefixLengths", new TreeMap<>(idx.prefixLengths));
    out.put("selectorDependents", List.copyOf(idx.selectorDependents));
    return out;
  }

  /**
   * The node table's nodes by key, read through its iteration; each must also be found by the
   * table's lookup (checked here) and no key may be listed twice.
   */
  static Map<String, Node> nodeMap(Graph g) {
    Map<String, Node> table = g.store.table;
    Map<String, Node> out = new TreeMap<>();
    for (Node n : table.values()) {
      assertThat(out.put(n.key(), n)).as("key listed twice: " + n.key()).isNull();
      assertThat(table.get(n.key())).as("lookup of " + n.key()).isSameAs(n);
    }
    assertThat(out).hasSize(table.size());
    return out;
  }

  /** Everything observable and internal: nodes (content), key order, the reverse index. */
  static Map<String, Object> state(Graph g) {
    Map<String, Object> out = new LinkedHashMap<>();
    Map<String, Node> nodes = nodeMap(g);
    TreeMap<String, Object> contents = new TreeMap<>();
    nodes.forEach((k, n) -> contents.put(k, content(n)));
    out.put("nodes", contents);
    out.put("ordered", List.copyOf(g.all().keySet()));
    out.put("index", index(g));
    return out;
  }

  /**
   * The reverse index rebuilt from scratch from the nodes' dependencies; must equal the
   * incrementally maintained one.
   */
  static Map<String, Object> expectedIndex(Graph g) {
    TreeMap<String, List<String>> exact = new TreeMap<>();
    TreeMap<String, List<String>> prefix = new TreeMap<>();
    TreeSet<String> selector = new TreeSet<>();
    TreeMap<String, TreeSet<String>> ex = new TreeMap<>();
    TreeMap<String, TreeSet<String>> px = new TreeMap<>();
    for (Node n : g.all().values()) {
      for (Dependency d : n.deps()) {
        if (!d.isAnyOf()) {
          ex.computeIfAbsent(d.key(), k -> new TreeSet<>()).add(n.key());
        } else if (d.keyPrefixes().isEmpty()) {
          selector.add(n.key());
        } else {
          for (String p : d.keyPrefixes()) {
            px.computeIfAbsent(p, k -> new TreeSet<>()).add(n.key());
          }
        }
      }
    }
    ex.forEach((k, v) -> exact.put(k, List.copyOf(v)));
    px.forEach((k, v) -> prefix.put(k, List.copyOf(v)));
    TreeMap<Integer, Integer> lengths = new TreeMap<>();
    px.forEach((p, srcs) -> lengths.merge(p.length(), srcs.size(), Integer::sum));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("keyDependents", exact);
    out.put("prefixDependents", prefix);
    out.put("prefixLengths", lengths);
    out.put("selectorDependents", List.copyOf(selector));
    return out;
  }

  /**
   * B30 in our terms: for every key of {@code universe} and every node, {@code dependentsOf(key)}
   * contains the node iff one of its dependencies matches the key (brute force); targetsOf /
   * anyTarget / range agree with a scan; both maps hold the same node instances; the reverse index
   * equals the one rebuilt from scratch.
   */
  static void assertConsistent(Graph g, Collection<String> universe, String context) {
    List<String> problems = new ArrayList<>();
    Map<String, Node> nodes = nodeMap(g);
    List<String> sortedKeys = List.copyOf(new TreeSet<>(nodes.keySet()));
    check(problems, "ordered keys = hashed keys", List.copyOf(g.all().keySet()), sortedKeys);
    check(problems, "size", g.size(), nodes.size());
    for (Node n : g.all().values()) {
      if (nodes.get(n.key()) != n || g.get(n.key()) != n) {
        problems.add("not the same instance in both maps: " + n.key());
      }
    }
    check(problems, "reverse index = rebuilt from the nodes", index(g), expectedIndex(g));
    TreeSet<String> all = new TreeSet<>(universe);
    all.addAll(nodes.keySet());
    for (String key : all) {
      List<String> expected = new ArrayList<>();
      List<String> inRange = new ArrayList<>();
      for (Node n : g.all().values()) {
        if (n.deps().stream().anyMatch(d -> d.matches(key))) {
          expected.add(n.key());
        }
        if (n.key().startsWith(key)) {
          inRange.add(n.key());
        }
      }
      check(problems, "dependentsOf(" + key + ")", List.copyOf(g.dependentsOf(key)), expected);
      check(problems, "range(" + key + ")", List.copyOf(g.range(key).keySet()), inRange);
    }
    for (Node n : g.all().values()) {
      for (Dependency d : n.deps()) {
        List<String> targets = new ArrayList<>();
        for (Node t : g.all().values()) {
          if (t.value() != null && d.matches(t.key())) {
            targets.add(t.key());
          }
        }
        check(problems, "targetsOf(" + d + ") of " + n.key(), keys(g.targetsOf(d)), targets);
        check(
            problems,
            "anyTarget(" + d + ") of " + n.key(),
            g.anyTarget(d, t -> true),
            !targets.isEmpty());
      }
    }
    assertThat(problems).as(context).isEmpty();
  }

  private static void check(List<String> problems, String what, Object actual, Object expected) {
    if (!actual.equals(expected)) {
      problems.add(what + ": expected " + expected + " but was " + actual);
    }
  }

  /** The standard 4-node build of the catalogue (§4), edges first defined otherwise (B29). */
  static Graph buildCatalogueGraph() {
    Graph g = new Graph();
    Node a1 = g.write(KA1);
    a1.setValue("this is value1");
    a1.setLabel("value1");
    a1.setMetadata(1);
    g.setDeps(a1, List.of(Dependency.onKey("relation1", KA3), Dependency.onKey("relation2", KA2)));
    g.setDeps(
        a1,
        List.of(Dependency.onKey("node2", KA2), Dependency.anyOfPrefixes("prefixB", "/prefixB/")));
    Node a2 = put(g, KA2, Dependency.onKey("node3", KA3));
    Node a3 = put(g, KA3, Dependency.onKey("tmp", KB1));
    g.setDeps(
        a3,
        List.of(
            Dependency.anyOf("node1+node2", List.of(), k -> k.equals(KA1) || k.equals(KA2)),
            Dependency.anyOfPrefixes("prefixB", "/prefixB/")));
    put(
        g,
        KB1,
        Dependency.anyOfPrefixes("prefixA", "/prefixA/"),
        Dependency.onKey("non-existing-key", "non-existing-key"));
    assertThat(a2.deps()).hasSize(1);
    g.endBatch();
    return g;
  }

  static final List<String> CATALOGUE_KEYS =
      List.of(
          KA1,
          KA2,
          KA3,
          KB1,
          "non-existing-key",
          "/prefixA/",
          "/prefixB/",
          "/prefixA/key10",
          "/prefixB/key4/sub",
          "/prefixC/key5",
          "");

  // ------------------------------------------------------------------ tests

  @Test
  @DisplayName(
      "B19 (ours) an empty graph has no nodes, no dependents, no targets, an empty journal")
  void emptyGraph() {
    Graph g = new Graph();
    assertThat(g.size()).isZero();
    assertThat(g.get(KA1)).isNull();
    assertThat(g.all()).isEmpty();
    assertThat(g.range("")).isEmpty();
    assertThat(g.range("/prefixA/")).isEmpty();
    assertThat(g.dependentsOf(KA1)).isEmpty();
    assertThat(g.dependentsOf("")).isEmpty();
    assertThat(g.targetsOf(Dependency.onKey("l", KA1))).isEmpty();
    assertThat(g.targetsOf(Dependency.anyOfPrefixes("l", "/prefixA/"))).isEmpty();
    assertThat(g.anyTarget(Dependency.anyOf("l", List.of(), k -> true), n -> true)).isFalse();
    assertThat(g.journaledKeys()).isEmpty();
    g.rollback();
    assertThat(entries(g.endBatch())).isEmpty();
    assertThat(index(g)).isEqualTo(expectedIndex(g));
    assertThat((Map<?, ?>) index(g).get("keyDependents")).isEmpty();
    assertConsistent(g, CATALOGUE_KEYS, "empty");
  }

  @Test
  @DisplayName(
      "B20 B21 B23 B38 (ours) write() creates an empty node, visible at once; attributes"
          + " read back; the handle survives endBatch() but not rollback()")
  void nodeWriteRead() {
    Graph g = new Graph();
    Node n = g.write(KA1);
    // B20: only the key (and label = key) are set
    assertThat(n.key()).isEqualTo(KA1);
    assertThat(n.label()).isEqualTo(KA1);
    assertThat(n.value()).isNull();
    assertThat(n.metadata()).isNull();
    assertThat(n.descriptor()).isNull();
    assertThat(n.derivedFrom()).isNull();
    assertThat(n.state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(n.unavailable()).isFalse();
    assertThat(n.lastUpdate()).isNull();
    assertThat(n.error()).isNull();
    assertThat(n.deps()).isEmpty();
    assertThat(n.derivedKeys()).isEmpty();
    assertThat(n.isDerived()).isFalse();
    assertThat(g.get(KA1)).isSameAs(n);
    assertThat(g.journaledKeys()).containsExactly(KA1);
    assertThat(g.write(KA1)).as("a second write in the batch returns the same node").isSameAs(n);

    // B21: attributes round-trip
    n.setLabel("value1");
    n.setValue("this is value1");
    n.setMetadata(1);
    n.setDescriptor("descriptor1");
    n.setState(ValueState.CONFIGURED);
    n.setLastUpdate(new Node.LastUpdate(3, TxnOperation.CREATE, "this is value1", false, null));
    g.setDeps(n, List.of(Dependency.onKey("node2", KA2)));
    Node d = g.write(KA1 + "/item1");
    d.setValue("item");
    d.setDerivedFrom(KA1);
    n.setDerivedKeys(List.of(KA1 + "/item1"));
    Map<String, Node> journal = entries(g.endBatch());
    assertThat(journal).containsOnlyKeys(KA1, KA1 + "/item1");
    assertThat(journal.get(KA1)).isSameAs(BatchJournal.ABSENT);
    Node r = g.get(KA1);
    assertThat(r).isSameAs(n);
    assertThat(r.label()).isEqualTo("value1");
    assertThat(r.value()).isEqualTo("this is value1");
    assertThat(r.metadata()).isEqualTo(1);
    assertThat(r.state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(r.lastOperation()).isEqualTo(TxnOperation.CREATE);
    assertThat(r.deps()).containsExactly(Dependency.onKey("node2", KA2));
    assertThat(r.unavailable()).as("a flag not set reads as absent").isFalse();
    assertThat(r.isAvailable()).isTrue();
    assertThat(g.get(KA1 + "/item1").isDerived()).isTrue();
    assertThat(g.get(KA1 + "/item1").baseKey()).isEqualTo(KA1);

    // B38: the same handle is returned by write() in the next batch; changes accumulate
    Node again = g.write(KA1);
    assertThat(again).isSameAs(n);
    again.setUnavailable(true);
    g.endBatch();
    Node third = g.write(KA1);
    third.setError(new IllegalStateException("x"));
    g.endBatch();
    assertThat(g.get(KA1).unavailable()).isTrue();
    assertThat(g.get(KA1).error()).isNotNull();
    assertThat(g.get(KA1).label()).isEqualTo("value1");

    // ours: rollback() restores a copy, so a handle taken in the rolled-back batch is detached
    Node w = g.write(KA1);
    w.setValue("changed");
    g.rollback();
    assertThat(g.get(KA1)).isNotSameAs(w);
    assertThat(g.get(KA1).value()).isEqualTo("this is value1");
    assertConsistent(g, List.of(KA1, KA2), "after rollback");
  }

  @Test
  @DisplayName(
      "B20 (ours) endBatch() drops the nodes written in the batch that were left without"
          + " a value, and their dependency edges")
  void endBatchDropsValuelessNodes() {
    Graph g = new Graph();
    Node n = g.write(KA1);
    g.setDeps(n, List.of(Dependency.onKey("l", KA2), Dependency.anyOfPrefixes("p", "/prefixB/")));
    put(g, KA2);
    assertThat(g.dependentsOf(KA2)).containsExactly(KA1);
    assertThat(g.targetsOf(Dependency.anyOfPrefixes("x", "/prefixA/")))
        .as("a node without value is never a target")
        .extracting(t -> t.key())
        .containsExactly(KA2);
    Map<String, Node> journal = entries(g.endBatch());
    assertThat(journal).containsOnlyKeys(KA1, KA2);
    assertThat(g.get(KA1)).isNull();
    assertThat(g.dependentsOf(KA2)).isEmpty();
    assertThat(g.dependentsOf(KB1)).isEmpty();
    assertConsistent(g, List.of(KA1, KA2, KB1), "after endBatch");
  }

  @Test
  @DisplayName(
      "B22 B24 B42 B45 (ours: journal rollback instead of overlays) rollback restores"
          + " every node, the key index and the dependency index exactly")
  void rollbackRestoresEverything() {
    Graph g = buildCatalogueGraph();
    Map<String, Object> saved = state(g);

    // every kind of write in one batch
    Node a1 = g.write(KA1);
    a1.setValue("changed");
    a1.setState(ValueState.PENDING);
    a1.setUnavailable(true);
    a1.setMetadata(99);
    g.setDeps(
        a1,
        List.of(
            Dependency.onKey("other", "/prefixC/x"),
            Dependency.anyOf("sel", List.of(), k -> k.endsWith("3"))));
    g.remove(KA2); // removed
    g.remove(KA3); // removed and re-created with other deps
    put(g, KA3, Dependency.anyOfPrefixes("all", ""));
    put(g, "/prefixC/new", Dependency.onKey("l", KA1)); // created
    put(g, "/prefixC/gone"); // created and removed again
    g.remove("/prefixC/gone");
    g.write("/prefixC/empty"); // created without value
    Node b1 = g.write(KB1);
    g.setDeps(b1, List.of());
    assertThat(state(g)).isNotEqualTo(saved);
    assertConsistent(g, CATALOGUE_KEYS, "before rollback");

    g.rollback();
    assertThat(state(g)).isEqualTo(saved);
    assertThat(g.journaledKeys()).isEmpty();
    assertThat(entries(g.endBatch())).as("nothing left to commit").isEmpty();
    assertConsistent(g, CATALOGUE_KEYS, "after rollback");

    // B24: only the current batch is undone; committed batches stay
    put(g, "/prefixC/kept", Dependency.onKey("l", KB1));
    g.endBatch();
    Map<String, Object> committed = state(g);
    g.remove("/prefixC/kept");
    g.write(KB1).setValue("x");
    g.rollback();
    assertThat(state(g)).isEqualTo(committed);
    assertThat(g.dependentsOf(KB1)).contains("/prefixC/kept");
  }

  @Test
  @DisplayName(
      "(ours) rollbackThrough the batch closed last undoes that batch as well (an aborted"
          + " transaction's refresh); given an older batch, it undoes only the current one")
  void rollbackThroughUndoesTheBatchClosedLast() {
    Graph g = new Graph();
    put(g, KA1);
    g.endBatch();
    Map<String, Object> beforeRefresh = state(g);
    put(g, KA2);
    g.write(KA1).setState(ValueState.DISCOVERED);
    BatchJournal refresh = g.endBatch();
    g.write(KA2).setState(ValueState.FAILED);
    g.remove(KA1);
    put(g, KB1);
    g.rollbackThrough(refresh);
    assertThat(state(g)).isEqualTo(beforeRefresh);
    assertConsistent(g, List.of(KA1, KA2, KB1), "after rollbackThrough");

    put(g, KA2);
    BatchJournal older = g.endBatch();
    put(g, KB1);
    g.endBatch();
    Map<String, Object> afterBoth = state(g);
    g.write(KA1).setState(ValueState.FAILED);
    g.rollbackThrough(older);
    assertThat(state(g)).as("an older batch stays").isEqualTo(afterBoth);
  }

  @Test
  @DisplayName("(ours) rollback leaves the batch closed before it alone")
  void plainRollbackKeepsTheBatchBefore() {
    Graph g = new Graph();
    put(g, KA1);
    g.endBatch();
    Map<String, Object> afterFirst = state(g);
    g.write(KA1).setState(ValueState.CONFIGURED);
    g.rollback();
    assertThat(state(g)).isEqualTo(afterFirst);
  }

  @Test
  @DisplayName(
      "B38 (ours) nodes created in bulk are sorted into the ordered index in one merge:"
          + " all() and range() list exactly the live nodes in key order, after removals and after a"
          + " rollback")
  void bulkCreationKeepsTheOrderedIndex() {
    Graph g = new Graph();
    TreeSet<String> live = new TreeSet<>();
    for (int i = 0; i < 300; i++) {
      String key = "/p" + (i % 3) + "/k" + String.format("%04d", (i * 7919) % 1000);
      g.write(key).setValue(i);
      live.add(key);
    }
    assertThat(g.all().keySet()).containsExactlyElementsOf(live);
    g.endBatch();
    TreeSet<String> committed = new TreeSet<>(live);
    // a second wave: many new keys interleaved with the old ones, some old ones removed
    for (int i = 0; i < 200; i++) {
      String key = "/p" + (i % 3) + "/k" + String.format("%04d", 1000 + (i * 31) % 997);
      g.write(key).setValue(i);
      live.add(key);
    }
    List<String> old = new ArrayList<>(committed);
    for (int i = 0; i < old.size(); i += 7) {
      g.remove(old.get(i));
      live.remove(old.get(i));
    }
    assertThat(g.range("/p1/").keySet()).containsExactlyElementsOf(live.subSet("/p1/", "/p10"));
    assertThat(g.all().keySet()).containsExactlyElementsOf(live);
    assertThat(g.all().values()).allMatch(n -> g.get(n.key()) == n);
    g.rollback();
    assertThat(g.all().keySet()).containsExactlyElementsOf(committed);
    assertThat(g.size()).isEqualTo(committed.size());
  }

  @Test
  @DisplayName(
      "B22 B24 B30 B42 B45 (ours) random batches: rollback restores the state at the last"
          + " endBatch exactly, and the index stays consistent after every operation")
  void randomBatchesRollback() {
    for (long seed = 1; seed <= 30; seed++) {
      Random rnd = new Random(seed);
      Graph g = new Graph();
      Map<String, Object> atBatchStart = state(g);
      for (int step = 0; step < 120; step++) {
        String ctx = "seed " + seed + " step " + step;
        int op = rnd.nextInt(20);
        if (op == 0) {
          g.endBatch();
          atBatchStart = state(g);
        } else if (op == 1) {
          g.rollback();
          if (!state(g).equals(atBatchStart)) {
            assertThat(state(g)).as("rollback; %s", ctx).isEqualTo(atBatchStart);
          }
        } else {
          randomOp(g, rnd);
        }
        if (op <= 1 || step % 3 == 0) {
          assertConsistent(g, UNIVERSE, ctx);
        }
      }
      g.rollback();
      assertThat(state(g)).as("final rollback, seed %s", seed).isEqualTo(atBatchStart);
    }
  }

  @Test
  @DisplayName(
      "B27 B43 B44 (ours) exact-key, prefix and catch-all dependencies: dependents are"
          + " found whether or not the target exists; a node may depend on itself; removed edges"
          + " are no longer reported")
  void exactKeyDependencies() {
    String n1 = "prefix1/node1";
    String n2 = "prefix1/node2";
    String n3 = "prefix2/node3";
    Graph g = new Graph();
    // B43's edges: node2 -> node1 and node3 (exact), node3 -> prefix1/ and itself, node1 -> all
    put(g, n2, Dependency.onKey("node1 exists", n1), Dependency.onKey("node3 exists", n3));
    put(
        g,
        n3,
        Dependency.anyOfPrefixes("prefix1 non-empty", "prefix1/"),
        Dependency.onKey("myself", n3));
    assertThat(g.dependentsOf(n1)).as("before node1 exists").containsExactly(n2, n3);
    put(g, n1, Dependency.anyOfPrefixes("all", ""));
    assertThat(g.dependentsOf(n1)).containsExactly(n1, n2, n3);
    assertThat(g.dependentsOf(n2)).containsExactly(n1, n3);
    assertThat(g.dependentsOf(n3)).as("includes the edge to itself").containsExactly(n1, n2, n3);
    assertThat(keys(g.targetsOf(Dependency.onKey("myself", n3)))).containsExactly(n3);
    assertConsistent(
        g, List.of(n1, n2, n3, "prefix1/", "prefix1", "prefix3/node4", "x"), "B43 edges");

    // B27: a missing static target has no target node, and gets one when the key appears
    Dependency n4 = Dependency.onKey("node4 exists", "prefix3/node4");
    put(g, "prefix3/src", n4);
    assertThat(g.targetsOf(n4)).isEmpty();
    assertThat(g.anyTarget(n4, t -> true)).isFalse();
    assertThat(g.dependentsOf("prefix3/node4")).containsExactly(n1, "prefix3/src");
    put(g, "prefix3/node4");
    assertThat(keys(g.targetsOf(n4))).containsExactly("prefix3/node4");
    assertThat(g.anyTarget(n4, t -> true)).isTrue();

    // B44: removed edges (node2 -> node3, node1 -> all) are no longer reported
    g.setDeps(g.write(n2), List.of(Dependency.onKey("node1 exists", n1)));
    g.setDeps(g.write(n1), List.of());
    assertThat(g.dependentsOf(n3)).containsExactly(n3);
    assertThat(g.dependentsOf(n1)).containsExactly(n2, n3);
    assertThat(g.dependentsOf("prefix3/node4")).containsExactly("prefix3/src");
    assertThat(keysOf(index(g).get("prefixDependents"))).containsExactly("prefix1/");
    assertConsistent(g, List.of(n1, n2, n3, "prefix3/node4"), "B44");
  }

  @Test
  @DisplayName(
      "B27 B28 (ours) catalogue 4-node build: static, prefix, selector-only and"
          + " prefix+selector targets, including keys created after the dependency was declared")
  void catalogueEdges() {
    Graph g = new Graph();
    // kA1's prefix dependency is declared before any /prefixB/ key exists
    put(g, KA1, Dependency.onKey("node2", KA2), Dependency.anyOfPrefixes("prefixB", "/prefixB/"));
    Dependency prefixB = Dependency.anyOfPrefixes("prefixB", "/prefixB/");
    assertThat(g.targetsOf(prefixB)).isEmpty();
    assertThat(g.dependentsOf(KB1)).as("reverse edge exists before the key").containsExactly(KA1);
    g.endBatch();
    g.rollback();
    Graph built = buildCatalogueGraph();
    for (Graph x : List.of(g, built)) {
      if (x == g) {
        put(g, KA2, Dependency.onKey("node3", KA3));
        put(
            g,
            KA3,
            Dependency.anyOf("node1+node2", List.of(), k -> k.equals(KA1) || k.equals(KA2)),
            Dependency.anyOfPrefixes("prefixB", "/prefixB/"));
        put(
            g,
            KB1,
            Dependency.anyOfPrefixes("prefixA", "/prefixA/"),
            Dependency.onKey("non-existing-key", "non-existing-key"));
      }
      // targets (B27, B28)
      assertThat(keys(x.targetsOf(x.get(KA1).deps().get(0)))).containsExactly(KA2);
      assertThat(keys(x.targetsOf(x.get(KA1).deps().get(1)))).containsExactly(KB1);
      assertThat(keys(x.targetsOf(x.get(KA3).deps().get(0)))).containsExactly(KA1, KA2);
      assertThat(keys(x.targetsOf(x.get(KB1).deps().get(0)))).containsExactly(KA1, KA2, KA3);
      assertThat(x.targetsOf(x.get(KB1).deps().get(1))).isEmpty();
      // sources (reverse edges)
      assertThat(x.dependentsOf(KA1)).containsExactly(KA3, KB1);
      assertThat(x.dependentsOf(KA2)).containsExactly(KA1, KA3, KB1);
      assertThat(x.dependentsOf(KA3)).containsExactly(KA2, KB1);
      assertThat(x.dependentsOf(KB1)).containsExactly(KA1, KA3);
      assertThat(x.dependentsOf("non-existing-key")).containsExactly(KB1);
      assertThat(x.dependentsOf("/prefixA/key10"))
          .as("any key under the prefix")
          .containsExactly(KB1);
      assertThat(x.dependentsOf("/prefixC/key5")).isEmpty();
      assertConsistent(x, CATALOGUE_KEYS, "catalogue build");
    }
    // B28: a node created later is added automatically (prefix and selector-only)
    put(g, "/prefixB/key5");
    assertThat(keys(g.targetsOf(prefixB))).containsExactly(KB1, "/prefixB/key5");
    Dependency sel = Dependency.anyOf("ends with 5", List.of(), k -> k.endsWith("5"));
    put(g, "/prefixC/sel", sel);
    assertThat(keys(g.targetsOf(sel))).containsExactly("/prefixB/key5");
    put(g, "/prefixC/key5");
    assertThat(keys(g.targetsOf(sel))).containsExactly("/prefixB/key5", "/prefixC/key5");
    assertThat(g.dependentsOf("/prefixC/key5")).containsExactly("/prefixC/sel");
    assertThat(g.dependentsOf("/prefixZ/5"))
        .as("selector-only: any key the selector accepts")
        .containsExactly("/prefixC/sel");
    // B71: prefix and selector intersect
    Dependency both = Dependency.anyOf("A ending in 2", List.of("/prefixA/"), k -> k.endsWith("2"));
    put(g, "/prefixC/both", both);
    assertThat(keys(g.targetsOf(both))).containsExactly(KA2);
    assertThat(g.dependentsOf(KA2)).contains("/prefixC/both");
    assertThat(g.dependentsOf(KA1)).doesNotContain("/prefixC/both");
    assertThat(g.dependentsOf("/prefixB/key2")).doesNotContain("/prefixC/both");
    assertConsistent(g, CATALOGUE_KEYS, "late keys");
  }

  @Test
  @DisplayName("B29 (ours) setDeps replaces the whole dependency list and its reverse edges")
  void setDepsReplaces() {
    Graph g = new Graph();
    Node a1 =
        put(
            g,
            KA1,
            Dependency.onKey("relation1", KA3),
            Dependency.onKey("relation2", KA2),
            Dependency.anyOfPrefixes("pfx", "/prefixC/"),
            Dependency.anyOf("sel", List.of(), k -> k.equals(KB1)));
    assertThat(g.dependentsOf(KA3)).containsExactly(KA1);
    assertThat(g.dependentsOf("/prefixC/x")).containsExactly(KA1);
    assertThat(g.dependentsOf(KB1)).containsExactly(KA1);
    g.setDeps(
        a1,
        List.of(
            Dependency.onKey("relation1", KA2), Dependency.anyOfPrefixes("prefixB", "/prefixB/")));
    assertThat(a1.deps()).extracting(Dependency::label).containsExactly("relation1", "prefixB");
    assertThat(g.dependentsOf(KA3)).as("old relation1 target").isEmpty();
    assertThat(g.dependentsOf(KA2)).containsExactly(KA1);
    assertThat(g.dependentsOf("/prefixC/x")).isEmpty();
    assertThat(g.dependentsOf(KB1)).containsExactly(KA1);
    assertThat(g.dependentsOf("/prefixB/other")).containsExactly(KA1);
    Map<String, Object> idx = index(g);
    assertThat(keysOf(idx.get("keyDependents"))).containsExactly(KA2);
    assertThat(keysOf(idx.get("prefixDependents"))).containsExactly("/prefixB/");
    assertThat(keysOf(idx.get("prefixLengths"))).containsExactly("/prefixB/".length());
    assertThat((List<?>) idx.get("selectorDependents")).isEmpty();
    // setting the same list again changes nothing
    g.setDeps(a1, List.copyOf(a1.deps()));
    assertThat(index(g)).isEqualTo(idx);
    g.setDeps(a1, List.of());
    assertThat(g.dependentsOf(KA2)).isEmpty();
    assertThat(index(g)).isEqualTo(expectedIndex(g));
    assertThat((Map<?, ?>) index(g).get("prefixLengths")).isEmpty();
    // two nodes on one prefix: removing one keeps the other and the length counter
    put(g, KA2, Dependency.anyOfPrefixes("p", "/prefixB/"));
    put(
        g,
        KA3,
        Dependency.anyOfPrefixes("p", "/prefixB/"),
        Dependency.anyOfPrefixes("q", "/prefixB/"));
    g.setDeps(g.write(KA2), List.of());
    assertThat(g.dependentsOf(KB1)).containsExactly(KA3);
    assertConsistent(g, CATALOGUE_KEYS, "B29");
  }

  @Test
  @DisplayName(
      "B32 (ours) removing nodes drops their own edges; dependencies on them stay declared"
          + " and resolve to fewer targets")
  void nodeRemoval() {
    Graph g = buildCatalogueGraph();
    g.remove(KA2);
    g.remove(KB1);
    g.remove("/prefixA/never-existed");
    assertThat(g.get(KA2)).isNull();
    assertThat(g.get(KB1)).isNull();
    assertThat(g.size()).isEqualTo(2);
    assertThat(g.all().keySet()).containsExactly(KA1, KA3);
    assertThat(g.range("/prefixB/")).isEmpty();
    Node a1 = g.get(KA1);
    assertThat(a1.deps()).extracting(Dependency::label).containsExactly("node2", "prefixB");
    assertThat(g.targetsOf(a1.deps().get(0))).isEmpty();
    assertThat(g.targetsOf(a1.deps().get(1))).isEmpty();
    Node a3 = g.get(KA3);
    assertThat(keys(g.targetsOf(a3.deps().get(0)))).containsExactly(KA1);
    assertThat(g.targetsOf(a3.deps().get(1))).isEmpty();
    // kA1 had kB1 (prefixA) as a source; kB1's edges are gone, kA1's edges to kA2 stay declared
    assertThat(g.dependentsOf(KA1)).containsExactly(KA3);
    assertThat(g.dependentsOf(KA2)).containsExactly(KA1, KA3);
    assertThat(g.dependentsOf("non-existing-key")).isEmpty();
    assertThat(g.dependentsOf(KA3)).as("kA2's and kB1's edges are gone").isEmpty();
    Map<String, Node> journal = entries(g.endBatch());
    assertThat(journal).containsOnlyKeys(KA2, KB1);
    assertConsistent(g, CATALOGUE_KEYS, "B32");
  }

  @Test
  @DisplayName(
      "B40 B41 (ours) range(prefix) lists existing keys with that string prefix, sorted;"
          + " removed keys disappear")
  void rangeLookups() {
    Graph g = new Graph();
    put(g, "prefix1/node1");
    put(g, "prefix2/node3");
    put(g, "prefix1/node2");
    assertThat(g.get("prefix2/node1")).isNull();
    assertThat(g.range("prefix2/node1")).isEmpty();
    assertThat(g.range("prefix2/node3").keySet()).containsExactly("prefix2/node3");
    assertThat(g.range("prefix1/").keySet()).containsExactly("prefix1/node1", "prefix1/node2");
    assertThat(g.range("").keySet())
        .containsExactly("prefix1/node1", "prefix1/node2", "prefix2/node3");
    assertThat(g.range("prefix").keySet()).hasSize(3);
    assertThat(g.range("prefix3")).isEmpty();
    // B41
    g.remove("prefix1/node2");
    assertThat(g.range("prefix1/").keySet()).containsExactly("prefix1/node1");
    // a key used as prefix matches itself and its sub-keys
    put(g, "prefix1/node1/attr1");
    put(g, "prefix1/node1/attr2");
    put(g, "prefix1/node10");
    assertThat(g.range("prefix1/node1").keySet())
        .containsExactly(
            "prefix1/node1", "prefix1/node1/attr1", "prefix1/node1/attr2", "prefix1/node10");
    assertThat(g.range("prefix1/node1/").keySet())
        .containsExactly("prefix1/node1/attr1", "prefix1/node1/attr2");
    assertConsistent(g, List.of("prefix1/", "prefix1/node1", "prefix2", "p", ""), "B40");
  }

  @Test
  @DisplayName("B40 (ours) range(prefix) also covers keys whose next character is U+FFFF")
  void rangeCoversMaxChar() {
    Graph g = new Graph();
    String odd = "/prefixA/\uffff";
    String odder = "/prefixA/\uffff\uffffx";
    put(g, "/prefixA/a");
    put(g, odd);
    put(g, odder);
    put(g, "/prefixB/a");
    assertThat(g.range("/prefixA/").keySet()).containsExactly("/prefixA/a", odd, odder);
    assertThat(g.range(odd).keySet()).containsExactly(odd, odder);
    Dependency d = Dependency.anyOfPrefixes("p", "/prefixA/\uffff");
    assertThat(keys(g.targetsOf(d))).containsExactly(odd, odder);
  }

  @Test
  @DisplayName(
      "B40 B41 (ours) prefix lookups cost O(log n + matches): only keys in the prefix"
          + " range and only the prefix dependents of a key's prefixes are examined")
  void prefixLookupsVisitOnlyMatches() {
    Graph g = new Graph();
    for (int i = 0; i < 5000; i++) {
      put(g, "/other/key" + i);
    }
    put(g, "/q/1");
    put(g, "/q/2");
    put(g, "/q/3");
    AtomicInteger calls = new AtomicInteger();
    KeySelector counting =
        k -> {
          calls.incrementAndGet();
          return true;
        };
    Dependency d = Dependency.anyOf("q", List.of("/q/"), counting);
    assertThat(keys(g.targetsOf(d))).containsExactly("/q/1", "/q/2", "/q/3");
    assertThat(calls.get()).as("selector calls for targetsOf").isEqualTo(3);
    calls.set(0);
    assertThat(g.anyTarget(d, n -> n.key().equals("/q/2"))).isTrue();
    assertThat(calls.get()).as("anyTarget stops at the first accepted node").isEqualTo(2);

    // reverse lookups: 1000 nodes with a prefix dependency each (distinct prefixes)
    AtomicInteger revCalls = new AtomicInteger();
    for (int i = 0; i < 1000; i++) {
      String p = "/dep" + i + "/";
      put(
          g,
          "/src/" + i,
          Dependency.anyOf(
              "p",
              List.of(p),
              k -> {
                revCalls.incrementAndGet();
                return true;
              }));
    }
    assertThat(g.dependentsOf("/dep7/x")).containsExactly("/src/7");
    assertThat(revCalls.get()).as("only the matching prefix dependent is examined").isEqualTo(1);
    revCalls.set(0);
    assertThat(g.dependentsOf("/nothing/x")).isEmpty();
    assertThat(revCalls.get()).isZero();
    // selector-only dependencies are the documented linear case
    AtomicInteger selCalls = new AtomicInteger();
    for (int i = 0; i < 10; i++) {
      put(
          g,
          "/sel/" + i,
          Dependency.anyOf(
              "s",
              List.of(),
              k -> {
                selCalls.incrementAndGet();
                return false;
              }));
    }
    g.dependentsOf("/nothing/y");
    assertThat(selCalls.get()).isEqualTo(10);
  }

  @Test
  @DisplayName(
      "B46 (ours: deliberate difference) prefix dependencies match any key starting with"
          + " the prefix, by plain string comparison, at declaration and for keys created later")
  void prefixIsPlainStringPrefix() {
    Graph g = new Graph();
    put(g, "a/b");
    put(g, "a/bc");
    put(g, "a/b/c");
    put(g, "x/a/b/c");
    Dependency ab = Dependency.anyOfPrefixes("ab", "a/b");
    Dependency slashed = Dependency.anyOfPrefixes("slashed", "/a/b/");
    Dependency trailing = Dependency.anyOfPrefixes("trailing", "a/b/");
    put(g, "src", ab, slashed, trailing);
    // at declaration (forward lookup)
    assertThat(keys(g.targetsOf(ab))).containsExactly("a/b", "a/b/c", "a/bc");
    assertThat(g.targetsOf(slashed)).as("leading/trailing '/' are not stripped").isEmpty();
    assertThat(keys(g.targetsOf(trailing))).containsExactly("a/b/c");
    // keys created later (reverse lookup): same answers, unlike Go's segment-boundary matching
    g.endBatch();
    Graph later = new Graph();
    put(later, "src", ab, slashed, trailing);
    for (String k : List.of("a/b", "a/bc", "a/b/c", "a/bcd/e")) {
      assertThat(later.dependentsOf(k)).as(k).containsExactly("src");
      put(later, k);
    }
    assertThat(later.dependentsOf("/a/b/c")).as("needs the leading '/'").containsExactly("src");
    assertThat(later.dependentsOf("a/")).isEmpty();
    assertThat(later.dependentsOf("x/a/b/c")).isEmpty();
    assertThat(keys(later.targetsOf(ab))).containsExactly("a/b", "a/b/c", "a/bc", "a/bcd/e");
    assertThat(keys(later.targetsOf(trailing))).containsExactly("a/b/c");
    assertConsistent(later, List.of("a/b", "a/bc", "a/b/", "/a/b/", "a/", "a"), "B46");
  }

  @Test
  @DisplayName(
      "B27 B28 (ours) anyTarget/targetsOf: only nodes with a value, filtered by the"
          + " predicate, overlapping prefixes listed once and sorted")
  void anyTargetAndTargetsOf() {
    Graph g = buildCatalogueGraph();
    Dependency overlapping =
        Dependency.anyOfPrefixes("o", "/prefixB/", "/prefixA/key1", "/prefixA/");
    assertThat(keys(g.targetsOf(overlapping))).containsExactly(KA1, KA2, KA3, KB1);
    g.write(KA2).setValue(null); // under construction: not a target
    assertThat(keys(g.targetsOf(overlapping))).containsExactly(KA1, KA3, KB1);
    assertThat(g.anyTarget(Dependency.onKey("k", KA2), n -> true)).isFalse();
    g.write(KA3).setState(ValueState.CONFIGURED);
    Predicate<Node> configured = n -> n.state() == ValueState.CONFIGURED;
    assertThat(g.anyTarget(overlapping, configured)).isTrue();
    assertThat(g.anyTarget(Dependency.anyOfPrefixes("b", "/prefixB/"), configured)).isFalse();
    assertThat(g.anyTarget(Dependency.onKey("k", KA3), configured)).isTrue();
    assertThat(g.anyTarget(Dependency.onKey("k", KA1), configured)).isFalse();
    List<String> visited = new ArrayList<>();
    g.anyTarget(
        Dependency.anyOf("all", List.of(), k -> true),
        n -> {
          visited.add(n.key());
          return false;
        });
    assertThat(visited)
        .as("selector-only: every node with a value, in key order")
        .containsExactly(KA1, KA3, KB1);
    g.rollback();
    assertThat(keys(g.targetsOf(overlapping))).containsExactly(KA1, KA2, KA3, KB1);
  }

  // ------------------------------------------------------------------ random operations

  static final List<String> UNIVERSE =
      List.of(
          "/a/", "/a/1", "/a/2", "/a/1/x", "/a/10", "/b/1", "/b/2", "/b/1/x", "/c", "/c/1", "", "/",
          "/a");

  private static final List<String> NODE_KEYS =
      List.of("/a/1", "/a/2", "/a/1/x", "/a/10", "/b/1", "/b/2", "/b/1/x", "/c/1");

  private static final List<String> STATIC_TARGETS =
      List.of("/a/1", "/a/2", "/a/1/x", "/b/1", "/c/1", "/missing", "/a");

  private static final List<String> PREFIXES =
      List.of("/a/", "/a/1", "/b/", "/", "", "/c", "/b/1/");

  private static final List<KeySelector> SELECTORS =
      List.of(k -> k.endsWith("/x"), k -> k.contains("1"), k -> k.equals("/b/2"));

  static Dependency randomDep(Random rnd, int i) {
    String label = "l" + i;
    switch (rnd.nextInt(4)) {
      case 0:
        return Dependency.onKey(label, STATIC_TARGETS.get(rnd.nextInt(STATIC_TARGETS.size())));
      case 1:
        {
          int n = 1 + rnd.nextInt(2);
          List<String> ps = new ArrayList<>();
          for (int j = 0; j < n; j++) {
            ps.add(PREFIXES.get(rnd.nextInt(PREFIXES.size())));
          }
          return Dependency.anyOf(label, ps, KeySelector.any());
        }
      case 2:
        return Dependency.anyOf(label, List.of(), SELECTORS.get(rnd.nextInt(SELECTORS.size())));
      default:
        return Dependency.anyOf(
            label,
            List.of(PREFIXES.get(rnd.nextInt(PREFIXES.size()))),
            SELECTORS.get(rnd.nextInt(SELECTORS.size())));
    }
  }

  static void randomOp(Graph g, Random rnd) {
    String key = NODE_KEYS.get(rnd.nextInt(NODE_KEYS.size()));
    switch (rnd.nextInt(6)) {
      case 0 -> g.remove(key);
      case 1 -> {
        Node n = g.write(key);
        n.setValue(rnd.nextInt(4) == 0 ? null : "v" + rnd.nextInt(3));
        n.setState(ValueState.values()[rnd.nextInt(ValueState.values().length)]);
        n.setUnavailable(rnd.nextBoolean());
        n.setLabel("label" + rnd.nextInt(3));
        n.setMetadata(rnd.nextBoolean() ? null : rnd.nextInt(3));
        n.setDerivedKeys(rnd.nextBoolean() ? List.of() : List.of(key + "/x"));
      }
      default -> {
        Node n = g.write(key);
        if (n.value() == null) {
          n.setValue("v");
        }
        List<Dependency> deps = new ArrayList<>();
        int count = rnd.nextInt(4);
        for (int i = 0; i < count; i++) {
          deps.add(randomDep(rnd, i));
        }
        g.setDeps(n, deps);
      }
    }
  }

  @Test
  @DisplayName(
      "B30 (ours) edge consistency: after random writes, removals, batches and rollbacks,"
          + " dependentsOf(key) contains a node iff one of its dependencies matches the key")
  void edgeConsistencyRandom() {
    for (long seed = 100; seed < 140; seed++) {
      Random rnd = new Random(seed);
      Graph g = new Graph();
      for (int step = 0; step < 200; step++) {
        int op = rnd.nextInt(30);
        if (op == 0) {
          g.rollback();
        } else if (op < 3) {
          g.endBatch();
        } else {
          randomOp(g, rnd);
        }
      }
      assertConsistent(g, UNIVERSE, "seed " + seed);
      g.endBatch();
      for (Node n : g.all().values()) {
        assertThat(n.value()).as("after endBatch every node has a value").isNotNull();
      }
      assertConsistent(g, UNIVERSE, "seed " + seed + " after endBatch");
    }
  }

  @Test
  @DisplayName(
      "B5 B6 B7 B8 B9 B10 (ours: java.util sorted sets) reverse lookups, ranges and"
          + " targets come out in key order")
  void keyOrder() {
    Graph g = new Graph();
    for (String k : List.of("/z", "/m", "/a", "/m/1", "/b")) {
      put(g, k, Dependency.anyOfPrefixes("all", "/"));
    }
    put(g, "/c", Dependency.anyOfPrefixes("all", "/"));
    assertThat(g.dependentsOf("/q")).containsExactly("/a", "/b", "/c", "/m", "/m/1", "/z");
    assertThat(g.all().keySet()).containsExactly("/a", "/b", "/c", "/m", "/m/1", "/z");
    assertThat(keys(g.targetsOf(Dependency.anyOfPrefixes("x", "/m", "/a", "/z"))))
        .containsExactly("/a", "/m", "/m/1", "/z");
    // the result is read only or a copy: changing it never changes the index
    Collection<String> deps = g.dependentsOf("/q");
    try {
      deps.clear();
    } catch (UnsupportedOperationException readOnly) {
      // a read-only view: fine
    }
    assertThat(g.dependentsOf("/q")).hasSize(6);
    // with exact-key edges only, the index is handed out as a read-only view (no copy)
    Graph exact = new Graph();
    put(exact, "/x", Dependency.onKey("k", "/y"));
    put(exact, "/w", Dependency.onKey("k", "/y"));
    assertThat(exact.dependentsOf("/y")).containsExactly("/w", "/x");
    Assertions.assertThatThrownBy(() -> exact.dependentsOf("/y").clear())
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(exact.dependentsOf("/y")).containsExactly("/w", "/x");
  }
}
