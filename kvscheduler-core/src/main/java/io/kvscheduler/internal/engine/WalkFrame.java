package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * One frame of the walk's explicit stack: the visit of one key (or, at the root only, the visit of
 * the dependents of a refreshed value), with the locals its steps share and the sequence of child
 * visits it is running. {@link Walker} drives frames; a frame is reused for every visit made at its
 * depth, so a visit allocates no frame.
 */
final class WalkFrame {
  /**
   * Visit of a key: entered, then the steps of its operation, then the exit (see {@link Walker}).
   */
  static final int ENTER = 0;

  static final int EXIT = 1;
  static final int DONE = 2;
  static final int CREATE = 3;

  /** After the dependents of a created or updated value (their errors are theirs). */
  static final int AFTER_DEPENDENTS = 4;

  /** After the derived values of a created or updated value: their last error is the result. */
  static final int AFTER_DERIVED = 5;

  static final int UPDATE = 6;
  static final int UPDATE_AFTER_OBSOLETE = 7;
  static final int UPDATE_CALL = 8;
  static final int DELETE = 9;
  static final int DELETE_AFTER_DERIVED = 10;
  static final int DELETE_AFTER_DEPENDENTS = 11;

  /** Root frame visiting the dependents of a value a refresh found (un)available. */
  static final int REEVALUATE = 12;

  static final int REEVALUATED = 13;

  /** The next child of the running sequence (then {@link #seqThen}). */
  static final int SEQUENCE = 14;

  /** A child of the running sequence returned: its error is folded in. */
  static final int SEQUENCE_RESUME = 15;

  /** The step to run when the frame is resumed. */
  int phase;

  /** The frame's result once it is done. */
  Throwable result;

  // ------------------------------------------------------------ the visit
  Walker.Args args;
  Node node;
  OpRecord op;
  boolean onPath;
  ValueState prevState;
  TxnOperation prevOp;
  String prevErr;
  List<String> prevDetails;
  Node.LastUpdate prevUpdate;

  /** The result of the operation step, reported by {@link #EXIT}. */
  Throwable opResult;

  // ------------------------------------------------------------ operation locals
  DescriptorHandle handle;
  Derivation.Relations relations;
  boolean equivalent;
  boolean wasUnavailable;
  Object prevValue;
  List<String> oldDerived;
  List<Dependency> oldDeps;

  /** UPDATE: the dependencies of the value before the update (a planned call's links). */
  List<Dependency> depsBefore;

  boolean pending;
  boolean recreate;
  Object pendingValue;
  Object object;
  ValueState before;

  /** A delete that is the first half of a re-creation: the create follows when it succeeds. */
  boolean createAfterDelete;

  // ------------------------------------------------------------ the running sequence
  /** True: dependents ({@link #seqNodes}), first error wins; false: derived values, last wins. */
  boolean seqDependents;

  /** Dependents: visited when they become available (else: taken down); derived: checked. */
  boolean seqFlag;

  Node seqSingle;
  List<Node> seqNodes;
  List<ValueToApply> seqValues;

  /** Derived values: which of {@link #seqValues} are known settled (see {@link SettledDerived}). */
  SettledDerived.Pass seqSettled;

  int seqIndex;
  int seqSize;
  Throwable seqError;
  int seqThen;

  /** Prepares the frame (cleared, see {@link #clear}) for the visit {@code a}. */
  void startVisit(Walker.Args a) {
    phase = ENTER;
    args = a;
  }

  /** Prepares the frame (cleared) as a root that visits the dependents of {@code n}. */
  void startReevaluate(Walker.Args a, Node n) {
    phase = REEVALUATE;
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
    handle = null;
    relations = null;
    prevValue = null;
    depsBefore = null;
    oldDerived = null;
    oldDeps = null;
    pendingValue = null;
    object = null;
    createAfterDelete = false;
    seqSingle = null;
    seqNodes = null;
    seqValues = null;
    seqSettled = null;
    seqError = null;
  }

  /** Ends the frame with {@code r}. */
  void finish(Throwable r) {
    result = r;
    phase = DONE;
  }

  /** The operation step of the visit is done with {@code err}: the visit's exit follows. */
  void endOperation(Throwable err) {
    opResult = err;
    phase = EXIT;
  }

  /** Starts visiting the dependents of {@code node} whose availability may change. */
  void startDependents(Graph graph, Node node, boolean forUnavailable, int then) {
    seqDependents = true;
    seqFlag = forUnavailable;
    seqIndex = 0;
    seqSize = 0;
    seqError = null;
    seqThen = then;
    phase = SEQUENCE;
    // dependentsOf is sorted by key and has no duplicates: visited in that order
    Collection<String> dependents = graph.dependentsOf(node.key);
    if (dependents.isEmpty()) {
      return;
    }
    if (dependents.size() == 1 && dependents instanceof List<String> single) {
      // the usual single dependent, in an immutable list: no collection of visits
      Node dn = graph.get(single.get(0));
      if (needsDepUpdate(dn, forUnavailable)) {
        seqSingle = dn;
        seqSize = 1;
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
      seqNodes = visits;
      seqSize = visits.size();
    }
  }

  /**
   * Starts applying derived values of the frame's base, given in key order (every caller builds the
   * list from a sorted one: the descriptor's derived values as {@link
   * DescriptorHandle#derivedSorted} returns them, or a node's derived keys, which are kept sorted).
   * {@code check}: each is checked by {@link Derivation#validDerived} when its turn comes.
   */
  void startDerived(List<ValueToApply> sorted, boolean check, int then) {
    assert ValueToApply.isSorted(sorted) : "derived values out of key order";
    seqDependents = false;
    seqFlag = check;
    seqValues = sorted;
    seqSettled = null;
    seqIndex = 0;
    seqSize = sorted.size();
    seqError = null;
    seqThen = then;
    phase = SEQUENCE;
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

  /**
   * Starts deleting the value of the frame's node.
   *
   * @param pending the value is taken down because of its dependencies (ends PENDING)
   * @param recreate the Delete half of a re-creation (derived node stays in the graph)
   * @param pendingValue for an update waiting on new dependencies: the new value to keep
   */
  void startDelete(boolean pending, boolean recreate, Object pendingValue) {
    this.pending = pending;
    this.recreate = recreate;
    this.pendingValue = pendingValue;
    phase = DELETE;
  }
}
