package io.kvscheduler.api;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One revision of a value in the graph history: what the scheduler stored for a key from {@link
 * #since()} until {@link #until()} (empty while current).
 *
 * @param key the key
 * @param label the label (metadata map name of the value)
 * @param value the stored value (empty when none)
 * @param metadata the stored metadata (empty when none)
 * @param state value state
 * @param descriptor descriptor name, {@code ""} for properties and unimplemented values
 * @param derivedFrom base key of a derived value, {@code ""} for base values
 * @param unavailable whether the value could not satisfy dependencies
 * @param error error message, {@code ""} when none
 * @param lastOperation last decided operation
 * @param lastUpdateSeq sequence number of the transaction that last decided an operation, -1 none
 * @param dependencies the value's dependencies (label → description of the targets)
 * @param derivedKeys keys of the values derived from this one
 * @param seqNum transaction that wrote this revision
 * @param since start of validity
 * @param until end of validity, empty while current
 */
public record NodeRevision(
    String key,
    String label,
    Optional<Object> value,
    Optional<Object> metadata,
    ValueState state,
    String descriptor,
    String derivedFrom,
    boolean unavailable,
    String error,
    TxnOperation lastOperation,
    long lastUpdateSeq,
    Map<String, String> dependencies,
    List<String> derivedKeys,
    long seqNum,
    Instant since,
    Optional<Instant> until) {

  /** The same revision closed at {@code end}. */
  public NodeRevision closedAt(Instant end) {
    return new NodeRevision(
        key,
        label,
        value,
        metadata,
        state,
        descriptor,
        derivedFrom,
        unavailable,
        error,
        lastOperation,
        lastUpdateSeq,
        dependencies,
        derivedKeys,
        seqNum,
        since,
        Optional.of(end));
  }
}
