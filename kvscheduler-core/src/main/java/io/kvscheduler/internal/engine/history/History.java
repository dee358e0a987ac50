package io.kvscheduler.internal.engine.history;

import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.BatchJournal;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.publish.KeyRevision;
import io.kvscheduler.internal.engine.publish.Published;
import io.kvscheduler.internal.engine.record.RecordSize;
import io.kvscheduler.internal.engine.record.TxnRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Transaction records and graph revisions. Records are written by the engine thread and read from
 * any thread through a {@link RecordLog}. Revisions form one immutable chain per key ({@link
 * KeyRevision}): the engine keeps the chain in the key's node and readers find it in the key's
 * published view, so recording a revision costs one object and no map operation. Chains of removed
 * keys move to a small concurrent map until the key comes back or the chain is trimmed. Only
 * changed nodes get a revision, so the cost per transaction follows the change. Trimmed by age
 * (except the permanent period after start), at most once a minute after a transaction, and records
 * also by count and by their estimated bytes ({@link RecordSize}): the oldest go first, whatever
 * their age, the newest is always kept.
 *
 * <p>This class records and trims; the queue of ended revisions a trim visits is {@link
 * ClosedRevisions}, and the read side (timelines, snapshots, flag counts) is {@link
 * RevisionQueries}.
 */
public final class History {
  private final SchedulerConfig config;
  private final Instant started;
  private final RecordLog records = new RecordLog();

  /** Key → newest revision (closed) of keys that have no node. */
  final ConcurrentHashMap<String, KeyRevision> removed = new ConcurrentHashMap<>();

  /** Revisions ended and not yet trimmed, in order of end: what a trim visits. */
  private final ClosedRevisions closed = new ClosedRevisions();

  /** Timelines, snapshots and flag counts, from the published views and {@link #removed}. */
  private final RevisionQueries queries;

  /** Trims run at most once a minute: the earliest time of the next (no Instant per check). */
  private Instant nextTrim;

  private Instant nextRevisionTrim;

  public History(SchedulerConfig config, Instant started, Published published) {
    this.config = config;
    this.started = started;
    this.queries = new RevisionQueries(published, removed);
    this.nextTrim = started.plusSeconds(60);
    this.nextRevisionTrim = nextTrim;
  }

  public void addRecord(TxnRecord txn) {
    if (!config.recordHistory()) {
      return;
    }
    txn.bytes =
        RecordSize.of(
            config.valueSizeEstimator(), txn.description, txn.values, txn.planned, txn.executed);
    records.append(txn, config.historyMaxRecords(), config.historyMaxBytes());
  }

  public List<RecordedTxn> records(Instant since, Instant until) {
    trim(config.clock().instant());
    List<RecordedTxn> out = new ArrayList<>();
    if (until.isBefore(since)) {
      return out;
    }
    for (TxnRecord r : records.toArray()) {
      if (!r.start.isBefore(since) && !r.start.isAfter(until)) {
        out.add(r.toApi());
      }
    }
    return out;
  }

  public Optional<RecordedTxn> record(long seq) {
    trim(config.clock().instant());
    TxnRecord r = records.get(seq);
    return r == null ? Optional.empty() : Optional.of(r.toApi());
  }

  /**
   * Appends one revision per node changed in a batch and hands chains over to nodes that replaced
   * others; a removed key's chain is closed and kept aside.
   */
  public void addRevisions(BatchJournal journal, long seq, Instant now) {
    if (!config.recordHistory()) {
      return;
    }
    for (int i = 0; i < journal.size(); i += Bulk.RANGE) {
      addRevisions(journal, i, Bulk.end(i, journal.size()), seq, now);
    }
  }

  private void addRevisions(BatchJournal journal, int from, int to, long seq, Instant now) {
    for (int i = from; i < to; i++) {
      addRevision(journal, i, seq, now);
    }
  }

