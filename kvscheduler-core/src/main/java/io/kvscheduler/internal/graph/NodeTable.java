package io.kvscheduler.internal.graph;

import java.util.AbstractCollection;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The graph's nodes by key: an open-addressing hash table of the nodes themselves (linear probing,
 * at most half full). A node carries its key and the key's spread hash ({@link Node#hash}), so a
 * lookup reads the table slot and the node, and compares key contents only when the hashes are
 * equal; a hash map would read an entry object between the two and keep one entry object per key.
 * Removal shifts the following entries of the probe run back (no tombstones), so the cost of a
 * lookup does not grow with the number of removals.
 *
 * <p>One node per key: {@link #add} refuses a second one. Engine thread only; not thread-safe.
 */
final class NodeTable {
  private static final int MIN_CAPACITY = 16;

  private Node[] table = new Node[MIN_CAPACITY];
  private int size;
  /** Changes of the key set, for the iterators' check. */
  private int modCount;

  /** The hash stored in a node for {@code key}: {@link String#hashCode()} with the high bits mixed in. */
  static int spread(String key) {
    int h = key.hashCode();
    return h ^ (h >>> 16);
  }

  int size() {
    return size;
  }

  boolean isEmpty() {
    return size == 0;
  }

  /** Makes room for {@code expected} nodes without growing (no effect on a table that has nodes). */
  void reserve(int expected) {
    if (size == 0) {
      int capacity = capacityFor(expected);
      if (capacity > table.length) {
        table = new Node[capacity];
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
   * The node of {@code key}, or null (also for a null key, as a hash map would answer). The
   * probe loop is written out here rather than shared with {@link #remove}: this is the engine's
   * most frequent call, and one small method is inlined into its callers where a call to a
   * shared one may not be.
   */
  Node get(String key) {
    if (key == null) {
      return null;
    }
    Node[] t = table;
    int mask = t.length - 1;
    int h = spread(key);
    for (int i = h & mask; ; i = (i + 1) & mask) {
      Node n = t[i];
      if (n == null) {
        return null;
      }
      if (n.hash == h && (n.key == key || n.key.equals(key))) {
        return n;
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
    Node[] t = table;
    int mask = t.length - 1;
    int h = node.hash;
    String key = node.key;
    for (int i = h & mask; ; i = (i + 1) & mask) {
      Node n = t[i];
      if (n == null) {
        t[i] = node;
        size++;
        modCount++;
        return;
      }
      if (n.hash == h && (n.key == key || n.key.equals(key))) {
        throw new IllegalStateException("a second node for key " + key);
      }
    }
  }

  /** Removes the node of {@code key}; returns it, or null when there is none. */
  Node remove(String key) {
    if (key == null) {
      return null;
    }
    Node[] t = table;
    int mask = t.length - 1;
    int h = spread(key);
    for (int i = h & mask; ; i = (i + 1) & mask) {
      Node n = t[i];
      if (n == null) {
        return null;
      }
      if (n.hash == h && (n.key == key || n.key.equals(key))) {
        shiftBack(t, i, mask);
        size--;
        modCount++;
        return n;
      }
    }
  }

  /**
   * Empties slot {@code gap}, then moves back each following node of the probe run whose home
   * slot does not lie (cyclically) between the gap and the node's slot, so that every node stays
   * reachable from its home slot.
   */
  private static void shiftBack(Node[] t, int gap, int mask) {
    int i = gap;
    while (true) {
      i = (i + 1) & mask;
      Node n = t[i];
      if (n == null) {
        t[gap] = null;
        return;
      }
      int home = n.hash & mask;
      // n may fill the gap unless its home is in (gap, i], cyclically
      boolean homeAfterGap = gap <= i ? gap < home && home <= i : gap < home || home <= i;
      if (!homeAfterGap) {
        t[gap] = n;
        gap = i;
      }
    }
  }

  private void resize(int capacity) {
    Node[] old = table;
    Node[] t = new Node[capacity];
    int mask = capacity - 1;
    for (Node n : old) {
      if (n != null) {
        int i = n.hash & mask;
        while (t[i] != null) {
          i = (i + 1) & mask;
        }
        t[i] = n;
      }
    }
    table = t;
  }

  /**
   * The nodes in no particular order: a live, read-only view (adding or removing through it, or
   * its iterators, is not supported); the table must not change while iterating.
   */
  java.util.Collection<Node> values() {
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
