package io.kvscheduler.internal.engine;

import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.internal.graph.Graph;
import io.kvscheduler.internal.graph.Node;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.pcollections.PVector;
import org.pcollections.TreePVector;

/**
 * Transaction records and graph revisions. Written by the engine thread, read from any thread:
 * records live in a concurrent sorted map, each key's timeline in an immutable vector replaced on
 * every append (appends and trimming of one key are atomic per key). Only changed nodes get a revision, so the cost per transaction follows the
 * change. Trimmed by age (except the permanent period after start) and by record count.
 */
final class History {
  private final SchedulerConfig cfg;
  private final Instant started;
  private final ConcurrentSkipListMap<Long, RecordedTxn> records = new ConcurrentSkipListMap<>();
  /**
   * Key → its timeline: a single {@link NodeRevision} while the key has one revision (most keys:
   * no vector per key), a {@code PVector<NodeRevision>} once it has more.
   */
  private final ConcurrentHashMap<String, Object> timelines = new ConcurrentHashMap<>();

  @SuppressWarnings("unchecked")
  private static PVector<NodeRevision> vector(Object timeline) {
    return timeline instanceof NodeRevision r ? TreePVector.singleton(r)
        : (PVector<NodeRevision>) timeline;
  }

  private static NodeRevision last(Object timeline) {
    if (timeline instanceof NodeRevision r) {
      return r;
    }
    PVector<NodeRevision> tl = vector(timeline);
    return tl.get(tl.size() - 1);
  }

  /** The timeline with its last revision closed at {@code now} (unchanged when closed). */
  private static Object closed(Object timeline, Instant now) {
    if (timeline instanceof NodeRevision r) {
      return r.until().isPresent() ? r : r.closedAt(now);
    }
    PVector<NodeRevision> tl = vector(timeline);
    NodeRevision last = tl.get(tl.size() - 1);
    return last.until().isPresent() ? tl : tl.with(tl.size() - 1, last.closedAt(now));
  }
  private Instant lastTrim;

  History(SchedulerConfig cfg, Instant started) {
    this.cfg = cfg;
    this.started = started;
    this.lastTrim = started;
  }

  void addRecord(RecordedTxn txn) {
    if (!cfg.recordHistory()) {
      return;
    }
    records.put(txn.seqNum(), txn);
    while (records.size() > cfg.historyMaxRecords()) {
      records.pollFirstEntry();
    }
  }

  List<RecordedTxn> records(Instant since, Instant until) {
    trim(cfg.clock().instant());
    List<RecordedTxn> out = new ArrayList<>();
    if (until.isBefore(since)) {
      return out;
    }
    for (RecordedTxn r : records.values()) {
      if (!r.start().isBefore(since) && !r.start().isAfter(until)) {
        out.add(r);
      }
    }
    return out;
  }

  Optional<RecordedTxn> record(long seq) {
    trim(cfg.clock().instant());
    return Optional.ofNullable(records.get(seq));
  }

  /** Appends one revision per node changed in a batch (journal: key → content before). */
  void addRevisions(Map<String, Node> journal, Graph g, long seq, Instant now) {
    if (!cfg.recordHistory()) {
      return;
    }
    if (journal instanceof Graph.Journal j) {
      // the journal knows the nodes: no lookup per key
      for (int i = 0; i < j.size(); i++) {
        addRevision(j.key(i), j.current(i), j.before(i), seq, now);
      }
      return;
    }
    for (Map.Entry<String, Node> e : journal.entrySet()) {
      addRevision(e.getKey(), g.get(e.getKey()), e.getValue(), seq, now);
    }
  }

  private void addRevision(String key, Node cur, Node orig, long seq, Instant now) {
    if (cur == null) {
      if (orig != Graph.ABSENT) {
        closeOpen(key, now);
      }
      return;
    }
    if (orig != Graph.ABSENT && !cur.contentDiffers(orig)) {
      return;
    }
    NodeRevision rev = revisionOf(cur, seq, now);
    // one map operation: close the open revision (if any) and append
    timelines.compute(key, (k, old) -> old == null ? rev
        : vector(closed(old, now)).plus(rev));
  }

  private void closeOpen(String key, Instant now) {
    timelines.computeIfPresent(key, (k, tl) -> closed(tl, now));
  }

