package io.kvscheduler.api;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The record of one processed transaction.
 *
 * @param seqNum sequence number (from 0, one per processed transaction)
 * @param type the kind of transaction
 * @param resyncType resync flavour (NB transactions only)
 * @param description description given by the NB caller, {@code ""} when none
 * @param retryForTxn for retries: the transaction in which the values first failed, else 0
 * @param retryAttempt for retries: the attempt number (1 for the first retry), else 0
 * @param start when processing started
 * @param stop when processing ended
 * @param values input values sorted by key (null value = delete)
 * @param withSimulation true when the transaction was simulated first
 * @param planned the simulated operations (empty without simulation)
 * @param executed the executed operations in execution order
 * @param retrieveErrors the descriptors whose Retrieve failed in the transaction's refresh (a full
 *     or downstream resync), in retrieve order: what the southbound holds for their values could
 *     not be read
 */
public record RecordedTxn(
    long seqNum,
    TxnType type,
    ResyncType resyncType,
    String description,
    long retryForTxn,
    int retryAttempt,
    Instant start,
    Instant stop,
    List<RecordedValue> values,
    boolean withSimulation,
    List<RecordedTxnOp> planned,
    List<RecordedTxnOp> executed,
    List<RetrieveError> retrieveErrors) {

  public RecordedTxn {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(resyncType, "resyncType");
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(stop, "stop");
    values = List.copyOf(values);
    planned = List.copyOf(planned);
    executed = List.copyOf(executed);
    retrieveErrors = List.copyOf(retrieveErrors);
  }

  /** A record of a transaction whose refresh, if any, read every descriptor. */
  public RecordedTxn(
      long seqNum,
      TxnType type,
      ResyncType resyncType,
      String description,
      long retryForTxn,
      int retryAttempt,
      Instant start,
      Instant stop,
      List<RecordedValue> values,
      boolean withSimulation,
      List<RecordedTxnOp> planned,
      List<RecordedTxnOp> executed) {
    this(
        seqNum,
        type,
        resyncType,
        description,
        retryForTxn,
        retryAttempt,
        start,
        stop,
        values,
        withSimulation,
        planned,
        executed,
        List.of());
  }

  /**
   * One input value of a recorded transaction.
   *
   * @param key the key
   * @param value the value, empty for a deletion
   * @param origin origin of the value
   */
  public record RecordedValue(String key, Optional<Object> value, ValueOrigin origin) {}
}
