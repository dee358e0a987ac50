package io.kvscheduler.internal.collect;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.SortedMap;
import org.pcollections.TreePMap;

/**
 * An immutable sorted map from key to slot number (a non-negative int), the key index of the
 * published snapshot. Persistent: every change returns a new index and leaves this one as it is.
 *
 * <p><b>Shape.</b> A <em>base</em> of two sorted arrays (keys, slots), written once by a bulk build
 * and never changed, plus a <em>delta</em>: a persistent sorted map of the keys changed since the
 * base was built, each mapped to its slot, or to {@link #GONE} for a base key that was removed. A
 * key's slot is the delta's answer when the delta has the key, else the base's.
 *
 * <ul>
 *   <li>A bulk build (a first resync, an initial configuration, any large change) costs 8 bytes per
 *       key and no object per key; a tree with a boxed slot per entry costs about 56.
 *   <li>A small change costs O(log n) (a binary search of the base, a path copy in the delta), as
 *       in a persistent tree.
 *   <li>Lookups search the delta, then the base: O(log n).
 *   <li>The delta grows with the keys that come and go after the base was built; {@link
 *       #compacted()} folds it into a new base in one linear pass. The publisher compacts when the
 *       delta outgrows half the base, so the compaction's cost is spread over at least as many
 *       changes as it copies keys.
 * </ul>
 */
public final class SlotIndex {
  /** Delta value of a base key that is no longer in the index. */
  private static final Integer GONE = -1;

  public static final SlotIndex EMPTY =
      new SlotIndex(new String[0], new int[0], TreePMap.empty(), 0);

  /** The base: keys in order, each once, and their slots (same length). */
  private final String[] keys;

  private final int[] slots;
  private final TreePMap<String, Integer> delta;
  private final int size;

  private SlotIndex(String[] keys, int[] slots, TreePMap<String, Integer> delta, int size) {
    this.keys = keys;
    this.slots = slots;
    this.delta = delta;
    this.size = size;
  }

  /**
   * An index of the entries of the arrays, which must have the same length and be sorted by key
   * with each key once. The arrays are kept, not copied: the caller must not change them
   * afterwards.
   */
  public static SlotIndex ofSorted(String[] keys, int[] slots) {
    if (keys.length != slots.length) {
      throw new IllegalArgumentException(
          "keys and slots differ in length: " + keys.length + " and " + slots.length);
    }
    return new SlotIndex(keys, slots, TreePMap.empty(), keys.length);
  }

  /** The slot of {@code key}, or -1 when the index does not have it. */
  public int get(String key) {
    if (!delta.isEmpty()) {
      Integer d = delta.get(key);
      if (d != null) {
        return d;
      }
    }
    int i = Arrays.binarySearch(keys, key);
    return i >= 0 ? slots[i] : -1;
  }

  public int size() {
    return size;
  }

  /** Number of keys changed since the base was built. */
  public int deltaSize() {
    return delta.size();
  }

  /** Number of keys in the base (some of them may be gone since). */
  public int baseSize() {
    return keys.length;
  }

  /** This index with {@code key} at {@code slot}; the key must not be in the index. */
  public SlotIndex plus(String key, int slot) {
    if (slot < 0) {
      throw new IllegalArgumentException("negative slot " + slot + " for " + key);
    }
    return new SlotIndex(keys, slots, delta.plus(key, slot), size + 1);
  }

  /** This index without {@code key}; the key must be in the index. */
  public SlotIndex minus(String key) {
    boolean inBase = Arrays.binarySearch(keys, key) >= 0;
    return new SlotIndex(keys, slots, inBase ? delta.plus(key, GONE) : delta.minus(key), size - 1);
  }

  /** The same entries with an empty delta (one linear pass). */
  public SlotIndex compacted() {
    if (delta.isEmpty()) {
      return this;
    }
    String[] k = new String[size];
    int[] s = new int[size];
    int n = 0;
    for (Cursor c = cursor(null, null); c.next(); n++) {
      k[n] = c.key();
      s[n] = c.slot();
    }
    return ofSorted(k, s);
  }

  /** The entries with keys in [{@code from}, {@code to}) in key order; a null bound is open. */
  public Cursor cursor(String from, String to) {
    int lo = from == null ? 0 : lowerBound(from);
    int hi = to == null ? keys.length : lowerBound(to);
    SortedMap<String, Integer> d;
    if (delta.isEmpty()) {
      d = delta;
    } else if (from == null) {
      d = to == null ? delta : delta.headMap(to);
    } else {
      d = to == null ? delta.tailMap(from) : delta.subMap(from, to);
    }
    return new Cursor(lo, Math.max(lo, hi), d.entrySet().iterator());
  }

  /** The first base position whose key is not below {@code key}. */
  private int lowerBound(String key) {
    int i = Arrays.binarySearch(keys, key);
    return i >= 0 ? i : -i - 1;
  }

  /**
   * A forward walk over entries in key order: {@link #next()} moves to the next entry and says
   * whether there was one; {@link #key()} and {@link #slot()} read it.
   */
  public final class Cursor {
    private int baseIndex;
    private final int baseEnd;
    private final Iterator<Map.Entry<String, Integer>> deltaEntries;
    private Map.Entry<String, Integer> pending;
    private String key;
    private int slot;

    private Cursor(int start, int baseEnd, Iterator<Map.Entry<String, Integer>> deltaEntries) {
      this.baseIndex = start;
      this.baseEnd = baseEnd;
      this.deltaEntries = deltaEntries;
      this.pending = deltaEntries.hasNext() ? deltaEntries.next() : null;
    }

    public boolean next() {
      while (true) {
        String base = baseIndex < baseEnd ? keys[baseIndex] : null;
        if (pending == null) {
          if (base == null) {
            return false;
          }
          baseIndex++;
          return at(base, slots[baseIndex - 1]);
        }
        int c = base == null ? 1 : base.compareTo(pending.getKey());
        if (c < 0) {
          baseIndex++;
          return at(base, slots[baseIndex - 1]);
        }
        if (c == 0) {
          baseIndex++; // the delta's entry replaces the base's
        }
        Map.Entry<String, Integer> e = pending;
        pending = deltaEntries.hasNext() ? deltaEntries.next() : null;
        int s = e.getValue();
        if (s >= 0) {
          return at(e.getKey(), s);
        }
        // a removed base key: skip it
      }
    }

    private boolean at(String k, int s) {
      key = k;
      slot = s;
      return true;
    }

    public String key() {
      return key;
    }

    public int slot() {
      return slot;
    }
  }
}
