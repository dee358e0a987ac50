package io.kvscheduler.internal.engine;

import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * What a transaction was asked, as its preparation ({@link TxnPreparer}) made it: set once, never
 * changed by the passes of the walk (their state is {@link Transaction}'s).
 *
 * @param type the kind of transaction
 * @param resync the resync an NB transaction asks for
 * @param description the description recorded with it
 * @param options the options of an NB transaction (the defaults otherwise)
 * @param retryForTxn a retry: the transaction retried
 * @param retryAttempt a retry: its attempt
 * @param retryDelay a retry: its delay (null when none)
 * @param retryKeys a retry: the base keys retried
 * @param values the values to apply
 * @param recordedValues the values recorded with the transaction
 */
record TxnRequest(
    TxnType type,
    ResyncType resync,
    String description,
    TxnOptions options,
    long retryForTxn,
    int retryAttempt,
    Duration retryDelay,
    Set<String> retryKeys,
    List<ValueToApply> values,
    List<ValueToApply> recordedValues) {

  /** A transaction not prepared (yet). */
  static final TxnRequest NONE =
      new TxnRequest(
          null,
          ResyncType.NOT_RESYNC,
          "",
          TxnOptions.defaults(),
          0,
          0,
          null,
          Set.of(),
          List.of(),
          List.of());

  /** An NB commit with {@code options}, its {@code values} and those recorded. */
  static TxnRequest nb(
      TxnOptions options, List<ValueToApply> values, List<ValueToApply> recordedValues) {
    return new TxnRequest(
        TxnType.NB_TRANSACTION,
        options.resync(),
        options.description(),
        options,
        0,
        0,
        null,
        Set.of(),
        values,
        recordedValues);
  }

  /** An SB notification: the {@code values} kept of the {@code notified} ones (all recorded). */
  static TxnRequest sb(List<ValueToApply> values, List<ValueToApply> notified) {
    return new TxnRequest(
        TxnType.SB_NOTIFICATION,
        ResyncType.NOT_RESYNC,
        "",
        TxnOptions.defaults(),
        0,
        0,
        null,
        Set.of(),
        values,
        notified);
  }

  /** A retry of kind {@code type}, with a description (empty when none); its values recorded. */
  static TxnRequest retry(
      TxnType type,
      String description,
      long forTxn,
      int attempt,
      Duration delay,
      Set<String> keys,
      List<ValueToApply> values) {
    return new TxnRequest(
        type,
        ResyncType.NOT_RESYNC,
        description,
        TxnOptions.defaults(),
        forTxn,
        attempt,
        delay,
        keys,
        values,
        values);
  }

  boolean isNB() {
    return type == TxnType.NB_TRANSACTION;
  }
}