  static NodeRevision revisionOf(Node n, long seq, Instant now) {
    Map<String, String> deps;
    if (n.deps().isEmpty()) {
      deps = Map.of();
    } else if (n.deps().size() == 1) {
      var d = n.deps().get(0);
      deps = Map.of(d.label(), d.isAnyOf() ? "anyOf" + d.keyPrefixes() : d.key());
    } else {
      deps = new LinkedHashMap<>();
      for (var d : n.deps()) {
        deps.put(d.label(), d.isAnyOf() ? "anyOf" + d.keyPrefixes() : d.key());
      }
    }
    return new NodeRevision(n.key, n.label, Optional.ofNullable(n.value),
        Optional.ofNullable(n.metadata), n.state, n.descriptor == null ? "" : n.descriptor,
        n.derivedFrom == null ? "" : n.derivedFrom, n.unavailable, OpRecord.msg(n.error),
        n.lastUpdate == null ? TxnOperation.UNDEFINED : n.lastUpdate.op(),
        n.lastUpdate == null ? -1 : n.lastUpdate.seq(), deps, n.derivedKeys, seq, now,
        Optional.empty());
  }

  /** State of the last recorded revision of {@code key}, or null. */
  io.kvscheduler.api.ValueState lastRecordedState(String key) {
    Object tl = timelines.get(key);
    return tl == null ? null : last(tl).state();
  }

  List<NodeRevision> timeline(String key) {
    trim(cfg.clock().instant());
    Object tl = timelines.get(key);
    return tl == null ? List.of() : List.copyOf(vector(tl));
  }

  List<NodeRevision> snapshot(Instant t) {
    TreeMap<String, NodeRevision> out = new TreeMap<>();
    timelines.forEach((key, tl) -> {
      for (NodeRevision r : vector(tl)) {
        if (!r.since().isAfter(t) && (r.until().isEmpty() || r.until().get().isAfter(t))) {
          out.put(key, r);
        }
      }
    });
    return List.copyOf(out.values());
  }

  FlagStats flagStats(String flag, KeySelector selector) {
    long total = 0;
    Map<String, Long> per = new TreeMap<>();
    for (Map.Entry<String, Object> e : timelines.entrySet()) {
      if (!selector.test(e.getKey())) {
        continue;
      }
      for (NodeRevision r : vector(e.getValue())) {
        String v = flagValue(flag, r);
        if (v != null) {
          total++;
          per.merge(v, 1L, Long::sum);
        }
      }
    }
    return new FlagStats(total, per);
  }

  private static String flagValue(String flag, NodeRevision r) {
    return switch (flag) {
      case "value-state" -> r.state().name();
      case "unavailable" -> r.unavailable() ? "" : null;
      case "error" -> r.error().isEmpty() ? null : "";
      case "last-update" -> r.lastUpdateSeq() < 0 ? null : r.lastOperation().name();
      case "descriptor" -> r.descriptor().isEmpty() ? null : r.descriptor();
      case "derived" -> r.derivedFrom().isEmpty() ? null : r.derivedFrom();
      default -> throw new IllegalArgumentException("unknown flag '" + flag
          + "' (known: value-state, unavailable, error, last-update, descriptor, derived)");
    };
  }

  /**
   * Drops old records and revisions, at most once a minute. Called after every transaction and
   * before every read, so an idle scheduler needs no timer; safe from any thread.
   */
  synchronized void trim(Instant now) {
    if (now.isBefore(lastTrim.plusSeconds(60))) {
      return;
    }
    lastTrim = now;
    Instant cutoff = now.minus(cfg.historyAgeLimit());
    Instant permanentUntil = started.plus(cfg.permanentHistoryPeriod());
    records.values().removeIf(r ->
        r.start().isBefore(cutoff) && !r.start().isBefore(permanentUntil));
    for (String key : new ArrayList<>(timelines.keySet())) {
      timelines.computeIfPresent(key, (k, tl) -> {
        PVector<NodeRevision> kept = TreePVector.empty();
        for (NodeRevision r : vector(tl)) {
          boolean old = r.until().isPresent() && r.until().get().isBefore(cutoff);
          boolean permanent = r.since().isBefore(permanentUntil);
          if (!old || permanent) {
            kept = kept.plus(r);
          }
        }
        return kept.isEmpty() ? null : kept.size() == 1 ? kept.get(0) : kept;
      });
    }
  }
}
