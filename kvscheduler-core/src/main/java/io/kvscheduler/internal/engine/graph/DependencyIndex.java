package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.Dependency;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The reverse dependency index: for a key, the keys of the nodes that have a dependency on it.
 * Exact-key edges sit in a hash map, key-prefix edges in a hash map probed once per distinct prefix
 * length of the key, selector-only any-of edges in a set scanned linearly. Maintained incrementally
 * from the nodes' dependency lists ({@link #add}, {@link #remove}); dependency <em>targets</em> are
 * not stored, so a key that appears later is found without touching its dependents.
 *
 * <p>The structures are package-private for the graph's consistency tests, which compare them with
 * an index rebuilt from scratch. Engine thread only; not thread-safe.
 */
final class DependencyIndex {
  /** Target key → its dependent: one key as a String, several as a TreeSet (saves a set each). */
  HashMap<String, Object> keyDependents = new HashMap<>();

  /** Key prefix of any-of dependencies → their dependents. */
  final HashMap<String, TreeSet<String>> prefixDependents = new HashMap<>();

  /** Length of the prefixes in {@link #prefixDependents} → how many (prefix, dependent) pairs. */
  final TreeMap<Integer, Integer> prefixLengths = new TreeMap<>();

  /** Dependents with an any-of dependency on a selector alone (no prefix). */
  final TreeSet<String> selectorDependents = new TreeSet<>();

  /** The nodes, to resolve prefix and selector edges against their dependencies. */
  private final NodeStore nodes;

  DependencyIndex(NodeStore nodes) {
    this.nodes = nodes;
  }

  /** Sizes the exact-key map of an empty index for {@code capacity} targets. */
  void reserve(int capacity) {
    if (keyDependents.isEmpty()) {
      keyDependents = new HashMap<>(capacity);
    }
  }

  /**
   * Keys of the nodes that have a dependency targeting {@code key}, sorted (read only; valid until
   * the graph changes). Cost: exact-key edges O(1), prefix edges O(number of distinct prefix
   * lengths), selector-only edges linear in their count.
   */
  Collection<String> dependentsOf(String key) {
    Object exact = keyDependents.get(key);
    if (prefixLengths.isEmpty() && selectorDependents.isEmpty()) {
      // only exact-key edges exist: no copy needed (callers only read)
      return exactSet(exact);
    }
    TreeSet<String> out = new TreeSet<>(exactSet(exact));
    for (Integer len : prefixLengths.headMap(key.length(), true).keySet()) {
      TreeSet<String> srcs = prefixDependents.get(key.substring(0, len));
      if (srcs != null) {
        for (String src : srcs) {
          if (!out.contains(src) && targets(src, key)) {
            out.add(src);
          }
        }
      }
    }
    for (String src : selectorDependents) {
      if (!out.contains(src) && targets(src, key)) {
        out.add(src);
      }
    }
    return out;
  }

  /** The exact-key dependents as a sorted, read-only collection (no copy). */
  @SuppressWarnings("unchecked")
  private static Collection<String> exactSet(Object exact) {
    if (exact == null) {
      return List.of();
    }
    if (exact instanceof String s) {
      return List.of(s);
    }
    return Collections.unmodifiableSortedSet((TreeSet<String>) exact);
  }

  private boolean targets(String src, String key) {
    Node n = nodes.get(src);
    if (n == null) {
      return false;
    }
    for (Dependency d : n.deps()) {
      if (KeySelectorGuard.matches(d, key)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Element-wise equality by index (no iterator per comparison, as {@code List.equals} has), with
   * any-of selectors compared by identity: a selector's {@code equals} is user code.
   */
  static boolean sameDeps(List<Dependency> a, List<Dependency> b) {
    if (a == b) {
      return true;
    }
    int size = a.size();
    if (size != b.size()) {
      return false;
    }
    for (int i = 0; i < size; i++) {
      Dependency x = a.get(i);
      Dependency y = b.get(i);
      if (x != y
          && !(x.keySelector() == y.keySelector()
              && x.label().equals(y.label())
              && x.key().equals(y.key())
              && x.keyPrefixes().equals(y.keyPrefixes()))) {
        return false;
      }
    }
    return true;
  }

  /** Indexes the edges of {@code n}'s dependencies. */
  void add(Node n) {
    List<Dependency> deps = n.deps();
    for (int i = 0; i < deps.size(); i++) { // indexed: no iterator per node
      Dependency d = deps.get(i);
      if (!d.isAnyOf()) {
        addExact(d.key(), n.key());
      } else if (d.keyPrefixes().isEmpty()) {
        selectorDependents.add(n.key());
      } else {
        for (String p : d.keyPrefixes()) {
          if (prefixDependents.computeIfAbsent(p, k -> new TreeSet<>()).add(n.key())) {
            prefixLengths.merge(p.length(), 1, Integer::sum);
          }
        }
      }
    }
  }

  /** Drops the edges of {@code n}'s dependencies (as {@link #add} indexed them). */
  void remove(Node n) {
    List<Dependency> deps = n.deps();
    for (int i = 0; i < deps.size(); i++) {
      Dependency d = deps.get(i);
      if (!d.isAnyOf()) {
        removeExact(d.key(), n.key());
      } else if (d.keyPrefixes().isEmpty()) {
        selectorDependents.remove(n.key());
      } else {
        for (String p : d.keyPrefixes()) {
          if (removeFrom(prefixDependents, p, n.key())) {
            prefixLengths.computeIfPresent(p.length(), (k, c) -> c == 1 ? null : c - 1);
          }
        }
      }
    }
  }

  @SuppressWarnings("unchecked")
  private void addExact(String target, String src) {
    Object cur = keyDependents.get(target);
    if (cur == null) {
      keyDependents.put(target, src);
    } else if (cur instanceof String s) {
      if (!s.equals(src)) {
        TreeSet<String> set = new TreeSet<>();
        set.add(s);
        set.add(src);
        keyDependents.put(target, set);
      }
    } else {
      ((TreeSet<String>) cur).add(src);
    }
  }

  @SuppressWarnings("unchecked")
  private void removeExact(String target, String src) {
    Object cur = keyDependents.get(target);
    if (cur instanceof String s) {
      if (s.equals(src)) {
        keyDependents.remove(target);
      }
    } else if (cur != null) {
      TreeSet<String> set = (TreeSet<String>) cur;
      set.remove(src);
      if (set.size() == 1) {
        keyDependents.put(target, set.first());
      }
    }
  }

  private static boolean removeFrom(HashMap<String, TreeSet<String>> m, String k, String src) {
    TreeSet<String> s = m.get(k);
    if (s == null || !s.remove(src)) {
      return false;
    }
    if (s.isEmpty()) {
      m.remove(k);
    }
    return true;
  }
}
