package io.kvscheduler.internal.engine.loop;

import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** Items of the engine queue. */
public sealed interface Queued {
  /**
   * An NB transaction; the future completes with the sequence number or fails. Equal only to
   * itself: the queue's removal of a given transaction must neither compare the values (user code)
   * nor take another one.
   */
  record Nb(
      List<ValueToApply> values,
      TxnOptions options,
      CompletableFuture<Long> result,
      Set<String> assumedAbsent)
      implements Queued {
    Nb(List<ValueToApply> values, TxnOptions options, CompletableFuture<Long> result) {
      this(values, options, result, Set.of());
    }

    @Override
    public boolean equals(Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(this);
    }
  }

  /** An SB notification. */
  record Sb(List<ValueToApply> values) implements Queued {}

  /**
   * A retry of failed operations (or of unimplemented values when {@code unimplemented}).
   *
   * @param keys base key → sequence number of its last update when the failure happened
   */
  record Retry(
      long forTxn, int attempt, Duration delay, Map<String, Long> keys, boolean unimplemented)
      implements Queued {}

  /**
   * A southbound call for {@code key} that was abandoned after its time limit returned at last: the
   * key is read again and settled in a transaction of its own (recorded as a retry of the key).
   */
  record Late(String key) implements Queued {}

  /**
   * Work to run on the engine thread between transactions (barriers, SB dumps, scans).
   *
   * @param waiter the future a caller waits on (completed by {@code run}), failed instead when the
   *     scheduler closes before the task runs; null when nobody waits
   */
  record Task(Runnable run, CompletableFuture<?> waiter) implements Queued {
    public Task(Runnable run) {
      this(run, null);
    }
  }
}
