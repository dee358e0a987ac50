package io.kvscheduler.internal.engine;

import java.util.AbstractCollection;
import java.util.Collection;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The graph's nodes by key: an open-addressing hash table of the nodes themselves (linear probing,
 * at most half full), with the keys' hashes in a parallel array. A probe reads only the hash array
 * (sixteen slots per cache line) and reads the node only when the hashes are equal, so a long probe
 * run costs a few cache lines instead of one node per slot; a hash map would read an entry object
 * per probe and keep one entry object per key. Removal shifts the following entries of the probe
 * run back (no tombstones), so the cost of a lookup does not grow with the number of removals.
 *
 * <p>One node per key: {@link #add} refuses a second one. Engine thread only; not thread-safe.
 */
final class NodeTable {
  private static final int MIN_CAPACITY = 16;

  private Node[] table = new Node[MIN_CAPACITY];

  /** {@link #stored} hash of each slot's key; 0 for an empty slot. */
  private int[] hashes = new int[MIN_CAPACITY];

  private int size;

  /** Changes of the key set, for the iterators' check. */
  private int modCount;

  /**
   * The hash kept for {@code key}: {@link String#hashCode()} with the high bits mixed in and the
   * top bit set, so that 0 marks an empty slot (the slot is chosen by the low bits).
   */
  static int stored(String key) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) | Integer.MIN_VALUE;
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /**
   * Makes room for {@code expected} nodes without growing (no effect on a table that has nodes).
   */
  void reserve(int expected) {
    if (size == 0) {
      int capacity = capacityFor(expected);
      if (capacity > table.length) {
        table = new Node[capacity];
        hashes = new int[capacity];
      }
    }
  }

  /** The smallest power of two at least twice {@code n} (and at least the minimum). */
  private static int capacityFor(int n) {
    long wanted = Math.max(MIN_CAPACITY, 2L * n);
    if (wanted > (1 << 30)) {
      throw new IllegalStateException("too many nodes: " + n);
    }
    return Integer.highestOneBit((int) wanted - 1) << 1;
  }

  /**
   * The node of {@code key}, or null (also for a null key, as a hash map would answer). The probe
   * loop is written out here rather than shared with {@link #remove}: this is the engine's most
   * frequent call, and one small method is inlined into its callers where a call to a shared one
   * may not be.
   */
  Node get(String key) {
    if (key == null) {
      return null;
    }
    int[] hs = hashes;
    int mask = hs.length - 1;
    int h = stored(key);
    for (int i = h & mask; ; i = (i + 1) & mask) {
      int s = hs[i];
      if (s == 0) {
        return null;
      }
      if (s == h) {
        Node n = table[i];
        if (n.key == key || n.key.equals(key)) {
          return n;
        }
      }
    }
  }

  /**
   * Adds {@code node}, whose key has no node here.
   *
   * @throws IllegalStateException when the key has one (the table is unchanged): one node per key
   */
  void add(Node node) {
    if (2 * (size + 1) > table.length) {
      if (table.length >= 1 << 30) {
        throw new IllegalStateException("too many nodes: " + size);
      }
      resize(2 * table.length);
    }
    int[] hs = hashes;
    int mask = hs.length - 1;
    String key = node.key;
    int h = stored(key);
    for (int i = h & mask; ; i = (i + 1) & mask) {
      int s = hs[i];
      if (s == 0) {
        hs[i] = h;
        table[i] = node;
        size++;
        modCount++;
        return;
      }
      if (s == h) {
        Node n = table[i];
        if (n.key == key || n.key.equals(key)) {
          throw new IllegalStateException("a second node for key " + key);
        }
      }
    }
  }

  /** Removes the node of {@code key}; returns it, or null when there is none. */
  Node remove(String key) {
    if (key == null) {
      return null;
    }
    int[] hs = hashes;
    int mask = hs.length - 1;
    int h = stored(key);
    for (int i = h & mask; ; i = (i + 1) & mask) {
      int s = hs[i];
      if (s == 0) {
        return null;
      }
      if (s == h) {
        Node n = table[i];
        if (n.key == key || n.key.equals(key)) {
          shiftBack(table, hs, i, mask);
          size--;
          modCount++;
          return n;
        }
      }
    }
  }

  /**
   * Empties slot {@code gap}, then moves back each following node of the probe run whose home slot
   * does not lie (cyclically) between the gap and the node's slot, so that every node stays
   * reachable from its home slot.
   */
  private static void shiftBack(Node[] t, int[] hs, int gap, int mask) {
    int i = gap;
    while (true) {
      i = (i + 1) & mask;
      int s = hs[i];
      if (s == 0) {
        t[gap] = null;
        hs[gap] = 0;
        return;
      }
      int home = s & mask;
      // the node may fill the gap unless its home is in (gap, i], cyclically
      boolean homeAfterGap = gap <= i ? gap < home && home <= i : gap < home || home <= i;
      if (!homeAfterGap) {
        t[gap] = t[i];
        hs[gap] = s;
        gap = i;
      }
    }
  }

  private void resize(int capacity) {
    Node[] oldNodes = table;
    int[] oldHashes = hashes;
    Node[] t = new Node[capacity];
    int[] hs = new int[capacity];
    int mask = capacity - 1;
    for (int j = 0; j < oldHashes.length; j++) {
      int s = oldHashes[j];
      if (s != 0) {
        int i = s & mask;
        while (hs[i] != 0) {
          i = (i + 1) & mask;
        }
        hs[i] = s;
        t[i] = oldNodes[j];
      }
    }
    table = t;
    hashes = hs;
  }

  /**
   * The nodes in no particular order: a live, read-only view (adding or removing through it, or its
   * iterators, is not supported); the table must not change while iterating.
   */
  Collection<Node> values() {
    return new AbstractCollection<>() {
      @Override
      public Iterator<Node> iterator() {
        return new Iterator<>() {
          private final Node[] t = table;
          private final int expected = modCount;
          private int next = advance(0);

          private int advance(int from) {
            int i = from;
            while (i < t.length && t[i] == null) {
              i++;
            }
            return i;
          }

          @Override
          public boolean hasNext() {
            return next < t.length;
          }

          @Override
          public Node next() {
            if (modCount != expected || t != table) {
              throw new ConcurrentModificationException();
            }
            if (next >= t.length) {
              throw new NoSuchElementException();
            }
            Node n = t[next];
            next = advance(next + 1);
            return n;
          }
        };
      }

      @Override
      public int size() {
        return size;
      }
    };
  }
}
