package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A resync whose Retrieve fails does not look successful: the commit fails naming the descriptor
 * and its error, the record and the transaction log carry it, and the descriptor's values claim
 * nothing the refresh could not confirm until a Retrieve answers.
 */
class FailedRetrieveTest {
  private final MockSouthbound sb = new MockSouthbound();
  private KVScheduler kvs;

  @BeforeEach
  void setUp() {
    ManualClock clock = new ManualClock();
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .printTxnSummary(true)
            .build();
    kvs.registerDescriptors(
        sb.descriptor("values", String.class).nbKeyPrefix("v/").build(),
        sb.descriptor("others", String.class).nbKeyPrefix("o/").build());
    kvs.startNBTransaction().setValue("v/1", "a").setValue("o/1", "b").commit();
  }

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  private TransactionException resyncFails(ResyncType type) {
    var txn = kvs.startNBTransaction();
    if (type == ResyncType.FULL) {
      txn.setValue("v/1", "a").setValue("o/1", "b");
    }
    TransactionException e =
        catchThrowableOfType(
            () -> txn.commit(TxnOptions.builder().resync(type).build()),
            TransactionException.class);
    assertThat(e).as("the resync fails").isNotNull();
    return e;
  }

  private void failsNamingTheDescriptor(ResyncType type) {
    sb.planRetrieveError("values", new IllegalStateException("device busy"));
    sb.clearCalls();
    TransactionException e;
    try (TxnLogCapture log = new TxnLogCapture()) {
      e = resyncFails(type);
      assertThat(String.join("\n", log.messages()))
          .contains("descriptor values: Retrieve failed")
          .contains("device busy");
    }

    assertThat(e.retrieveErrors()).containsExactly(new RetrieveError("values", "device busy"));
    assertThat(e.getMessage()).contains("values").contains("device busy");
    // the descriptor's value is not confirmed: no call made for it, no CONFIGURED status
    assertThat(e.keyErrors())
        .singleElement()
        .satisfies(
            k -> {
              assertThat(k.key()).isEqualTo("v/1");
              assertThat(k.kind()).isEqualTo(KeyError.Kind.UNREAD);
            });
    assertThat(kvs.valueStatus("v/1").value().state()).isNotEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus("o/1").value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(sb.callLog()).noneMatch(c -> c.contains("v/1") && !c.startsWith("RETRIEVE"));
    List<RecordedTxn> history = kvs.transactionHistory(Instant.MIN, Instant.MAX);
    RecordedTxn last = history.get(history.size() - 1);
    assertThat(last.seqNum()).isEqualTo(e.seqNum());
    assertThat(last.retrieveErrors()).isEqualTo(e.retrieveErrors());

    // once Retrieve answers again, the next resync confirms the value
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(kvs.valueStatus("v/1").value().state()).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  @DisplayName(
      "a downstream resync whose Retrieve fails throws naming the descriptor; the record and the"
          + " log carry it; its values are UNREAD, not CONFIGURED")
  void downstream() {
    failsNamingTheDescriptor(ResyncType.DOWNSTREAM);
  }

  @Test
  @DisplayName(
      "a full resync whose Retrieve fails throws naming the descriptor; the record and the log"
          + " carry it; its values are UNREAD, not CONFIGURED")
  void full() {
    failsNamingTheDescriptor(ResyncType.FULL);
  }

  @Test
  @DisplayName(
      "the drift plan of a southbound whose Retrieve fails throws naming the descriptor, and"
          + " changes nothing")
  void driftPlanFails() {
    int recorded = kvs.transactionHistory(Instant.MIN, Instant.MAX).size();
    sb.planRetrieveError("values", new IllegalStateException("device busy"));
    sb.clearCalls();
    TransactionException e =
        catchThrowableOfType(
            () ->
                kvs.startNBTransaction()
                    .plan(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build()),
            TransactionException.class);
    assertThat(e).as("the plan fails").isNotNull();
    assertThat(e.retrieveErrors()).containsExactly(new RetrieveError("values", "device busy"));
    assertThat(sb.callLog()).allMatch(c -> c.startsWith("RETRIEVE"));
    assertThat(kvs.valueStatus("v/1").value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.transactionHistory(Instant.MIN, Instant.MAX)).hasSize(recorded);
  }
}
