package io.kvscheduler.internal.engine.graph;

/**
 * The journal of a closed batch of graph writes ({@link Graph#endBatch()}): for each key written in
 * the batch, in order of first write, its content before the batch and the node it had when the
 * batch closed. Read by the history (revisions) and by the collection of a transaction's touched
 * keys. Read only.
 */
public final class BatchJournal {
  /** Content before the batch of a key that did not exist when the batch started. */
  public static final Node ABSENT = new Node("<absent>");

  private final String[] keys;
  private final Node[] before;
  private final Node[] current;

  private final int size;

  BatchJournal(String[] keys, Node[] before, Node[] current, int size) {
    this.keys = keys;
    this.before = before;
    this.current = current;
    this.size = size;
  }

  /** Number of entries (keys written in the batch). */
  public int size() {
    return size;
  }

  /** Key of entry {@code i}. */
  public String key(int i) {
    return keys[i];
  }

  /** Content of entry {@code i} before the batch, or {@link #ABSENT}. */
  public Node before(int i) {
    return before[i];
  }

  /** The node of entry {@code i} in the graph when the batch closed, or null. */
  public Node current(int i) {
    return current[i];
  }
}
