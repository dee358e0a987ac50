package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.collect.RecursionPath;
import io.kvscheduler.internal.engine.calls.CallPlan;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.ParallelCalls;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.BatchJournal;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Touched;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.history.History;
import io.kvscheduler.internal.engine.record.OpRecord;
import io.kvscheduler.internal.engine.refresh.Refresher;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Orders a prepared transaction's values and walks them: the simulation, the execution (with revert
 * on failure when asked), the closing of the execution's batch, and the refresh of the values that
 * failed, whose dependents follow what the refresh found.
 */
final class TxnExecutor {
  private final SchedulerConfig config;
  private final Graph graph;
  private final Registry registry;
  private final History history;
  private final Refresher refresher;
  private final UnreadKeys unread;
  private final ParallelCalls parallel;
  private final CallsNotTaken notTaken;

  /**
   * The walk's recursion path, shared by the passes of the engine (one walks at a time; emptied
   * whenever a pass's context is made, so a pass that ended abnormally leaves nothing behind).
   */
  private final RecursionPath path = new RecursionPath();

  TxnExecutor(
      SchedulerConfig config,
      Graph graph,
      Registry registry,
      History history,
      Refresher refresher,
      UnreadKeys unread,
      ParallelCalls parallel) {
    this.config = config;
    this.graph = graph;
    this.registry = registry;
    this.history = history;
    this.refresher = refresher;
    this.unread = unread;
    this.parallel = parallel;
    this.notTaken = new CallsNotTaken(graph, registry, config.clock());
  }

  /** Of values sorted by key, the execution order: deletions, re-creations, creations, updates. */
  List<ValueToApply> order(List<ValueToApply> sorted) {
    if (sorted.size() == 1) {
      return sorted; // the usual one-value transaction: no class lists to build
    }
    List<List<ValueToApply>> classes = new ArrayList<>(4);
    for (int c = 0; c < 4; c++) {
      classes.add(new ArrayList<>());
    }
    for (int i = 0; i < sorted.size(); i += Bulk.RANGE) {
      classify(sorted, i, Bulk.end(i, sorted.size()), classes);
    }
    List<ValueToApply> only = null;
    for (List<ValueToApply> c : classes) {
      if (!c.isEmpty()) {
        if (only != null) {
          List<ValueToApply> out = new ArrayList<>(sorted.size());
          classes.forEach(out::addAll);
          return out;
        }
        only = c;
      }
    }
    return only != null ? only : classes.get(0); // all values in one class (e.g. a first resync)
  }

  /** Adds each value of {@code sorted[from, to)} to its class of the execution order. */
  private void classify(
      List<ValueToApply> sorted, int from, int to, List<List<ValueToApply>> classes) {
    for (int i = from; i < to; i++) {
      ValueToApply kv = sorted.get(i);
      classes.get(executionClass(kv, graph.get(kv.key()))).add(kv);
    }
  }

  /** 0 delete, 1 re-create, 2 create, 3 update ({@code n}: the key's node or null). */
  private int executionClass(ValueToApply kv, Node n) {
    if (kv.value() == null) {
      return 0;
    }
    if (n == null || n.value() == null || !n.isAvailable() && n.held() == null) {
      return 2;
    }
    DescriptorHandle h = registry.forNode(n);
    Object old =
        n.held() != null ? n.held() : n.value(); // the update starts from what the SB holds
    return h != null && h.updateWithRecreate(kv.key(), old, kv.value(), n.metadata()) ? 1 : 3;
  }

  /**
   * Starts a pass of kind {@code pass} of the walk over {@code txn}, from the graph as it is now,
   * with the keys earlier transactions left unread unknown; see {@link Transaction#startPass} for
   * {@code keepOutcome}.
   */
  private void startPass(Transaction txn, WalkPass pass, boolean keepOutcome) {
    txn.startPass(pass, path.cleared(), unread.snapshot(), keepOutcome);
  }

  /**
   * Starts the execution of {@code txn}: the calls in {@code ranAhead} (null: none) ran ahead of it
   * ({@link #runAhead}); see {@link Transaction#startPass} for {@code keepOutcome}.
   */
  void startExecution(Transaction txn, CallPlan ranAhead, boolean keepOutcome) {
    startPass(txn, new WalkPass.Execution(ranAhead, txn.clock), keepOutcome);
  }

