package io.kvscheduler.catalogue;

import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A key left unread (a call failed and no Retrieve has answered since: D53) gets no call until it
 * is read; {@code Txn.assumeAbsent} is the user's way out when the Retrieve keeps failing.
 */
@KVSchedulerTest
class AssumeAbsentTest {
  private static final String A = "/a/k0";
  private static final String B = "/a/k1";

  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
    kvs.registerDescriptors(sb.descriptor("things", Object.class).nbKeyPrefix("/a/").build());
  }

  private void retrieveKeepsFailing() {
    for (int i = 0; i < 50; i++) {
      sb.planRetrieveError("things", new IllegalStateException("device busy"));
    }
  }

  /** Create of A fails in a revert transaction while Retrieve fails: A is left unread. */
  private void leaveAUnread() {
    retrieveKeepsFailing();
    sb.planError(A, new RuntimeException("create failed"));
    assertThrows(
        TransactionException.class,
        () ->
            kvs.startNBTransaction()
                .setValue(A, s("v1"))
                .commit(TxnOptions.builder().revert(true).build()));
    // every later delete, change and resync of A fails without a call, saying how to get out
    for (Object v : new Object[] {null, s("v2")}) {
      TransactionException e =
          assertThrows(
              TransactionException.class, () -> kvs.startNBTransaction().setValue(A, v).commit());
      assertThat(e.getMessage())
          .contains("what the southbound holds for " + A + " is unknown")
          .contains("assumeAbsent(\"" + A + "\")");
    }
    assertThrows(
        TransactionException.class,
        () ->
            kvs.startNBTransaction()
                .commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build()));
    assertThat(sb.callLog())
        .filteredOn(c -> !c.startsWith("RETRIEVE"))
        .containsExactly("CREATE " + A + " ✗");
    sb.clearCalls();
  }

  @Test
  @DisplayName(
      "assumeAbsent with a new value: created from nothing although Retrieve still fails;"
          + " recorded as an ASSUMED-ABSENT operation")
  void assumeAbsentThenCreate() {
    leaveAUnread();

    long seq = kvs.startNBTransaction().assumeAbsent(A).setValue(A, s("v3")).commit();

    assertThat(sb.callLog())
        .filteredOn(c -> !c.startsWith("RETRIEVE"))
        .containsExactly("CREATE " + A);
    assertThat(kvs.valueStatus(A).value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(A).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
    RecordedTxn rec = kvs.recordedTransaction(seq).orElseThrow();
    assertThat(rec.executed()).hasSize(2);
    RecordedTxnOp assumed = rec.executed().get(0);
    assertThat(assumed.key()).isEqualTo(A);
    assertThat(assumed.operation()).isEqualTo(TxnOperation.DELETE);
    assertThat(assumed.flags())
        .contains(RecordedTxnOp.Flag.ASSUMED_ABSENT, RecordedTxnOp.Flag.NOOP);
    assertThat(assumed.callStarted()).isEmpty();
    assertThat(rec.executed().get(1).operation()).isEqualTo(TxnOperation.CREATE);
    // and the key is an ordinary one again: a change is an update
    env.commit(A, s("v4"));
    assertThat(sb.callLog()).filteredOn(c -> !c.startsWith("RETRIEVE")).endsWith("UPDATE " + A);
  }

  @Test
  @DisplayName("assumeAbsent with a deletion: the key is gone without a Delete call")
  void assumeAbsentThenDelete() {
    leaveAUnread();

    kvs.startNBTransaction().assumeAbsent(A).delete(A).commit();

    assertThat(sb.callLog()).noneMatch(c -> c.startsWith("DELETE"));
    assertThat(kvs.valueStatus(A).value().state()).isEqualTo(ValueState.NONEXISTENT);
    // a downstream resync has nothing left to complain about A: it fails only because Retrieve
    // still fails (D58), with no key error for A
    TransactionException e =
        assertThrows(
            TransactionException.class,
            () ->
                kvs.startNBTransaction()
                    .commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build()));
    assertThat(e.retrieveErrors()).isNotEmpty();
    assertThat(e.keyErrors()).noneMatch(k -> k.key().equals(A));
  }

  @Test
  @DisplayName("assumeAbsent alone applies the key's intent again, from nothing")
  void assumeAbsentAlone() {
    leaveAUnread();

    kvs.startNBTransaction().assumeAbsent(A).setValue(B, s("b")).commit();

    // the key's last intent (v2, the change that failed as unknown) is created from nothing
    assertThat(sb.callLog())
        .filteredOn(c -> !c.startsWith("RETRIEVE"))
        .containsExactly("CREATE " + A, "CREATE " + B);
    assertThat(kvs.valueStatus(A).value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(sb.get(A).orElseThrow().value()).isEqualTo(s("v2"));
  }
}
