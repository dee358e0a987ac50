package io.kvscheduler.internal.engine;

import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The state of one transaction being processed: what preparation made of the dequeued request
 * (type, options, values), and what the later phases hand on (the sorted values, the keys refreshed
 * after failures).
 */
final class Job {
  long seq;
  TxnType type;
  ResyncType resync = ResyncType.NOT_RESYNC;
  String description = "";
  TxnOptions options = TxnOptions.defaults();
  long retryForTxn;
  int retryAttempt;
  Duration retryDelay;
  Set<String> retryKeys = Set.of();
  List<ValueToApply> values = List.of();
  List<ValueToApply> recordedValues = List.of();

  /** {@link #values} sorted by key (set by the ordering step, reused by the record). */
  List<ValueToApply> sortedValues;

  /** True once the transaction counted as a resync (undone when it is aborted). */
  boolean countedResync;

  boolean simulate;
  boolean skip;

  /** Base keys of the values that failed, refreshed after the execution (refreshFailed). */
  List<String> refreshedFailed = List.of();

  /**
   * Base keys read again before the transaction (their dependents follow what the read found): the
   * key of a late southbound answer ({@link TxnPreparer#prepareLate}), and keys left unread by
   * earlier transactions ({@link UnreadKeys}) that a Retrieve has now answered for.
   */
  Set<String> readFirst = Set.of();

  /** Adds {@code keys} to {@link #readFirst}. */
  void addReadFirst(Set<String> keys) {
    if (readFirst.isEmpty()) {
      readFirst = keys;
      return;
    }
    Set<String> out = new TreeSet<>(readFirst);
    out.addAll(keys);
    readFirst = out;
  }
}
