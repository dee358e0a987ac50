package io.kvscheduler.internal.engine;

import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.loop.Queued;
import io.kvscheduler.internal.engine.refresh.Refresher;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prepares a dequeued request as a transaction ({@link Transaction}): the values an NB commit or
 * resync applies (a resync first refreshes the graph, then adds what becomes of the values it does
 * not list), the SB notification's values the scheduler accepts, the values a retry applies again,
 * and what the transaction settling a late southbound answer applies.
 */
final class TxnPreparer {
  private static final Logger LOG = LoggerFactory.getLogger(TxnPreparer.class);

  private final SchedulerConfig config;
  private final Graph graph;
  private final Registry registry;
  private final Refresher refresher;
  private final UnreadKeys unread;
  private final AssumedAbsence assumedAbsence;
  private int resyncCount;

  TxnPreparer(
      SchedulerConfig config,
      Graph graph,
      Registry registry,
      Refresher refresher,
      UnreadKeys unread) {
    this.config = config;
    this.graph = graph;
    this.registry = registry;
    this.refresher = refresher;
    this.unread = unread;
    this.assumedAbsence = new AssumedAbsence(graph, unread);
  }

  /**
   * Undoes the count of an aborted resync: the graph is as it was before it, so if it was the
   * first, so is the next one.
   */
  void resyncAborted() {
    resyncCount--;
  }

  /**
   * An NB commit: its values; for a resync, after a refresh of the graph (not for an upstream one),
   * with a deletion for every NB value it does not list and the OBTAINED values carried along (a
   * downstream resync applies the recorded intent of every NB value instead of values of its own).
   */
  void prepareNb(Transaction txn, Queued.Nb nb) {
    prepareNb(txn, nb.values(), nb.assumedAbsent(), nb.options(), false);
  }

  /**
   * As {@link #prepareNb(Transaction, Queued.Nb)} for a plan of the commit of {@code values} with
   * options {@code o}: the refresh of a resync reads the southbound all the same, but the resync is
   * not counted and the keys left unread stay unread (the refresh is rolled back with the plan).
   */
  void preparePlan(Transaction txn, List<ValueToApply> values, TxnOptions o) {
    prepareNb(txn, values, Set.of(), o, true);
  }

  private void prepareNb(
      Transaction txn,
      List<ValueToApply> requested,
      Set<String> assumedAbsent,
      TxnOptions o,
      boolean plan) {
    txn.simulateFirst = o.simulation() || config.simulation();
    List<ValueToApply> values = new ArrayList<>(requested);
    if (!plan) { // a plan assumes nothing absent: it changes nothing of what is known
      txn.assumedAbsent =
          assumedAbsence.apply(assumedAbsent, values, o.resync() == ResyncType.NOT_RESYNC, txn.seq);
    }
    if (o.resync() != ResyncType.NOT_RESYNC) {
      boolean first = plan ? resyncCount == 0 : resyncCount++ == 0;
      txn.countedResync = !plan;
      if (o.resync() == ResyncType.DOWNSTREAM) {
        values = new ArrayList<>();
        for (Node n : graph.nodes()) { // any order: sorted below
          if (!n.isDerived()
              && n.value() != null
              && n.state() != ValueState.OBTAINED
              && n.lastUpdate() != null
              && n.lastUpdate().value() != null) {
            // the intent as it is, with its revert flag (its retry settings:
            // Transaction#inheritRetry)
            values.add(
                new ValueToApply(
                    n.key(),
                    n.lastUpdate().value(),
                    ValueOrigin.FROM_NB,
                    n.lastUpdate().revert(),
                    null));
          }
        }
      }
      // sorted once: the correlation input of the refresh and the merge below need key order
      ValueToApply.sortByKey(values);
      graph.reserve(2 * values.size()); // a first resync: the values and as many derived ones
      if (o.resync() != ResyncType.UPSTREAM) {
        Set<String> read = refresher.refresh(null, first ? values : null, o.verboseRefresh());
        if (!plan) {
          unread.dropAnswered(null, read);
          if (!refresher.failures().isEmpty()) {
            txn.retrieveErrors = refresher.failures();
            keepUnread(txn.retrieveErrors, values);
          }
        }
      }
      // base values the transaction does not list: the graph's nodes are scanned in any order
      // and the unlisted ones merged in, in key order (no ordered view of the graph)
      Set<String> listed = new HashSet<>(values.size() / 3 * 4 + 16);
      for (int i = 0; i < values.size(); i += Bulk.RANGE) {
        list(values, i, Bulk.end(i, values.size()), listed);
      }
      List<Node> unlisted = new ArrayList<>();
      // read only: nodes are collected, the graph is unchanged
      for (Iterator<Node> it = graph.nodes().iterator(); it.hasNext(); ) {
        collectUnlisted(it, listed, unlisted);
      }
      unlisted.sort(NODE_KEY_ORDER);
      values = mergeUnlisted(values, unlisted);
    }
    txn.request =
        TxnRequest.nb(o, values, o.resync() == ResyncType.DOWNSTREAM ? List.of() : values);
    txn.skip = values.isEmpty();
  }

