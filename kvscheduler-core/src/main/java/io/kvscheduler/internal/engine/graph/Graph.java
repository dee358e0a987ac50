package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeySelector;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.function.Predicate;

/**
 * The in-memory graph of values, as the engine uses it: one {@link Node} per key, written through
 * this class so that every change is journaled and indexed. It puts three parts together:
 *
 * <ul>
 *   <li>{@link NodeStore}: the nodes by key and sorted by key (prefix ranges);
 *   <li>{@link DependencyIndex}: the reverse index of dependency edges (which keys depend on a
 *       key);
 *   <li>{@link UndoJournal}: the writes of the current <em>batch</em>, for {@link #rollback()}
 *       (this is how simulation runs on the live graph without copying it) and for {@link
 *       #endBatch()}, which hands the batch over as a {@link BatchJournal} (history revisions,
 *       touched keys).
 * </ul>
 *
 * <p>Every structure is updated incrementally, so the cost of a change is O(log n) per touched
 * node, independent of the graph size. Dependency targets are not stored: they are resolved from
 * the store when needed ({@link #targetsOf}, {@link #anyTarget}), so a key that appears later is
 * found without touching the nodes that depend on it.
 *
 * <p>Engine thread only; not thread-safe.
 */
public final class Graph {
  /** The nodes (package-private, as the other parts, for the graph's consistency tests). */
  final NodeStore store = new NodeStore();

  final DependencyIndex dependencies = new DependencyIndex(store);

  /**
   * Which derived values are known settled without reading their nodes: told of every write of a
   * derived node here and of every derived node a {@link #rollback()} puts back.
   */
  public final SettledDerived settled = new SettledDerived();

  final UndoJournal undo = new UndoJournal(store, dependencies, settled);

  /** The node of {@code key} or null. Read only: do not mutate the result. */
  public Node get(String key) {
    return store.get(key);
  }

  /**
   * Sizes the key table, the exact-key dependency index and the journal of an empty graph for
   * {@code expected} nodes, so that a first large transaction (a startup resync, an initial
   * configuration) does not rehash or copy them as they grow. No effect on a graph that has nodes.
   */
  public void reserve(int expected) {
    if (store.isEmpty() && expected > 64) {
      int capacity = (int) Math.min((long) (expected / 0.75) + 1, 1 << 30);
      store.reserve(expected);
      dependencies.reserve(capacity);
      undo.reserve(expected);
    }
  }

  /** Number of nodes. */
  public int size() {
    return store.size();
  }

  /**
   * The node of {@code key} for writing, created (without value) when absent. Journals the node's
   * current content on first write in the batch.
   */
  public Node write(String key) {
    Node n = store.get(key);
    if (n == null) {
      return create(key);
    }
    undo.writing(n);
    if (n.derivedFrom() != null && settled.any()) {
      settled.touched(n);
    }
    return n;
  }

  /** A new node for {@code key}, which has none: journaled, in the graph. */
  private Node create(String key) {
    Node n = new Node(key);
    undo.created(n);
    store.addNew(n);
    return n;
  }

  /** Removes a node (journaled). */
  public void remove(String key) {
    Node n = store.get(key);
    if (n == null) {
      return;
    }
    undo.removing(n);
    if (settled.any()) {
      if (n.derivedFrom() != null) {
        settled.touched(n);
      }
      settled.forget(key);
    }
    dependencies.remove(n);
    store.take(key);
  }

  /** Replaces the dependencies of a written node, keeping the reverse index in sync. */
  public void setDeps(Node n, List<Dependency> deps) {
    if (DependencyIndex.sameDeps(n.deps(), deps)) {
      return;
    }
    dependencies.remove(n);
    n.setDeps(List.copyOf(deps));
    dependencies.add(n);
  }

  /** Undoes every write of the current batch. */
  public void rollback() {
    undo.rollback();
  }

  /**
   * Undoes every write of the current batch and, when {@code closed} is the batch closed last,
   * every write of that batch too (e.g. the refresh of a transaction aborted by an internal error):
   * the graph is back where it was before both. Null {@code closed}: as {@link #rollback()}.
   */
  public void rollbackThrough(BatchJournal closed) {
    undo.rollbackThrough(closed);
  }

  /**
   * Closes the batch: drops nodes left without a value, returns the journal (key → node content
   * before the batch, or {@link BatchJournal#ABSENT}; in order of first write, read only) and
   * starts a new batch.
   */
  public BatchJournal endBatch() {
    BatchJournal closed = undo.endBatch();
    if (settled.any()) {
      for (int i = 0; i < closed.size(); i++) {
        if (closed.current(i) == null) {
          settled.forget(closed.key(i)); // left the graph (a base among them has no entry now)
        }
      }
    }
    return closed;
  }

  /** Keys written in the current batch so far. */
  Collection<String> journaledKeys() {
    return undo.journaledKeys();
  }

  /**
   * Keys of the nodes that have a dependency targeting {@code key}, sorted (read only; valid until
   * the graph changes).
   */
  public Collection<String> dependentsOf(String key) {
    return dependencies.dependentsOf(key);
  }

  /**
   * True if some node with a value that is a target of {@code d} passes {@code test}. Prefix
   * dependencies scan only the matching key range.
   */
  public boolean anyTarget(Dependency d, Predicate<Node> test) {
    if (!d.isAnyOf()) {
      Node n = store.get(d.key());
      return n != null && n.value() != null && test.test(n);
    }
    if (d.keyPrefixes().isEmpty()) {
      return scan(store.sorted(), d.keySelector(), test);
    }
    for (String p : d.keyPrefixes()) {
      if (scan(store.range(p), d.keySelector(), test)) {
        return true;
      }
    }
    return false;
  }

  /** Every node with a value that is a target of {@code d}, sorted by key. */
  public List<Node> targetsOf(Dependency d) {
    List<Node> out = new ArrayList<>();
    anyTarget(
        d,
        n -> {
          out.add(n);
          return false;
        });
    if (d.isAnyOf() && d.keyPrefixes().size() > 1) {
      out.sort(Comparator.comparing(n -> n.key()));
      // overlapping prefixes may list a node twice
      for (int i = out.size() - 1; i > 0; i--) {
        if (out.get(i) == out.get(i - 1)) {
          out.remove(i);
        }
      }
    }
    return out;
  }

  private static boolean scan(
      NavigableMap<String, Node> range, KeySelector sel, Predicate<Node> test) {
    boolean all = sel == KeySelector.any();
    for (Node n : range.values()) {
      if (n.value() != null && (all || KeySelectorGuard.accepts(sel, n.key())) && test.test(n)) {
        return true;
      }
    }
    return false;
  }

  /** Nodes whose key starts with {@code prefix}, sorted by key (a live view: do not modify). */
  public NavigableMap<String, Node> range(String prefix) {
    return store.range(prefix);
  }

  /** All nodes in no particular order (a live view: do not modify the graph while iterating). */
  public Collection<Node> nodes() {
    return store.values();
  }

  /** All nodes sorted by key (a live view: do not modify). */
  public NavigableMap<String, Node> all() {
    return store.sorted();
  }
}