  /**
   * True when revisions are recorded (else {@link #addRevision} and {@link #carryOver} do nothing).
   */
  public boolean records() {
    return config.recordHistory();
  }

  /** {@link #addRevisions} of entry {@code i} alone (when {@link #records()}). */
  public void addRevision(BatchJournal journal, int i, long seq, Instant now) {
    Node cur = journal.current(i);
    Node before = journal.before(i);
    KeyRevision old = chainBefore(journal, i);
    if (cur == null) {
      if (old != null) {
        if (old.until == null) {
          closed.add(journal.key(i), now);
        }
        removed.put(journal.key(i), old.closedAt(now));
      }
    } else if (before != BatchJournal.ABSENT && !cur.contentDiffers(before)) {
      cur.setRevisions(old); // unchanged (the node may be a new one for the same key)
    } else {
      if (old != null && old.until == null) {
        closed.add(cur.key(), now); // the new revision ends the open one
      }
      cur.setRevisions(KeyRevision.recorded(cur, seq, now, old));
    }
  }

  /**
   * The chain entry {@code i} of a batch's journal had before the batch: the node's, or for a key
   * that had no node, the one kept aside for it (if any).
   */
  private KeyRevision chainBefore(BatchJournal journal, int i) {
    Node before = journal.before(i);
    if (before != BatchJournal.ABSENT) {
      return KeyRevision.of(before);
    }
    return removed.isEmpty() ? null : removed.get(journal.key(i));
  }

  /**
   * A batch recorded without revisions (a refresh, a downstream resync): chains stay with their
   * keys, those of removed keys are kept aside as they are.
   */
  public void carryOver(BatchJournal journal) {
    if (!config.recordHistory()) {
      return;
    }
    for (int i = 0; i < journal.size(); i += Bulk.RANGE) {
      carryOver(journal, i, Bulk.end(i, journal.size()));
    }
  }

  private void carryOver(BatchJournal journal, int from, int to) {
    for (int i = from; i < to; i++) {
      carryOver(journal, i);
    }
  }

  /** {@link #carryOver(BatchJournal)} of entry {@code i} alone (when {@link #records()}). */
  public void carryOver(BatchJournal journal, int i) {
    Node cur = journal.current(i);
    KeyRevision old = chainBefore(journal, i);
    if (old == null) {
      return;
    }
    if (cur == null) {
      removed.put(journal.key(i), old);
    } else {
      cur.setRevisions(old);
    }
  }

  /**
   * After the views of a transaction are published: chains kept aside for keys that have a node
   * again are dropped (readers find them in the views now). Only the keys the transaction touched
   * can have come back ({@code touchedKeys}, duplicates allowed): the others are not looked at.
   */
  public void afterPublish(Graph graph, List<String> touchedKeys) {
    if (removed.isEmpty()) {
      return;
    }
    for (int i = 0; i < touchedKeys.size(); i++) {
      String k = touchedKeys.get(i);
      if (removed.containsKey(k) && graph.get(k) != null) {
        removed.remove(k);
      }
    }
  }

  /**
   * The state of the newest recorded revision of {@code key} (whose node is {@code n}, or null) in
   * which the value was there (not REMOVED), or null: what the key was before it went, whoever
   * removed it.
   */
  public ValueState lastPresentState(String key, Node n) {
    KeyRevision head = n != null ? KeyRevision.of(n) : null;
    if (head == null && !removed.isEmpty()) {
      head = removed.get(key);
    }
    for (KeyRevision r = head; r != null; r = r.prev) {
      if (r.state != ValueState.REMOVED) {
        return r.state;
      }
    }
    return null;
  }

  /** Every revision of {@code key}, oldest first. */
  public List<NodeRevision> timeline(String key) {
    return queries.timeline(key);
  }

  /** The revision of every key that was valid at {@code t}, in key order. */
  public List<NodeRevision> snapshot(Instant t) {
    return queries.snapshot(t);
  }

