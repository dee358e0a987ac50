package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.OperationListener.TxnOutcome;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.internal.engine.calls.CallPlan;
import io.kvscheduler.internal.engine.calls.Observer;
import io.kvscheduler.internal.engine.calls.ParallelCalls;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.BatchJournal;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.history.History;
import io.kvscheduler.internal.engine.loop.Queued;
import io.kvscheduler.internal.engine.publish.Published;
import io.kvscheduler.internal.engine.publish.Watchers;
import io.kvscheduler.internal.engine.record.Compression;
import io.kvscheduler.internal.engine.record.OpRecord;
import io.kvscheduler.internal.engine.record.TxnLogFormatter;
import io.kvscheduler.internal.engine.record.TxnRecord;
import io.kvscheduler.internal.engine.refresh.Refresher;
import io.kvscheduler.internal.util.UserCode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Processes one dequeued transaction on the engine thread, phase by phase: preparation ({@link
 * TxnPreparer}: resync refresh and reconciliation, notification filter, retry filter, late
 * answers), ordering, optional simulation and execution with optional revert ({@link TxnExecutor}),
 * compression of pending operations ({@link Compression}), the record, the refresh of failed values
 * ({@link TxnExecutor#refreshFailed}), and post-processing and publishing ({@link PostProcessor}:
 * retries, statuses, removal of deleted values, revisions, the read snapshot). One transaction's
 * state is a {@link Transaction}; the keys left unread across transactions are {@link UnreadKeys}.
 */
final class TxnProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(TxnProcessor.class);
  static final Logger TXN_LOG = LoggerFactory.getLogger("io.kvscheduler.txn");

  private final SchedulerConfig config;
  private final Graph graph;
  private final History history;
  private final Refresher refresher;
  private final RetryPlanner retries;
  private long nextSeq;

  /** Base keys whose southbound state is unknown across transactions. */
  private final UnreadKeys unread;

  private final TxnPreparer preparer;
  private final TxnExecutor executor;
  private final PostProcessor post;
  private final TxnPlanner planner;

  /** Told of each transaction's start and end. */
  private final Observer observer;

  TxnProcessor(
      SchedulerConfig config,
      Graph graph,
      Registry registry,
      History history,
      Published published,
      Watchers watchers,
      ParallelCalls parallelCalls,
      Observer observer,
      FollowUpQueue sink) {
    this.config = config;
    this.observer = observer;
    this.graph = graph;
    this.history = history;
    this.refresher = new Refresher(graph, registry, history);
    this.retries = new RetryPlanner(config, graph, registry, sink);
    this.unread = new UnreadKeys(graph, registry, refresher);
    this.preparer = new TxnPreparer(config, graph, registry, refresher, unread);
    this.executor =
        new TxnExecutor(config, graph, registry, history, refresher, unread, parallelCalls);
    this.post =
        new PostProcessor(
            config, graph, registry, history, published, watchers, refresher, retries);
    this.planner = new TxnPlanner(config, graph, refresher, preparer, executor);
  }

  Refresher refresher() {
    return refresher;
  }

  /**
   * Processes {@code q} as one transaction (a late southbound answer whose key nothing can read is
   * dropped). An internal error rolls the transaction back and fails its caller's future.
   */
  void process(Queued q) {
    if (q instanceof Queued.Late late && !preparer.readable(late.key())) {
      return; // nothing can read the key again: the scheduler's view stays its best guess
    }
    Transaction txn = new Transaction(nextSeq++, config.clock());
    CompletableFuture<Long> future = q instanceof Queued.Nb nb ? nb.result() : null;
    BatchJournal refreshed = null;
    if (observer.active()) {
      observer.transactionStarted(txn.seq, typeOf(q), resyncOf(q));
    }
    try {
      Instant start = config.clock().instant();
      // preparation
      txn.addReadFirst(unread.readAgain()); // keys earlier transactions left unread
      if (q instanceof Queued.Nb nb) {
        preparer.prepareNb(txn, nb);
      } else if (q instanceof Queued.Sb sb) {
        preparer.prepareSb(txn, sb);
      } else if (q instanceof Queued.Retry r) {
        preparer.prepareRetry(txn, r);
      } else if (q instanceof Queued.Late late) {
        preparer.prepareLate(txn, late);
      } else {
        throw new IllegalStateException("not a transaction: " + q);
      }
      refreshed = executor.unrecordedBatch(); // resync refresh: unrecorded
      run(txn, start, future, refreshed);
    } catch (RuntimeException | Error e) {
      LOG.error(
          "transaction #{} aborted by an internal error; its changes are rolled back", txn.seq, e);
      graph.rollbackThrough(refreshed); // the refresh too, unless a later batch closed since
      history.dropRevived(graph); // the aborted transaction's own cleanup did not run
      if (txn.countedResync) {
        // the graph is as it was before this resync: if it was the first, so is the next one
        preparer.resyncAborted();
      }
      UserCode.reportIfFatal(e); // first: the caller may end the application when it learns of it
      observer.transactionEnded(TxnOutcome.ABORTED, 0);
      if (future != null) {
        future.completeExceptionally(e);
      }
    }
  }

  /**
   * Orders, simulates, executes and records the prepared transaction. {@code refreshed}: the batch
   * of the refresh done while preparing it (empty when there was none).
   */
  private void run(
      Transaction txn, Instant start, CompletableFuture<Long> future, BatchJournal refreshed) {
    // ordering
    graph.reserve(
        2
            * txn.request
                .values()
                .size()); // a first transaction: the values and as many derived ones
    List<ValueToApply> sorted = new ArrayList<>(txn.request.values());
    ValueToApply.sortByKey(sorted);
    txn.sortedValues = sorted;
    List<ValueToApply> ordered = executor.order(sorted);
    List<OpRecord> planned = List.of();
    // simulation
    boolean simulated = false;
    if (txn.simulateFirst && !txn.skip) {
      executor.simulate(txn, ordered);
      simulated = true;
      planned = CreateUpdateSteps.compress(txn.ops);
      if (planned.isEmpty()) {
        // nothing to do: keep the bookkeeping (e.g. last operations of equivalent values)
        txn.touched.add(executor.unrecordedBatch(), false);
        txn.skip = true;
      } else {
        graph.rollback();
      }
    }
    if (config.printTxnSummary() && TXN_LOG.isInfoEnabled()) {
      RecordedTxn pre = post.record(txn, start, start, planned, List.of()).toApi();
      TXN_LOG.info(
          "\n{}",
          TxnLogFormatter.preRecord(
              pre, config.valueFormatter(), config.txnLogMaxItems(), config.txnLogMoreHint()));
    }

    // execution
    if (txn.skip) {
      // no call to make: a simulation's outcome (statuses, ignored pairs) stays the transaction's
      executor.startExecution(txn, null, simulated);
    } else {
      // the calls that can run ahead of the walk, in parallel (a planning pass of the walk,
      // rolled back)
      CallPlan ranAhead = executor.runAhead(txn, ordered);
      executor.startExecution(txn, ranAhead, false);
      executor.executeWithRevert(txn, ordered);
    }
    // compression, and the execution's batch closed
    List<OpRecord> executed = CreateUpdateSteps.compress(txn.ops);
    BatchJournal journal = graph.endBatch();
    // a downstream resync only brings the SB back to the unchanged intent: no revisions (B142)
    executor.closeExecution(
        journal, txn, config.clock().instant(), txn.request.resync() != ResyncType.DOWNSTREAM);
    // the refresh's keys after the execution's: the walk writes keys in order, the refresh in
    // the southbound's order, so listed this way the touched keys form a few sorted runs that
    // publishing sorts in linear time (a resync writes most keys in both batches); a pass rolled
    // back since (simulation, planning) may have put copies in place of its nodes: see Touched
    txn.touched.add(refreshed, true);
    // refresh of the values that failed, and the errors of the operations
    List<KeyError> errors = new ArrayList<>();
    if (!txn.skip) {
      executed = executor.refreshFailed(txn, executed, errors);
    } else {
      PostProcessor.failures(graph, executed, null, errors); // no call made: none to refresh
    }
    // record (the keys assumed absent first: that was done before the walk)
    if (!txn.assumedAbsent.isEmpty()) {
      executed = withAssumedAbsent(txn, executed);
      if (simulated) {
        planned = withAssumedAbsent(txn, planned);
      }
    }
    TxnRecord rec = post.record(txn, start, config.clock().instant(), planned, executed);
    history.addRecord(rec);
    if (config.printTxnSummary() && TXN_LOG.isInfoEnabled()) {
      TXN_LOG.info(
          "\n{}",
          TxnLogFormatter.finalRecord(
              rec.toApi(),
              config.valueFormatter(),
              config.txnLogMaxItems(),
              config.txnLogMoreHint()));
    }
    // post-processing and publishing; the listener learns the outcome before the caller does
    if (!observer.active()) {
      post.postProcess(txn, executed, errors, future);
      return;
    }
    CompletableFuture<Long> answer = future == null ? null : new CompletableFuture<>();
    post.postProcess(txn, executed, errors, answer);
    observer.transactionEnded(errors.isEmpty() ? TxnOutcome.OK : TxnOutcome.FAILED, errors.size());
    if (answer != null) {
      answer.whenComplete(
          (seq, failure) -> {
            if (failure != null) {
              future.completeExceptionally(failure);
            } else {
              future.complete(seq);
            }
          });
    }
  }

  /** The kind of transaction {@code q} is, as its record will say. */
  private static TxnType typeOf(Queued q) {
    if (q instanceof Queued.Nb) {
      return TxnType.NB_TRANSACTION;
    }
    if (q instanceof Queued.Sb) {
      return TxnType.SB_NOTIFICATION;
    }
    return q instanceof Queued.Retry r && r.unimplemented()
        ? TxnType.RETRY_UNIMPL_OPS
        : TxnType.RETRY_FAILED_OPS;
  }

  private static ResyncType resyncOf(Queued q) {
    return q instanceof Queued.Nb nb ? nb.options().resync() : ResyncType.NOT_RESYNC;
  }

  /**
   * What committing {@code values} with {@code options} would do, done nothing of ({@link
   * TxnPlanner}). Engine thread, between transactions.
   */
  Plan plan(List<ValueToApply> values, TxnOptions options) {
    return planner.plan(nextSeq, values, options);
  }

  /** {@code ops} after the operations recording the keys {@code txn} assumes absent. */
  private static List<OpRecord> withAssumedAbsent(Transaction txn, List<OpRecord> ops) {
    List<OpRecord> all = new ArrayList<>(txn.assumedAbsent.size() + ops.size());
    all.addAll(txn.assumedAbsent);
    all.addAll(ops);
    return all;
  }

  /** Where the processor queues follow-up transactions. */
  interface FollowUpQueue {
    /** From any thread; false when the queue is full. */
    boolean offer(Queued q);

    /** From the engine thread; never blocks. */
    void pushInternal(Queued q);
  }

  /** After registration: re-apply UNIMPLEMENTED values that a descriptor now selects. */
  void retryUnimplemented() {
    retries.retryUnimplemented();
  }
}
