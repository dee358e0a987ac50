package io.kvscheduler.internal.engine;

/**
 * The journal of a closed batch of graph writes ({@link Graph#endBatch()}): for each key written in
 * the batch, in order of first write, its content before the batch and the node it had when the
 * batch closed. Read by the history (revisions) and by the collection of a transaction's touched
 * keys. Read only.
 */
final class BatchJournal {
  /** Content before the batch of a key that did not exist when the batch started. */
  static final Node ABSENT = new Node("<absent>");

  private final String[] keys;
  private final Node[] before;
  private final Node[] current;

  /** Null when no entry is born. */
  private final boolean[] born;

  private final int size;

  BatchJournal(String[] keys, Node[] before, Node[] current, boolean[] born, int size) {
    this.keys = keys;
    this.before = before;
    this.current = current;
    this.born = born;
    this.size = size;
  }

  /** Number of entries (keys written in the batch). */
  int size() {
    return size;
  }

  /** Key of entry {@code i}. */
  String key(int i) {
    return keys[i];
  }

  /**
   * Content of entry {@code i} before the batch, or {@link #ABSENT}; for a {@linkplain #born born}
   * entry, the key's last node of the batch instead (whose content is not the one before; the
   * bookkeeping fields that are copied with a node are).
   */
  Node before(int i) {
    return before[i];
  }

  /**
   * True when entry {@code i} is a node created in the batch before this one and written in this
   * one by {@link Graph#writeChanging}: its content changed in this batch, and the content before
   * is not kept.
   */
  boolean born(int i) {
    return born != null && born[i];
  }

  /** The node of entry {@code i} in the graph when the batch closed, or null. */
  Node current(int i) {
    return current[i];
  }
}
