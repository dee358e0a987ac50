package io.kvscheduler.internal.engine;

import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.loop.GuardedTime;
import io.kvscheduler.internal.engine.loop.Queued;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Plans follow-up transactions: retries of failed operations (armed on the injected delay
 * scheduler, re-armed while the queue is full) and re-application of UNIMPLEMENTED values once a
 * descriptor selects them. Engine thread only.
 */
final class RetryPlanner {
  private final SchedulerConfig config;
  private final Graph graph;
  private final Registry registry;
  private final TxnProcessor.FollowUpQueue sink;

  /** UNIMPLEMENTED base keys waiting for a descriptor. */
  private final TreeSet<String> unimplemented = new TreeSet<>();

  RetryPlanner(
      SchedulerConfig config, Graph graph, Registry registry, TxnProcessor.FollowUpQueue sink) {
    this.config = config;
    this.graph = graph;
    this.registry = registry;
    this.sink = sink;
  }

  /**
   * Schedules retries of the values that ended RETRYING, grouped by (origin transaction, delay,
   * attempt); a RETRYING value whose retry became obsolete and could not be rescheduled is FAILED.
   */
  void schedule(
      long seq,
      TxnType type,
      long retryForTxn,
      Duration retryDelay,
      Set<String> retryKeys,
      List<OpRecord> executed,
      Collection<String> touched) {
    Map<List<Object>, Map<String, Long>> groups = new LinkedHashMap<>();
    Set<String> seen = new HashSet<>();
    // also values this transaction decided for without a recorded operation (e.g. an
    // abandoned delete restored to RETRYING by an inherited failure): their earlier retry is
    // obsolete now (new last-update), so they must be scheduled again
    TreeSet<String> candidates = new TreeSet<>();
    for (OpRecord op : executed) {
      if (op.newState == ValueState.RETRYING) {
        candidates.add(op.baseKey);
      }
    }
    List<Node> retrying = new ArrayList<>();
    for (String k : touched) {
      Node t = graph.get(k);
      if (t != null && t.state() == ValueState.RETRYING) {
        retrying.add(t);
        if (t.lastUpdate() != null && t.lastUpdate().seq() == seq) {
          candidates.add(t.baseKey());
        }
      }
    }
    if (retrying.isEmpty()) {
      return; // nothing waits for a retry
    }
    for (String baseKey : candidates) {
      if (!seen.add(baseKey)) {
        continue;
      }
      OpRecord op = new OpRecord();
      op.baseKey = baseKey;
      Node n = graph.get(op.baseKey);
      Node failedNode = n;
      if (n == null) {
        continue;
      }
      // the failing node may be a derived value of this base
      if (n.state() != ValueState.RETRYING) {
        failedNode = null;
        for (String dk : n.derivedKeys()) {
          Node dn = graph.get(dk);
          if (dn != null && dn.state() == ValueState.RETRYING) {
            failedNode = dn;
            break;
          }
        }
      }
      if (failedNode == null
          || n.lastUpdate() == null
          || failedNode.lastUpdate() == null
          || failedNode.lastUpdate().retry() == null) {
        continue;
      }
      RetryOptions ro = failedNode.lastUpdate().retry();
      boolean repeated = type == TxnType.RETRY_FAILED_OPS && retryKeys.contains(op.baseKey);
      Duration delay = ro.period();
      if (repeated && ro.expBackoff() && retryDelay != null) {
        delay = retryDelay.multipliedBy(2);
      }
      long origin = repeated ? retryForTxn : seq;
      int attempt = failedNode.retryAttempt();
      groups
          .computeIfAbsent(List.of(origin, delay, attempt), k -> new TreeMap<>())
          .put(op.baseKey, n.lastUpdate().seq());
    }
    Set<String> scheduled = new HashSet<>();
    for (Map.Entry<List<Object>, Map<String, Long>> e : groups.entrySet()) {
      long origin = (Long) e.getKey().get(0);
      Duration delay = (Duration) e.getKey().get(1);
      int attempt = (Integer) e.getKey().get(2);
      Queued.Retry r =
          new Queued.Retry(
              origin, attempt, delay, Collections.unmodifiableMap(e.getValue()), false);
      if (armRetry(r, delay)) {
        scheduled.addAll(e.getValue().keySet());
      } // else the delay scheduler failed (logged): these values will not be retried
    }
    // a RETRYING value under a base decided by this transaction that was not planned again
    FailurePolicy.failUnplanned(graph, seq, retrying, scheduled); // F12
  }

  /** Arms the retry {@code r}; false when the delay scheduler could not (it will not run). */
  private boolean armRetry(Queued.Retry r, Duration delay) {
    return config
            .delayScheduler()
            .schedule(
                delay,
                () -> {
                  if (!sink.offer(r)) {
                    armRetry(r, delay); // queue full: try again later
                  }
                })
        != GuardedTime.LOST;
  }

  /**
   * Keeps the set of UNIMPLEMENTED base values current after a transaction that changed the status
   * of {@code changed}; the cheaper of two passes is used when nothing became UNIMPLEMENTED.
   */
  void trackUnimplemented(Collection<String> changed, boolean sawUnimplemented) {
    if (!sawUnimplemented && unimplemented.size() < changed.size()) {
      // no value became UNIMPLEMENTED: only the tracked ones may have left the state
      unimplemented.removeIf(
          key -> {
            Node n = graph.get(key);
            return n == null || n.state() != ValueState.UNIMPLEMENTED;
          });
      return;
    }
    for (String key : changed) {
      Node n = graph.get(key);
      if (n != null && n.state() == ValueState.UNIMPLEMENTED) {
        unimplemented.add(key);
      } else {
        unimplemented.remove(key);
      }
    }
  }

  /** After registration: re-apply UNIMPLEMENTED values that a descriptor now selects. */
  void retryUnimplemented() {
    Map<Long, Map<String, Long>> byOrigin = new TreeMap<>();
    for (String key : unimplemented) {
      Node n = graph.get(key);
      if (n == null || n.lastUpdate() == null || registry.forKey(key) == null) {
        continue;
      }
      byOrigin
          .computeIfAbsent(n.lastUpdate().seq(), k -> new TreeMap<>())
          .put(key, n.lastUpdate().seq());
    }
    for (Map.Entry<Long, Map<String, Long>> e : byOrigin.entrySet()) {
      sink.pushInternal(new Queued.Retry(e.getKey(), 0, null, e.getValue(), true));
    }
  }
}
