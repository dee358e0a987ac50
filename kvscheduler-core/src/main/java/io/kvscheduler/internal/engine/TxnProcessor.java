package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.graph.Bulk;
import io.kvscheduler.internal.graph.Graph;
import io.kvscheduler.internal.graph.Node;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Processes one dequeued transaction on the engine thread: pre-processing (resync refresh and
 * reconciliation, notification filter, retry filter), ordering, optional simulation, execution with
 * optional revert, compression of pending operations, recording, and post-processing (refresh of
 * failed values, retry scheduling, status delivery, removal of deleted values).
 *
 * <p>Longer than our usual limit: the phases share one transaction's state, and reading them in
 * order is the point. Compression of pending operations is in {@link Compression}, retry planning
 * in {@link RetryPlanner}, refresh in {@link Refresher}, verification in {@link Verifier}.
 */
final class TxnProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(TxnProcessor.class);
  static final Logger TXN_LOG = LoggerFactory.getLogger("io.kvscheduler.txn");

  private final SchedulerConfig cfg;
  private final Graph g;
  private final Registry reg;
  private final History history;
  private final Published published;
  private final Watchers watchers;
  private final Refresher refresher;
  private final Sink sink;
  private long nextSeq;
  private final RetryPlanner retries;

  /**
   * The walk's recursion path, shared by the passes of the engine (one walks at a time; emptied
   * whenever a pass's context is made, so a pass that ended abnormally leaves nothing behind).
   */
  private final Path path = new Path();

  /** Base keys whose southbound state is unknown across transactions. */
  private final UnreadKeys unread;

  private final TxnPreparer preparer;

  TxnProcessor(
      SchedulerConfig cfg,
      Graph g,
      Registry reg,
      History history,
      Published published,
      Watchers watchers,
      Sink sink) {
    this.cfg = cfg;
    this.g = g;
    this.reg = reg;
    this.history = history;
    this.published = published;
    this.watchers = watchers;
    this.sink = sink;
    this.refresher = new Refresher(g, reg, history);
    this.retries = new RetryPlanner(cfg, g, reg, sink);
    this.unread = new UnreadKeys(g, reg, refresher);
    this.preparer = new TxnPreparer(cfg, g, reg, refresher, unread);
  }

  Refresher refresher() {
    return refresher;
  }

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
      Graph.Journal refreshed = unrecordedBatch(); // resync refresh: unrecorded
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
      Graph.Journal refreshed) {
    g.reserve(2 * job.values.size()); // a first transaction: the values and as many derived ones
    List<Kv> sorted = new ArrayList<>(job.values);
    Kv.sortByKey(sorted);
    job.sortedValues = sorted;
    List<Kv> ordered = order(sorted);
    List<OpRecord> planned = List.of();
    boolean skip = job.skip;
    TxnContext sim = null;
    if (job.simulate && !skip) {
      sim = context(job, true);
      execute(sim, ordered, job);
      planned = Compression.compress(sim.ops, g.departures() == sim.departuresAtStart);
      if (planned.isEmpty()) {
        // nothing to do: keep the bookkeeping (e.g. last operations of equivalent values)
        touched.add(unrecordedBatch(), false);
        skip = true;
      } else {
        g.rollback();
      }
    }
    if (cfg.printTxnSummary() && TXN_LOG.isInfoEnabled()) {
      RecordedTxn pre = record(job, start, start, planned, List.of()).toApi();
      TXN_LOG.info(
          "\n{}", TxnLogFormatter.preRecord(pre, cfg.valueFormatter(), cfg.txnLogMaxItems()));
    }

    TxnContext tx = context(job, false);
    if (sim != null && skip) {
      tx.changedStatus.addAll(sim.changedStatus);
      tx.ignored.addAll(sim.ignored);
      tx.sawUnimplemented |= sim.sawUnimplemented;
    }
    if (!skip) {
      // the values the refresh created get no journal copy when the walk changes them (each
      // value of a first resync would otherwise be copied once); no effect after a simulation
      g.journalBirthsLightly(refreshed);
      executeWithRevert(tx, ordered, touched, job);
    }
    List<OpRecord> executed = Compression.compress(tx.ops, g.departures() == tx.departuresAtStart);
    Graph.Journal journal = g.endBatch();
    // a downstream resync only brings the SB back to the unchanged intent: no revisions (B142)
    closeExecution(
        journal, touched, job.seq, cfg.clock().instant(), job.resync != ResyncType.DOWNSTREAM);
    // the refresh's keys after the execution's: the walk writes keys in order, the refresh in
    // the southbound's order, so listed this way the touched keys form a few sorted runs that
    // publishing sorts in linear time (a resync writes most keys in both batches)
    touched.add(refreshed, true);
    if (!skip) {
      executed = refreshFailed(job, tx, executed, touched);
    }
    TxnRecord rec = record(job, start, cfg.clock().instant(), planned, executed);
    history.addRecord(rec);
    if (cfg.printTxnSummary() && TXN_LOG.isInfoEnabled()) {
      TXN_LOG.info(
          "\n{}",
          TxnLogFormatter.finalRecord(rec.toApi(), cfg.valueFormatter(), cfg.txnLogMaxItems()));
    }
    postProcess(job, tx, executed, touched, future);
  }

  /**
   * The execution's batch {@code journal}: its keys listed as touched and, with {@code record}, its
   * revisions recorded (else the chains carried over). One pass over the entries for both (in
   * ranges: {@link Bulk}), each node visited once.
   */
  private void closeExecution(
      Graph.Journal journal, Touched touched, long seq, Instant now, boolean record) {
    touched.reserve(journal);
    boolean history = this.history.records();
    for (int i = 0; i < journal.size(); i += Bulk.RANGE) {
      closeExecution(journal, i, Bulk.end(i, journal.size()), touched, seq, now, record, history);
    }
  }

  private void closeExecution(
      Graph.Journal journal,
      int from,
      int to,
      Touched touched,
      long seq,
      Instant now,
      boolean record,
      boolean history) {
    for (int i = from; i < to; i++) {
      touched.add(journal, i);
      if (!history) {
        continue;
      }
      if (record) {
        this.history.addRevision(journal, i, seq, now);
      } else {
        this.history.carryOver(journal, i);
      }
    }
  }

  private TxnContext context(Job job, boolean simulate) {
    RetryOptions retry =
        job.type == TxnType.NB_TRANSACTION ? job.options.retry().orElse(null) : null;
    TxnContext tx =
        new TxnContext(
            job.seq,
            job.type,
            simulate,
            retry,
            job.type == TxnType.NB_TRANSACTION && job.options.revert(),
            job.retryKeys,
            job.retryAttempt,
            path.cleared());
    tx.inheritRetry =
        job.type == TxnType.NB_TRANSACTION && job.resync == ResyncType.DOWNSTREAM && retry == null;
    tx.departuresAtStart = g.departures();
    tx.unreadBefore = unread.snapshot();
    return tx;
  }

  private void execute(TxnContext tx, List<Kv> ordered, Job job) {
    applyJob(new Walker(g, reg, tx), ordered, job);
  }

  /**
   * Applies the values in order. Of keys read again before the transaction ({@link Job#readFirst}):
   * first the values depending on what the read found gone are taken down, then the values are
   * applied (a late answer's key settled), then the values waiting for what the read found go ahead
   * (as after a Create).
   */
  private void applyJob(Walker w, List<Kv> ordered, Job job) {
    if (job.readFirst.isEmpty()) {
      applyAll(w, ordered);
      return;
    }
    followRefresh(w, job.readFirst, false);
    applyAll(w, ordered);
    followRefresh(w, job.readFirst, true);
  }

  /** Applies the values in order (in ranges: {@link Bulk}). */
  private static void applyAll(Walker w, List<Kv> ordered) {
    int size = ordered.size();
    for (int i = 0; i < size; i += Bulk.RANGE) {
      applyRange(w, ordered, i, Bulk.end(i, size));
    }
  }

  private static void applyRange(Walker w, List<Kv> ordered, int from, int to) {
    for (int i = from; i < to; i++) {
      w.applyTop(ordered.get(i));
    }
  }

  private void executeWithRevert(TxnContext tx, List<Kv> ordered, Touched touched, Job job) {
    Walker w = new Walker(g, reg, tx);
    if (!tx.revertOnFailure) {
      applyJob(w, ordered, job);
      return;
    }
    ArrayDeque<Kv> previous = new ArrayDeque<>();
    boolean revert = false;
    for (Kv kv : ordered) {
      tx.ownKeys.add(kv.key());
    }
    for (Kv kv : ordered) {
      Node before = g.get(kv.key());
      Object prev = before == null ? null : before.value;
      Throwable err = w.applyTop(kv);
      previous.addFirst(new Kv(kv.key(), prev, ValueOrigin.FROM_NB, true, null));
      // B100: only failures of the transaction's own values trigger the revert
      if (err != null && tx.revertOnFailure && tx.ownFailed) {
        markRead(tx, kv.key(), refresher.refresh(Set.of(kv.key()), null, false));
        revert = true;
        break;
      }
    }
    if (revert) {
      Graph.Journal journal = g.endBatch();
      touched.add(journal, false);
      history.addRevisions(journal, job.seq, cfg.clock().instant());
      for (Kv kv : previous) {
        w.applyTop(kv);
      }
    }
  }

  /**
   * After a refresh of base key {@code key} that read the descriptors {@code read}: the key and its
   * derived values are known again when its descriptor's Retrieve answered, so the revert may call
   * the southbound for them.
   */
  private void markRead(TxnContext tx, String key, Set<String> read) {
    DescriptorHandle h = reg.forKey(key);
    if (h == null || !read.contains(h.name) || tx.unread.isEmpty()) {
      return;
    }
    tx.unread.removeIf(
        k -> {
          Node n = g.get(k);
          return k.equals(key) || n != null && key.equals(n.derivedFrom);
        });
  }

  /** Closes a batch that gets no revisions (the keys keep their recorded revisions). */
  private Graph.Journal unrecordedBatch() {
    Graph.Journal j = g.endBatch();
    history.carryOver(j);
    return j;
  }

  /** Of values sorted by key, the execution order: deletions, re-creations, creations, updates. */
  private List<Kv> order(List<Kv> sorted) {
    if (sorted.size() == 1) {
      return sorted; // the usual one-value transaction: no class lists to build
    }
    List<List<Kv>> classes = new ArrayList<>(4);
    for (int c = 0; c < 4; c++) {
      classes.add(new ArrayList<>());
    }
    for (int i = 0; i < sorted.size(); i += Bulk.RANGE) {
      classify(sorted, i, Bulk.end(i, sorted.size()), classes);
    }
    List<Kv> only = null;
    for (List<Kv> c : classes) {
      if (!c.isEmpty()) {
        if (only != null) {
          List<Kv> out = new ArrayList<>(sorted.size());
          classes.forEach(out::addAll);
          return out;
        }
        only = c;
      }
    }
    return only != null ? only : classes.get(0); // all values in one class (e.g. a first resync)
  }

  /** Adds each value of {@code sorted[from, to)} to its class of the execution order. */
  private void classify(List<Kv> sorted, int from, int to, List<List<Kv>> classes) {
    for (int i = from; i < to; i++) {
      Kv kv = sorted.get(i);
      classes.get(executionClass(kv, g.get(kv.key()))).add(kv);
    }
  }

  /** 0 delete, 1 re-create, 2 create, 3 update ({@code n}: the key's node or null). */
  private int executionClass(Kv kv, Node n) {
    if (kv.value() == null) {
      return 0;
    }
    if (n == null || n.value == null || !n.isAvailable() && n.held == null) {
      return 2;
    }
    DescriptorHandle h = reg.forNode(n);
    Object old = n.held != null ? n.held : n.value; // the update starts from what the SB holds
    return h != null && h.updateWithRecreate(kv.key(), old, kv.value(), n.metadata) ? 1 : 3;
  }

  /** The record of the transaction (its operations as recorded; see {@link TxnRecord}). */
  private TxnRecord record(
      Job job, Instant start, Instant stop, List<OpRecord> planned, List<OpRecord> executed) {
    List<Kv> sorted;
    if (job.recordedValues == job.values && job.sortedValues != null) {
      sorted = job.sortedValues; // the same values, already sorted by the ordering step
    } else {
      sorted = new ArrayList<>(job.recordedValues);
      Kv.sortByKey(sorted);
    }
    return new TxnRecord(
        job.seq,
        job.type,
        job.resync,
        job.description,
        job.retryForTxn,
        job.retryAttempt,
        start,
        stop,
        sorted,
        job.simulate,
        planned,
        executed);
  }

  /**
   * Of {@code executed[from, to)}: the base keys of values that failed and are still FAILED or
   * RETRYING (to be refreshed), and the error of every operation that failed.
   */
  private void failures(
      List<OpRecord> executed, int from, int to, List<String> failed, List<KeyError> errors) {
    for (int i = from; i < to; i++) {
      OpRecord op = executed.get(i);
      if (op.newState == ValueState.FAILED || op.newState == ValueState.RETRYING) {
        Node n = g.get(op.key);
        if (n != null && (n.state == ValueState.FAILED || n.state == ValueState.RETRYING)) {
          failed.add(op.baseKey);
        }
      }
      if (op.newErr != null) {
        errors.add(new KeyError(op.key, op.op, OpRecord.msg(op.newErr), op.newErr));
      }
    }
  }

  /**
   * Refreshes the values that failed (only their keys), unrecorded. A value the refresh finds
   * available again (a removal that failed, a call the southbound carried out after all) lets the
   * values waiting for it go ahead in this transaction, as after a Create: their operations are
   * recorded with the transaction's, and those that fail are refreshed in turn (a value fails once
   * per transaction: this ends). Returns the transaction's operations.
   */
  private List<OpRecord> refreshFailed(
      Job job, TxnContext tx, List<OpRecord> executed, Touched touched) {
    List<String> refreshed = new ArrayList<>();
    List<OpRecord> all = executed;
    List<OpRecord> round = executed;
    while (true) {
      List<String> failed = new ArrayList<>(); // usually stays empty: no set built
      List<KeyError> errors = new ArrayList<>(); // collected by postProcess
      for (int i = 0; i < round.size(); i += Bulk.RANGE) { // in ranges: see Bulk
        failures(round, i, Bulk.end(i, round.size()), failed, errors);
      }
      if (failed.isEmpty()) {
        break;
      }
      refreshed.addAll(failed);
      Set<String> keys = new TreeSet<>(failed);
      Set<String> read = refresher.refresh(keys, null, false);
      unread.dropAnswered(keys, read);
      for (String key : keys) {
        markRead(tx, key, read);
      }
      touched.add(unrecordedBatch(), true);
      int before = tx.ops.size();
      followRefresh(new Walker(g, reg, tx), keys, true);
      if (tx.ops.size() == before) {
        break;
      }
      round =
          Compression.compress(
              new ArrayList<>(tx.ops.subList(before, tx.ops.size())),
              g.departures() == tx.departuresAtStart);
      closeExecution(g.endBatch(), touched, job.seq, cfg.clock().instant(), true);
      List<OpRecord> joined = new ArrayList<>(all.size() + round.size());
      joined.addAll(all);
      joined.addAll(round);
      all = joined;
    }
    // a failed call whose key no Retrieve could read: unknown until a later transaction reads it
    unread.addBasesOf(tx.unread);
    job.refreshedFailed = refreshed;
    return all;
  }

  /**
   * Visits the values depending on the refreshed base values {@code keys} or their derived ones
   * that the refresh found {@code available} (their waiting dependents go ahead) or not (their
   * available dependents are taken down).
   */
  private void followRefresh(Walker w, Set<String> keys, boolean available) {
    for (String key : keys) {
      Node n = g.get(key);
      if (n == null) {
        continue;
      }
      if (n.value != null && n.isAvailable() == available) {
        w.reevaluateDependents(n);
      }
      for (String dk : n.derivedKeys) {
        Node dn = g.get(dk);
        if (dn != null
            && dn.value != null
            && dn.isAvailable() == available
            && key.equals(dn.derivedFrom)) {
          w.reevaluateDependents(dn);
        }
      }
    }
  }

  private void postProcess(
      Job job,
      TxnContext tx,
      List<OpRecord> executed,
      Touched touched,
      CompletableFuture<Long> future) {
    // 1. the values that failed were refreshed (refreshFailed); the errors of the transaction
    // are collected here (for step 4)
    List<String> failed = job.refreshedFailed;
    List<KeyError> errors = new ArrayList<>();
    List<String> stillFailed = new ArrayList<>(); // refreshed already: not needed here
    for (int i = 0; i < executed.size(); i += Bulk.RANGE) { // in ranges: see Bulk
      failures(executed, i, Bulk.end(i, executed.size()), stillFailed, errors);
    }

    // 2. retries and unimplemented values
    if (tx.sawRetrying || !failed.isEmpty()) {
      retries.schedule(
          job.seq,
          job.type,
          job.retryForTxn,
          job.retryDelay,
          job.retryKeys,
          executed,
          touched.keys());
    }
    retries.trackUnimplemented(tx.changedStatus, tx.sawUnimplemented);
    // 3. statuses (before removal: a removed value is reported once as REMOVED)
    List<BaseValueStatus> statuses = new ArrayList<>();
    if (watchers.any()) {
      for (String key : new TreeSet<>(tx.changedStatus)) {
        statuses.add(Published.baseStatus(g, key));
      }
    }
    // pairs ignored because their key holds a derived value: the caller learns it (the
    // reference only logs it); nothing was done for them, so nothing is retried or reverted
    errors.addAll(tx.ignored);
    // 4. the transaction error (with verification mode: plus values the southbound disagrees on)
    if (cfg.verify() || (job.type == TxnType.NB_TRANSACTION && job.options.verify())) {
      errors.addAll(Verifier.verify(g, reg, refresher, executed));
    }
    // 6. drop removed base values (recorded)
    // also those that became REMOVED without a status change of this transaction
    // (a refresh that did not find a value whose last request was a delete, an NB delete of
    // such a value): they would stay in the graph for ever, with their derived values
    // (a key's state can only change in a batch that wrote it, and every REMOVED base value of
    // an earlier transaction was dropped by it: the touched keys found REMOVED cover them all)
    List<String> removable = new ArrayList<>();
    for (String key : touched.removedCandidates()) {
      Node n = g.get(key);
      if (n != null && n.state == ValueState.REMOVED) {
        if (n.isDerived()) {
          g.remove(key); // e.g. marked REMOVED by a refresh after an abandoned delete
        } else {
          removable.add(key);
        }
      }
    }
    for (String key : removable) {
      Node n = g.get(key);
      if (n != null && !n.isDerived() && n.state == ValueState.REMOVED) {
        for (String dk : n.derivedKeys) {
          Node dn = g.get(dk);
          if (dn != null && key.equals(dn.derivedFrom)) {
            g.remove(dk);
          }
        }
        g.remove(key);
      }
    }
    Graph.Journal journal = g.endBatch();
    touched.add(journal, false);
    history.addRevisions(journal, job.seq, cfg.clock().instant());
    // the trims read the clock after the revisions above are stamped (a zero age limit drops the
    // revisions this transaction closed); the record trim after publishing reuses that reading:
    // both trims run at most once a minute
    Instant now = cfg.clock().instant();
    for (String key : history.trimRevisions(now, g)) {
      touched.add(key, g.get(key));
    }
    publish(touched);
    history.afterPublish(g, touched.keys());
    history.trim(now);
    // 5. deliver statuses, then answer the caller
    watchers.deliver(statuses);
    if (future != null) {
      if (errors.isEmpty()) {
        future.complete(job.seq);
      } else {
        future.completeExceptionally(new TransactionException(job.seq, errors));
      }
    } else if (!errors.isEmpty()) {
      LOG.warn("{}", new TransactionException(job.seq, errors).getMessage());
    }
  }

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
          touched.add(dep, g.get(dep));
        }
      } else {
        List<String> pendingDependents = new ArrayList<>();
        for (String key : keys) {
          Node n = g.get(key);
          if (n != null && n.isAvailable() && !touched.refreshed(key)) {
            continue;
          }
          for (String dep : g.dependentsOf(key)) {
            Node dn = g.get(dep);
            if (dn != null && dn.state == ValueState.PENDING) {
              pendingDependents.add(dep);
            }
          }
        }
        for (String dep : pendingDependents) {
          touched.add(dep, g.get(dep));
        }
      }
    }
    published.update(touched, g);
  }

  /** Where the processor queues follow-up transactions. */
  interface Sink {
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
