package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
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
    oldDerived = null;
    oldDeps = null;
    pendingValue = null;
    object = null;
    createAfterDelete = false;
    seqSingle = null;
    seqNodes = null;
    seqValues = null;
    seqError = null;
  }
}