  /**
   * The descriptors {@code failed} could not be read by the resync's refresh: what the southbound
   * holds for their values is unknown, so their base values owned by the northbound (those in the
   * graph, and those the resync lists) are unread ({@link UnreadKeys}): the walk makes no call for
   * them and gives them no status that claims the southbound's content (each fails as unread,
   * retriable), and each later transaction reads them first until a Retrieve answers. Values
   * obtained from the southbound keep their status: the scheduler makes no call for them anyway.
   */
  private void keepUnread(List<RetrieveError> failed, List<ValueToApply> values) {
    Set<DescriptorHandle> unreadable = new HashSet<>();
    for (RetrieveError e : failed) {
      DescriptorHandle h = registry.byName(e.descriptor());
      if (h != null) {
        unreadable.add(h);
      }
    }
    List<String> keys = new ArrayList<>();
    for (Node n : graph.nodes()) {
      if (!n.isDerived()
          && n.value() != null
          && n.state() != ValueState.OBTAINED
          && unreadable.contains(registry.forNode(n))) {
        keys.add(n.key());
      }
    }
    for (ValueToApply kv : values) {
      if (kv.value() != null && unreadable.contains(registry.forKey(kv.key()))) {
        keys.add(kv.key());
      }
    }
    unread.addUnreadable(keys);
  }

  /** Adds the keys of {@code values[from, to)} to {@code listed}. */
  private static void list(List<ValueToApply> values, int from, int to, Set<String> listed) {
    for (int i = from; i < to; i++) {
      listed.add(values.get(i).key());
    }
  }

  /**
   * Of the next nodes of {@code it} (at most a range), the base values whose keys are not {@code
   * listed}: to be removed (NB) or kept (OBTAINED) by a resync.
   */
  private static void collectUnlisted(Iterator<Node> it, Set<String> listed, List<Node> unlisted) {
    for (int k = 0; k < Bulk.RANGE && it.hasNext(); k++) {
      Node n = it.next();
      if (n.isDerived()
          || n.value() == null
          || n.state() == ValueState.REMOVED
          || listed.contains(n.key())) {
        continue;
      }
      unlisted.add(n);
    }
  }

  private static final Comparator<Node> NODE_KEY_ORDER = (a, b) -> a.key().compareTo(b.key());

  /**
   * The listed {@code values} (in key order) and what a resync does with the {@code unlisted} base
   * values (in key order: OBTAINED ones are kept, others removed), merged in key order.
   */
  private static List<ValueToApply> mergeUnlisted(List<ValueToApply> values, List<Node> unlisted) {
    if (unlisted.isEmpty()) {
      return values;
    }
    List<ValueToApply> out = new ArrayList<>(values.size() + unlisted.size());
    int u = 0;
    for (ValueToApply kv : values) {
      while (u < unlisted.size() && unlisted.get(u).key().compareTo(kv.key()) < 0) {
        out.add(unlistedValue(unlisted.get(u++)));
      }
      out.add(kv);
    }
    while (u < unlisted.size()) {
      out.add(unlistedValue(unlisted.get(u++)));
    }
    return out;
  }

  private static ValueToApply unlistedValue(Node n) {
    return n.state() == ValueState.OBTAINED
        ? new ValueToApply(n.key(), n.value(), ValueOrigin.FROM_SB, false, n.metadata())
        : ValueToApply.nb(n.key(), null);
  }

  /** An SB notification: the values the scheduler accepts from the southbound. */
  void prepareSb(Transaction txn, Queued.Sb sb) {
    txn.simulateFirst = config.simulation();
    txn.request = TxnRequest.sb(sb.values(), sb.values());
    if (sb.values().isEmpty()) {
      txn.skip = true;
      return;
    }
    // each pair is filtered (the reference checks only the first): values no descriptor selects,
    // values of the wrong class (as Retrieve's are) and values owned by the northbound are ignored
    List<ValueToApply> kept = new ArrayList<>();
    for (ValueToApply kv : sb.values()) {
      Node n = graph.get(kv.key());
      DescriptorHandle h = registry.forKey(kv.key());
      Throwable wrongType =
          h == null ? null : h.checkFound(kv.key(), kv.value(), kv.metadata(), "the notification");
      if (h == null) {
        LOG.debug("SB notification for {} ignored: no descriptor selects it", kv.key());
      } else if (wrongType != null) {
        LOG.warn("SB notification for {} ignored: {}", kv.key(), wrongType.getMessage());
      } else if (n != null && n.value() != null && n.origin() == ValueOrigin.FROM_NB) {
        LOG.debug("SB notification for {} ignored: the value is owned by the northbound", kv.key());
      } else {
        kept.add(kv);
      }
    }
    txn.request = TxnRequest.sb(kept, sb.values());
    txn.skip = kept.isEmpty();
  }

