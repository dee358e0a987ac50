package io.kvscheduler.api;

/** An operation the scheduler decided for one value. */
public enum TxnOperation {
  /** No operation was ever decided (e.g. OBTAINED or freshly DISCOVERED values). */
  UNDEFINED,
  /** Validation only (never recorded). */
  VALIDATE,
  CREATE,
  UPDATE,
  DELETE
}
