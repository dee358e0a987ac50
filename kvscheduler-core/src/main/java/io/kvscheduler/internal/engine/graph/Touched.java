package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The keys one transaction wrote, gathered from the journals of its batches: a list of keys
 * deduplicated by a mark on the nodes ({@link Node#touchMark}) instead of a hash set, so gathering
 * costs no lookup per key. Keys whose node was removed may be listed twice (consumers look the key
 * up and treat absence the same way each time). Also knows which keys a refresh wrote.
 */
public final class Touched {
  private final long mark;
  private final ArrayList<String> keys = new ArrayList<>();

  /** The batches that were refreshes (their keys are read only if asked for). */
  private final ArrayList<BatchJournal> refreshes = new ArrayList<>();

  private Set<String> refreshedSet;
  private final ArrayList<String> removedCandidates = new ArrayList<>();

  public Touched(long seq) {
    this.mark = seq + 1; // never 0, the mark of a node no transaction touched yet
  }

  /** Adds the keys of a closed batch; {@code refresh}: the batch was a refresh. */
  public void add(BatchJournal j, boolean refresh) {
    reserve(j);
    for (int i = 0; i < j.size(); i += Bulk.RANGE) {
      add(j, i, Bulk.end(i, j.size()));
    }
    if (refresh && j.size() > 0) {
      refreshes.add(j);
      refreshedSet = null;
    }
  }

  /**
   * Makes room for the keys of {@code j} when none is listed yet: sized once for the first batch
   * (usually the largest); later ones grow the lists, as most of their keys are usually listed
   * already (a resync's refresh and execution).
   */
  public void reserve(BatchJournal j) {
    if (keys.isEmpty()) {
      keys.ensureCapacity(j.size());
    }
  }

  private void add(BatchJournal j, int from, int to) {
    for (int i = from; i < to; i++) {
      add(j, i);
    }
  }

  /**
   * Adds the key of entry {@code i} of a batch that was not a refresh (see {@link #reserve}). A
   * batch's node that has left the graph since the batch closed tells nothing of the key's state: a
   * later batch removed it, or a rollback (of a simulation or a planning pass) put a copy of it
   * back in its place, and it still holds what the rolled-back pass wrote. Its key is a removal
   * candidate then: post-processing looks at the key's node.
   */
  public void add(BatchJournal j, int i) {
    String key = j.key(i);
    Node cur = j.current(i);
    add(key, cur);
    if (cur != null && (cur.state() == ValueState.REMOVED || !cur.inGraph)) {
      removedCandidates.add(key);
    }
  }

  /** True when a refresh of this transaction wrote {@code key} (builds a set on first use). */
  public boolean refreshed(String key) {
    if (refreshes.isEmpty()) {
      return false;
    }
    if (refreshedSet == null) {
      refreshedSet = new HashSet<>();
      for (BatchJournal j : refreshes) {
        for (int i = 0; i < j.size(); i++) {
          refreshedSet.add(j.key(i));
        }
      }
    }
    return refreshedSet.contains(key);
  }

  /** Lists {@code key} (whose current node is {@code n}, or null) when it is not listed yet. */
  public void add(String key, Node n) {
    if (n == null) {
      keys.add(key);
    } else if (n.touchMark != mark) {
      n.touchMark = mark;
      keys.add(key);
    }
  }

  /**
   * Keys whose node was REMOVED, or had left the graph, when their batch was added (may repeat; the
   * state may have changed since): a superset of the touched keys that are REMOVED now.
   */
  public List<String> removedCandidates() {
    return removedCandidates;
  }

  /** The listed keys, in order of listing (read only). */
  public List<String> keys() {
    return keys;
  }
}
