package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.collect.SlotIndex;
import io.kvscheduler.internal.collect.SlotVector;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Touched;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;

/**
 * The read side: an immutable {@link PublishedSnapshot} of what readers see of every key (a {@link
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
 *
 * <p>This class publishes; the snapshot itself is {@link PublishedSnapshot}, the engine's table of
 * slots is {@link SlotTable}, and the view of one node is {@link LiveStatus#viewOf}.
 */
public final class Published {
  private volatile PublishedSnapshot snapshot = PublishedSnapshot.EMPTY;

  /** Keys whose published state is PENDING (engine thread only). */
  private final HashSet<String> pending = new HashSet<>();

  /** Engine side: which key each slot holds, and the free slots. */
  private final SlotTable slotTable = new SlotTable();

  /** Keys whose published state is PENDING (engine thread only; read only). */
  public Collection<String> pendingKeys() {
    return pending;
  }

  public PublishedSnapshot current() {
    return snapshot;
  }

  /**
   * Re-publishes the touched keys (those whose node changed, was created or removed; a key may be
   * listed more than once).
   */
  public void update(Touched touched, Graph graph) {
    PublishedSnapshot s = snapshot;
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
  private void resetTo(PublishedSnapshot s) {
    slotTable.resetTo(s);
    pending.clear();
    for (SlotIndex.Cursor c = s.slots.cursor(null, null); c.next(); ) {
      if (s.views.get(c.slot()).state == ValueState.PENDING) {
        pending.add(c.key());
      }
    }
  }

  private PublishedSnapshot next(PublishedSnapshot s, Touched touched, Graph graph) {
    List<String> keys = touched.keys();
    if (keys.size() > 1024 && keys.size() > s.size() / 4) {
      return rebuild(s, touched, graph);
    }
    SlotIndex slots = s.slots;
    SlotVector<KeyRevision> views = s.views;
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      Node n = graph.get(key);
      int slot = slotTable.slotOf(key, n, slots);
      if (n == null || n.value() == null) {
        if (slot >= 0) {
          slots = slots.minus(key);
          views = views.set(slot, null);
          slotTable.release(slot);
        }
        pending.remove(key);
        continue;
      }
      KeyRevision view = LiveStatus.viewOf(graph, n);
      if (slot < 0) {
        slot = slotTable.acquire(key);
        slots = slots.plus(key, slot);
        views = slot == views.size() ? views.append(view) : views.set(slot, view);
      } else {
        views = views.set(slot, view);
      }
      n.setPublishedSlot(slot);
      notePending(key, view);
    }
    if (slots.deltaSize() > Math.max(COMPACT_MIN, slots.baseSize() / 2)) {
      slots = slots.compacted(); // the keys that came and went since the last large change
    }
    return new PublishedSnapshot(slots, views);
  }

  /** Entries compared first by {@link #ascending(String[])}. */
  private static final int SAMPLES = 32;

  /** Changed keys the key index holds apart from its base before it is compacted, at least. */
  private static final int COMPACT_MIN = 4096;

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
  private PublishedSnapshot rebuild(PublishedSnapshot old, Touched t, Graph graph) {
    String[] touched = t.keys().toArray(new String[0]);
    if (!ascending(touched)) {
      Arrays.sort(touched);
    }
    // a key listed twice (one whose node was removed) counts once
    int distinct = 0;
    for (int i = 0; i < touched.length; i += Bulk.RANGE) { // loops in ranges: see Bulk
      distinct = dropRepeated(touched, i, Bulk.end(i, touched.length), distinct);
    }
    slotTable.reserve(distinct); // at most one new slot per key
    Merge m = new Merge(old, graph, distinct);
    for (int i = 0; i < distinct; i += Bulk.RANGE) {
      m.add(touched, i, Bulk.end(i, distinct));
    }
    m.finish();
    // the arrays were sized for every touched key being new: trimmed, as the snapshot keeps them
    String[] sortedKeys = m.size == m.keys.length ? m.keys : Arrays.copyOf(m.keys, m.size);
    int[] slots = m.size == m.slots.length ? m.slots : Arrays.copyOf(m.slots, m.size);
    int slotCount = slotTable.slotCount();
    return new PublishedSnapshot(
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
  private static KeyRevision[] viewsBySlot(PublishedSnapshot old, int extra) {
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

    Merge(PublishedSnapshot old, Graph graph, int touched) {
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
      if (n == null || n.value() == null) {
        if (published >= 0) {
          views[published] = null;
          slotTable.release(published);
        }
        pending.remove(key);
        return;
      }
      KeyRevision view = LiveStatus.viewOf(graph, n);
      int slot = published >= 0 ? published : slotTable.acquire(key);
      keep(key, slot);
      views[slot] = view;
      n.setPublishedSlot(slot);
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

  /** Status of a key from the published snapshot (any thread). */
  public BaseValueStatus status(String key) {
    return snapshot.status(key);
  }
}
