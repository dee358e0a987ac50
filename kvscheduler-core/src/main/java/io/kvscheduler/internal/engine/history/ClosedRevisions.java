package io.kvscheduler.internal.engine.history;

import java.time.Instant;
import java.util.Arrays;

/**
 * Revisions ended so far and not yet trimmed, oldest first (engine thread): for each, its key and
 * its end. A trim takes the entries that ended before the cutoff from the front and visits only
 * those keys' chains, not every key of the graph: it costs the chains of the keys that have
 * something to drop. Entries of one batch share the batch's {@code Instant}. If the clock goes
 * back, an entry is queued behind later ones; the next trim then sorts the queue by end first, so
 * nothing waits behind an entry stamped before the clock was set back.
 *
 * <p>A ring of two parallel arrays whose capacity is a power of two.
 */
final class ClosedRevisions {
  private static final int MIN_CAPACITY = 64;

  private String[] keys = new String[MIN_CAPACITY];
  private Instant[] ends = new Instant[MIN_CAPACITY];
  private int head;
  private int size;

  /** An entry was queued with an end before the entry in front of it (the clock went back). */
  private boolean outOfOrder;

  /** Queues the revision of {@code key} that ended at {@code end}. */
  void add(String key, Instant end) {
    if (size > 0 && end.isBefore(ends[(head + size - 1) & (keys.length - 1)])) {
      outOfOrder = true;
    }
    if (size == keys.length) {
      resize(keys.length * 2);
    }
    int at = (head + size) & (keys.length - 1);
    keys[at] = key;
    ends[at] = end;
    size++;
  }

  /** Puts the queue in order of end when the clock went back since the last call. */
  void sortIfNeeded() {
    if (outOfOrder) {
      sort();
    }
  }

  /**
   * Removes and returns the key of the oldest entry when it ended before {@code cutoff}, else null.
   */
  String pollEndedBefore(Instant cutoff) {
    if (size == 0 || !ends[head].isBefore(cutoff)) {
      return null;
    }
    String key = keys[head];
    keys[head] = null;
    ends[head] = null;
    head = (head + 1) & (keys.length - 1);
    size--;
    return key;
  }

  /** Gives memory back after a burst of changes has aged out. */
  void shrinkIfSparse() {
    if (keys.length > MIN_CAPACITY && size < keys.length / 4) {
      resize(Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, size)) * 2));
    }
  }

  /** Puts the queue in order of end (stable), after the clock went back. */
  private void sort() {
    Integer[] order = new Integer[size];
    String[] sortedKeys = new String[keys.length];
    Instant[] sortedEnds = new Instant[keys.length];
    for (int j = 0; j < size; j++) {
      int from = (head + j) & (keys.length - 1);
      sortedKeys[j] = keys[from];
      sortedEnds[j] = ends[from];
      order[j] = j;
    }
    Arrays.sort(order, (a, b) -> sortedEnds[a].compareTo(sortedEnds[b]));
    for (int j = 0; j < size; j++) {
      keys[j] = sortedKeys[order[j]];
      ends[j] = sortedEnds[order[j]];
    }
    Arrays.fill(keys, size, keys.length, null);
    Arrays.fill(ends, size, ends.length, null);
    head = 0;
    outOfOrder = false;
  }

  /**
   * Moves the queue, oldest first, to arrays of {@code capacity} (a power of two above its size).
   */
  private void resize(int capacity) {
    String[] newKeys = new String[capacity];
    Instant[] newEnds = new Instant[capacity];
    for (int j = 0; j < size; j++) {
      int from = (head + j) & (keys.length - 1);
      newKeys[j] = keys[from];
      newEnds[j] = ends[from];
    }
    keys = newKeys;
    ends = newEnds;
    head = 0;
  }
}
