package io.kvscheduler.internal.engine;

import static io.kvscheduler.internal.engine.WalkFrame.AFTER_DEPENDENTS;
import static io.kvscheduler.internal.engine.WalkFrame.AFTER_DERIVED;
import static io.kvscheduler.internal.engine.WalkFrame.CREATE;
import static io.kvscheduler.internal.engine.WalkFrame.DELETE;
import static io.kvscheduler.internal.engine.WalkFrame.DELETE_AFTER_DEPENDENTS;
import static io.kvscheduler.internal.engine.WalkFrame.DELETE_AFTER_DERIVED;
import static io.kvscheduler.internal.engine.WalkFrame.DONE;
import static io.kvscheduler.internal.engine.WalkFrame.ENTER;
import static io.kvscheduler.internal.engine.WalkFrame.EXIT;
import static io.kvscheduler.internal.engine.WalkFrame.REEVALUATE;
import static io.kvscheduler.internal.engine.WalkFrame.REEVALUATED;
import static io.kvscheduler.internal.engine.WalkFrame.SEQUENCE;
import static io.kvscheduler.internal.engine.WalkFrame.SEQUENCE_RESUME;
import static io.kvscheduler.internal.engine.WalkFrame.UPDATE;
import static io.kvscheduler.internal.engine.WalkFrame.UPDATE_AFTER_OBSOLETE;
import static io.kvscheduler.internal.engine.WalkFrame.UPDATE_CALL;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies values to the graph and the southbound: the walk of one transaction.
 *
 * <p>{@link #applyTop} decides the operation for a key (CREATE when the node has no value or is
 * unavailable, UPDATE otherwise, DELETE for a null value; for dependency-driven visits CREATE when
 * an unavailable node became ready and DELETE when an available one is no longer ready), then:
 *
 * <ul>
 *   <li>CREATE: store the value, validate, compute dependencies and derived values; not ready ⇒
 *       PENDING (no call); else call Create, mark CONFIGURED (OBTAINED for SB values), record it,
 *       create the unavailable values that depended on it, then its derived values.
 *   <li>UPDATE: validate; equivalent values cause no call; re-creation (Delete + Create) when the
 *       descriptor demands it; obsolete derived values are deleted first, then Update is called,
 *       then derived values are applied; new dependencies not met ⇒ delete and keep PENDING.
 *   <li>DELETE: mark unavailable (dependents see it gone), delete derived values, un-configure
 *       dependents (they become PENDING), call Delete last and record it last. If a derived value
 *       or dependent fails to be deleted, the value itself is left in place.
 * </ul>
 *
 * In simulation no descriptor CRUD or Validate is called and every call is assumed to succeed; the
 * graph changes are rolled back by the caller.
 *
 * <h2>No recursion: a stack of frames</h2>
 *
 * A visit's children (its dependents, its derived values) are visits too, and a chain of
 * dependencies can be as long as the graph. So the walk keeps its own stack of {@link WalkFrame}s
 * instead of the thread's: one frame per visit in progress, reused for every visit at its depth. A
 * frame is a state machine over {@link WalkFrame#phase}:
 *
 * <pre>
 * ENTER ──(early end: cycle, nothing to do, broken earlier, unknown state)──────────────► DONE
 *   ├─► CREATE ─► dependents ─► AFTER_DEPENDENTS ─► derived ─► AFTER_DERIVED ─► EXIT ─► DONE
 *   ├─► UPDATE ─► obsolete derived ─► UPDATE_AFTER_OBSOLETE ─► UPDATE_CALL
 *   │      │                                                     ├─► dependents ─► AFTER_DEPENDENTS …
 *   │      └─(re-creation)─► DELETE … ─(no error)─► CREATE …     └─(not ready)─► DELETE …
 *   └─► DELETE ─► derived ─► DELETE_AFTER_DERIVED ─► dependents ─► DELETE_AFTER_DEPENDENTS ─► EXIT
 * </pre>
 *
 * "dependents" and "derived" run a sequence of child visits ({@link WalkFrame#SEQUENCE}): the frame
 * pushes the next child and waits in {@link WalkFrame#SEQUENCE_RESUME}; the child's error is folded
 * in (dependents: the first error; derived values: the last) and, once the sequence is done, the
 * frame continues with the phase it named, given the folded error. Errors of dependents of a value
 * created or updated are theirs: those steps ignore it. The cycle guard ({@link RecursionPath})
 * holds the keys of the frames on the stack: a key is pushed on ENTER and popped on the way to
 * DONE.
 *
 * <p>The descriptor's Create, Update and Delete of the walk go through {@link #callCreate}, {@link
 * #callUpdate} and {@link #callDelete}. Readiness is decided by {@link Readiness}, derived values
 * by {@link Derivation}, status marks by {@link StatusMarks}.
 */
final class Walker {
  private static final Logger LOG = LoggerFactory.getLogger(Walker.class);

  private final Graph graph;
  private final Registry registry;
  private final TxnContext txn;
  private final Derivation derivation;
  private final StatusMarks marks;

  /** The frames of the visits in progress, {@code frames[depth - 1]} on top; reused. */
  private WalkFrame[] frames = new WalkFrame[8];

  private int depth;

  Walker(Graph graph, Registry registry, TxnContext txn) {
    this.graph = graph;
    this.registry = registry;
    this.txn = txn;
    this.derivation = new Derivation(graph);
    this.marks = new StatusMarks(graph, registry, txn);
  }

  /** Arguments of one visit. */
  record Args(
      ValueToApply kv, String baseKey, boolean derived, boolean depUpdate, Set<String> recreating) {
    Args withRecreating(Set<String> r) {
      return new Args(kv, baseKey, derived, depUpdate, r);
    }
  }

  /** Applies a top-level value of the transaction. Returns the error of the value, or null. */
  Throwable applyTop(ValueToApply kv) {
    Node n = graph.get(kv.key());
    if (txn.isRetry() && n != null && n.isDerived()) {
      // a derived value retried alone (settled after a late southbound answer for it): applied
      // as a value derived from its base
      return apply(new Args(kv, n.derivedFrom, true, false, null));
    }
    if (changesDerived(kv, n)) {
      if (txn.isNB()) {
        String msg =
            (kv.value() == null ? "removal" : "value")
                + " ignored: the key holds a"
                + " value derived from "
                + n.derivedFrom
                + ", which only its base value sets";
        txn.ignored.add(
            new KeyError(
                kv.key(),
                kv.value() == null ? TxnOperation.DELETE : TxnOperation.UPDATE,
                msg,
                new ContractException(kv.key() + ": " + msg)));
      }
      return null;
    }
    if (txn.isNB() && kv.value() != null) {
      DescriptorHandle handle = n != null ? registry.forNode(n) : registry.forKey(kv.key());
      if (handle != null && handle.d.derivedOnly()) {
        // no base value derives the key (else the check above refused it): still, only base
        // values set keys of this descriptor
        String msg =
            "value ignored: descriptor "
                + handle.name
                + " describes only derived values,"
                + " which their base values set";
        LOG.warn(
            "value of {} ignored: descriptor {} describes only derived values",
            kv.key(),
            handle.name);
        txn.ignored.add(
            new KeyError(
                kv.key(),
                n == null || n.value == null ? TxnOperation.CREATE : TxnOperation.UPDATE,
                msg,
                new ContractException(kv.key() + ": " + msg)));
        return null;
      }
    }
    return apply(new Args(kv, kv.key(), false, false, null));
  }

  /**
   * True when {@code kv}, a pair of a transaction or notification, would set or remove a derived
   * value ({@code n}: the key's node now, or null): derived values belong to their base value, so
   * the pair is ignored, with a warning, as the reference does. Checked when the pair is applied: a
   * base removed earlier in the same transaction has taken its derived values with it, and the key
   * is then free for a value of its own.
   */
  private static boolean changesDerived(ValueToApply kv, Node n) {
    if (n == null || !n.isDerived()) {
      return false;
    }
    LOG.warn(
        "{} of {} ignored: it is a value derived from {}, which only its base value sets",
        kv.value() == null ? "removal" : "value",
        kv.key(),
        n.derivedFrom);
    return true;
  }

  private Throwable apply(Args a) {
    push().startVisit(a);
    return drive();
  }

  /**
   * After a refresh found {@code node} available (a failed removal that left the object in place, a
   * failed call the southbound carried out after all): the values waiting for it are visited and
   * created when ready, as after a Create. Found unavailable (a removal the southbound carried out
   * after all): the available values depending on it are taken down. Their errors are theirs.
   */
  void reevaluateDependents(Node node) {
    ValueToApply kv = new ValueToApply(node.key, node.value, node.origin(), false, null);
    push().startReevaluate(new Args(kv, node.baseKey(), node.isDerived(), true, null), node);
    drive();
  }

  // ------------------------------------------------------------ the frame stack

  private WalkFrame push() {
    if (depth == frames.length) {
      frames = Arrays.copyOf(frames, depth * 2);
    }
    WalkFrame f = frames[depth];
    if (f == null) {
      f = new WalkFrame();
      frames[depth] = f;
    }
    depth++;
    return f;
  }

  /**
   * Runs the frames on the stack until it is empty; the result of the bottom frame. A frame's step
   * either pushes a child (run next, its result handed back to the frame) or ends the frame.
   */
  private Throwable drive() {
    Throwable returned = null;
    try {
      while (depth > 0) {
        WalkFrame f = frames[depth - 1];
        if (step(f, returned)) {
          returned = null;
          continue;
        }
        returned = f.result;
        f.clear();
        depth--;
      }
      return returned;
    } catch (RuntimeException | Error e) {
      // an internal error: the keys of the frames left are taken off the path, innermost first
      while (depth > 0) {
        WalkFrame f = frames[--depth];
        if (f.onPath) {
          txn.branch.pop();
        }
        f.clear();
      }
      throw e;
    }
  }

  /**
   * Runs {@code f} from its phase, {@code carried} being the result of the child that returned to
   * it (or null). True when it pushed a child; false when it is done ({@link WalkFrame#result}).
   */
  private boolean step(WalkFrame f, Throwable carried) {
    while (true) {
      switch (f.phase) {
        case ENTER -> enter(f);
        case CREATE -> create(f);
        case AFTER_DEPENDENTS -> startDerived(f, f.relations.derived(), true, AFTER_DERIVED);
        case AFTER_DERIVED -> endOperation(f, carried);
        case UPDATE -> update(f);
        case UPDATE_AFTER_OBSOLETE -> afterObsolete(f, carried);
        case UPDATE_CALL -> updateCall(f);
        case DELETE -> delete(f);
        case DELETE_AFTER_DERIVED -> {
          if (carried != null) {
            keepUndeleted(f, carried);
          } else {
            startDependents(f, f.node, false, DELETE_AFTER_DEPENDENTS);
          }
        }
        case DELETE_AFTER_DEPENDENTS -> {
          if (carried != null) {
            keepUndeleted(f, carried);
          } else {
            deleteCall(f);
          }
        }
        case EXIT -> exit(f);
        case REEVALUATE -> {
          if (!txn.branch.push(f.node.key)) {
            finish(f, null);
          } else {
            f.onPath = true;
            startDependents(f, f.node, f.node.isAvailable(), REEVALUATED);
          }
        }
        case REEVALUATED -> leave(f, null);
        case SEQUENCE_RESUME -> {
          if (carried != null && (f.seqError == null || !f.seqDependents)) {
            f.seqError = carried; // dependents: the first error; derived values: the last
          }
          f.phase = SEQUENCE;
        }
        case SEQUENCE -> {
          if (nextChild(f)) {
            return true;
          }
          carried = f.seqError;
          f.phase = f.seqThen;
        }
        case DONE -> {
          return false;
        }
        default -> throw new IllegalStateException("walk frame in unknown phase " + f.phase);
      }
    }
  }

  /** Ends {@code f} with {@code result}. */
  private static void finish(WalkFrame f, Throwable result) {
    f.result = result;
    f.phase = DONE;
  }

  /** Takes the frame's key off the recursion path and ends the frame with {@code result}. */
  private void leave(WalkFrame f, Throwable result) {
    if (f.onPath) {
      txn.branch.pop();
      f.onPath = false;
    }
    finish(f, result);
  }

  /** The operation step of the visit is done with {@code err}: the visit's exit follows. */
  private static void endOperation(WalkFrame f, Throwable err) {
    f.opResult = err;
    f.phase = EXIT;
  }

  // ------------------------------------------------------------ sequences of child visits

  /** Starts visiting the dependents of {@code node} whose availability may change. */
  private void startDependents(WalkFrame f, Node node, boolean forUnavailable, int then) {
    f.seqDependents = true;
    f.seqFlag = forUnavailable;
    f.seqIndex = 0;
    f.seqSize = 0;
    f.seqError = null;
    f.seqThen = then;
    f.phase = SEQUENCE;
    // dependentsOf is sorted by key and has no duplicates: visited in that order
    Collection<String> dependents = graph.dependentsOf(node.key);
    if (dependents.isEmpty()) {
      return;
    }
    if (dependents.size() == 1 && dependents instanceof List<String> single) {
      // the usual single dependent, in an immutable list: no collection of visits
      Node dn = graph.get(single.get(0));
      if (needsDepUpdate(dn, forUnavailable)) {
        f.seqSingle = dn;
        f.seqSize = 1;
      }
      return;
    }
    List<Node> visits = null;
    for (String dk : dependents) {
      Node dn = graph.get(dk);
      if (!needsDepUpdate(dn, forUnavailable)) {
        continue;
      }
      if (visits == null) {
        visits = new ArrayList<>(dependents.size());
      }
      visits.add(dn);
    }
    if (visits != null) {
      f.seqNodes = visits;
      f.seqSize = visits.size();
    }
  }

  /**
   * Starts applying derived values of the frame's base, given in key order (every caller builds the
   * list from a sorted one: the descriptor's derived values as {@link
   * DescriptorHandle#derivedSorted} returns them, or a node's derived keys, which are kept sorted).
   * {@code check}: each is checked by {@link Derivation#validDerived} when its turn comes.
   */
  private static void startDerived(
      WalkFrame f, List<ValueToApply> sorted, boolean check, int then) {
    assert ValueToApply.isSorted(sorted) : "derived values out of key order";
    f.seqDependents = false;
    f.seqFlag = check;
    f.seqValues = sorted;
    f.seqIndex = 0;
    f.seqSize = sorted.size();
    f.seqError = null;
    f.seqThen = then;
    f.phase = SEQUENCE;
  }

  /** Pushes the next child visit of the running sequence; false when none is left. */
  private boolean nextChild(WalkFrame f) {
    while (f.seqIndex < f.seqSize) {
      int i = f.seqIndex++;
      Args child = f.seqDependents ? dependentVisit(f, i) : derivedVisit(f, i);
      if (child != null) {
        f.phase = SEQUENCE_RESUME;
        push().startVisit(child);
        return true;
      }
    }
    return false;
  }

  /** True when dependent {@code dn} may change availability with its dependency. */
  private static boolean needsDepUpdate(Node dn, boolean forUnavailable) {
    if (dn == null || dn.value == null || dn.origin() != ValueOrigin.FROM_NB) {
      return false;
    }
    if (forUnavailable == dn.isAvailable()) {
      return false;
    }
    // INVALID and UNIMPLEMENTED: only a new NB value can fix these
    return dn.state != ValueState.INVALID && dn.state != ValueState.UNIMPLEMENTED;
  }

  /** The visit of the {@code i}th dependent after its dependency changed availability, or null. */
  private Args dependentVisit(WalkFrame f, int i) {
    Node dn = f.seqSingle != null ? f.seqSingle : f.seqNodes.get(i);
    Object value = dn.lastUpdate != null ? dn.lastUpdate.value() : dn.value;
    if (value == null) {
      // its deletion was requested but did not happen (a derived value failed to go): while
      // it is still available it must be taken down when what it needs goes; never re-created
      // (visited with its null intent: the walk deletes it in pending mode)
      Node cur = graph.get(dn.key);
      if (f.seqFlag || cur == null || cur.value == null || !cur.isAvailable()) {
        return null;
      }
    }
    Args a = f.args;
    ValueToApply kv = new ValueToApply(dn.key, value, dn.origin(), a.kv.revert(), null);
    return new Args(kv, dn.baseKey(), dn.isDerived(), true, a.recreating);
  }

  /** The visit of the {@code i}th derived value of the frame's base, or null when skipped. */
  private Args derivedVisit(WalkFrame f, int i) {
    ValueToApply kv = f.seqValues.get(i);
    Args a = f.args;
    if (f.seqFlag && !derivation.validDerived(kv, graph.get(kv.key()), a.baseKey)) {
      return null;
    }
    return new Args(kv, a.baseKey, true, false, a.recreating);
  }

  // ------------------------------------------------------------ entering and leaving a visit

  /** ENTER: takes the key onto the path, decides the operation, then starts its step. */
  private void enter(WalkFrame f) {
    Args a = f.args;
    String key = a.kv.key();
    if (!txn.branch.push(key)) {
      finish(f, null); // already on the recursion path: a dependency cycle
      return;
    }
    f.onPath = true;
    // a visit other than a dependency update always gives the node a last update of this
    // transaction, which a node created by this transaction's refresh has not yet: its content
    // changes (see Graph.writeChanging)
    Node node = a.depUpdate ? graph.write(key) : graph.writeChanging(key);
    OpRecord op = preRecord(a, node);
    f.node = node;
    f.op = op;
    ValueState prevState = node.state;
    f.prevState = prevState;
    f.prevOp = node.lastOperation();
    f.prevErr = OpRecord.msg(node.error);
    f.prevDetails = Readiness.details(graph, node);
    Node.LastUpdate prevUpdate = node.lastUpdate;
    f.prevUpdate = prevUpdate;

    if (a.depUpdate) {
      op.op = depUpdateOperation(node);
      if (op.op == TxnOperation.UNDEFINED) {
        leave(f, null);
        return;
      }
    } else if (a.kv.value() == null) {
      op.op = TxnOperation.DELETE;
    } else if (node.value == null || !node.isAvailable()) {
      op.op = TxnOperation.CREATE;
    } else {
      op.op = TxnOperation.UPDATE;
    }
    boolean failedEarlier =
        prevUpdate != null
            && prevUpdate.seq() == txn.seq
            && (prevState == ValueState.FAILED || prevState == ValueState.RETRYING);
    if (node.held != null && failedEarlier) {
      // its call failed earlier in this transaction: what the southbound holds is unknown until
      // the refresh after the transaction (the failure may have left anything), so the walk goes
      // on as if nothing were there, as the reference does
      node.held = null;
    }
    if (node.held != null) {
      // the southbound still holds an object for the key: it is updated (or re-created), never
      // created a second time, and the operation starts from it
      if (op.op == TxnOperation.CREATE) {
        op.op = TxnOperation.UPDATE;
      }
      op.prevValue = node.held;
    }

    RetryOptions retry = null;
    if (txn.isNB() && !txn.inheritRetry) {
      retry = txn.nbRetry;
    } else if (prevUpdate != null) {
      retry = prevUpdate.retry();
    } else if (a.derived) {
      Node base = graph.get(a.baseKey);
      if (base != null && base.lastUpdate != null) {
        retry = base.lastUpdate.retry();
      }
    }
    node.lastUpdate = lastUpdate(prevUpdate, op.op, a.kv, retry);
    if (node.state == ValueState.RETRYING && retry == null) {
      // the pending retry is obsolete now (new last-update) and no new one can be
      // scheduled: a RETRYING state would never be retried (e.g. kept by an inherited failure)
      node.state = ValueState.FAILED;
    }

    // a value already broken by this transaction is not touched again, except by the revert
    // once a refresh has read it: until then what the southbound holds for it is unknown (even
    // whether a failed Create left an object that a removal would have to delete)
    if (failedEarlier && (!a.kv.revert() || txn.unread.contains(key))) {
      leave(f, node.error);
      return;
    }

    Throwable unknown = marks.unknownState(node);
    if (unknown != null) {
      // what the southbound holds is unknown: no call, and no status that would claim it
      op.newErr = unknown;
      op.newState = marks.markFailed(node, a.kv.revert(), unknown, true, op.op);
      txn.ops.add(op);
      txn.statusChanged(a.baseKey);
      leave(f, unknown);
      return;
    }

    if (prevState == ValueState.RETRYING) {
      txn.sawRetrying = true;
    }
    switch (op.op) {
      case DELETE -> startDelete(f, a.depUpdate, false, null);
      case CREATE -> f.phase = CREATE;
      case UPDATE -> f.phase = UPDATE;
      default -> endOperation(f, null);
    }
  }

  /** EXIT: settles what the operation left and notes a status change, then leaves the path. */
  private void exit(WalkFrame f) {
    Args a = f.args;
    String key = a.kv.key();
    if (!a.derived) {
      settleObsoleteRetries(graph.get(key), a.baseKey);
    }
    Node now = graph.get(key);
    boolean neverThere =
        f.prevState == ValueState.NONEXISTENT
            && f.prevUpdate == null
            && (now == null || now.value == null); // e.g. the removal of an unknown key
    if (!neverThere
        && (f.prevUpdate == null
            || now == null
            || now.value == null
            || f.prevState != now.state
            || f.prevOp != now.lastOperation()
            || !f.prevErr.equals(OpRecord.msg(now.error))
            || !f.prevDetails.equals(Readiness.details(graph, now)))) {
      txn.statusChanged(a.baseKey);
    }
    leave(f, f.opResult);
  }

  /**
   * A retry is planned per base value and dropped as obsolete once the base has a newer last
   * update. {@code base} now has one from this transaction, so a RETRYING derived value that this
   * visit did not apply again (an INVALID or PENDING base, a failed Create or Delete, an abandoned
   * removal) will never be retried: it is FAILED, keeping its error. Values this transaction
   * applied are planned again after it (or failed) by {@link RetryPlanner}.
   */
  private void settleObsoleteRetries(Node base, String baseKey) {
    if (base == null
        || base.derivedKeys.isEmpty()
        || base.lastUpdate == null
        || base.lastUpdate.seq() != txn.seq) {
      return;
    }
    for (String dk : base.derivedKeys) {
      Node dn = graph.get(dk);
      if (dn != null
          && dn.state == ValueState.RETRYING
          && baseKey.equals(dn.derivedFrom)
          && (dn.lastUpdate == null || dn.lastUpdate.seq() != txn.seq)) {
        graph.write(dk).state = ValueState.FAILED;
        txn.statusChanged(baseKey);
      }
    }
  }

  /**
   * The key's last update after this visit: {@code prev} itself when this transaction already asked
   * the same (a value visited again, e.g. created once its dependency appeared), so a second visit
   * allocates nothing.
   */
  private Node.LastUpdate lastUpdate(
      Node.LastUpdate prev, TxnOperation op, ValueToApply kv, RetryOptions retry) {
    if (prev != null
        && prev.seq() == txn.seq
        && prev.op() == op
        && prev.value() == kv.value()
        && prev.revert() == kv.revert()
        && prev.retry() == retry) {
      return prev;
    }
    return new Node.LastUpdate(txn.seq, op, kv.value(), kv.revert(), retry);
  }

  private TxnOperation depUpdateOperation(Node node) {
    boolean ready = Readiness.isReady(graph, node, false);
    if (!node.isAvailable()) {
      return ready ? TxnOperation.CREATE : TxnOperation.UNDEFINED;
    }
    return ready ? TxnOperation.UNDEFINED : TxnOperation.DELETE;
  }

  private OpRecord preRecord(Args a, Node node) {
    OpRecord op = new OpRecord();
    op.node = node;
    op.key = a.kv.key();
    op.baseKey = a.baseKey;
    op.prevValue = node.state != ValueState.REMOVED ? node.value : null;
    op.newValue = a.kv.value();
    op.prevState = node.state;
    op.prevErr = node.error;
    op.derived = a.derived;
    op.property = a.derived && registry.forNode(node) == null;
    op.revert = a.kv.revert();
    op.retry = txn.isRetry() || txn.type == TxnType.RETRY_UNIMPL_OPS;
    op.recreate = a.recreating != null && a.recreating.contains(a.kv.key());
    return op;
  }

  // ---------------------------------------------------------------- CREATE

  /** CREATE: up to the Create call and its record; then the dependents waiting for the value. */
  private void create(WalkFrame f) {
    Node node = f.node;
    OpRecord op = f.op;
    Args a = f.args;
    String key = a.kv.key();
    node.value = a.kv.value();
    DescriptorHandle handle = registry.forNode(node);
    if (handle != null) {
      node.descriptor = handle.name;
      node.label = handle.label(key);
    } else {
      node.descriptor = null;
      node.label = key;
    }
    if (a.derived) {
      node.derivedFrom = a.baseKey;
    }

    if (!a.kv.fromSB() && !a.derived && handle == null) {
      if (node.state != ValueState.UNIMPLEMENTED) { // else already known: nothing to record
        node.unavailable = true;
        StatusMarks.clearError(node);
        op.noop = true;
        marks.setState(node, op, ValueState.UNIMPLEMENTED);
        txn.ops.add(op);
      }
      endOperation(f, null);
      return;
    }
    if (a.derived && handle == null) {
      op.property = true;
    }

    if (!txn.simulate && !a.kv.fromSB() && handle != null) {
      Throwable invalid = handle.validate(key, node.value);
      if (invalid != null) {
        endOperation(f, marks.markInvalid(node, op, invalid));
        return;
      }
    }

    Derivation.Relations rel = derivation.relations(node, handle, a.kv, a.derived);
    if (rel.error() != null) {
      endOperation(f, marks.markInvalid(node, op, rel.error()));
      return;
    }
    graph.setDeps(node, rel.deps());
    node.derivedKeys = rel.derivedKeys();

    if (!Readiness.isReady(graph, node, a.kv.fromSB())) {
      node.unavailable = true;
      StatusMarks.clearError(node);
      op.noop = true;
      marks.setState(node, op, ValueState.PENDING);
      txn.ops.add(op);
      endOperation(f, null);
      return;
    }

    if (!txn.simulate && !op.property) {
      Object metadata;
      if (!a.kv.fromSB()) {
        DescriptorHandle.Result<Object> r = callCreate(handle, key, node.value);
        if (r.failed()) {
          node.unavailable = true;
          op.newErr = r.error();
          op.newState =
              marks.markFailed(
                  node,
                  a.kv.revert(),
                  r.error(),
                  handle.isRetriable(r.error()),
                  TxnOperation.CREATE);
          txn.ops.add(op);
          endOperation(f, r.error());
          return;
        }
        metadata = r.value();
      } else {
        metadata = a.kv.metadata();
      }
      if (!node.isDerived() && handle != null && handle.metadataMap != null) {
        setMetadata(node, handle, metadata);
      } else if (!node.isDerived() && handle == null) {
        node.metadata = metadata; // an SB value no descriptor selects: kept as reported
      }
    }

    StatusMarks.clearError(node);
    node.unavailable = false;
    node.held = null;
    marks.setState(node, op, a.kv.fromSB() ? ValueState.OBTAINED : ValueState.CONFIGURED);
    txn.ops.add(op);

    // errors of dependents are theirs, not this value's (AFTER_DEPENDENTS ignores them); then
    // the derived values, whose last error is the value's
    f.relations = rel;
    startDependents(f, node, true, AFTER_DEPENDENTS);
  }

  // ---------------------------------------------------------------- UPDATE

  /** UPDATE: validation, equivalence, re-creation; then obsolete derived values are deleted. */
  private void update(WalkFrame f) {
    Node node = f.node;
    OpRecord op = f.op;
    Args a = f.args;
    String key = a.kv.key();
    DescriptorHandle handle = registry.forNode(node);
    if (node.held != null) {
      node.value = node.held; // what the southbound holds: the update starts from it
    }
    if (!txn.simulate && !a.kv.fromSB() && handle != null) {
      Throwable invalid = handle.validate(key, a.kv.value());
      if (invalid != null) {
        // nothing is called: the southbound keeps what it holds, remembered for the next
        // operation (a removal deletes it, a valid value updates it)
        node.held = node.value;
        node.value = a.kv.value();
        endOperation(f, marks.markInvalid(node, op, invalid));
        return;
      }
    }
    boolean equivalent =
        handle != null
            ? handle.equivalent(key, node.value, a.kv.value())
            : DescriptorHandle.equalValues(key, node.value, a.kv.value());
    if (equivalent && handle != null) {
      handle.rememberEqual(node, node.value, a.kv.value());
    }
    boolean recreate =
        !equivalent
            && !a.kv.fromSB()
            && handle != null
            && handle.updateWithRecreate(key, node.value, a.kv.value(), node.metadata);

    if (recreate) {
      Set<String> recreating = new HashSet<>(node.derivedKeys);
      recreating.add(key);
      Args ra = a.withRecreating(recreating);
      OpRecord del = preRecord(ra, node);
      del.op = TxnOperation.DELETE;
      del.newValue = null;
      f.args = ra;
      f.op = del;
      startDelete(f, false, true, null);
      f.createAfterDelete = true;
      return;
    }

    f.handle = handle;
    f.equivalent = equivalent;
    f.prevValue = node.value;
    // an unavailable value whose object the southbound holds: once updated it is available
    // again, and what waits for it goes ahead, as after a Create
    f.wasUnavailable = node.unavailable;
    Derivation.Relations rel = derivation.relations(node, handle, a.kv, a.derived);
    if (rel.error() != null) {
      node.held = node.value;
      node.value = a.kv.value();
      endOperation(f, marks.markInvalid(node, op, rel.error()));
      return;
    }
    f.relations = rel;
    boolean derivedChanged = !Derivation.sameKeys(rel.derivedKeys(), node.derivedKeys);
    if (!equivalent || derivedChanged) {
      f.oldDerived = node.derivedKeys;
      f.oldDeps = node.deps();
      graph.setDeps(node, rel.deps());
      node.derivedKeys = rel.derivedKeys();
      List<ValueToApply> obsolete = new ArrayList<>();
      // membership by hash when the lists are long (a base with thousands of derived values)
      Collection<String> kept =
          rel.derivedKeys().size() > 16 ? new HashSet<>(rel.derivedKeys()) : rel.derivedKeys();
      for (String dk : f.oldDerived) {
        if (!kept.contains(dk)) {
          obsolete.add(new ValueToApply(dk, null, a.kv.origin(), a.kv.revert(), null));
        }
      }
      startDerived(f, obsolete, false, UPDATE_AFTER_OBSOLETE);
      return;
    }
    f.phase = UPDATE_CALL;
  }

  /** UPDATE_AFTER_OBSOLETE: an obsolete derived value that could not go stops the update. */
  private void afterObsolete(WalkFrame f, Throwable obsoleteError) {
    if (obsoleteError != null) {
      // the Update was not called: keep the value that is in the SB
      graph.setDeps(f.node, f.oldDeps);
      f.node.derivedKeys = f.oldDerived;
      endOperation(f, obsoleteError);
      return;
    }
    f.phase = UPDATE_CALL;
  }

  /** UPDATE_CALL: the Update call and its record; then the dependents, when they may go ahead. */
  private void updateCall(WalkFrame f) {
    Node node = f.node;
    OpRecord op = f.op;
    Args a = f.args;
    String key = a.kv.key();
    DescriptorHandle handle = f.handle;
    boolean equivalent = f.equivalent;
    // a failed value the southbound holds as asked after all (a refresh found it) is settled
    // here: with dependencies unmet it is taken down, as any value that loses them
    boolean settles =
        equivalent && (op.prevState == ValueState.FAILED || op.prevState == ValueState.RETRYING);
    if ((!equivalent || node.unavailable || settles)
        && !Readiness.isReady(graph, node, a.kv.fromSB())) {
      // the new value waits for its dependencies: take the old one down, keep the new as PENDING
      // (also an equal value whose object a failed Delete left behind: it goes now)
      startDelete(f, true, false, a.kv.value());
      return;
    }
    node.value = a.kv.value();

    if (!txn.simulate && !equivalent && handle != null) {
      Object metadata;
      if (!a.kv.fromSB()) {
        DescriptorHandle.Result<Object> r =
            callUpdate(handle, key, f.prevValue, node.value, node.metadata);
        if (r.failed()) {
          if (node.unavailable) {
            node.held = f.prevValue; // still there (an available value keeps its own value)
          }
          op.newErr = r.error();
          op.newState =
              marks.markFailed(
                  node,
                  a.kv.revert(),
                  r.error(),
                  handle.isRetriable(r.error()),
                  TxnOperation.UPDATE);
          txn.ops.add(op);
          endOperation(f, r.error());
          return;
        }
        metadata = r.value();
      } else {
        metadata = a.kv.metadata();
      }
      if (!node.isDerived() && handle.metadataMap != null) {
        setMetadata(node, handle, metadata);
      }
    }

    StatusMarks.clearError(node);
    node.unavailable = false;
    node.held = null;
    marks.setState(node, op, a.kv.fromSB() ? ValueState.OBTAINED : ValueState.CONFIGURED);
    if (!equivalent) {
      txn.ops.add(op);
    } else if (op.prevState != op.newState
        && !(op.prevState == ValueState.DISCOVERED && op.newState == ValueState.CONFIGURED)) {
      op.noop = true;
      txn.ops.add(op);
    }
    if (f.wasUnavailable
        || equivalent
            && (op.prevState == ValueState.FAILED || op.prevState == ValueState.RETRYING)) {
      // a failed operation that the southbound carried out after all (the refresh after the
      // failure found the value): nothing was created in this walk, yet the value is available
      // again, so what waits for it goes ahead now, as after a Create (their errors are theirs)
      startDependents(f, node, true, AFTER_DEPENDENTS);
    } else {
      f.phase = AFTER_DEPENDENTS;
    }
  }

  // ---------------------------------------------------------------- DELETE

  /**
   * Starts deleting the value of the frame's node.
   *
   * @param pending the value is taken down because of its dependencies (ends PENDING)
   * @param recreate the Delete half of a re-creation (derived node stays in the graph)
   * @param pendingValue for an update waiting on new dependencies: the new value to keep
   */
  private static void startDelete(
      WalkFrame f, boolean pending, boolean recreate, Object pendingValue) {
    f.pending = pending;
    f.recreate = recreate;
    f.pendingValue = pendingValue;
    f.phase = DELETE;
  }

  /** DELETE: marks the value unavailable, then deletes its derived values (of a base value). */
  private void delete(WalkFrame f) {
    Node node = f.node;
    Args a = f.args;
    if (node.value == null) {
      graph.remove(node.key);
      endDelete(f, null);
      return;
    }
    if (!node.isAvailable() && node.held == null) {
      f.op.noop = true;
      endDelete(f, finishDelete(f, null));
      return;
    }
    // an available value, or an unavailable one whose object the southbound still holds
    f.object = node.held != null ? node.held : node.value;
    f.before = node.state;
    f.wasUnavailable = node.unavailable;
    node.unavailable = true;
    if (!f.pending) {
      node.state = ValueState.REMOVED;
    }
    if (node.isDerived()) {
      startDependents(f, node, false, DELETE_AFTER_DEPENDENTS);
      return;
    }
    List<ValueToApply> dels = new ArrayList<>();
    for (String dk : node.derivedKeys) {
      Node dn = graph.get(dk);
      if (dn != null && dn.value != null) {
        dels.add(new ValueToApply(dk, null, a.kv.origin(), a.kv.revert(), null));
      }
    }
    startDerived(f, dels, false, DELETE_AFTER_DERIVED);
  }

  /** A derived value or a dependent could not be removed: the value is kept as it was. */
  private void keepUndeleted(WalkFrame f, Throwable inherited) {
    f.node.unavailable = f.wasUnavailable;
    f.node.state = f.before;
    endDelete(f, inherited);
  }

  /** DELETE_AFTER_DEPENDENTS with nothing left depending on the value: the Delete call. */
  private void deleteCall(WalkFrame f) {
    Node node = f.node;
    Throwable err = null;
    DescriptorHandle handle = node.descriptor == null ? null : registry.forNode(node);
    if (!txn.simulate && handle != null) {
      if (!f.args.kv.fromSB()) {
        err = callDelete(handle, node.key, f.object, node.metadata);
      }
      if (err == null && !node.isDerived() && handle.metadataMap != null) {
        setMetadata(node, handle, null);
      }
    }
    endDelete(f, finishDelete(f, err));
  }

  private Throwable finishDelete(WalkFrame f, Throwable err) {
    Node node = f.node;
    OpRecord op = f.op;
    if (err == null) {
      StatusMarks.clearError(node);
      node.held = null;
      if (f.pendingValue != null) {
        node.value = f.pendingValue;
      }
      if (f.pending) {
        marks.setState(node, op, ValueState.PENDING);
      } else if (f.args.derived && !f.recreate) {
        op.newState = ValueState.REMOVED;
        graph.remove(node.key);
      } else {
        marks.setState(node, op, ValueState.REMOVED);
      }
    } else {
      // the object is still in the southbound: the next operation on the key starts from it
      node.held = node.held != null ? node.held : node.value;
      DescriptorHandle handle = registry.forNode(node);
      op.newErr = err;
      op.newState =
          marks.markFailed(
              node,
              f.args.kv.revert(),
              err,
              handle == null || handle.isRetriable(err),
              TxnOperation.DELETE);
    }
    txn.ops.add(op);
    return err;
  }

  /**
   * The delete ended with {@code err}: of a re-creation, the Create follows when it succeeded;
   * otherwise the operation step ends with it.
   */
  private void endDelete(WalkFrame f, Throwable err) {
    if (!f.createAfterDelete || err != null) {
      endOperation(f, err);
      return;
    }
    f.createAfterDelete = false;
    Node node = graph.write(f.args.kv.key());
    OpRecord create = preRecord(f.args, node);
    create.op = TxnOperation.CREATE;
    create.prevValue = null;
    f.node = node;
    f.op = create;
    f.phase = CREATE;
  }

  // ---------------------------------------------------------------- the descriptor's calls

  /** The descriptor's Create of the walk. */
  private DescriptorHandle.Result<Object> callCreate(
      DescriptorHandle handle, String key, Object value) {
    return handle.create(key, value);
  }

  /** The descriptor's Update of the walk. */
  private DescriptorHandle.Result<Object> callUpdate(
      DescriptorHandle handle, String key, Object oldValue, Object newValue, Object metadata) {
    return handle.update(key, oldValue, newValue, metadata);
  }

  /** The descriptor's Delete of the walk: its error, or null. */
  private Throwable callDelete(DescriptorHandle handle, String key, Object value, Object metadata) {
    return handle.delete(key, value, metadata);
  }

  private void setMetadata(Node node, DescriptorHandle handle, Object metadata) {
    node.metadata = metadata;
    if (!txn.simulate && handle.metadataMap != null) {
      handle.metadataMap.put(node.label, metadata);
    }
  }
}
