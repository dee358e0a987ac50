package io.kvscheduler.internal.engine;

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

  /**
   * Journal marker of a node created in the batch before this one and written in this one without a
   * copy ({@link #writingChanging}): its content before this batch is not kept.
   */
  private static final Node BORN = new Node("<born>");

  private static final String[] NO_KEYS = new String[0];
  private static final Node[] NO_NODES = new Node[0];

  private final NodeStore nodes;
  private final DependencyIndex index;
  private final SettledDerived settled;

  /** The nodes written in the current batch, in order of first write. */
  private ArrayList<Node> entries = new ArrayList<>();

  /** Keys removed in the current batch (usually few) → the removed, journaled node. */
  private final HashMap<String, Node> removedInBatch = new HashMap<>();

  /**
   * Number of the current batch (counts closed and rolled-back batches); package-private so that
   * the graph's tests can bring the numbers to their wrap-around.
   */
  int batch;

  /** The batch whose new nodes {@link #writingChanging} journals without a copy, or -1. */
  private int lightBorn = -1;

  /** The journal the last {@link #endBatch()} returned. */
  private BatchJournal lastClosed;

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
    n.born = batch;
    Node removed = removedInBatch.isEmpty() ? null : removedInBatch.remove(n.key);
    if (removed != null) {
      n.journaled = removed.journaled; // the key's content before the batch
      if (removed.journaled == BORN) {
        n.history = removed.history; // no copy holds it: the entry's node does
      }
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

  /**
   * {@link #writing} for a write after which the node's content surely differs (see {@link
   * Graph#writeChanging}): a node created in the batch given to {@link #journalBirthsLightly} is
   * journaled without a copy.
   */
  void writingChanging(Node n) {
    if (lightBorn < 0 || n.journaled != null || n.born != lightBorn) {
      writing(n);
      return;
    }
    n.journaled = BORN;
    entries.add(n);
  }

  /** Journals {@code n} before it leaves the graph. */
  void removing(Node n) {
    writing(n);
    removedInBatch.put(n.key, n);
  }

  /** See {@link Graph#journalBirthsLightly}. */
  void journalBirthsLightly(BatchJournal previous) {
    if (previous == lastClosed && previous != null) {
      lightBorn = batch == 0 ? Integer.MAX_VALUE : batch - 1;
    }
  }

  /** See {@link Graph#rollback()}. */
  void rollback() {
    List<Node> undone = entries;
    entries = new ArrayList<>();
    removedInBatch.clear();
    BatchJournal previous = lightBorn >= 0 ? lastClosed : null;
    // copies made before the batch numbers wrapped are put back below: in this batch if the
    // numbers wrap now, in the batch before if they wrapped when it closed
    boolean stale = batch == Integer.MAX_VALUE || previous != null && batch == 0;
    nextBatch();
    lastClosed = null;
    for (Node e : undone) {
      Node orig = e.journaled;
      e.journaled = null;
      if (orig != SUPERSEDED) {
        restore(e.key, orig == BORN ? BatchJournal.ABSENT : orig);
      }
    }
    if (previous != null) {
      for (int i = previous.size() - 1; i >= 0; i--) {
        restore(previous.key(i), previous.born(i) ? BatchJournal.ABSENT : previous.before(i));
      }
    }
    if (stale) {
      forgetBirths();
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
      if (cur.derivedFrom != null && settled.any()) {
        settled.touched(cur);
      }
    }
    if (orig != BatchJournal.ABSENT) {
      if (orig.derivedFrom != null && settled.any()) {
        settled.touched(orig);
      }
      nodes.putBack(orig);
      index.add(orig);
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

  /** See {@link Graph#endBatch()}. */
  BatchJournal endBatch() {
    List<Node> closing = entries;
    removedInBatch.clear();
    if (closing.isEmpty()) {
      // a batch that wrote nothing (most one-value transactions have two): its list serves the
      // next batch, and its journal has no arrays of its own
      nextBatch();
      lastClosed = new BatchJournal(NO_KEYS, NO_NODES, NO_NODES, null, 0);
      return lastClosed;
    }
    entries = new ArrayList<>();
    String[] keys = new String[closing.size()];
    Node[] before = new Node[closing.size()];
    Node[] current = new Node[closing.size()];
    boolean[] born = lightBorn >= 0 ? new boolean[closing.size()] : null;
    int size = 0;
    for (int i = 0; i < closing.size(); i += Bulk.RANGE) {
      size = close(closing, i, Bulk.end(i, closing.size()), keys, before, current, born, size);
    }
    nextBatch();
    lastClosed = new BatchJournal(keys, before, current, born, size);
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
      boolean[] born,
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
      index.remove(e);
      nodes.take(e.key);
    }
    return e.inGraph ? e : null;
  }

  /** Keys written in the current batch so far. */
  Collection<String> journaledKeys() {
    List<String> out = new ArrayList<>(entries.size());
    for (Node e : entries) {
      if (e.journaled != SUPERSEDED) {
        out.add(e.key);
      }
    }
    return out;
  }
}
