package io.kvscheduler.internal.engine.record;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A processed transaction as the history keeps it: its input values and the operation records of
 * the engine, turned into the API's {@link RecordedTxn} only when someone reads it.
 *
 * <p>Freezing every operation into a {@link RecordedTxnOp} (and its values into optionals) when the
 * transaction ends would cost a bulk transaction two or three more objects per operation, at the
 * moment it already holds everything it created; readers of the history are few and read seldom.
 * The operation records are smaller than their frozen form, so the history is smaller too.
 *
 * <p>Immutable once built: the engine never changes an operation record after its transaction was
 * recorded, nor the list of values, so readers on any thread may convert it (the record reaches
 * them through the history's concurrent map, which orders the engine's writes before their reads).
 * Building it drops each record's node, which would otherwise keep graph nodes reachable from the
 * history.
 */
public final class TxnRecord {
  public final long seq;
  private final TxnType type;
  private final ResyncType resync;
  public final String description;
  private final long retryForTxn;
  private final int retryAttempt;
  public final Instant start;
  private final Instant stop;

  /** Input values sorted by key. */
  public final List<ValueToApply> values;

  private final boolean withSimulation;
  public final OpRecord[] planned;
  public final OpRecord[] executed;

  /** Descriptors whose Retrieve failed in the transaction's refresh (usually empty). */
  final List<RetrieveError> retrieveErrors;

  /**
   * Estimated bytes of the record, for the history's byte budget ({@link RecordSize}); set by the
   * history before it adds the record.
   */
  public long bytes;

  public TxnRecord(
      long seq,
      TxnType type,
      ResyncType resync,
      String description,
      long retryForTxn,
      int retryAttempt,
      Instant start,
      Instant stop,
      List<ValueToApply> sortedValues,
      boolean withSimulation,
      List<OpRecord> planned,
      List<OpRecord> executed,
      List<RetrieveError> retrieveErrors) {
    this.seq = seq;
    this.retrieveErrors = retrieveErrors;
    this.type = type;
    this.resync = resync;
    this.description = description;
    this.retryForTxn = retryForTxn;
    this.retryAttempt = retryAttempt;
    this.start = start;
    this.stop = stop;
    this.values = sortedValues;
    this.withSimulation = withSimulation;
    this.planned = planned.toArray(new OpRecord[0]);
    this.executed = executed.toArray(new OpRecord[0]);
  }

  /** The record as the API shows it (a new object per call, equal for equal calls). */
  public RecordedTxn toApi() {
    List<RecordedTxn.RecordedValue> vals = new ArrayList<>(values.size());
    for (ValueToApply kv : values) {
      vals.add(
          new RecordedTxn.RecordedValue(kv.key(), Optional.ofNullable(kv.value()), kv.origin()));
    }
    return new RecordedTxn(
        seq,
        type,
        resync,
        description,
        retryForTxn,
        retryAttempt,
        start,
        stop,
        vals,
        withSimulation,
        frozen(planned),
        frozen(executed),
        retrieveErrors);
  }

  private static List<RecordedTxnOp> frozen(OpRecord[] ops) {
    RecordedTxnOp[] out = new RecordedTxnOp[ops.length];
    for (int i = 0; i < ops.length; i++) {
      out[i] = ops[i].freeze();
    }
    return List.of(out);
  }
}
