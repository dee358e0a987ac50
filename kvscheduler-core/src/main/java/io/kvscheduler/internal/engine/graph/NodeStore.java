package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.internal.collect.SortedEntries;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The graph's nodes, one per key: by key in a hash map (lookups) and sorted by key (prefix ranges,
 * ordered views). It only stores: journaling and the dependency index are the {@link Graph}'s
 * business. Engine thread only; not thread-safe.
 */
public final class NodeStore {
  /**
   * The nodes by key (package-private for the graph's consistency tests). A plain hash map: an
   * open-addressing table of the nodes was no faster in its benchmark nor in W1 and W3 (see
   * BENCHMARKS.md, "Engine tuning").
   */
  HashMap<String, Node> table = new HashMap<>();

  /**
   * The nodes sorted by key, except those in {@link #unordered}: new nodes are sorted in only when
   * an ordered view is asked for, so a transaction that creates many values and never asks (the
   * usual case: exact-key dependencies) sorts them in one pass instead of one tree insertion each.
   */
  private TreeMap<String, Node> ordered = new TreeMap<>();

  /** Nodes created since the last {@link #sorted()}, in creation order (may hold removed ones). */
  private ArrayList<Node> unordered = new ArrayList<>();

  /** The node of {@code key} or null. */
  Node get(String key) {
    return table.get(key);
  }

  int size() {
    return table.size();
  }

  boolean isEmpty() {
    return table.isEmpty();
  }

  /** Sizes an empty store for {@code expected} nodes (see {@link Graph#reserve}). */
  void reserve(int expected) {
    if (table.isEmpty()) {
      table = new HashMap<>((int) Math.min(expected / 3L * 4 + 16, 1 << 30));
    }
    unordered.ensureCapacity(expected);
  }

  /** Adds a node created for a key that has none; it joins the sorted view when next asked for. */
  void addNew(Node n) {
    add(n);
    unordered.add(n);
    n.inGraph = true;
  }

  /** Puts a node back as the node of its key (which has none), sorted in at once. */
  void putBack(Node n) {
    add(n);
    ordered.put(n.key(), n);
    n.inGraph = true;
  }

  /**
   * Makes {@code n} the node of its key.
   *
   * @throws IllegalStateException when the key has one (the store is unchanged): one node per key
   */
  private void add(Node n) {
    if (table.putIfAbsent(n.key(), n) != null) {
      throw new IllegalStateException("a second node for key " + n.key());
    }
  }

  /** Takes the node of {@code key} out of the store; returns it, or null when the key has none. */
  Node take(String key) {
    Node n = table.remove(key);
    if (n != null) {
      ordered.remove(key);
      n.inGraph = false;
    }
    return n;
  }

  /** All nodes in no particular order (a live view: do not modify the store while iterating). */
  Collection<Node> values() {
    return Collections.unmodifiableCollection(table.values());
  }

  /** Nodes whose key starts with {@code prefix}, sorted by key (a live view: do not modify). */
  NavigableMap<String, Node> range(String prefix) {
    TreeMap<String, Node> all = sorted();
    if (prefix.isEmpty()) {
      return all;
    }
    String end = prefixEnd(prefix);
    return end == null ? all.tailMap(prefix, true) : all.subMap(prefix, true, end, false);
  }

  /**
   * The smallest string greater than every string starting with {@code prefix}, or null when there
   * is none (the prefix is all U+FFFF): strip trailing U+FFFF, increment the last char.
   */
  public static String prefixEnd(String prefix) {
    int i = prefix.length();
    while (i > 0 && prefix.charAt(i - 1) == Character.MAX_VALUE) {
      i--;
    }
    if (i == 0) {
      return null;
    }
    return prefix.substring(0, i - 1) + (char) (prefix.charAt(i - 1) + 1);
  }

  /**
   * All nodes sorted by key (a live view: do not modify): {@link #ordered} with the new nodes
   * sorted in, one by one when they are few, else by one merge of two sorted sequences into a tree
   * built from sorted input (no comparisons there).
   */
  TreeMap<String, Node> sorted() {
    if (unordered.isEmpty()) {
      return ordered;
    }
    ArrayList<Node> fresh = new ArrayList<>(unordered.size());
    for (Node n : unordered) {
      if (n.inGraph) { // a live node is in exactly one of ordered and unordered
        fresh.add(n);
      }
    }
    unordered = new ArrayList<>();
    if (fresh.size() < 64 || fresh.size() < ordered.size() / 16) {
      for (Node n : fresh) {
        ordered.put(n.key(), n);
      }
      return ordered;
    }
    fresh.sort((a, b) -> a.key().compareTo(b.key()));
    ArrayList<Map.Entry<String, Node>> merged = new ArrayList<>(ordered.size() + fresh.size());
    Iterator<Map.Entry<String, Node>> old = ordered.entrySet().iterator();
    Map.Entry<String, Node> o = old.hasNext() ? old.next() : null;
    for (Node n : fresh) {
      while (o != null && o.getKey().compareTo(n.key()) < 0) {
        merged.add(o);
        o = old.hasNext() ? old.next() : null;
      }
      merged.add(Map.entry(n.key(), n));
    }
    while (o != null) {
      merged.add(o);
      o = old.hasNext() ? old.next() : null;
    }
    ordered = new TreeMap<>(new SortedEntries<>(merged));
    return ordered;
  }
}
