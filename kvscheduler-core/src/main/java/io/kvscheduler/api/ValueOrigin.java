package io.kvscheduler.api;

/** Who owns a value: the northbound (desired state) or the southbound (created by the system). */
public enum ValueOrigin {
  /** Not known; the scheduler resolves it (see Retrieve). */
  UNKNOWN,
  /** Requested by the northbound; the scheduler owns its life cycle. */
  FROM_NB,
  /** Created by the southbound; the scheduler only tracks it. */
  FROM_SB
}
