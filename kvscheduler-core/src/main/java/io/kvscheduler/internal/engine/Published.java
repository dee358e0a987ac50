package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * The read side: an immutable {@link Snapshot} of what readers see of every key (a {@link
 * KeyRevision}), replaced after every transaction. Readers take the current snapshot and see a
 * consistent state without locks.
 *
 * <p>A snapshot is two persistent structures: the views, a vector ({@link SlotVector}) indexed by a
 * slot number each key keeps while it is published, and a sorted key index key → slot ({@link
 * SlotIndex}) for lookups by key and reads in key order. A transaction that only changes values
 * (the common case) updates the vector alone: a path of about log32(n) small arrays, found through
 * the slot the node remembers ({@link Node#publishedSlot}), with no key comparison. The key index
 * changes only when keys come or go, at O(log n) per key. A large change is merged into new
 * structures in one linear pass; the key index then costs no object per key.
 */
final class Published {
  /** What readers see of the graph at one moment. Immutable. */
  static final class Snapshot {
    static final Snapshot EMPTY = new Snapshot(SlotIndex.EMPTY, SlotVector.empty());

    /** Key → slot of its view, in key order. */
    private final SlotIndex slots;

    /** Views by slot; a free slot holds null. */
    private final SlotVector<KeyRevision> views;

    private Snapshot(SlotIndex slots, SlotVector<KeyRevision> views) {
      this.slots = slots;
      this.views = views;
    }

    /** The view of {@code key}, or null when the key has no value. */
    KeyRevision get(String key) {
      int slot = slots.get(key);
      return slot < 0 ? null : views.get(slot);
    }

    boolean containsKey(String key) {
      return slots.get(key) >= 0;
    }

    int size() {
      return slots.size();
    }

    /** The key index (tests). */
    SlotIndex keyIndex() {
      return slots;
    }

    /** Every view, in key order. */
    Iterable<KeyRevision> values() {
      return viewsOf(null, null);
    }

    /** The views of the keys starting with {@code prefix}, in key order. */
    Iterable<KeyRevision> withPrefix(String prefix) {
      return prefix.isEmpty() ? values() : viewsOf(prefix, NodeStore.prefixEnd(prefix));
    }

    /** The views of the keys in [{@code from}, {@code to}) (null: open), in key order. */
    private Iterable<KeyRevision> viewsOf(String from, String to) {
      return () ->
          new Iterator<>() {
            private final SlotIndex.Cursor c = slots.cursor(from, to);
            private boolean ahead = c.next();

            @Override
            public boolean hasNext() {
              return ahead;
            }

            @Override
            public KeyRevision next() {
              if (!ahead) {
                throw new NoSuchElementException();
              }
              KeyRevision r = views.get(c.slot());
              ahead = c.next();
              return r;
            }
          };
    }

    /** Status of {@code key} with its derived values, all from this snapshot. */
    BaseValueStatus status(String key) {
      KeyRevision view = get(key);
      if (view == null) {
        return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
      }
      return status(view);
    }

    /** Status of the value {@code view} of this snapshot shows, with its derived values. */
    BaseValueStatus status(KeyRevision view) {
      if (view.derivedKeys.isEmpty()) {
        return new BaseValueStatus(view.status(), List.of());
      }
      List<ValueStatus> derived = new ArrayList<>(view.derivedKeys.size());
      for (String dk : view.derivedKeys) {
        KeyRevision dv = get(dk);
        if (dv != null) {
          derived.add(dv.status());
        }
      }
      return new BaseValueStatus(view.status(), derived);
    }
  }

  private volatile Snapshot snapshot = Snapshot.EMPTY;

  /** Keys whose published state is PENDING (engine thread only). */
  private final HashSet<String> pending = new HashSet<>();

  /** Engine side: the key published in each slot, null for a free slot. */
  private String[] slotKeys = new String[64];

  /** Number of slots in use or freed (the length of the views vector). */
  private int slotCount;

  /** Freed slots, reused before new ones (a stack). */
  private int[] free = new int[16];

  private int freeCount;

  /** Keys whose published state is PENDING (engine thread only; read only). */
  Collection<String> pendingKeys() {
    return pending;
  }

  Snapshot current() {
    return snapshot;
  }

  /**
   * Re-publishes the touched keys (those whose node changed, was created or removed; a key may be
   * listed more than once).
   */
  void update(Touched touched, Graph graph) {
    Snapshot s = snapshot;
    try {
      snapshot = next(s, touched, graph);
    } catch (RuntimeException | Error e) {
      // the snapshot stays as it was: so must the slot table and the pending keys, which the
      // failed update may have changed (an internal error; the transaction's caller gets it)
      resetTo(s);
      throw e;
    }
  }

  /**
   * The engine side as {@code s} has it: its keys in their slots, every other slot free, its
   * PENDING keys pending.
   */
  private void resetTo(Snapshot s) {
    slotCount = s.views.size();
    slotKeys = new String[Math.max(64, slotCount)];
    pending.clear();
    for (SlotIndex.Cursor c = s.slots.cursor(null, null); c.next(); ) {
      slotKeys[c.slot()] = c.key();
      if (s.views.get(c.slot()).state == ValueState.PENDING) {
        pending.add(c.key());
      }
    }
    freeCount = 0;
    for (int i = slotCount - 1; i >= 0; i--) {
      if (slotKeys[i] == null) {
        if (freeCount == free.length) {
          free = Arrays.copyOf(free, freeCount * 2);
        }
        free[freeCount++] = i;
      }
    }
  }

  private Snapshot next(Snapshot s, Touched touched, Graph graph) {
    List<String> keys = touched.keys();
    if (keys.size() > 1024 && keys.size() > s.size() / 4) {
      return rebuild(s, touched, graph);
    }
    SlotIndex slots = s.slots;
    SlotVector<KeyRevision> views = s.views;
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      Node n = graph.get(key);
      int slot = slotOf(key, n, slots);
      if (n == null || n.value == null) {
        if (slot >= 0) {
          slots = slots.minus(key);
          views = views.set(slot, null);
          release(slot);
        }
        pending.remove(key);
        continue;
      }
      KeyRevision view = viewOf(graph, n);
      if (slot < 0) {
        slot = acquire(key);
        slots = slots.plus(key, slot);
        views = slot == views.size() ? views.append(view) : views.set(slot, view);
      } else {
        views = views.set(slot, view);
      }
      n.publishedSlot = slot;
      notePending(key, view);
    }
    if (slots.deltaSize() > Math.max(COMPACT_MIN, slots.baseSize() / 2)) {
      slots = slots.compacted(); // the keys that came and went since the last large change
    }
    return new Snapshot(slots, views);
  }

  /** Entries compared first by {@link #ascending(String[])}. */
  private static final int SAMPLES = 32;

  /** Changed keys the key index holds apart from its base before it is compacted, at least. */
  private static final int COMPACT_MIN = 4096;

  /**
   * The slot of {@code key} (whose node is {@code n}, or null), or -1 when it is not published: the
   * node's remembered slot when that slot still holds the key, else a lookup.
   */
  private int slotOf(String key, Node n, SlotIndex slots) {
    if (n != null) {
      int hint = n.publishedSlot;
      if (hint >= 0 && hint < slotCount && key.equals(slotKeys[hint])) {
        return hint;
      }
    }
    return slots.get(key);
  }

  /** A slot for a newly published key: a freed one, else a new one at the end. */
  private int acquire(String key) {
    int slot;
    if (freeCount > 0) {
      slot = free[--freeCount];
    } else {
      slot = slotCount++;
      if (slot == slotKeys.length) {
        slotKeys = Arrays.copyOf(slotKeys, slot * 2);
      }
    }
    slotKeys[slot] = key;
    return slot;
  }

  private void release(int slot) {
    slotKeys[slot] = null;
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, freeCount * 2);
    }
    free[freeCount++] = slot;
  }

  private void notePending(String key, KeyRevision view) {
    if (view.state == ValueState.PENDING) {
      pending.add(key);
    } else if (!pending.isEmpty()) {
      pending.remove(key);
    }
  }

  /**
   * A large change: the touched keys, sorted, merged with the previous snapshot's key index
   * (untouched keys keep their entries and slots) into new structures built in one linear pass.
   * Needs no ordered view of the graph.
   */
  private Snapshot rebuild(Snapshot old, Touched t, Graph graph) {
    String[] touched = t.keys().toArray(new String[0]);
    if (!ascending(touched)) {
      Arrays.sort(touched);
    }
    // a key listed twice (one whose node was removed) counts once
    int distinct = 0;
    for (int i = 0; i < touched.length; i += Bulk.RANGE) { // loops in ranges: see Bulk
      distinct = dropRepeated(touched, i, Bulk.end(i, touched.length), distinct);
    }
    if (slotKeys.length < slotCount + distinct) { // at most one new slot per key
      slotKeys = Arrays.copyOf(slotKeys, slotCount + distinct);
    }
    Merge m = new Merge(old, graph, distinct);
    for (int i = 0; i < distinct; i += Bulk.RANGE) {
      m.add(touched, i, Bulk.end(i, distinct));
    }
    m.finish();
    // the arrays were sized for every touched key being new: trimmed, as the snapshot keeps them
    String[] sortedKeys = m.size == m.keys.length ? m.keys : Arrays.copyOf(m.keys, m.size);
    int[] slots = m.size == m.slots.length ? m.slots : Arrays.copyOf(m.slots, m.size);
    return new Snapshot(
        SlotIndex.ofSorted(sortedKeys, slots),
        SlotVector.of(
            m.views.length >= slotCount ? m.views : Arrays.copyOf(m.views, slotCount), slotCount));
  }

  /**
   * True when the entries are in key order (repeats allowed). A few entries spread over the array
   * are compared first: entries that are not in order (e.g. the values of a resync followed by
   * their derived values) are then usually told without a pass over all of them.
   */
  private static boolean ascending(String[] touched) {
    int step = touched.length / SAMPLES;
    for (int i = step; step > 0 && i < touched.length; i += step) {
      if (touched[i - step].compareTo(touched[i]) > 0) {
        return false;
      }
    }
    for (int i = 1; i < touched.length; i += Bulk.RANGE) {
      if (!ascending(touched, i, Bulk.end(i, touched.length))) {
        return false;
      }
    }
    return true;
  }

  private static boolean ascending(String[] touched, int from, int to) {
    for (int i = from; i < to; i++) {
      if (touched[i - 1].compareTo(touched[i]) > 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Moves the entries {@code [from, to)} whose key differs from the last one kept to the kept ones
   * ({@code distinct} so far, at the front); returns the new count.
   */
  private static int dropRepeated(String[] touched, int from, int to, int distinct) {
    for (int i = from; i < to; i++) {
      String key = touched[i];
      if (distinct == 0 || !key.equals(touched[distinct - 1])) {
        touched[distinct++] = key;
      }
    }
    return distinct;
  }

  /** The views of {@code old} by slot, with room for {@code extra} more slots. */
  private static KeyRevision[] viewsBySlot(Snapshot old, int extra) {
    KeyRevision[] out = new KeyRevision[old.views.size() + extra];
    old.views.copyTo(out);
    return out;
  }

  /**
   * The merge of a rebuild: the previous snapshot's entries of untouched keys and the touched keys
   * (given in key order, each once), in key order, and the views by slot. One touched key per call,
   * so the per-key step is a method the JIT compiles early.
   */
  private final class Merge {
    /** The new key index's entries: keys and slots in key order. */
    final String[] keys;

    final int[] slots;
    int size;

    /** Views by slot: the previous ones, replaced for the touched keys. */
    final KeyRevision[] views;

    /** The previous snapshot's entries; {@link #more} says whether it is on one. */
    private final SlotIndex.Cursor prev;

    private boolean more;
    private final Graph graph;

    Merge(Snapshot old, Graph graph, int touched) {
      this.keys = new String[old.size() + touched];
      this.slots = new int[keys.length];
      // each touched key takes at most one new slot
      this.views = viewsBySlot(old, touched);
      this.prev = old.slots.cursor(null, null);
      this.more = prev.next();
      this.graph = graph;
    }

    /** {@link #add(String)} of {@code touched[from, to)}. */
    void add(String[] touched, int from, int to) {
      for (int i = from; i < to; i++) {
        add(touched[i]);
      }
    }

    /** A touched key (each key once, in key order). */
    void add(String key) {
      int c = 1;
      while (more && (c = prev.key().compareTo(key)) < 0) {
        keep(prev.key(), prev.slot()); // untouched: kept as it was
        more = prev.next();
      }
      int published = more && c == 0 ? prev.slot() : -1;
      if (published >= 0) {
        more = prev.next();
      }
      Node n = graph.get(key);
      if (n == null || n.value == null) {
        if (published >= 0) {
          views[published] = null;
          release(published);
        }
        pending.remove(key);
        return;
      }
      KeyRevision view = viewOf(graph, n);
      int slot = published >= 0 ? published : acquire(key);
      keep(key, slot);
      views[slot] = view;
      n.publishedSlot = slot;
      notePending(key, view);
    }

    /** Keeps the untouched entries after the last touched key. */
    void finish() {
      while (more) {
        keep(prev.key(), prev.slot());
        more = prev.next();
      }
    }

    private void keep(String key, int slot) {
      keys[size] = key;
      slots[size++] = slot;
    }
  }

  /** What readers see of {@code n}: its newest revision when that shows it exactly. */
  static KeyRevision viewOf(Graph graph, Node n) {
    return KeyRevision.published(n, Readiness.details(graph, n));
  }

  static ValueStatus statusOf(Graph graph, Node n) {
    return new ValueStatus(
        n.key, n.state, OpRecord.msg(n.error), n.lastOperation(), Readiness.details(graph, n));
  }

  /** Status of a base value from the live graph (engine thread). */
  static BaseValueStatus baseStatus(Graph graph, String key) {
    Node n = graph.get(key);
    if (n == null || n.value == null) {
      return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
    }
    List<ValueStatus> derived = new ArrayList<>();
    for (String dk : n.derivedKeys) {
      Node dn = graph.get(dk);
      if (dn != null && dn.value != null) {
        derived.add(statusOf(graph, dn));
      }
    }
    return new BaseValueStatus(statusOf(graph, n), derived);
  }

  /** Status of a key from the published snapshot (any thread). */
  BaseValueStatus status(String key) {
    return snapshot.status(key);
  }
}
