package io.kvscheduler.api;

/**
 * The state of one value (base or derived) as the scheduler sees it.
 *
 * <p>Transitions (NB = northbound request, SB = southbound):
 *
 * <pre>
 *   NONEXISTENT --NB create, deps met, Create ok-------------> CONFIGURED
 *   NONEXISTENT --NB create, deps missing--------------------> PENDING      (no SB call)
 *   NONEXISTENT --NB create/update, Validate fails-----------> INVALID      (no SB call)
 *   NONEXISTENT --NB value, no descriptor selects the key-----> UNIMPLEMENTED
 *   NONEXISTENT --Create fails-------------------------------> FAILED | RETRYING
 *   NONEXISTENT --SB notification / refresh finds SB value---> OBTAINED
 *   NONEXISTENT --refresh finds NB value---------------------> DISCOVERED
 *   PENDING     --dependencies appear, Create ok-------------> CONFIGURED
 *   CONFIGURED  --dependency lost (Delete ok)----------------> PENDING
 *   CONFIGURED  --Update fails-------------------------------> FAILED | RETRYING (stays available)
 *   CONFIGURED  --NB delete ok-------------------------------> REMOVED -> dropped after the transaction
 *   CONFIGURED  --refresh does not find it-------------------> MISSING
 *   RETRYING    --retry ok / fails again / attempts exhausted-> CONFIGURED / RETRYING / FAILED
 *   any unavailable --NB delete------------------------------> REMOVED (no SB call)
 * </pre>
 *
 * <p>A value is <em>available</em> (can satisfy dependencies of other values) only in states
 * CONFIGURED, OBTAINED, DISCOVERED, and in FAILED/RETRYING after a failed Update.
 */
public enum ValueState {
  /** The key is not known to the scheduler. */
  NONEXISTENT,
  /** The value was applied, but a refresh did not find it in the southbound. */
  MISSING,
  /** No descriptor selects the key. */
  UNIMPLEMENTED,
  /** The value was deleted (only visible inside the transaction that removed it). */
  REMOVED,
  /** The value was applied to the southbound. */
  CONFIGURED,
  /** The value was created by the southbound itself (notification or retrieve with SB origin). */
  OBTAINED,
  /** The value was found in the southbound by a refresh and is owned by the northbound. */
  DISCOVERED,
  /** The value waits for at least one of its dependencies. */
  PENDING,
  /** Validate rejected the value. */
  INVALID,
  /** The last operation failed and will not be retried. */
  FAILED,
  /** The last operation failed and a retry is scheduled. */
  RETRYING
}
