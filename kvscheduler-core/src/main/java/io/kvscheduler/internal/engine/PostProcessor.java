package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.calls.ErrorKinds;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.BatchJournal;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Touched;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.history.History;
import io.kvscheduler.internal.engine.publish.LiveStatus;
import io.kvscheduler.internal.engine.publish.Published;
import io.kvscheduler.internal.engine.publish.Watchers;
import io.kvscheduler.internal.engine.record.OpRecord;
import io.kvscheduler.internal.engine.record.TxnRecord;
import io.kvscheduler.internal.engine.refresh.Refresher;
import io.kvscheduler.internal.engine.refresh.Verifier;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What follows an executed transaction: its record, the retries it leaves and the values it left
 * UNIMPLEMENTED, the statuses of the values it changed, the removal of values it left REMOVED, the
 * revisions of its last batch, the published read snapshot, and the answer to its caller.
 */
final class PostProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(PostProcessor.class);

  private final SchedulerConfig config;
  private final Graph graph;
  private final Registry registry;
  private final History history;
  private final Published published;
  private final Watchers watchers;
  private final Refresher refresher;
  private final RetryPlanner retries;

  PostProcessor(
      SchedulerConfig config,
      Graph graph,
      Registry registry,
      History history,
      Published published,
      Watchers watchers,
      Refresher refresher,
      RetryPlanner retries) {
    this.config = config;
    this.graph = graph;
    this.registry = registry;
    this.history = history;
    this.published = published;
    this.watchers = watchers;
    this.refresher = refresher;
    this.retries = retries;
  }

  /** The record of the transaction (its operations as recorded; see {@link TxnRecord}). */
  TxnRecord record(
      Transaction txn,
      Instant start,
      Instant stop,
      List<OpRecord> planned,
      List<OpRecord> executed) {
    List<ValueToApply> sorted;
    if (txn.request.recordedValues() == txn.request.values() && txn.sortedValues != null) {
      sorted = txn.sortedValues; // the same values, already sorted by the ordering step
    } else {
      sorted = new ArrayList<>(txn.request.recordedValues());
      ValueToApply.sortByKey(sorted);
    }
    return new TxnRecord(
        txn.seq,
        txn.request.type(),
        txn.request.resync(),
        txn.request.description(),
        txn.request.retryForTxn(),
        txn.request.retryAttempt(),
        start,
        stop,
        sorted,
        txn.simulateFirst,
        planned,
        executed,
        txn.retrieveErrors);
  }

  /**
   * Of {@code executed}: the base keys of values that failed and are still FAILED or RETRYING (to
   * be refreshed; not collected when {@code failed} is null), and the error of every operation that
   * failed. Each operation is looked at once per transaction.
   */
  static void failures(
      Graph graph, List<OpRecord> executed, List<String> failed, List<KeyError> errors) {
    for (int i = 0; i < executed.size(); i += Bulk.RANGE) { // in ranges: see Bulk
      failures(graph, executed, i, Bulk.end(i, executed.size()), failed, errors);
    }
  }

  private static void failures(
      Graph graph,
      List<OpRecord> executed,
      int from,
      int to,
      List<String> failed,
      List<KeyError> errors) {
    for (int i = from; i < to; i++) {
      OpRecord op = executed.get(i);
      if (failed != null
          && (op.newState == ValueState.FAILED || op.newState == ValueState.RETRYING)) {
        Node n = graph.get(op.key);
        if (n != null && (n.state() == ValueState.FAILED || n.state() == ValueState.RETRYING)) {
          failed.add(op.baseKey);
        }
      }
      if (op.newErr != null) {
        errors.add(ErrorKinds.keyError(op.key, op.op, op.newErr, op.newState));
      }
    }
  }

  /**
   * After the transaction's record: schedules its retries, computes the statuses it changed, adds
   * verification errors when asked, drops the base values it left REMOVED, records the revisions of
   * its last batch, publishes the read snapshot, delivers the statuses and answers {@code future}
   * (or logs the errors when nobody waits). {@code errors} are those of the {@code executed}
   * operations ({@link #failures}); the ones found here are added to it.
   */
  void postProcess(
      Transaction txn,
      List<OpRecord> executed,
      List<KeyError> errors,
      CompletableFuture<Long> future) {
    Touched touched = txn.touched;
    // 1. the values that failed were refreshed (TxnExecutor.refreshFailed), which collected the
    // errors of the operations (for step 4)
    List<String> failed = txn.refreshedFailed;

    // 2. retries and unimplemented values
    if (txn.sawRetrying || !failed.isEmpty()) {
      retries.schedule(
          txn.seq,
          txn.request.type(),
          txn.request.retryForTxn(),
          txn.request.retryDelay(),
          txn.request.retryKeys(),
          executed,
          touched.keys());
    }
    retries.trackUnimplemented(txn.changedStatus, txn.sawUnimplemented);
    // 3. statuses (before removal: a removed value is reported once as REMOVED)
    List<BaseValueStatus> statuses = new ArrayList<>();
    if (watchers.any()) {
      for (String key : new TreeSet<>(txn.changedStatus)) {
        statuses.add(LiveStatus.baseStatus(graph, key));
      }
    }
    // pairs ignored because their key holds a derived value: the caller learns it (the
    // reference only logs it); nothing was done for them, so nothing is retried or reverted
    errors.addAll(txn.ignored);
    // 4. the transaction error (with verification mode: plus values the southbound disagrees on)
    if (config.verify()
        || (txn.request.type() == TxnType.NB_TRANSACTION && txn.request.options().verify())) {
      errors.addAll(Verifier.verify(graph, registry, refresher, executed));
    }
    // 5. drop removed base values (recorded)
    // also those that became REMOVED without a status change of this transaction
    // (a refresh that did not find a value whose last request was a delete, an NB delete of
    // such a value): they would stay in the graph for ever, with their derived values
    // (a key's state can only change in a batch that wrote it, and every REMOVED base value of
    // an earlier transaction was dropped by it: the touched keys found REMOVED cover them all)
    List<String> removable = new ArrayList<>();
    for (String key : touched.removedCandidates()) {
      Node n = graph.get(key);
      if (n != null && n.state() == ValueState.REMOVED) {
        if (n.isDerived()) {
          graph.remove(key); // e.g. marked REMOVED by a refresh after an abandoned delete
        } else {
          removable.add(key);
        }
      }
    }
    for (String key : removable) {
      Node n = graph.get(key);
      if (n != null && !n.isDerived() && n.state() == ValueState.REMOVED) {
        for (String dk : n.derivedKeys()) {
          Node dn = graph.get(dk);
          if (dn != null && key.equals(dn.derivedFrom())) {
            graph.remove(dk);
          }
        }
        graph.remove(key);
      }
    }
    BatchJournal journal = graph.endBatch();
    touched.add(journal, false);
    history.addRevisions(journal, txn.seq, config.clock().instant());
    // the trims read the clock after the revisions above are stamped (a zero age limit drops the
    // revisions this transaction closed); the record trim after publishing reuses that reading:
    // both trims run at most once a minute
    Instant now = config.clock().instant();
    for (String key : history.trimRevisions(now, graph)) {
      touched.add(key, graph.get(key));
    }
    publish(touched);
    history.afterPublish(graph, touched.keys());
    history.trim(now);
    // 6. deliver statuses, then answer the caller
    watchers.deliver(statuses);
    if (future != null) {
      if (errors.isEmpty() && txn.retrieveErrors.isEmpty()) {
        future.complete(txn.seq);
      } else {
        future.completeExceptionally(new TransactionException(txn.seq, errors, txn.retrieveErrors));
      }
    } else if (!errors.isEmpty() || !txn.retrieveErrors.isEmpty()) {
      LOG.warn("{}", new TransactionException(txn.seq, errors, txn.retrieveErrors).getMessage());
    }
  }

  /**
   * Publishes the read snapshot with the {@code touched} keys and the PENDING values they affect.
   */
  private void publish(Touched touched) {
    // PENDING values whose details may have changed without the walk visiting them: dependents
    // of keys that went away or became unavailable (the walk takes down only available
    // dependents) and of keys a refresh changed. When fewer values are PENDING than keys were
    // touched, all of them are re-published instead (cheaper than looking up dependents).
    Collection<String> pending = published.pendingKeys();
    if (!pending.isEmpty()) {
      List<String> keys = touched.keys();
      if (pending.size() <= keys.size()) {
        for (String dep : new ArrayList<>(pending)) {
          touched.add(dep, graph.get(dep));
        }
      } else {
        List<String> pendingDependents = new ArrayList<>();
        for (String key : keys) {
          Node n = graph.get(key);
          if (n != null && n.isAvailable() && !touched.refreshed(key)) {
            continue;
          }
          for (String dep : graph.dependentsOf(key)) {
            Node dn = graph.get(dep);
            if (dn != null && dn.state() == ValueState.PENDING) {
              pendingDependents.add(dep);
            }
          }
        }
        for (String dep : pendingDependents) {
          touched.add(dep, graph.get(dep));
        }
      }
    }
    published.update(touched, graph);
  }
}
