package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.internal.util.UserCode;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-memory graph of values: nodes by key (hash map for lookups, sorted map for prefix ranges),
 * and a reverse index of dependency edges (exact keys, key prefixes, selector-only any-of). Every
 * structure is updated incrementally, so the cost of a change is O(log n) per touched node,
 * independent of the graph size.
 *
 * <p>Writes are journaled per <em>batch</em>: the first {@link #write(String)} of a key in a batch
 * keeps a copy of the node as it was. {@link #rollback()} restores every journaled node (this is
 * how simulation runs on the live graph without copying it); {@link #endBatch()} hands the journal
 * to the caller (history revisions) and starts a new one.
 *
 * <p>Dependency targets are not stored: they are resolved from the indexes when needed, so a key
 * that appears later is found without touching the nodes that depend on it.
 *
 * <p>Engine thread only; not thread-safe.
 */
final class Graph {
  /** Journal marker of a key that did not exist when the batch started. */
  static final Node ABSENT = new Node("<absent>");

  private final NodeTable nodes = new NodeTable();

  /**
   * The nodes sorted by key, except those in {@link #unordered}: new nodes are sorted in only when
   * an ordered view is asked for, so a transaction that creates many values and never asks (the
   * usual case: exact-key dependencies) sorts them in one pass instead of one tree insertion each.
   */
  private TreeMap<String, Node> ordered = new TreeMap<>();

  /** Nodes created since the last {@link #sorted()}, in creation order (may hold removed ones). */
  private ArrayList<Node> unordered = new ArrayList<>();

  /** Target key → its dependent: one key as a String, several as a TreeSet (saves a set each). */
  private HashMap<String, Object> keyDependents = new HashMap<>();

  private final HashMap<String, TreeSet<String>> prefixDependents = new HashMap<>();
  private final TreeMap<Integer, Integer> prefixLengths = new TreeMap<>();
  private final TreeSet<String> selectorDependents = new TreeSet<>();

  /**
   * The journal of the current batch: the nodes written in it, in order of first write. Each
   * carries its content before the batch in {@link Node#journaled} (no per-write hash map). A node
   * removed in the batch stays listed; when its key is written again, the new node takes over its
   * journal entry and the old one is marked {@link #SUPERSEDED}.
   */
  private ArrayList<Node> journal = new ArrayList<>();

  /** Keys removed in the current batch (usually few) → the removed, journaled node. */
  private final HashMap<String, Node> removedInBatch = new HashMap<>();

  /** Nodes that have left the graph so far (removed, dropped or swapped by a rollback). */
  private long departures;

  /** Journal marker of an entry taken over by a later node of the same key. */
  private static final Node SUPERSEDED = new Node("<superseded>");

  /**
   * Journal marker of a node created in the batch before this one and written in this one without a
   * copy ({@link #writeChanging}): its content before this batch is not kept.
   */
  private static final Node BORN = new Node("<born>");

  /** Number of the current batch (counts closed and rolled-back batches). */
  private int batch;

  /** The batch whose new nodes {@link #writeChanging} journals without a copy, or -1. */
  private int lightBorn = -1;

  private static final String[] NO_KEYS = new String[0];
  private static final Node[] NO_NODES = new Node[0];

  /** The journal the last {@link #endBatch()} returned. */
  private Journal lastClosed;

  /** The node of {@code key} or null. Read only: do not mutate the result. */
  Node get(String key) {
    return nodes.get(key);
  }

  /**
   * Sizes the key table, the exact-key dependency index and the journal of an empty graph for
   * {@code expected} nodes, so that a first large transaction (a startup resync, an initial
   * configuration) does not rehash or copy them as they grow. No effect on a graph that has nodes.
   */
  void reserve(int expected) {
    if (nodes.isEmpty() && expected > 64) {
      int capacity = (int) Math.min((long) (expected / 0.75) + 1, 1 << 30);
      nodes.reserve(expected);
      if (keyDependents.isEmpty()) {
        keyDependents = new HashMap<>(capacity);
      }
      journal.ensureCapacity(expected);
      unordered.ensureCapacity(expected);
    }
  }

  /** Number of nodes. */
  int size() {
    return nodes.size();
  }

  /**
   * The node of {@code key} for writing, created (without value) when absent. Journals the node's
   * current content on first write in the batch.
   */
  Node write(String key) {
    Node n = nodes.get(key);
    if (n == null) {
      return create(key);
    }
    journal(n);
    return n;
  }

  /** A new node for {@code key}, which has none: journaled, in the graph. */
  private Node create(String key) {
    Node n = new Node(key);
    n.born = batch;
    Node removed = removedInBatch.isEmpty() ? null : removedInBatch.remove(key);
    if (removed != null) {
      n.journaled = removed.journaled; // the key's content before the batch
      if (removed.journaled == BORN) {
        n.history = removed.history; // no copy holds it: the entry's node does
      }
      removed.journaled = SUPERSEDED;
    } else {
      n.journaled = ABSENT;
    }
    nodes.add(n);
    journal.add(n);
    unordered.add(n);
    n.inGraph = true;
    return n;
  }

  /**
   * Like {@link #write(String)}, for a write after which the node's content surely differs, at the
   * end of the batch, from its content now (the caller's promise: the batch's journal then need not
   * hold the content before the write to tell). A node created in the batch given to {@link
   * #journalBirthsLightly} is then journaled without a copy: its entry is {@linkplain Journal#born
   * born}.
   */
  Node writeChanging(String key) {
    if (lightBorn < 0) {
      return write(key);
    }
    Node n = nodes.get(key);
    if (n == null) {
      return create(key);
    }
    if (n.journaled != null || n.born != lightBorn) {
      journal(n);
      return n;
    }
    n.journaled = BORN;
    journal.add(n);
    return n;
  }

  /**
   * From now until this batch closes or is rolled back, {@link #writeChanging} journals the nodes
   * created in {@code previous} (which must be the batch closed last, e.g. the refresh of the same
   * transaction) without a copy. Such a batch cannot be rolled back to those nodes' content: a
   * {@link #rollback()} undoes {@code previous} as well. No effect when {@code previous} is not the
   * batch closed last.
   */
  void journalBirthsLightly(Journal previous) {
    if (previous == lastClosed && previous != null) {
      lightBorn = batch == 0 ? Integer.MAX_VALUE : batch - 1;
    }
  }

  private void journal(Node n) {
    if (n.journaled == null) {
      n.journaled = n.copy();
      journal.add(n);
    }
  }

  /** Removes a node (journaled). */
  void remove(String key) {
    Node n = nodes.get(key);
    if (n == null) {
      return;
    }
    journal(n);
    removedInBatch.put(key, n);
    unindex(n);
    nodes.remove(key);
    ordered.remove(key);
    n.inGraph = false;
    departures++;
  }

  /**
   * How many nodes have left the graph since it was created. While the count does not change, every
   * key keeps the same node object, so the node can stand for its key.
   */
  long departures() {
    return departures;
  }

  /** Replaces the dependencies of a written node, keeping the reverse index in sync. */
  void setDeps(Node n, List<Dependency> deps) {
    if (sameDeps(n.deps, deps)) {
      return;
    }
    unindex(n);
    n.deps = List.copyOf(deps);
    index(n);
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

  /**
   * Undoes every write of the current batch. When the batch journals lightly (see {@link
   * #journalBirthsLightly}), the content the nodes created in the batch before had when this one
   * began is not kept: the batch before (e.g. the refresh of the same transaction) is undone as
   * well, and the graph is back where it was before both.
   */
  void rollback() {
    List<Node> entries = journal;
    journal = new ArrayList<>();
    removedInBatch.clear();
    Journal previous = lightBorn >= 0 ? lastClosed : null;
    // copies made before the batch numbers wrapped are put back below: in this batch if the
    // numbers wrap now, in the batch before if they wrapped when it closed
    boolean stale = batch == Integer.MAX_VALUE || previous != null && batch == 0;
    nextBatch();
    lastClosed = null;
    for (Node e : entries) {
      Node orig = e.journaled;
      e.journaled = null;
      if (orig != SUPERSEDED) {
        restore(e.key, orig == BORN ? ABSENT : orig);
      }
    }
    if (previous != null) {
      for (int i = previous.size() - 1; i >= 0; i--) {
        restore(previous.key(i), previous.born(i) ? ABSENT : previous.before(i));
      }
    }
    if (stale) {
      forgetBirths();
    }
  }

  /** Puts {@code orig} (or, for {@link #ABSENT}, no node) back as the node of {@code key}. */
  private void restore(String key, Node orig) {
    Node cur = nodes.remove(key);
    if (cur != null) {
      ordered.remove(key);
      unindex(cur);
      cur.inGraph = false;
      departures++;
    }
    if (orig != ABSENT) {
      nodes.add(orig);
      ordered.put(key, orig);
      index(orig);
      orig.inGraph = true;
    }
  }

  /**
   * Starts the next batch number (wrapping to 0: never negative, as -1 means none). At the wrap,
   * the nodes forget the batch they were created in (once per 2<sup>31</sup> batches, a pass over
   * the graph): an old node must not pass for one created in a recent batch of the same number.
   */
  private void nextBatch() {
    lightBorn = -1;
    if (batch == Integer.MAX_VALUE) {
      batch = 0;
      forgetBirths();
    } else {
      batch++;
    }
  }

  private void forgetBirths() {
    for (Node n : nodes.values()) {
      n.born = -1;
    }
  }

  /** Sets the number of the current batch (tests of the wrap-around only). */
  void batchNumberForTest(int number) {
    batch = number;
  }

  /**
   * Closes the batch: drops nodes left without a value, returns the journal (key → node content
   * before the batch, or {@link #ABSENT}; in order of first write, read only) and starts a new
   * batch.
   */
  Journal endBatch() {
    List<Node> entries = journal;
    removedInBatch.clear();
    if (entries.isEmpty()) {
      // a batch that wrote nothing (most one-value transactions have two): its list serves the
      // next batch, and its journal has no arrays of its own
      nextBatch();
      lastClosed = new Journal(NO_KEYS, NO_NODES, NO_NODES, null, 0);
      return lastClosed;
    }
    journal = new ArrayList<>();
    String[] keys = new String[entries.size()];
    Node[] before = new Node[entries.size()];
    Node[] current = new Node[entries.size()];
    boolean[] born = lightBorn >= 0 ? new boolean[entries.size()] : null;
    int size = 0;
    for (int i = 0; i < entries.size(); i += Bulk.RANGE) {
      size = close(entries, i, Bulk.end(i, entries.size()), keys, before, current, born, size);
    }
    nextBatch();
    lastClosed = new Journal(keys, before, current, born, size);
    return lastClosed;
  }

  /**
   * Closes journal entries {@code entries[from, to)} into the arrays from index {@code size};
   * returns the new size.
   */
  private int close(
      List<Node> entries,
      int from,
      int to,
      String[] keys,
      Node[] before,
      Node[] current,
      boolean[] born,
      int size) {
    for (int i = from; i < to; i++) {
      Node e = entries.get(i);
      Node orig = e.journaled;
      e.journaled = null;
      if (orig == SUPERSEDED) {
        continue;
      }
      // an entry that is not superseded belongs to the key's last node of the batch: the
      // current node when it is still in the graph, else the key has none
      keys[size] = e.key;
      if (orig == BORN) {
        before[size] = e; // holds the key's chain; its content is the current one
        born[size] = true;
      } else {
        before[size] = orig;
      }
      current[size] = closeEntry(e);
      size++;
    }
    return size;
  }

  /**
   * The node of a closed journal entry: {@code e} while it is in the graph, null once it is not (a
   * node left without a value leaves the graph here). A method of its own, like other per-key steps
   * of long loops, so the JIT compiles it after a few hundred keys.
   */
  private Node closeEntry(Node e) {
    if (e.value == null && e.inGraph) {
      unindex(e);
      nodes.remove(e.key);
      ordered.remove(e.key);
      e.inGraph = false;
      departures++;
    }
    return e.inGraph ? e : null;
  }

  /**
   * The journal of a closed batch: a read-only map (key → content before the batch) over arrays, in
   * order of first write, that also knows the node each key had when the batch closed.
   */
  static final class Journal extends AbstractMap<String, Node> {
    private final String[] keys;
    private final Node[] before;
    private final Node[] current;

    /** Null when no entry is born. */
    private final boolean[] born;

    private final int size;

    Journal(String[] keys, Node[] before, Node[] current, boolean[] born, int size) {
      this.keys = keys;
      this.before = before;
      this.current = current;
      this.born = born;
      this.size = size;
    }

    @Override
    public int size() {
      return size;
    }

    /** Key of entry {@code i}. */
    String key(int i) {
      return keys[i];
    }

    /**
     * Content of entry {@code i} before the batch, or {@link #ABSENT}; for a {@linkplain #born
     * born} entry, the key's last node of the batch instead (whose content is not the one before;
     * the bookkeeping fields that are copied with a node are).
     */
    Node before(int i) {
      return before[i];
    }

    /**
     * True when entry {@code i} is a node created in the batch before this one and written in this
     * one by {@link #writeChanging}: its content changed in this batch, and the content before is
     * not kept.
     */
    boolean born(int i) {
      return born != null && born[i];
    }

    /** The node of entry {@code i} in the graph when the batch closed, or null. */
    Node current(int i) {
      return current[i];
    }

    @Override
    public Set<Map.Entry<String, Node>> entrySet() {
      return new AbstractSet<>() {
        @Override
        public Iterator<Map.Entry<String, Node>> iterator() {
          return new Iterator<>() {
            private int i;

            @Override
            public boolean hasNext() {
              return i < size;
            }

            @Override
            public Map.Entry<String, Node> next() {
              if (i >= size) {
                throw new NoSuchElementException();
              }
              int k = i++;
              return new AbstractMap.SimpleImmutableEntry<>(keys[k], before[k]);
            }
          };
        }

        @Override
        public int size() {
          return size;
        }
      };
    }

    @Override
    public Set<String> keySet() {
      return new AbstractSet<>() {
        @Override
        public Iterator<String> iterator() {
          return Arrays.asList(keys).subList(0, size).iterator();
        }

        @Override
        public int size() {
          return size;
        }
      };
    }
  }

  /** Keys written in the current batch so far. */
  Collection<String> journaledKeys() {
    List<String> out = new ArrayList<>(journal.size());
    for (Node e : journal) {
      if (e.journaled != SUPERSEDED) {
        out.add(e.key);
      }
    }
    return out;
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
    for (Dependency d : n.deps) {
      if (matches(d, key)) {
        return true;
      }
    }
    return false;
  }

  /** {@link Dependency#matches}: an any-of selector is user code, guarded as {@link #accepts}. */
  private static boolean matches(Dependency d, String key) {
    try {
      return d.matches(key);
    } catch (Throwable t) {
      return rejected(d.keySelector(), key, t);
    }
  }

  /**
   * True when the key selector of an any-of dependency accepts {@code key}. The selector is user
   * code: one that throws accepts nothing (the dependency is not satisfied by that key) and the
   * failure is logged, once per selector, instead of aborting the transaction.
   */
  private static boolean accepts(KeySelector sel, String key) {
    try {
      return sel.test(key);
    } catch (Throwable t) {
      return rejected(sel, key, t);
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(Graph.class);

  /**
   * Identity hashes of the selectors whose failure was logged (bounded: the report is about the
   * configuration; not the selectors themselves, whose equals is user code).
   */
  private static final Set<Integer> REPORTED = ConcurrentHashMap.newKeySet();

  private static boolean rejected(KeySelector sel, String key, Throwable failure) {
    Throwable t = UserCode.contained(failure);
    if (REPORTED.size() < 1000 && REPORTED.add(System.identityHashCode(sel))) {
      LOG.error(
          "key selector of an any-of dependency failed for key {}; it is taken as not"
              + " accepting that key (further failures of this selector are not logged)",
          key,
          t);
    }
    return false;
  }

  /**
   * True if some node with a value that is a target of {@code d} passes {@code test}. Prefix
   * dependencies scan only the matching key range.
   */
  boolean anyTarget(Dependency d, Predicate<Node> test) {
    if (!d.isAnyOf()) {
      Node n = nodes.get(d.key());
      return n != null && n.value != null && test.test(n);
    }
    if (d.keyPrefixes().isEmpty()) {
      return scan(sorted(), d.keySelector(), test);
    }
    for (String p : d.keyPrefixes()) {
      if (scan(range(p), d.keySelector(), test)) {
        return true;
      }
    }
    return false;
  }

  /** Every node with a value that is a target of {@code d}, sorted by key. */
  List<Node> targetsOf(Dependency d) {
    List<Node> out = new ArrayList<>();
    anyTarget(
        d,
        n -> {
          out.add(n);
          return false;
        });
    if (d.isAnyOf() && d.keyPrefixes().size() > 1) {
      out.sort(Comparator.comparing(n -> n.key));
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
      if (n.value != null && (all || accepts(sel, n.key)) && test.test(n)) {
        return true;
      }
    }
    return false;
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
  static String prefixEnd(String prefix) {
    int i = prefix.length();
    while (i > 0 && prefix.charAt(i - 1) == Character.MAX_VALUE) {
      i--;
    }
    if (i == 0) {
      return null;
    }
    return prefix.substring(0, i - 1) + (char) (prefix.charAt(i - 1) + 1);
  }

  /** All nodes in no particular order (a live view: do not modify the graph while iterating). */
  Collection<Node> nodes() {
    return nodes.values(); // read only already: no wrapper between the caller and the table
  }

  /** All nodes sorted by key (a live view: do not modify). */
  NavigableMap<String, Node> all() {
    return sorted();
  }

  /**
   * {@link #ordered} with the new nodes sorted in: one by one when they are few, else by one merge
   * of two sorted sequences into a tree built from sorted input (no comparisons there).
   */
  private TreeMap<String, Node> sorted() {
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
        ordered.put(n.key, n);
      }
      return ordered;
    }
    fresh.sort((a, b) -> a.key.compareTo(b.key));
    ArrayList<Map.Entry<String, Node>> merged = new ArrayList<>(ordered.size() + fresh.size());
    Iterator<Map.Entry<String, Node>> old = ordered.entrySet().iterator();
    Map.Entry<String, Node> o = old.hasNext() ? old.next() : null;
    for (Node n : fresh) {
      while (o != null && o.getKey().compareTo(n.key) < 0) {
        merged.add(o);
        o = old.hasNext() ? old.next() : null;
      }
      merged.add(Map.entry(n.key, n));
    }
    while (o != null) {
      merged.add(o);
      o = old.hasNext() ? old.next() : null;
    }
    ordered = new TreeMap<>(new SortedEntries<>(merged));
    return ordered;
  }

  private void index(Node n) {
    List<Dependency> deps = n.deps;
    for (int i = 0; i < deps.size(); i++) { // indexed: no iterator per node
      Dependency d = deps.get(i);
      if (!d.isAnyOf()) {
        addExact(d.key(), n.key);
      } else if (d.keyPrefixes().isEmpty()) {
        selectorDependents.add(n.key);
      } else {
        for (String p : d.keyPrefixes()) {
          if (prefixDependents.computeIfAbsent(p, k -> new TreeSet<>()).add(n.key)) {
            prefixLengths.merge(p.length(), 1, Integer::sum);
          }
        }
      }
    }
  }

  private void unindex(Node n) {
    List<Dependency> deps = n.deps;
    for (int i = 0; i < deps.size(); i++) {
      Dependency d = deps.get(i);
      if (!d.isAnyOf()) {
        removeExact(d.key(), n.key);
      } else if (d.keyPrefixes().isEmpty()) {
        selectorDependents.remove(n.key);
      } else {
        for (String p : d.keyPrefixes()) {
          if (removeFrom(prefixDependents, p, n.key)) {
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
