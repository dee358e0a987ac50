package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.SettledDerived;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * One frame of the walk's explicit stack: the visit of one key (or, at the root only, the visit of
 * the dependents of a refreshed value). The frame holds what every visit has (its arguments, node,
 * operation record and the state before it); the locals of an operation's steps are in the part for
 * that operation ({@link Update}, {@link Delete}), and the sequence of child visits the frame is
 * running in {@link Children}. {@link Walker} drives frames; a frame and its parts are reused for
 * every visit made at its depth, so a visit allocates no frame.
 */
final class WalkFrame {
  /** The step to run when the frame is resumed. */
  WalkPhase phase;

  /** The frame's result once it is done. */
  Throwable result;

  // ------------------------------------------------------------ the visit
  Walker.Args args;
  Node node;
  OpRecord op;

  /** True while the frame's key is on the recursion path. */
  boolean onPath;

  ValueState prevState;
  TxnOperation prevOp;
  String prevErr;
  List<String> prevDetails;
  Node.LastUpdate prevUpdate;

  /** The result of the operation step, reported by {@link WalkPhase#EXIT}. */
  Throwable opResult;

  /** CREATE, UPDATE: the value's dependencies and derived values; its derived values follow. */
  Derivation.Relations relations;

  /** The locals of an UPDATE's steps. */
  final Update update = new Update();

  /** The locals of a DELETE's steps. */
  final Delete delete = new Delete();

  /** The sequence of child visits the frame is running. */
  final Children children = new Children();

  /** The locals of an UPDATE, from its first step to its call. */
  static final class Update {
    DescriptorHandle handle;
    boolean equivalent;

    /** The value was unavailable: once updated, what waits for it goes ahead. */
    boolean wasUnavailable;

    /** The value before the update (what the Update call starts from). */
    Object prevValue;

    /** The derived keys and dependencies before the update (restored when it stops). */
    List<String> oldDerived;

    List<Dependency> oldDeps;

    /** The dependencies of the value before the update (a planned call's links). */
    List<Dependency> depsBefore;

    void clear() {
      handle = null;
      equivalent = false;
      wasUnavailable = false;
      prevValue = null;
      oldDerived = null;
      oldDeps = null;
      depsBefore = null;
    }
  }

  /** The locals of a DELETE, from its first step to its call. */
  static final class Delete {
    /** The value is taken down because of its dependencies (ends PENDING). */
    boolean pending;

    /** The Delete half of a re-creation (a derived node stays in the graph). */
    boolean recreate;

    /** For an update waiting on new dependencies: the new value to keep. */
    Object pendingValue;

    /** The object the Delete call removes (the value, or what the southbound holds). */
    Object object;

    /** The state and availability before the delete (restored when it stops). */
    ValueState before;

    boolean wasUnavailable;

    /** A delete that is the first half of a re-creation: the create follows when it succeeds. */
    boolean createAfterDelete;

    void clear() {
      pending = false;
      recreate = false;
      pendingValue = null;
      object = null;
      before = null;
      wasUnavailable = false;
      createAfterDelete = false;
    }
  }

  /** A sequence of child visits: dependents (the first error wins) or derived values (the last). */
  static final class Children {
    /** True: dependents ({@link #nodes}); false: derived values ({@link #values}). */
    boolean dependents;

    /** Dependents: those visited are the ones becoming unavailable (else: available). */
    boolean forUnavailable;

    /** Derived values: each is checked by {@link Derivation#validDerived} when its turn comes. */
    boolean check;

    /** The only dependent, when there is one (no list built). */
    Node single;

    List<Node> nodes;
    List<ValueToApply> values;

    /** Derived values: which of {@link #values} are known settled (see {@link SettledDerived}). */
    SettledDerived.Pass settled;

    int index;
    int size;
    Throwable error;

    /** The phase the frame continues with once the sequence is done. */
    WalkPhase then;

    void clear() {
      single = null;
      nodes = null;
      values = null;
      settled = null;
      error = null;
      then = null;
      index = 0;
      size = 0;
    }
  }

