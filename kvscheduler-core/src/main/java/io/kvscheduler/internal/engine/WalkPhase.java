package io.kvscheduler.internal.engine;

/**
 * The step a {@link WalkFrame} runs when {@link Walker} resumes it. A visit of a key runs {@link
 * #ENTER}, the steps of its operation (CREATE, UPDATE or DELETE, each cut where it runs a sequence
 * of child visits), then {@link #EXIT}; see the diagram in {@link Walker}.
 */
enum WalkPhase {
  /** The key goes onto the recursion path and the operation is decided ({@link VisitSteps}). */
  ENTER,

  /** What the operation left is settled and a status change noted ({@link VisitSteps}). */
  EXIT,

  /** The frame is done: its result is {@link WalkFrame#result}. */
  DONE,

  /**
   * Up to the Create call; then the dependents waiting for the value ({@link CreateUpdateSteps}).
   */
  CREATE,

  /** After the dependents of a created or updated value (their errors are theirs). */
  AFTER_DEPENDENTS,

  /** After the derived values of a created or updated value: their last error is the result. */
  AFTER_DERIVED,

  /** Validation, equivalence, re-creation; then obsolete derived values go. */
  UPDATE,

  /** An obsolete derived value that could not go stops the update. */
  UPDATE_AFTER_OBSOLETE,

  /** The Update call; then the dependents, when they may go ahead. */
  UPDATE_CALL,

  /** The value is marked unavailable; then its derived values go ({@link DeleteSteps}). */
  DELETE,

  /** After the derived values of a deleted value: its dependents are taken down next. */
  DELETE_AFTER_DERIVED,

  /** After the dependents of a deleted value: the Delete call. */
  DELETE_AFTER_DEPENDENTS,

  /** Root frame visiting the dependents of a value a refresh found (un)available. */
  REEVALUATE,

  /** The dependents of a root {@link #REEVALUATE} frame were visited. */
  REEVALUATED,

  /** The next child of the running sequence (then {@link WalkFrame.Children#then}). */
  SEQUENCE,

  /** A child of the running sequence returned: its error is folded in. */
  SEQUENCE_RESUME
}