  /**
   * With parallel calls ({@code parallelism} above 1): walks the values once as a simulation that
   * validates, to learn the southbound calls the walk will make if all succeed ({@link CallPlan}),
   * rolls that walk back, and runs those calls ahead, in parallel where they do not depend on each
   * other ({@link ParallelCalls}). Returns those calls, or null when none ran: the execution then
   * takes each call's outcome instead of calling ({@link WalkPass#takeRanAhead}); a call the walk
   * asks that did not run ahead (after a failure the walk may go another way) it makes itself, in
   * order.
   *
   * <p>A transaction reverted on failure runs ahead only when the scheduler was built so ({@code
   * revertInParallel}). A failed call of one of its own values then ends the run: the running calls
   * return, no other starts. Those that ran beyond the failure (in the walk's order) are recorded
   * and undone before the revert ({@link CallsNotTaken}). When the planning pass finds one of its
   * own values invalid, nothing runs ahead: the walk stops there.
   */
  CallPlan runAhead(Transaction txn, List<ValueToApply> ordered) {
    if (!parallel.enabled() || txn.revertOnFailure() && !config.revertInParallel()) {
      return null;
    }
    CallPlan plan =
        new CallPlan(
            key -> {
              Node n = graph.get(key);
              return n == null ? key : n.baseKey();
            });
    startPass(txn, new WalkPass.Planning(plan, graph), false);
    if (txn.revertOnFailure()) {
      noteOwnKeys(txn, ordered);
    }
    applyValues(new Walker(graph, registry, txn), ordered, txn);
    graph.rollback();
    if (plan.size() < 2) {
      return null; // nothing to run side by side
    }
    if (txn.ownFailed) {
      // one of its own values is invalid: the walk stops there, before calls planned beyond it
      return null;
    }
    Set<String> own = txn.ownKeys;
    // the walk counts a failure of a value derived from one of its own values as its own too
    // (StatusMarks.noteOwnFailure): the run ends on it as well
    parallel.run(plan, call -> own.contains(call.baseKey));
    return plan;
  }

  /**
   * Notes the keys of a transaction reverted on failure as its own ({@link Transaction#ownKeys}).
   */
  private static void noteOwnKeys(Transaction txn, List<ValueToApply> ordered) {
    for (ValueToApply kv : ordered) {
      txn.ownKeys.add(kv.key());
    }
  }

  /**
   * Runs the walk of a plan ({@link TxnPlanner}): the values in order, as the execution would walk
   * them if every call succeeded (a planning pass: values are validated, no call is made), without
   * rolling the graph back (the planner reads it first). A transaction reverted on failure stops at
   * the first failure of one of its own values, as its execution would before undoing the rest.
   */
  void plan(Transaction txn, List<ValueToApply> ordered) {
    CallPlan calls = new CallPlan(key -> key); // written down, never run
    startPass(txn, new WalkPass.Planning(calls, graph), false);
    Walker w = new Walker(graph, registry, txn);
    if (!txn.revertOnFailure()) {
      applyValues(w, ordered, txn);
      return;
    }
    noteOwnKeys(txn, ordered);
    for (ValueToApply kv : ordered) {
      if (w.applyTop(kv) != null && txn.ownFailed) {
        return;
      }
    }
  }

  /** Runs the walk of a simulation: the values in order, without calling the southbound. */
  void simulate(Transaction txn, List<ValueToApply> ordered) {
    startPass(txn, WalkPass.SIMULATION, false);
    applyValues(new Walker(graph, registry, txn), ordered, txn);
  }

  /**
   * Applies the values in order. Of keys read again before the transaction ({@link
   * Transaction#readFirst}): first the values depending on what the read found gone are taken down,
   * then the values are applied (a late answer's key settled), then the values waiting for what the
   * read found go ahead (as after a Create).
   */
  private void applyValues(Walker w, List<ValueToApply> ordered, Transaction txn) {
    if (txn.readFirst.isEmpty()) {
      applyAll(w, ordered);
      return;
    }
    followRefresh(w, txn.readFirst, false);
    applyAll(w, ordered);
    followRefresh(w, txn.readFirst, true);
  }

  /** Applies the values in order (in ranges: {@link Bulk}). */
  private static void applyAll(Walker w, List<ValueToApply> ordered) {
    int size = ordered.size();
    for (int i = 0; i < size; i += Bulk.RANGE) {
      applyRange(w, ordered, i, Bulk.end(i, size));
    }
  }

