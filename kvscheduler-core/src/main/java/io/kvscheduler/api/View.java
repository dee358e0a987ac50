package io.kvscheduler.api;

/** Which picture of the values a dump returns. */
public enum View {
  /** What the southbound reports now (calls Retrieve). */
  SB,
  /** What the northbound last requested (intent), including values not applied yet. */
  NB,
  /** The scheduler's picture of the southbound: available base values as stored in the graph. */
  CACHED
}
