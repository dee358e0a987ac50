package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
  private int resyncCount;
  private final RetryPlanner retries;

  /**
   * The walk's recursion path, shared by the passes of the engine (one walks at a time; emptied
   * whenever a pass's context is made, so a pass that ended abnormally leaves nothing behind).
   */
  private final Path path = new Path();

  /**
   * Base keys whose southbound state is unknown across transactions: a call for the key (or one of
   * its derived values) failed, and every Retrieve of its descriptor since failed too. Each
   * transaction first tries to read them ({@link #readUnread}); until one is read, the walk makes
   * no call for it or its derived values ({@link TxnContext#unreadBefore}).
   */
  private final Set<String> unreadBases = new TreeSet<>();

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
  }

  Refresher refresher() {
    return refresher;
  }

  /** Everything known about the transaction being processed. */
  private static final class Job {
    long seq;
    TxnType type;
    ResyncType resync = ResyncType.NOT_RESYNC;
    String description = "";
    TxnOptions options = TxnOptions.defaults();
    long retryForTxn;
    int retryAttempt;
    Duration retryDelay;
    Set<String> retryKeys = Set.of();
    List<Kv> values = List.of();
    List<Kv> recordedValues = List.of();

    /** {@link #values} sorted by key (set by the ordering step, reused by the record). */
    List<Kv> sortedValues;

    /** True once the transaction counted as a resync (undone when it is aborted). */
    boolean countedResync;

    boolean simulate;
    boolean skip;

    /** Base keys of the values that failed, refreshed after the execution (refreshFailed). */
    List<String> refreshedFailed = List.of();

    /**
     * Base keys read again before the transaction (their dependents follow what the read found):
     * the key of a late southbound answer ({@link #prepareLate}), and keys left unread by earlier
     * transactions ({@link #unreadBases}) that a Retrieve has now answered for.
     */
    Set<String> readFirst = Set.of();
  }

  void process(Queued q) {
    if (q instanceof Queued.Late late && !readable(late.key())) {
      return; // nothing can read the key again: the scheduler's view stays its best guess
    }
    Job job = new Job();
    job.seq = nextSeq++;
    CompletableFuture<Long> future = q instanceof Queued.Nb nb ? nb.result() : null;
    Touched touched = new Touched(job.seq);
    try {
      Instant start = cfg.clock().instant();
      readUnread(job);
      if (q instanceof Queued.Nb nb) {
        prepareNb(job, nb);
      } else if (q instanceof Queued.Sb sb) {
        prepareSb(job, sb);
      } else if (q instanceof Queued.Retry r) {
        prepareRetry(job, r);
      } else if (q instanceof Queued.Late late) {
        prepareLate(job, late);
      } else {
        throw new IllegalStateException("not a transaction: " + q);
      }
      BatchJournal refreshed = unrecordedBatch(); // resync refresh: unrecorded
      run(job, start, future, touched, refreshed);
    } catch (RuntimeException | Error e) {
      LOG.error(
          "transaction #{} aborted by an internal error; its changes are rolled back", job.seq, e);
      g.rollback();
      history.dropRevived(g); // the aborted transaction's own cleanup did not run
      if (job.countedResync) {
        // the graph is as it was before this resync: if it was the first, so is the next one
        resyncCount--;
      }
      if (future != null) {
        future.completeExceptionally(e);
      }
    }
  }

  private void prepareNb(Job job, Queued.Nb nb) {
    TxnOptions o = nb.options();
    job.type = TxnType.NB_TRANSACTION;
    job.options = o;
    job.resync = o.resync();
    job.description = o.description();
    job.simulate = o.simulation() || cfg.simulation();
    List<Kv> values = new ArrayList<>(nb.values());
    if (o.resync() != ResyncType.NOT_RESYNC) {
      boolean first = resyncCount++ == 0;
      job.countedResync = true;
      if (o.resync() == ResyncType.DOWNSTREAM) {
        values = new ArrayList<>();
        for (Node n : g.nodes()) { // any order: sorted below
          if (!n.isDerived()
              && n.value != null
              && n.state != ValueState.OBTAINED
              && n.lastUpdate != null
              && n.lastUpdate.value() != null) {
            // the intent as it is, with its revert flag (its retry settings: TxnContext)
            values.add(
                new Kv(
                    n.key, n.lastUpdate.value(), ValueOrigin.FROM_NB, n.lastUpdate.revert(), null));
          }
        }
      }
      // sorted once: the correlation input of the refresh and the merge below need key order
      Kv.sortByKey(values);
      g.reserve(2 * values.size()); // a first resync: the values and as many derived ones
      if (o.resync() != ResyncType.UPSTREAM) {
        forgetRead(null, refresher.refresh(null, first ? values : null, o.verboseRefresh()));
      }
      // base values the transaction does not list: the listed ones are marked in their nodes,
      // the graph's nodes are scanned in any order and the unlisted ones merged in, in key order
      // (no ordered view of the graph and no set of listed keys)
      Object listed = new Object();
      for (int i = 0; i < values.size(); i += Bulk.RANGE) {
        mark(values, i, Bulk.end(i, values.size()), listed);
      }
      List<Node> unlisted = new ArrayList<>();
      // read only: nodes are collected, the graph is unchanged
      for (Iterator<Node> it = g.nodes().iterator(); it.hasNext(); ) {
        collectUnlisted(it, listed, unlisted);
      }
      unlisted.sort(NODE_KEY_ORDER);
      values = mergeUnlisted(values, unlisted);
    }
    job.values = values;
    job.recordedValues = o.resync() == ResyncType.DOWNSTREAM ? List.of() : values;
    job.skip = values.isEmpty();
  }

  /** Marks the nodes of {@code values[from, to)} as {@code listed}. */
  private void mark(List<Kv> values, int from, int to, Object listed) {
    for (int i = from; i < to; i++) {
      Node n = g.get(values.get(i).key());
      if (n != null) {
        n.scratchOwner = listed;
      }
    }
  }

  /**
   * Of the next nodes of {@code it} (at most a range), the base values not marked {@code listed}:
   * to be removed (NB) or kept (OBTAINED) by a resync.
   */
  private static void collectUnlisted(Iterator<Node> it, Object listed, List<Node> unlisted) {
    for (int k = 0; k < Bulk.RANGE && it.hasNext(); k++) {
      Node n = it.next();
      if (n.isDerived()
          || n.value == null
          || n.scratchOwner == listed
          || n.state == ValueState.REMOVED) {
        continue;
      }
      unlisted.add(n);
    }
  }

  private static final Comparator<Node> NODE_KEY_ORDER = (a, b) -> a.key.compareTo(b.key);

  /**
   * The listed {@code values} (in key order) and what a resync does with the {@code unlisted} base
   * values (in key order: OBTAINED ones are kept, others removed), merged in key order.
   */
  private static List<Kv> mergeUnlisted(List<Kv> values, List<Node> unlisted) {
    if (unlisted.isEmpty()) {
      return values;
    }
    List<Kv> out = new ArrayList<>(values.size() + unlisted.size());
    int u = 0;
    for (Kv kv : values) {
      while (u < unlisted.size() && unlisted.get(u).key.compareTo(kv.key()) < 0) {
        out.add(unlistedValue(unlisted.get(u++)));
      }
      out.add(kv);
    }
    while (u < unlisted.size()) {
      out.add(unlistedValue(unlisted.get(u++)));
    }
    return out;
  }

  private static Kv unlistedValue(Node n) {
    return n.state == ValueState.OBTAINED
        ? new Kv(n.key, n.value, ValueOrigin.FROM_SB, false, n.metadata)
        : Kv.nb(n.key, null);
  }

  private void prepareSb(Job job, Queued.Sb sb) {
    job.type = TxnType.SB_NOTIFICATION;
    job.simulate = cfg.simulation();
    job.values = sb.values();
    job.recordedValues = sb.values();
    if (sb.values().isEmpty()) {
      job.skip = true;
      return;
    }
    // each pair is filtered (the reference checks only the first): values no descriptor selects,
    // values of the wrong class (as Retrieve's are) and values owned by the northbound are ignored
    List<Kv> kept = new ArrayList<>();
    for (Kv kv : sb.values()) {
      Node n = g.get(kv.key());
      DescriptorHandle h = reg.forKey(kv.key());
      Throwable wrongType =
          h == null ? null : h.checkFound(kv.key(), kv.value(), kv.metadata(), "the notification");
      if (h == null) {
        LOG.debug("SB notification for {} ignored: no descriptor selects it", kv.key());
      } else if (wrongType != null) {
        LOG.warn("SB notification for {} ignored: {}", kv.key(), wrongType.getMessage());
      } else if (n != null && n.value != null && n.origin() == ValueOrigin.FROM_NB) {
        LOG.debug("SB notification for {} ignored: the value is owned by the northbound", kv.key());
      } else {
        kept.add(kv);
      }
    }
    job.values = kept;
    job.skip = kept.isEmpty();
  }

  private void prepareRetry(Job job, Queued.Retry r) {
    job.type = r.unimplemented() ? TxnType.RETRY_UNIMPL_OPS : TxnType.RETRY_FAILED_OPS;
    job.retryForTxn = r.forTxn();
    job.retryAttempt = r.unimplemented() ? 0 : r.attempt();
    job.retryDelay = r.delay();
    job.retryKeys = r.keys().keySet();
    job.simulate = !r.unimplemented() || cfg.simulation();
    List<Kv> values = new ArrayList<>();
    for (Map.Entry<String, Long> e : new TreeMap<>(r.keys()).entrySet()) {
      Node n = g.get(e.getKey());
      if (n == null
          || n.value == null
          || n.lastUpdate == null
          || n.lastUpdate.seq() != e.getValue()) {
        continue; // gone or changed since the failure
      }
      if (r.unimplemented() && n.state != ValueState.UNIMPLEMENTED) {
        continue;
      }
      values.add(
          new Kv(n.key, n.lastUpdate.value(), ValueOrigin.FROM_NB, n.lastUpdate.revert(), null));
    }
    job.values = values;
    job.recordedValues = values;
    job.skip = values.isEmpty();
  }

  /**
   * True when a refresh can read {@code key}: its descriptor (of a derived value: its base's) can
   * Retrieve.
   */
  private boolean readable(String key) {
    DescriptorHandle h = reg.forKey(baseOf(key));
    return h != null && h.canRetrieve();
  }

  /** The base key of {@code key} (itself unless it holds a derived value). */
  private String baseOf(String key) {
    Node n = g.get(key);
    return n != null && n.isDerived() ? n.derivedFrom : key;
  }

  /**
   * A southbound call for {@code late.key()} abandoned after its time limit returned at last: it
   * may have done what it was asked after all, or something else, which the refresh after its
   * failure could not see. The key's base value is read again (Retrieve, with its derived values),
   * then the transaction settles the key as a retry of it would, when the read shows that its
   * status tells something other than what the southbound holds:
   *
   * <ul>
   *   <li>FAILED or RETRYING, and the southbound holds what was asked (the object created or
   *       updated as requested, or gone as a removal asked): the key's intent is applied, which
   *       calls nothing for it (CONFIGURED, or removed) and lets what waits for it go ahead; its
   *       pending retry, if any, becomes obsolete;
   *   <li>CONFIGURED or MISSING, and the southbound does not hold what was asked (an older call
   *       that landed after a newer one): the intent is applied again (an Update, or a
   *       re-creation);
   *   <li>an object of northbound origin that nobody asks for any more (DISCOVERED, e.g. created by
   *       a call that returned after its value was removed): it is removed.
   * </ul>
   *
   * A FAILED or RETRYING value whose object is still not what was asked keeps its status: its
   * retry, or the next change or resync, applies it, as after any failure. Whatever the read finds,
   * the values depending on the key follow it (see {@link #applyJob}). Recorded as a retry of the
   * key (its failed transaction, its attempt), with a description naming the late answer.
   */
  private void prepareLate(Job job, Queued.Late late) {
    String key = late.key();
    String base = baseOf(key);
    job.type = TxnType.RETRY_FAILED_OPS;
    job.simulate = true; // as every retry
    job.description = "a southbound call for " + key + " returned after its time limit: read again";
    job.retryKeys = Set.of(base);
    DescriptorHandle h = reg.forKey(base);
    Set<String> read = refresher.refresh(new TreeSet<>(Set.of(base)), null, false);
    forgetRead(Set.of(base), read);
    if (h == null || !read.contains(h.name)) {
      // Retrieve failed: nothing new is known, nothing is settled (recorded all the same)
      job.skip = true;
      return;
    }
    job.readFirst = union(job.readFirst, Set.of(base));
    Node n = g.get(key);
    Kv intent = n == null ? null : lateIntent(n);
    if (n != null && n.lastUpdate != null) {
      job.retryForTxn = n.lastUpdate.seq();
      boolean failed = n.state == ValueState.FAILED || n.state == ValueState.RETRYING;
      job.retryAttempt = failed ? n.retryAttempt : 0;
    }
    job.values = intent == null ? List.of() : List.of(intent);
    job.recordedValues = job.values;
    job.skip = false; // the dependents follow the read even when the key itself is kept as it is
  }

  /**
   * What the transaction settling a late answer applies for node {@code n} just read, or null when
   * its status stays (see {@link #prepareLate}).
   */
  private Kv lateIntent(Node n) {
    if (n.value == null && n.lastUpdate == null) {
      return null;
    }
    boolean revert = n.lastUpdate != null && n.lastUpdate.revert();
    Object intent;
    if (n.lastUpdate != null) {
      intent = n.lastUpdate.value();
    } else if (n.state == ValueState.DISCOVERED) {
      intent = null; // of northbound origin, asked for by nobody
    } else {
      return null;
    }
    boolean holds = holds(n, intent);
    boolean apply =
        switch (n.state) {
          case FAILED, RETRYING -> holds;
          case CONFIGURED, MISSING -> !holds;
          case DISCOVERED -> intent == null;
          default -> false;
        };
    return apply ? new Kv(n.key, intent, ValueOrigin.FROM_NB, revert, null) : null;
  }

  /** True when the southbound, as just read, holds what {@code intent} asks of {@code n}. */
  private boolean holds(Node n, Object intent) {
    if (n.held != null) {
      return false;
    }
    if (intent == null) {
      return !n.isAvailable();
    }
    if (!n.isAvailable()) {
      return false;
    }
    DescriptorHandle h = reg.forNode(n);
    return h != null
        ? h.equivalent(n.key, n.value, intent)
        : DescriptorHandle.equalValues(n.key, n.value, intent);
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
    BatchJournal journal = g.endBatch();
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
      BatchJournal journal, Touched touched, long seq, Instant now, boolean record) {
    touched.reserve(journal);
    boolean history = this.history.records();
    for (int i = 0; i < journal.size(); i += Bulk.RANGE) {
      closeExecution(journal, i, Bulk.end(i, journal.size()), touched, seq, now, record, history);
    }
  }

  private void closeExecution(
      BatchJournal journal,
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
    tx.unreadBefore = unreadBases.isEmpty() ? Set.of() : Set.copyOf(unreadBases);
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

  /**
   * Reads the keys earlier transactions left unread ({@link #unreadBases}). Those a Retrieve now
   * answers for are known again, and the transaction lets their dependents follow what was found
   * ({@link Job#readFirst}); the others stay unknown.
   */
  private void readUnread(Job job) {
    if (unreadBases.isEmpty()) {
      return;
    }
    Set<String> keys = new TreeSet<>(unreadBases);
    forgetRead(keys, refresher.refresh(keys, null, false));
    keys.removeAll(unreadBases);
    job.readFirst = union(job.readFirst, keys);
  }

  /**
   * After a refresh of {@code keys} ({@code null}: all) that read the descriptors {@code read}: the
   * unread keys among them whose descriptor answered are known again.
   */
  private void forgetRead(Set<String> keys, Set<String> read) {
    if (unreadBases.isEmpty()) {
      return;
    }
    unreadBases.removeIf(
        k -> {
          DescriptorHandle h = reg.forKey(k);
          return g.get(k) == null
              || (keys == null || keys.contains(k)) && (h == null || read.contains(h.name));
        });
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    if (a.isEmpty()) {
      return b;
    }
    Set<String> out = new TreeSet<>(a);
    out.addAll(b);
    return out;
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
      BatchJournal journal = g.endBatch();
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
  private BatchJournal unrecordedBatch() {
    BatchJournal j = g.endBatch();
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
      forgetRead(keys, read);
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
    for (String key : tx.unread) {
      Node n = g.get(key);
      if (n != null) {
        unreadBases.add(n.isDerived() ? n.derivedFrom : key);
      }
    }
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
    BatchJournal journal = g.endBatch();
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