  /**
   * How many revisions of the selected keys have {@code flag}, in total and per value.
   *
   * @throws IllegalArgumentException if {@code flag} is not a known flag
   */
  public FlagStats flagStats(String flag, KeySelector selector) {
    return queries.flagStats(flag, selector);
  }

  private Instant cutoff(Instant now) {
    return now.minus(config.historyAgeLimit());
  }

  private boolean keep(KeyRevision r, Instant end, Instant cutoff) {
    boolean old = end != null && end.isBefore(cutoff);
    return !old || r.since.isBefore(started.plus(config.permanentHistoryPeriod()));
  }

  /**
   * Drops old records, at most once a minute. Called after every transaction and before every read
   * of records, so an idle scheduler needs no timer; safe from any thread.
   */
  public synchronized void trim(Instant now) {
    if (!due(now, nextTrim)) {
      return;
    }
    nextTrim = now.plusSeconds(60);
    Instant cutoff = cutoff(now);
    Instant permanentUntil = started.plus(config.permanentHistoryPeriod());
    records.removeIf(r -> r.start.isBefore(cutoff) && !r.start.isBefore(permanentUntil));
  }

  /**
   * True when a trim whose next run is {@code next} (a minute after the last) is due at {@code
   * now}: at or after {@code next}, or before the last run (the clock was set back: waiting for
   * {@code next} would hold the trims back by as much).
   */
  private static boolean due(Instant now, Instant next) {
    return !now.isBefore(next) || now.isBefore(next.minusSeconds(60));
  }

  /**
   * Drops old revisions from the chains, at most once a minute (engine thread). Returns the keys
   * whose chain changed: their views must be published again.
   */
  public List<String> trimRevisions(Instant now, Graph graph) {
    if (!config.recordHistory() || !due(now, nextRevisionTrim)) {
      return List.of();
    }
    nextRevisionTrim = now.plusSeconds(60);
    Instant cutoff = cutoff(now);
    List<String> changed = new ArrayList<>();
    closed.sortIfNeeded();
    HashSet<String> visited = null;
    for (String key = closed.pollEndedBefore(cutoff);
        key != null;
        key = closed.pollEndedBefore(cutoff)) {
      if (visited == null) {
        visited = new HashSet<>();
      }
      if (!visited.add(key)) {
        continue; // the chain was trimmed already in this pass
      }
      Node n = graph.get(key);
      if (n != null) {
        KeyRevision head = KeyRevision.of(n);
        KeyRevision kept = trimmed(head, cutoff);
        if (kept != head) {
          n.setRevisions(kept); // bookkeeping: the node's content is unchanged
          changed.add(n.key());
        }
      }
      if (!removed.isEmpty()) {
        removed.computeIfPresent(key, (k, head) -> trimmed(head, cutoff)); // null drops the key
      }
    }
    closed.shrinkIfSparse();
    return changed;
  }

  /**
   * After a transaction was aborted and rolled back: side chains of keys that have a node again are
   * dropped (the transaction's own cleanup did not run). Rare: one pass over the side chains.
   */
  public void dropRevived(Graph graph) {
    if (!removed.isEmpty()) {
      removed.keySet().removeIf(k -> graph.get(k) != null);
    }
  }

  /** The chain without the revisions {@link #keep} drops; the same chain when none is. */
  private KeyRevision trimmed(KeyRevision head, Instant cutoff) {
    List<KeyRevision> chain = new ArrayList<>();
    List<Instant> ends = new ArrayList<>();
    boolean dropped = false;
    KeyRevision next = null;
    for (KeyRevision r = head; r != null; r = r.prev) {
      Instant end = r.end(next);
      if (keep(r, end, cutoff)) {
        chain.add(r);
        ends.add(end);
      } else {
        dropped = true;
      }
      next = r;
    }
    if (!dropped) {
      return head;
    }
    KeyRevision out = null;
    for (int i = chain.size() - 1; i >= 0; i--) {
      out = chain.get(i).rebased(ends.get(i), out);
    }
    return out;
  }
}
