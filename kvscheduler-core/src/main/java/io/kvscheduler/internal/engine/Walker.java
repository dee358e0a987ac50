package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.RecursionPath;
import io.kvscheduler.internal.engine.calls.ContractException;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.KeyConflictException;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.SbCall;
import io.kvscheduler.internal.engine.calls.SbCallChain;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Readiness;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.util.Arrays;
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
 * "dependents" and "derived" run a sequence of child visits ({@link WalkPhase#SEQUENCE}): the frame
 * pushes the next child and waits in {@link WalkPhase#SEQUENCE_RESUME}; the child's error is folded
 * in (dependents: the first error; derived values: the last) and, once the sequence is done, the
 * frame continues with the phase it named, given the folded error. Errors of dependents of a value
 * created or updated are theirs: those steps ignore it. The cycle guard ({@link RecursionPath})
 * holds the keys of the frames on the stack: a key is pushed on ENTER and popped on the way to
 * DONE.
 *
 * <p>The steps are split by job: entering and leaving a visit in {@link VisitSteps}, the steps of
 * CREATE and UPDATE in {@link CreateUpdateSteps}, those of DELETE in {@link DeleteSteps}, the
 * descriptor's calls in the pass's chain of links ({@link SbCallChain}, one {@link SbCall} each),
 * readiness in {@link Readiness}, derived values in {@link Derivation} and {@link DerivedVisits},
 * status marks in {@link StatusMarks}.
 */
final class Walker {
  private static final Logger LOG = LoggerFactory.getLogger(Walker.class);

  private final Graph graph;
  private final Registry registry;
  private final Transaction txn;
  private final DerivedVisits derivedVisits;
  private final VisitSteps visits;
  private final CreateUpdateSteps createUpdate;
  private final DeleteSteps deletes;

  /** The frames of the visits in progress, {@code frames[depth - 1]} on top; reused. */
  private WalkFrame[] frames = new WalkFrame[8];

  private int depth;

  Walker(Graph graph, Registry registry, Transaction txn) {
    this.graph = graph;
    this.registry = registry;
    this.txn = txn;
    Derivation derivation = new Derivation(graph, txn);
    this.derivedVisits = new DerivedVisits(graph, txn, derivation);
    StatusMarks marks = new StatusMarks(graph, registry, txn);
    this.visits = new VisitSteps(graph, registry, txn, marks);
    this.createUpdate = new CreateUpdateSteps(graph, registry, txn, derivation, marks, visits);
    this.deletes = new DeleteSteps(graph, registry, txn, marks, visits);
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
      return apply(new Args(kv, n.derivedFrom(), true, false, null));
    }
    if (changesDerived(kv, n)) {
      if (txn.isNB()) {
        String msg =
            (kv.value() == null ? "removal" : "value")
                + " ignored: the key holds a"
                + " value derived from "
                + n.derivedFrom()
                + ", which only its base value sets";
        txn.ignored.add(
            new KeyError(
                kv.key(),
                kv.value() == null ? TxnOperation.DELETE : TxnOperation.UPDATE,
                msg,
                new KeyConflictException(kv.key() + ": " + msg),
                KeyError.Kind.CONFLICT));
      }
      return null;
    }
    if (txn.isNB() && kv.value() != null) {
      DescriptorHandle handle = n != null ? registry.forNode(n) : registry.forKey(kv.key());
      if (handle != null && handle.descriptor.derivedOnly()) {
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
                n == null || n.value() == null ? TxnOperation.CREATE : TxnOperation.UPDATE,
                msg,
                new ContractException(kv.key() + ": " + msg),
                KeyError.Kind.CONTRACT));
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
        n.derivedFrom());
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
    ValueToApply kv = new ValueToApply(node.key(), node.value(), node.origin(), false, null);
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
        case ENTER -> visits.enter(f);
        case CREATE -> createUpdate.create(f);
        case AFTER_DEPENDENTS -> derivedVisits.start(f);
        case AFTER_DERIVED -> f.endOperation(carried);
        case UPDATE -> createUpdate.update(f);
        case UPDATE_AFTER_OBSOLETE -> createUpdate.afterObsolete(f, carried);
        case UPDATE_CALL -> createUpdate.updateCall(f);
        case DELETE -> deletes.delete(f);
        case DELETE_AFTER_DERIVED -> {
          if (carried != null) {
            deletes.keepUndeleted(f, carried);
          } else {
            f.startDependents(graph, f.node, false, WalkPhase.DELETE_AFTER_DEPENDENTS);
          }
        }
        case DELETE_AFTER_DEPENDENTS -> {
          if (carried != null) {
            deletes.keepUndeleted(f, carried);
          } else {
            deletes.deleteCall(f);
          }
        }
        case EXIT -> visits.exit(f);
        case REEVALUATE -> {
          if (!txn.branch.push(f.node.key())) {
            f.finish(null);
          } else {
            f.onPath = true;
            txn.pass.enterVisit();
            f.startDependents(graph, f.node, f.node.isAvailable(), WalkPhase.REEVALUATED);
          }
        }
        case REEVALUATED -> visits.leave(f, null);
        case SEQUENCE_RESUME -> {
          if (carried != null && (f.children.error == null || !f.children.dependents)) {
            f.children.error = carried; // dependents: the first error; derived values: the last
          }
          f.phase = WalkPhase.SEQUENCE;
        }
        case SEQUENCE -> {
          txn.pass.startGroup(); // the children: siblings that do not wait for each other
          if (nextChild(f)) {
            return true;
          }
          txn.pass.endGroup();
          carried = f.children.error;
          f.phase = f.children.then;
        }
        case DONE -> {
          return false;
        }
        default -> throw new IllegalStateException("walk frame in unknown phase " + f.phase);
      }
    }
  }

  /** Pushes the next child visit of the running sequence; false when none is left. */
  private boolean nextChild(WalkFrame f) {
    while (f.children.index < f.children.size) {
      int i = f.children.index++;
      Args child = f.children.dependents ? dependentVisit(f, i) : derivedVisits.visit(f, i);
      if (child != null) {
        f.phase = WalkPhase.SEQUENCE_RESUME;
        push().startVisit(child);
        return true;
      }
    }
    return false;
  }

  /**
   * What is asked for {@code n}, as a dependent visit re-applies it (FailurePolicy rule F20): the
   * value of its last update; without one, a value obtained from the southbound is its own intent,
   * a derived value has one when its base has one, and a value found in the southbound that no
   * transaction asked for (DISCOVERED) has none (null), so it is never created.
   */
  private Object intent(Node n) {
    if (n.lastUpdate() != null) {
      return n.lastUpdate().value();
    }
    if (n.state() == ValueState.OBTAINED) {
      return n.value();
    }
    if (n.isDerived()) {
      Node base = graph.get(n.derivedFrom());
      return base != null && !base.isDerived() && intent(base) != null ? n.value() : null;
    }
    return null;
  }

  /** The visit of the {@code i}th dependent after its dependency changed availability, or null. */
  private Args dependentVisit(WalkFrame f, int i) {
    Node dn = f.children.single != null ? f.children.single : f.children.nodes.get(i);
    Object value = intent(dn);
    if (value == null) {
      // no intent: its deletion was requested but did not happen (a derived value failed to
      // go), or nobody asked for it (F20): while it is still available it must be taken down
      // when what it needs goes; never created (visited with its null intent: the walk deletes
      // it in pending mode, and its last update keeps no value a resync would re-apply)
      Node cur = graph.get(dn.key());
      if (f.children.forUnavailable || cur == null || cur.value() == null || !cur.isAvailable()) {
        return null;
      }
    }
    Args a = f.args;
    ValueToApply kv = new ValueToApply(dn.key(), value, dn.origin(), a.kv.revert(), null);
    return new Args(kv, dn.baseKey(), dn.isDerived(), true, a.recreating);
  }
}
