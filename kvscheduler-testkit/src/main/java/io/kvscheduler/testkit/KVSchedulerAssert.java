package io.kvscheduler.testkit;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueStatus;
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

  /** Assertions on the current status of {@code key} (NONEXISTENT when the key is unknown). */
  public StatusAssert value(String key) {
    isNotNull();
    ValueStatus status = actual.valueStatus(key).value();
    return new StatusAssert(status).as("status of %s", key);
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
