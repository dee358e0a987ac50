package io.kvscheduler.internal.engine;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
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
 * state is a {@link Job}; the keys left unread across transactions are {@link UnreadKeys}.
 */
final class TxnProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(TxnProcessor.class);
  static final Logger TXN_LOG = LoggerFactory.getLogger("io.kvscheduler.txn");

  private final SchedulerConfig cfg;
  private final Graph g;
  private final History history;
  private final Refresher refresher;
  private final RetryPlanner retries;
  private long nextSeq;

  /** Base keys whose southbound state is unknown across transactions. */
  private final UnreadKeys unread;

  private final TxnPreparer preparer;
  private final TxnExecutor executor;
  private final PostProcessor post;

  TxnProcessor(
      SchedulerConfig cfg,
      Graph g,
      Registry reg,
      History history,
      Published published,
      Watchers watchers,
      ParallelCalls parallelCalls,
      FollowUpQueue sink) {
    this.cfg = cfg;
    this.g = g;
    this.history = history;
    this.refresher = new Refresher(g, reg, history);
    this.retries = new RetryPlanner(cfg, g, reg, sink);
    this.unread = new UnreadKeys(g, reg, refresher);
    this.preparer = new TxnPreparer(cfg, g, reg, refresher, unread);
    this.executor = new TxnExecutor(cfg, g, reg, history, refresher, unread, parallelCalls);
    this.post = new PostProcessor(cfg, g, reg, history, published, watchers, refresher, retries);
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
    Job job = new Job();
    job.seq = nextSeq++;
    CompletableFuture<Long> future = q instanceof Queued.Nb nb ? nb.result() : null;
    Touched touched = new Touched(job.seq);
    try {
      Instant start = cfg.clock().instant();
      // preparation
      job.addReadFirst(unread.readAgain()); // keys earlier transactions left unread
      if (q instanceof Queued.Nb nb) {
        preparer.prepareNb(job, nb);
      } else if (q instanceof Queued.Sb sb) {
        preparer.prepareSb(job, sb);
      } else if (q instanceof Queued.Retry r) {
        preparer.prepareRetry(job, r);
      } else if (q instanceof Queued.Late late) {
        preparer.prepareLate(job, late);
      } else {
        throw new IllegalStateException("not a transaction: " + q);
      }
      BatchJournal refreshed = executor.unrecordedBatch(); // resync refresh: unrecorded
      run(job, start, future, touched, refreshed);
    } catch (RuntimeException | Error e) {
      LOG.error(
          "transaction #{} aborted by an internal error; its changes are rolled back", job.seq, e);
      g.rollback();
      history.dropRevived(g); // the aborted transaction's own cleanup did not run
      if (job.countedResync) {
        // the graph is as it was before this resync: if it was the first, so is the next one
        preparer.resyncAborted();
      }
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
      Job job,
      Instant start,
      CompletableFuture<Long> future,
      Touched touched,
      BatchJournal refreshed) {
    // ordering
    g.reserve(2 * job.values.size()); // a first transaction: the values and as many derived ones
    List<ValueToApply> sorted = new ArrayList<>(job.values);
    ValueToApply.sortByKey(sorted);
    job.sortedValues = sorted;
    List<ValueToApply> ordered = executor.order(sorted);
    List<OpRecord> planned = List.of();
    boolean skip = job.skip;
    // simulation
    TxnContext sim = null;
    if (job.simulate && !skip) {
      sim = executor.context(job, true);
      executor.simulate(sim, ordered, job);
      planned = Compression.compress(sim.ops, g.departures() == sim.departuresAtStart);
      if (planned.isEmpty()) {
        // nothing to do: keep the bookkeeping (e.g. last operations of equivalent values)
        touched.add(executor.unrecordedBatch(), false);
        skip = true;
      } else {
        g.rollback();
      }
    }
    if (cfg.printTxnSummary() && TXN_LOG.isInfoEnabled()) {
      RecordedTxn pre = post.record(job, start, start, planned, List.of()).toApi();
      TXN_LOG.info(
          "\n{}", TxnLogFormatter.preRecord(pre, cfg.valueFormatter(), cfg.txnLogMaxItems()));
    }

    // execution
    TxnContext tx = executor.context(job, false);
    if (sim != null && skip) {
      tx.changedStatus.addAll(sim.changedStatus);
      tx.ignored.addAll(sim.ignored);
      tx.sawUnimplemented |= sim.sawUnimplemented;
    }
    if (!skip) {
      // the calls that can run ahead of the walk, in parallel (a planning pass of the walk,
      // rolled back): before the births are journaled lightly, which a rollback cannot undo
      executor.runAhead(tx, ordered, job);
      // the values the refresh created get no journal copy when the walk changes them (each
      // value of a first resync would otherwise be copied once); no effect after a simulation
      g.journalBirthsLightly(refreshed);
      executor.executeWithRevert(tx, ordered, touched, job);
    }
    // compression, and the execution's batch closed
    List<OpRecord> executed = Compression.compress(tx.ops, g.departures() == tx.departuresAtStart);
    BatchJournal journal = g.endBatch();
    // a downstream resync only brings the SB back to the unchanged intent: no revisions (B142)
    executor.closeExecution(
        journal, touched, job.seq, cfg.clock().instant(), job.resync != ResyncType.DOWNSTREAM);
    // the refresh's keys after the execution's: the walk writes keys in order, the refresh in
    // the southbound's order, so listed this way the touched keys form a few sorted runs that
    // publishing sorts in linear time (a resync writes most keys in both batches)
    touched.add(refreshed, true);
    // refresh of the values that failed
    if (!skip) {
      executed = executor.refreshFailed(job, tx, executed, touched);
    }
    // record
    TxnRecord rec = post.record(job, start, cfg.clock().instant(), planned, executed);
    history.addRecord(rec);
    if (cfg.printTxnSummary() && TXN_LOG.isInfoEnabled()) {
      TXN_LOG.info(
          "\n{}",
          TxnLogFormatter.finalRecord(rec.toApi(), cfg.valueFormatter(), cfg.txnLogMaxItems()));
    }
    // post-processing and publishing
    post.postProcess(job, tx, executed, touched, future);
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