  private static void applyRange(Walker w, List<ValueToApply> ordered, int from, int to) {
    for (int i = from; i < to; i++) {
      w.applyTop(ordered.get(i));
    }
  }

  /**
   * Applies the values in order; with revert, the first failure of one of the transaction's own
   * values stops the loop, its key is refreshed, the batch is closed, and the values applied so far
   * are re-applied with the values they had before, in reverse order. The keys read first are
   * followed as by {@link #applyValues}, the values waiting for what the read found last (after a
   * revert too: what the read found is not the transaction's to undo).
   */
  void executeWithRevert(Transaction txn, List<ValueToApply> ordered) {
    Walker w = new Walker(graph, registry, txn);
    if (!txn.revertOnFailure()) {
      applyValues(w, ordered, txn);
      readAfterUndo(txn, notTaken.undo(txn, false), null);
      return;
    }
    ArrayDeque<ValueToApply> previous = new ArrayDeque<>();
    // F19: per entry of previous, the object an INVALID value held before the transaction
    ArrayDeque<Optional<Object>> heldBefore = new ArrayDeque<>();
    boolean revert = false;
    noteOwnKeys(txn, ordered);
    // what depends on the keys read first follows what the read found (as in applyValues): these
    // are not the transaction's own values, so their failures revert nothing
    followRefresh(w, txn.readFirst, false);
    for (ValueToApply kv : ordered) {
      Node before = graph.get(kv.key());
      Object prev = before == null ? null : before.value();
      Object held = before != null && before.state() == ValueState.INVALID ? before.held() : null;
      Throwable err = w.applyTop(kv);
      previous.addFirst(new ValueToApply(kv.key(), prev, ValueOrigin.FROM_NB, true, null));
      heldBefore.addFirst(Optional.ofNullable(held));
      // B100: only failures of the transaction's own values trigger the revert
      if (err != null && txn.revertOnFailure() && txn.ownFailed) {
        // the calls that ran beyond the failure go first: they follow it in the walk's order
        readAfterUndo(txn, notTaken.undo(txn, true), kv.key());
        revert = true;
        break;
      }
    }
    if (revert) {
      BatchJournal journal = graph.endBatch();
      txn.touched.add(journal, false);
      history.addRevisions(journal, txn.seq, config.clock().instant());
      Iterator<Optional<Object>> held = heldBefore.iterator();
      for (ValueToApply kv : previous) {
        restoreHeld(w, kv.key(), held.next().orElse(null));
        w.applyTop(kv);
      }
    }
    followRefresh(w, txn.readFirst, true);
    readAfterUndo(txn, notTaken.undo(txn, false), null);
  }

  /**
   * F19: before the revert gives {@code key} back its INVALID value, the object {@code held} the
   * southbound held for it before the transaction (null: none) is applied again when the
   * transaction took it away (a removal deleted it, a valid value replaced it): created (or
   * updated) with its derived values, and the values that depended on it follow. Re-applying the
   * invalid value then calls nothing (F16), so the value is INVALID again with that object held.
   */
  private void restoreHeld(Walker w, String key, Object held) {
    if (held == null) {
      return;
    }
    Node now = graph.get(key);
    if (now != null && now.state() == ValueState.INVALID && Objects.equals(now.held(), held)) {
      return; // still held: nothing to restore
    }
    w.applyTop(new ValueToApply(key, held, ValueOrigin.FROM_NB, true, null));
  }

  /**
   * Reads the keys {@code unknown} whose southbound content a call that ran ahead (or its undo)
   * left unknown, and {@code failedKey} (the key whose failure reverts the transaction, or null),
   * so the graph holds what the southbound does.
   */
  private void readAfterUndo(Transaction txn, Set<String> unknown, String failedKey) {
    if (unknown.isEmpty() && failedKey == null) {
      return;
    }
    Set<String> keys = new TreeSet<>(unknown);
    if (failedKey != null) {
      keys.add(failedKey);
    }
    Set<String> read = refresher.refresh(keys, null, false);
    for (String key : keys) {
      markRead(txn, key, read);
    }
    keepUnread(txn, unknown, read);
  }