  /** Prepares the frame (cleared, see {@link #clear}) for the visit {@code a}. */
  void startVisit(Walker.Args a) {
    phase = WalkPhase.ENTER;
    args = a;
  }

  /** Prepares the frame (cleared) as a root that visits the dependents of {@code n}. */
  void startReevaluate(Walker.Args a, Node n) {
    phase = WalkPhase.REEVALUATE;
    args = a;
    node = n;
  }

  /**
   * Drops every reference once the frame is done, so a finished visit keeps nothing alive through
   * its frame and the next visit at this depth starts clean.
   */
  void clear() {
    result = null;
    args = null;
    node = null;
    op = null;
    onPath = false;
    prevDetails = null;
    prevUpdate = null;
    opResult = null;
    relations = null;
    update.clear();
    delete.clear();
    children.clear();
  }

  /** Ends the frame with {@code r}. */
  void finish(Throwable r) {
    result = r;
    phase = WalkPhase.DONE;
  }

  /** The operation step of the visit is done with {@code err}: the visit's exit follows. */
  void endOperation(Throwable err) {
    opResult = err;
    phase = WalkPhase.EXIT;
  }

  /** Starts visiting the dependents of {@code node} whose availability may change. */
  void startDependents(Graph graph, Node node, boolean forUnavailable, WalkPhase then) {
    Children c = children;
    c.dependents = true;
    c.forUnavailable = forUnavailable;
    c.single = null;
    c.nodes = null;
    c.index = 0;
    c.size = 0;
    c.error = null;
    c.then = then;
    phase = WalkPhase.SEQUENCE;
    // dependentsOf is sorted by key and has no duplicates: visited in that order
    Collection<String> dependents = graph.dependentsOf(node.key());
    if (dependents.isEmpty()) {
      return;
    }
    if (dependents.size() == 1 && dependents instanceof List<String> single) {
      // the usual single dependent, in an immutable list: no collection of visits
      Node dn = graph.get(single.get(0));
      if (needsDepUpdate(dn, forUnavailable)) {
        c.single = dn;
        c.size = 1;
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
      c.nodes = visits;
      c.size = visits.size();
    }
  }

  /**
   * Starts applying derived values of the frame's base, given in key order (every caller builds the
   * list from a sorted one: the descriptor's derived values as {@link
   * DescriptorHandle#derivedSorted} returns them, or a node's derived keys, which are kept sorted).
   * {@code check}: each is checked by {@link Derivation#validDerived} when its turn comes.
   */
  void startDerived(List<ValueToApply> sorted, boolean check, WalkPhase then) {
    assert ValueToApply.isSorted(sorted) : "derived values out of key order";
    Children c = children;
    c.dependents = false;
    c.check = check;
    c.values = sorted;
    c.settled = null;
    c.index = 0;
    c.size = sorted.size();
    c.error = null;
    c.then = then;
    phase = WalkPhase.SEQUENCE;
  }

  /** True when dependent {@code dn} may change availability with its dependency. */
  private static boolean needsDepUpdate(Node dn, boolean forUnavailable) {
    if (dn == null || dn.value() == null || dn.origin() != ValueOrigin.FROM_NB) {
      return false;
    }
    if (forUnavailable == dn.isAvailable()) {
      return false;
    }
    // INVALID and UNIMPLEMENTED: only a new NB value can fix these
    return dn.state() != ValueState.INVALID && dn.state() != ValueState.UNIMPLEMENTED;
  }

  /**
   * Starts deleting the value of the frame's node.
   *
   * @param pending the value is taken down because of its dependencies (ends PENDING)
   * @param recreate the Delete half of a re-creation (derived node stays in the graph)
   * @param pendingValue for an update waiting on new dependencies: the new value to keep
   */
  void startDelete(boolean pending, boolean recreate, Object pendingValue) {
    delete.pending = pending;
    delete.recreate = recreate;
    delete.pendingValue = pendingValue;
    phase = WalkPhase.DELETE;
  }
}
