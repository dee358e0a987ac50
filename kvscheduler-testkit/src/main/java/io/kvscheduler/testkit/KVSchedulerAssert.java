package io.kvscheduler.testkit;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueStatus;
import java.util.List;
import java.util.Optional;
import org.assertj.core.api.AbstractAssert;

/**
 * Fluent assertions on a scheduler: the status of its values and its recorded transactions.
 *
 * <pre>{@code
 * assertThat(kvs).value("config/routes/r1").isPending().waitingFor("interface-exists");
 * assertThat(kvs).txn(seq).executedInOrder(op(CREATE, "config/interfaces/eth0"),
 *     op(CREATE, "config/routes/r1"));
 * }</pre>
 *
 * Entry point: {@link KVSchedulerAssertions#assertThat(KVScheduler)}.
 */
public final class KVSchedulerAssert extends AbstractAssert<KVSchedulerAssert, KVScheduler> {
  KVSchedulerAssert(KVScheduler actual) {
    super(actual, KVSchedulerAssert.class);
  }

  /**
   * Assertions on the current status of {@code key} (NONEXISTENT when the key is unknown).
   *
   * @throws AssertionError if the scheduler answers with the status of another key
   */
  public StatusAssert value(String key) {
    isNotNull();
    ValueStatus status = actual.valueStatus(key).value();
    if (!status.key().equals(key)) {
      failWithMessage("asked for the status of %s, got the status of %s", key, status.key());
    }
    return new StatusAssert(status).as("status of %s", key);
  }

  /**
   * Assertions on the current status of {@code derivedKey}, a value derived from base value {@code
   * baseKey}.
   *
   * @throws AssertionError if {@code baseKey} has no derived value {@code derivedKey}
   */
  public StatusAssert derivedValue(String baseKey, String derivedKey) {
    isNotNull();
    BaseValueStatus base = actual.valueStatus(baseKey);
    Optional<ValueStatus> status = base.derivedStatus(derivedKey);
    if (status.isEmpty()) {
      failWithMessage(
          "expected %s among the derived values of %s but they are %s",
          derivedKey, baseKey, base.derived());
    }
    return new StatusAssert(status.get()).as("status of %s (derived from %s)", derivedKey, baseKey);
  }

  /**
   * The status of base value {@code value.key()} is exactly {@code value}, and the statuses of its
   * derived values are exactly {@code derived} (sorted by key, as the scheduler reports them).
   *
   * @throws AssertionError naming the base value and what differs
   */
  public KVSchedulerAssert hasStatus(ValueStatus value, ValueStatus... derived) {
    isNotNull();
    BaseValueStatus status = actual.valueStatus(value.key());
    if (!status.value().equals(value)) {
      failWithMessage("expected status %s but it is %s", value, status.value());
    }
    if (!status.derived().equals(List.of(derived))) {
      failWithMessage(
          "expected the derived values of %s to be %s but they are %s",
          value.key(), List.of(derived), status.derived());
    }
    return this;
  }

  /** Assertions on the record of transaction {@code seqNum}, which must be in the history. */
  public TxnAssert txn(long seqNum) {
    isNotNull();
    Optional<RecordedTxn> txn = actual.recordedTransaction(seqNum);
    if (txn.isEmpty()) {
      failWithMessage("expected a record of txn #%s in the history, found none", seqNum);
    }
    return TxnAssert.assertThat(txn.get());
  }
}
