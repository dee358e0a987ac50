package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.MISSING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Verification mode and periodic downstream resync (beyond the reference). */
class VerificationAndPeriodicResyncTest {
  private KVScheduler kvs;

  @AfterEach
  void tearDown() {
    if (kvs != null) {
      kvs.close();
    }
  }

  /** Retrieve of a map southbound: every value it holds, as NB values. */
  private static List<KVWithMetadata<CatalogueFixtures.StringValue, Void>> everything(
      Map<String, CatalogueFixtures.StringValue> sb) {
    List<KVWithMetadata<CatalogueFixtures.StringValue, Void>> out = new ArrayList<>();
    sb.forEach((k, v) -> out.add(new KVWithMetadata<>(k, v, null, ValueOrigin.FROM_NB)));
    return out;
  }

  /** A southbound that drops updates of A2 on the floor and stores A1 with a typo. */
  private KVDescriptor<CatalogueFixtures.StringValue, Void> liarDescriptor(
      Map<String, CatalogueFixtures.StringValue> sb) {
    return KVDescriptor.builder("liar", CatalogueFixtures.StringValue.class)
        .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
        .create(
            (key, value) -> {
              sb.put(key, key.equals(A1) ? s(value.value() + "-typo") : value);
              return null;
            })
        .update((key, before, after, meta) -> null) // claims success, changes nothing
        .delete(
            (key, value, meta) -> {
              if (!key.equals(A2)) {
                sb.remove(key);
              }
            })
        .retrieve(correlate -> everything(sb))
        .build();
  }

  @Test
  @DisplayName(
      "verification mode reports values whose southbound state differs from what was"
          + " applied: wrong content, lost update, value still present after delete")
  void verificationReportsEveryDisagreement() {
    Map<String, CatalogueFixtures.StringValue> sb = new TreeMap<>();
    kvs = CatalogueFixtures.env(false).kvs();
    kvs.registerDescriptors(liarDescriptor(sb));

    TxnOptions verify = TxnOptions.builder().verify(true).build();
    assertThatThrownBy(
            () -> kvs.startNBTransaction().setValue(A1, s("a")).setValue(A2, s("b")).commit(verify))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e ->
                assertThat(e.keyErrors())
                    .extracting(KeyError::key, KeyError::operation)
                    .containsExactly(tuple(A1, CREATE)))
        .hasMessageContaining(
            "verification failed: the southbound holds StringValue[value=a-typo]"
                + " instead of the applied StringValue[value=a]");

    assertThatThrownBy(() -> kvs.startNBTransaction().setValue(A2, s("b2")).commit(verify))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e ->
                assertThat(e.keyErrors())
                    .extracting(KeyError::key, KeyError::operation)
                    .containsExactly(tuple(A2, UPDATE)));

    assertThatThrownBy(() -> kvs.startNBTransaction().setValue(A2, null).commit(verify))
        .hasMessageContaining("the southbound still holds removed value");

    // without verification the same lie goes unnoticed
    kvs.startNBTransaction().setValue(CatalogueFixtures.A3, s("c")).commit();
  }

  @Test
  @DisplayName(
      "(ours) verification of a PENDING value the southbound holds anyway says it is"
          + " PENDING, not 'removed'")
  void verificationOfAPendingValueSaysPending() {
    Map<String, CatalogueFixtures.StringValue> sb = new TreeMap<>();
    kvs = CatalogueFixtures.env(false).kvs();
    kvs.registerDescriptors(
        KVDescriptor.builder("waiting", CatalogueFixtures.StringValue.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .create(
                (key, value) -> {
                  sb.put(key, value);
                  return null;
                })
            .delete((key, value, meta) -> sb.remove(key))
            .dependencies((key, value) -> List.of(Dependency.onKey("missing", "/nowhere/x")))
            .retrieve(correlate -> everything(sb))
            .build());
    sb.put(A1, s("put there behind the scheduler's back"));
    assertThatThrownBy(
            () ->
                kvs.startNBTransaction()
                    .setValue(A1, s("a"))
                    .commit(TxnOptions.builder().verify(true).build()))
        .hasMessageContaining(
            "verification failed: the southbound holds StringValue[value=put"
                + " there behind the scheduler's back] although the value is PENDING (not applied:"
                + " waiting for dependencies)");
  }

  @Test
  @DisplayName("verification mode passes silently when the southbound agrees (scheduler-wide)")
  void verificationPassesWhenInSync() {
    MockSouthbound sb = new MockSouthbound();
    ManualClock clock = new ManualClock();
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .verifyMode(true)
            .build();
    CatalogueFixtures.registerDataChangeDescriptors(kvs, sb);
    kvs.startNBTransaction()
        .setValue(A1, CatalogueFixtures.arr(1))
        .setValue(CatalogueFixtures.B2, CatalogueFixtures.arr(1, 2))
        .commit();
    kvs.startNBTransaction().setValue(A1, CatalogueFixtures.arr(1, 2)).commit();
    kvs.startNBTransaction().setValue(A1, null).commit();
    assertThat(sb.inconsistencies()).isEmpty();
  }

  @Test
  @DisplayName("periodic downstream resync repairs a value removed behind the scheduler's back")
  void periodicDownstreamResyncRepairsDrift() {
    MockSouthbound sb = new MockSouthbound();
    ManualClock clock = new ManualClock();
    ManualDelayScheduler timers = new ManualDelayScheduler(clock);
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(timers)
            .statusExecutor(Runnable::run)
            .periodicDownstreamResync(Duration.ofMinutes(5), Duration.ZERO)
            .build();
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build());
    kvs.startNBTransaction().setValue(A1, s("x")).commit();
    sb.setValue(A1, null, null, ValueOrigin.FROM_NB, false); // drift
    sb.clearCalls();

    timers.advance(Duration.ofMinutes(4));
    kvs.transactionBarrier();
    assertThat(kvs.transactionHistory()).hasSize(1);

    timers.advance(Duration.ofMinutes(1));
    kvs.transactionBarrier();
    var resync = kvs.recordedTransaction(1).orElseThrow();
    assertThat(resync.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(resync.resyncType()).isEqualTo(ResyncType.DOWNSTREAM);
    assertThat(resync.description()).isEqualTo("periodic downstream resync");
    TxnAssert.assertThat(resync).executed(op(CREATE, A1).states(MISSING, CONFIGURED));
    assertThat(sb.callLog()).containsExactly("RETRIEVE descriptor1", "CREATE " + A1);
    assertThat(sb.get(A1)).isPresent();

    timers.advance(Duration.ofMinutes(5));
    kvs.transactionBarrier();
    TxnAssert.assertThat(kvs.recordedTransaction(2).orElseThrow()).executedNothing();
    assertThat(timers.pending()).hasSize(1);
  }

  @Test
  @DisplayName("periodic downstream resync rejects a non-positive period")
  void periodicResyncValidatesItsPeriod() {
    assertThatThrownBy(
            () -> KVScheduler.builder().periodicDownstreamResync(Duration.ZERO, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("positive period");
  }
}