  /**
   * A retry of failed values, or of UNIMPLEMENTED ones: their intent again, for the keys not
   * changed since.
   */
  void prepareRetry(Transaction txn, Queued.Retry r) {
    txn.simulateFirst = !r.unimplemented() || config.simulation();
    List<ValueToApply> values = new ArrayList<>();
    for (Map.Entry<String, Long> e : new TreeMap<>(r.keys()).entrySet()) {
      Node n = graph.get(e.getKey());
      if (n == null
          || n.value() == null
          || n.lastUpdate() == null
          || n.lastUpdate().seq() != e.getValue()) {
        continue; // gone or changed since the failure
      }
      if (r.unimplemented() && n.state() != ValueState.UNIMPLEMENTED) {
        continue;
      }
      values.add(
          new ValueToApply(
              n.key(), n.lastUpdate().value(), ValueOrigin.FROM_NB, n.lastUpdate().revert(), null));
    }
    txn.request =
        TxnRequest.retry(
            r.unimplemented() ? TxnType.RETRY_UNIMPL_OPS : TxnType.RETRY_FAILED_OPS,
            "",
            r.forTxn(),
            r.unimplemented() ? 0 : r.attempt(),
            r.delay(),
            r.keys().keySet(),
            values);
    txn.skip = values.isEmpty();
  }

  /**
   * True when a refresh can read {@code key}: its descriptor (of a derived value: its base's) can
   * Retrieve.
   */
  boolean readable(String key) {
    DescriptorHandle h = registry.forKey(baseOf(key));
    return h != null && h.canRetrieve();
  }

  /** The base key of {@code key} (itself unless it holds a derived value). */
  private String baseOf(String key) {
    Node n = graph.get(key);
    return n != null && n.isDerived() ? n.derivedFrom() : key;
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
   * the values depending on the key follow it (see {@link TxnExecutor#applyValues}). Recorded as a
   * retry of the key (its failed transaction, its attempt), with a description naming the late
   * answer.
   */
  void prepareLate(Transaction txn, Queued.Late late) {
    String key = late.key();
    String base = baseOf(key);
    txn.simulateFirst = true; // as every retry
    String description =
        "a southbound call for " + key + " returned after its time limit: read again";
    txn.request =
        TxnRequest.retry(
            TxnType.RETRY_FAILED_OPS, description, 0, 0, null, Set.of(base), List.of());
    DescriptorHandle h = registry.forKey(base);
    Set<String> read = refresher.refresh(new TreeSet<>(Set.of(base)), null, false);
    unread.dropAnswered(Set.of(base), read);
    if (h == null || !read.contains(h.name)) {
      // Retrieve failed: nothing new is known, nothing is settled (recorded all the same)
      txn.skip = true;
      return;
    }
    txn.addReadFirst(Set.of(base));
    Node n = graph.get(key);
    ValueToApply intent = n == null ? null : lateIntent(n);
    long forTxn = 0;
    int attempt = 0;
    if (n != null && n.lastUpdate() != null) {
      forTxn = n.lastUpdate().seq();
      boolean failed = n.state() == ValueState.FAILED || n.state() == ValueState.RETRYING;
      attempt = failed ? n.retryAttempt() : 0;
    }
    txn.request =
        TxnRequest.retry(
            TxnType.RETRY_FAILED_OPS,
            description,
            forTxn,
            attempt,
            null,
            Set.of(base),
            intent == null ? List.of() : List.of(intent));
    txn.skip = false; // the dependents follow the read even when the key itself is kept as it is
  }

  /**
   * What the transaction settling a late answer applies for node {@code n} just read, or null when
   * its status stays (see {@link #prepareLate}).
   */
  private ValueToApply lateIntent(Node n) {
    if (n.value() == null && n.lastUpdate() == null) {
      return null;
    }
    boolean revert = n.lastUpdate() != null && n.lastUpdate().revert();
    Object intent;
    if (n.lastUpdate() != null) {
      intent = n.lastUpdate().value();
    } else if (n.state() == ValueState.DISCOVERED) {
      intent = null; // of northbound origin, asked for by nobody
    } else {
      return null;
    }
    boolean holds = holds(n, intent);
    boolean apply =
        switch (n.state()) {
          case FAILED, RETRYING -> holds;
          case CONFIGURED, MISSING -> !holds;
          case DISCOVERED -> intent == null;
          default -> false;
        };
    return apply ? new ValueToApply(n.key(), intent, ValueOrigin.FROM_NB, revert, null) : null;
  }

  /** True when the southbound, as just read, holds what {@code intent} asks of {@code n}. */
  private boolean holds(Node n, Object intent) {
    if (n.held() != null) {
      return false;
    }
    if (intent == null) {
      return !n.isAvailable();
    }
    if (!n.isAvailable()) {
      return false;
    }
    DescriptorHandle h = registry.forNode(n);
    return h != null
        ? h.equivalent(n.key(), n.value(), intent)
        : DescriptorHandle.equalValues(n.key(), n.value(), intent);
  }
}