  /**
   * The base keys {@code unknown} a call that ran ahead (or its undo) left unknown, that the
   * refresh that read the descriptors {@code read} did not answer for: unread in {@code txn} (kept
   * unknown across transactions after it). The failed call may be a value's the graph holds no node
   * for, a new value or a new derived value the walk never reached, whose failure marked no node: a
   * base key without a node is kept unknown directly ({@link UnreadKeys#addWithoutNode}).
   */
  private void keepUnread(Transaction txn, Set<String> unknown, Set<String> read) {
    for (String key : unknown) {
      DescriptorHandle h = registry.forKey(key);
      if (h == null || !h.canRetrieve() || read.contains(h.name)) {
        continue;
      }
      if (graph.get(key) == null) {
        unread.addWithoutNode(key);
      } else {
        txn.unread.add(key);
      }
    }
  }

  /**
   * After a refresh of base key {@code key} that read the descriptors {@code read}: the key and its
   * derived values are known again when its descriptor's Retrieve answered, so the revert may call
   * the southbound for them.
   */
  private void markRead(Transaction txn, String key, Set<String> read) {
    DescriptorHandle h = registry.forKey(key);
    if (h == null || !read.contains(h.name) || txn.unread.isEmpty()) {
      return;
    }
    txn.unread.removeIf(
        k -> {
          Node n = graph.get(k);
          return k.equals(key) || n != null && key.equals(n.derivedFrom());
        });
  }

  /**
   * The execution's batch {@code journal}: its keys listed as touched by {@code txn} and, with
   * {@code record}, its revisions recorded (else the chains carried over). One pass over the
   * entries for both (in ranges: {@link Bulk}), each node visited once.
   */
  void closeExecution(BatchJournal journal, Transaction txn, Instant now, boolean record) {
    Touched touched = txn.touched;
    long seq = txn.seq;
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

  /** Closes a batch that gets no revisions (the keys keep their recorded revisions). */
  BatchJournal unrecordedBatch() {
    BatchJournal j = graph.endBatch();
    history.carryOver(j);
    return j;
  }

  /**
   * Refreshes the values that failed (only their keys), unrecorded. A value the refresh finds
   * available again (a removal that failed, a call the southbound carried out after all) lets the
   * values waiting for it go ahead in this transaction, as after a Create: their operations are
   * recorded with the transaction's, and those that fail are refreshed in turn (a value fails once
   * per transaction: this ends). Returns the transaction's operations; their errors, in the same
   * order, are added to {@code errors}.
   */
  List<OpRecord> refreshFailed(Transaction txn, List<OpRecord> executed, List<KeyError> errors) {
    List<String> refreshed = new ArrayList<>();
    List<OpRecord> all = executed;
    List<OpRecord> round = executed;
    while (true) {
      List<String> failed = new ArrayList<>(); // usually stays empty: no set built
      PostProcessor.failures(graph, round, failed, errors);
      if (failed.isEmpty()) {
        break;
      }
      refreshed.addAll(failed);
      Set<String> keys = new TreeSet<>(failed);
      Set<String> read = refresher.refresh(keys, null, false);
      unread.dropAnswered(keys, read);
      for (String key : keys) {
        markRead(txn, key, read);
      }
      txn.touched.add(unrecordedBatch(), true);
      int before = txn.ops.size();
      followRefresh(new Walker(graph, registry, txn), keys, true);
      if (txn.ops.size() == before) {
        break;
      }
      round = CreateUpdateSteps.compress(new ArrayList<>(txn.ops.subList(before, txn.ops.size())));
      closeExecution(graph.endBatch(), txn, config.clock().instant(), true);
      List<OpRecord> joined = new ArrayList<>(all.size() + round.size());
      joined.addAll(all);
      joined.addAll(round);
      all = joined;
    }
    // a failed call whose key no Retrieve could read: unknown until a later transaction reads it
    unread.addBasesOf(txn.unread);
    txn.refreshedFailed = refreshed;
    return all;
  }

  /**
   * Visits the values depending on the refreshed base values {@code keys} or their derived ones
   * that the refresh found {@code available} (their waiting dependents go ahead) or not (their
   * available dependents are taken down).
   */
  private void followRefresh(Walker w, Set<String> keys, boolean available) {
    for (String key : keys) {
      Node n = graph.get(key);
      if (n == null) {
        continue;
      }
      if (n.value() != null && n.isAvailable() == available) {
        w.reevaluateDependents(n);
      }
      for (String dk : n.derivedKeys()) {
        Node dn = graph.get(dk);
        if (dn != null
            && dn.value() != null
            && dn.isAvailable() == available
            && key.equals(dn.derivedFrom())) {
          w.reevaluateDependents(dn);
        }
      }
    }
  }
}
