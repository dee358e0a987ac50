package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.internal.collect.Bulk;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;

/**
 * The graph's undo journal: the nodes written in the current <em>batch</em>, each with its content
 * before the batch, so that {@link #rollback()} can put the graph back as it was (this is how
 * simulation runs on the live graph without copying it) and {@link #endBatch()} can hand the batch
 * over as a {@link BatchJournal} (history revisions, a transaction's touched keys).
 *
 * <p>The content before the batch is kept in the node itself ({@link Node#journaled}: a copy made
 * on the first write, {@link BatchJournal#ABSENT} for a node created in the batch): no hash map per
 * write. A node removed in the batch stays listed; when its key is written again, the new node
 * takes over its entry and the old one is marked {@link #SUPERSEDED}. Engine thread only.
 */
final class UndoJournal {
  /** Journal marker of an entry taken over by a later node of the same key. */
  private static final Node SUPERSEDED = new Node("<superseded>");

  /** The journal of a batch that wrote nothing. */
  private static final BatchJournal EMPTY =
      new BatchJournal(new String[0], new Node[0], new Node[0], 0);

  private final NodeStore nodes;
  private final DependencyIndex index;
  private final SettledDerived settled;

  /** The nodes written in the current batch, in order of first write. */
  private ArrayList<Node> entries = new ArrayList<>();

  /** The journal {@link #endBatch()} returned last (rollbacks leave it: they leave no trace). */
  private BatchJournal lastClosed;

  /** Keys removed in the current batch (usually few) → the removed, journaled node. */
  private final HashMap<String, Node> removedInBatch = new HashMap<>();

  /**
   * A journal of writes to {@code nodes}, whose rollback keeps {@code index} in step and tells
   * {@code settled} of every derived node it replaces or puts back.
   */
  UndoJournal(NodeStore nodes, DependencyIndex index, SettledDerived settled) {
    this.nodes = nodes;
    this.index = index;
    this.settled = settled;
  }

  /** Sizes the journal of an empty graph for {@code expected} writes. */
  void reserve(int expected) {
    entries.ensureCapacity(expected);
  }

  /**
   * Journals {@code n}, created for a key that has no node: its entry is the content the key had
   * before the batch ({@link BatchJournal#ABSENT}, or that of a node removed in the batch).
   */
  void created(Node n) {
    Node removed = removedInBatch.isEmpty() ? null : removedInBatch.remove(n.key());
    if (removed != null) {
      n.journaled = removed.journaled; // the key's content before the batch
      removed.journaled = SUPERSEDED;
    } else {
      n.journaled = BatchJournal.ABSENT;
    }
    entries.add(n);
  }

  /** Journals the current content of {@code n} on its first write in the batch. */
  void writing(Node n) {
    if (n.journaled == null) {
      n.journaled = n.copy();
      entries.add(n);
    }
  }

  /** Journals {@code n} before it leaves the graph. */
  void removing(Node n) {
    writing(n);
    removedInBatch.put(n.key(), n);
  }

  /** See {@link Graph#rollback()}. */
  void rollback() {
    List<Node> undone = entries;
    entries = new ArrayList<>();
    removedInBatch.clear();
    for (Node e : undone) {
      Node orig = e.journaled;
      e.journaled = null;
      if (orig != SUPERSEDED) {
        restore(e.key(), orig);
      }
    }
  }

  /** See {@link Graph#rollbackThrough}. */
  void rollbackThrough(BatchJournal closed) {
    rollback();
    if (closed != null && closed == lastClosed) {
      for (int i = closed.size() - 1; i >= 0; i--) {
        restore(closed.key(i), closed.before(i));
      }
      lastClosed = null;
    }
  }

  /**
   * Puts {@code orig} (or, for {@link BatchJournal#ABSENT}, no node) back as the node of {@code
   * key}.
   */
  private void restore(String key, Node orig) {
    Node cur = nodes.take(key);
    if (cur != null) {
      index.remove(cur);
      if (cur.derivedFrom() != null && settled.any()) {
        settled.touched(cur);
      }
    }
    if (orig != BatchJournal.ABSENT) {
      if (orig.derivedFrom() != null && settled.any()) {
        settled.touched(orig);
      }
      nodes.putBack(orig);
      index.add(orig);
    }
  }

  /** See {@link Graph#endBatch()}. */
  BatchJournal endBatch() {
    List<Node> closing = entries;
    removedInBatch.clear();
    if (closing.isEmpty()) {
      // a batch that wrote nothing (most one-value transactions have two): its list serves the
      // next batch, and its journal has no arrays of its own
      lastClosed = EMPTY;
      return EMPTY;
    }
    entries = new ArrayList<>();
    String[] keys = new String[closing.size()];
    Node[] before = new Node[closing.size()];
    Node[] current = new Node[closing.size()];
    int size = 0;
    for (int i = 0; i < closing.size(); i += Bulk.RANGE) {
      size = close(closing, i, Bulk.end(i, closing.size()), keys, before, current, size);
    }
    lastClosed = new BatchJournal(keys, before, current, size);
    return lastClosed;
  }

  /**
   * Closes journal entries {@code closing[from, to)} into the arrays from index {@code size};
   * returns the new size.
   */
  private int close(
      List<Node> closing,
      int from,
      int to,
      String[] keys,
      Node[] before,
      Node[] current,
      int size) {
    for (int i = from; i < to; i++) {
      Node e = closing.get(i);
      Node orig = e.journaled;
      e.journaled = null;
      if (orig == SUPERSEDED) {
        continue;
      }
      // an entry that is not superseded belongs to the key's last node of the batch: the
      // current node when it is still in the graph, else the key has none
      keys[size] = e.key();
      before[size] = orig;
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
    if (e.value() == null && e.inGraph) {
      index.remove(e);
      nodes.take(e.key());
    }
    return e.inGraph ? e : null;
  }

  /** Keys written in the current batch so far. */
  Collection<String> journaledKeys() {
    List<String> out = new ArrayList<>(entries.size());
    for (Node e : entries) {
      if (e.journaled != SUPERSEDED) {
        out.add(e.key());
      }
    }
    return out;
  }
}
