package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.DISCOVERED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.OBTAINED;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.A4;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import ch.qos.logback.classic.Level;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KVSchedulerBuilder;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxn.RecordedValue;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Catalogue §17: transaction records, history and graph revisions. */
class RecordsAndHistoryTest {
  private final MockSouthbound sb = new MockSouthbound();
  private SchedulerFixture env;

  @AfterEach
  void tearDown() {
    if (env != null) {
      env.close();
    }
    assertThat(sb.inconsistencies()).isEmpty();
  }

  // ------------------------------------------------------------------ helpers

  /** Like CatalogueFixtures.env, with extra builder settings. */
  private static SchedulerFixture envWith(
      boolean simulation, UnaryOperator<KVSchedulerBuilder> extra) {
    return SchedulerFixture.create(
        b -> extra.apply(b.enableTxnSimulation(simulation).printTxnSummary(true)));
  }

  private void notify(String key, Object value, Object metadata) {
    env.kvs()
        .pushSBNotification(
            List.of(new KVWithMetadata<>(key, value, metadata, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
  }

  private static RecordedValue nb(String key, Object value) {
    return new RecordedValue(key, Optional.ofNullable(value), ValueOrigin.FROM_NB);
  }

  private static RecordedValue fromSb(String key, Object value) {
    return new RecordedValue(key, Optional.ofNullable(value), ValueOrigin.FROM_SB);
  }

  private static Map<String, Long> counts(Object... kv) {
    Map<String, Long> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], ((Number) kv[i + 1]).longValue());
    }
    return m;
  }

  private FlagStats stats(String flag) {
    return env.kvs().flagStats(flag, KeySelector.any());
  }

  private void dataChangeSetup(boolean simulation) {
    env = CatalogueFixtures.env(simulation);
    CatalogueFixtures.registerDataChangeDescriptors(env.kvs(), sb);
  }

  private static final OpSpec[] FIRST_DATA_CHANGE_OPS = {
    op(CREATE, A1).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(arr(2)),
    op(CREATE, d(A1, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
    op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
    op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
    op(CREATE, d(B2, 2)).states(NONEXISTENT, PENDING).flags("DERIVED", "NOOP"),
    op(CREATE, C3).states(NONEXISTENT, CONFIGURED),
    op(CREATE, d(C3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
    op(CREATE, d(C3, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED")
  };

  /** TestResyncWithEmptySB: A2 depends on A1/i1, A1/i2 depends on A2/i1. */
  private void resyncWithEmptySbSetup() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .derivedValues(CatalogueFixtures.derivedItems())
                .dependencies(
                    (key, value) -> {
                      if (key.equals(A2)) return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                      if (key.equals(d(A1, 2)))
                        return List.of(Dependency.onKey(d(A2, 1), d(A2, 1)));
                      return List.of();
                    })
                .build());
  }

  /** TestNotifications setup; a full resync (#0) sets B2=[i1,i2] (PENDING). */
  private void notificationsSetup(boolean simulation) {
    env = CatalogueFixtures.env(simulation);
    CatalogueFixtures.registerNotificationDescriptors(env.kvs(), sb);
    env.commit(TxnOptions.builder().resync(ResyncType.FULL).build(), B2, arr(1, 2));
  }

  /** TestDependencyCycles: A1 -> A2 -> A3 -> {A1, A4}; no Retrieve. */
  private void cycleSetup() {
    env = CatalogueFixtures.env(true);
    CatalogueFixtures.registerCycleDescriptors(env.kvs(), sb);
  }

  /** TestResyncWithRetry: SB holds A1=[] (meta 0, NB); NB A1=[i1,i2]; Create A1/i2 fails. */
  private void resyncWithRetrySetup(boolean simulation) {
    env = CatalogueFixtures.env(simulation);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .firstFreeIndex(1)
                .derivedValues(CatalogueFixtures.derivedItems())
                .build());
    sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false);
    sb.planError(
        d(A1, 2),
        new RuntimeException("failed to add value"),
        () -> sb.setValue(A1, arr(1), 0, ValueOrigin.FROM_NB, false));
  }

  private static final TxnOptions RESYNC_WITH_RETRY =
      TxnOptions.builder()
          .retry(new RetryOptions(Duration.ofSeconds(3), 3, false))
          .resync(ResyncType.FULL)
          .description("testing resync with retry")
          .build();

  // ------------------------------------------------------------------ B162 .. B166

  @Test
  @DisplayName(
      "B162 B163 B164 record of an NB transaction: fields, times, sorted values, planned = executed")
  void nbTransactionRecord() {
    dataChangeSetup(true);
    assertThat(env.kvs().transactionHistory()).isEmpty();
    Instant before = env.clock().peek();
    long seq =
        env.kvs()
            .startNBTransaction()
            .setValue(B2, arr(1, 2))
            .setValue(A1, arr(2))
            .setValue(C3, arr(1, 2))
            .commit(TxnOptions.builder().description("testing data change").build());
    Instant after = env.clock().peek();
    assertThat(seq).isZero();
    RecordedTxn txn = env.txn(0);
    assertThat(env.kvs().transactionHistory()).containsExactly(txn);
    assertThat(txn.seqNum()).isZero();
    assertThat(txn.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(txn.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(txn.description()).isEqualTo("testing data change");
    assertThat(txn.retryForTxn()).isZero();
    assertThat(txn.retryAttempt()).isZero();
    assertThat(txn.start()).isAfterOrEqualTo(before).isBefore(txn.stop());
    assertThat(txn.stop()).isBefore(after);
    assertThat(txn.values()).containsExactly(nb(A1, arr(2)), nb(B2, arr(1, 2)), nb(C3, arr(1, 2)));
    assertThat(txn.withSimulation()).isTrue();
    TxnAssert.assertThat(txn).planned(FIRST_DATA_CHANGE_OPS).executed(FIRST_DATA_CHANGE_OPS);
    assertThat(txn.planned()).isEqualTo(txn.executed());
  }

  @Test
  @DisplayName(
      "B162 B166 a record reads the same after later transactions update, fail on and remove its keys")
  void recordUnchangedByLaterTransactions() {
    dataChangeSetup(true);
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    RecordedTxn first = env.txn(0);
    assertThat(first.planned()).isNotEmpty();
    TxnAssert.assertThat(first).executed(FIRST_DATA_CHANGE_OPS);

    env.commit(A1, arr(1, 2), C3, arr(2));
    sb.planError(A1, new RuntimeException("planned failure"));
    assertThatThrownBy(() -> env.commit(A1, arr(3))).isInstanceOf(TransactionException.class);
    env.commit(B2, null, C3, null);

    assertThat(env.txn(0)).isEqualTo(first);
    TxnAssert.assertThat(env.txn(0)).executed(FIRST_DATA_CHANGE_OPS);
    assertThat(env.kvs().transactionHistory()).hasSize(4).first().isEqualTo(first);
  }

  @Test
  @DisplayName(
      "B162 B163 B165 B107 record of a retry: type, RetryForTxn/attempt, values, retried derived create keeps PrevValue")
  void retryRecord() {
    resyncWithRetrySetup(true);
    assertThatThrownBy(() -> env.commit(RESYNC_WITH_RETRY, A1, arr(1, 2)))
        .isInstanceOf(TransactionException.class);
    Instant afterCommit = env.clock().peek();
    RecordedTxn first = env.txn(0);
    assertThat(first.resyncType()).isEqualTo(ResyncType.FULL);
    assertThat(first.description()).isEqualTo("testing resync with retry");
    assertThat(first.values()).containsExactly(nb(A1, arr(1, 2)));
    TxnAssert.assertThat(first)
        .planned(
            op(UPDATE, A1).states(DISCOVERED, CONFIGURED).prevValue(arr()).newValue(arr(1, 2)),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(A1, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"))
        .executed(
            op(UPDATE, A1)
                .states(DISCOVERED, CONFIGURED)
                .prevValue(arr())
                .newValue(arr(1, 2))
                .error(""),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(A1, 2))
                .states(NONEXISTENT, RETRYING)
                .flags("DERIVED")
                .newValue(s("item2"))
                .error("failed to add value"));
    sb.clearCalls();
    env.timers().advance(Duration.ofSeconds(3));
    env.kvs().transactionBarrier();
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, 2));
    RecordedTxn retry = env.txn(1);
    assertThat(retry.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(retry.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(retry.description()).isEmpty();
    assertThat(retry.retryForTxn()).isZero();
    assertThat(retry.retryAttempt()).isEqualTo(1);
    assertThat(retry.start()).isAfter(afterCommit).isBefore(retry.stop());
    assertThat(retry.values()).containsExactly(nb(A1, arr(1, 2)));
    assertThat(retry.withSimulation()).isTrue();
    OpSpec[] ops = {
      op(UPDATE, A1)
          .states(CONFIGURED, CONFIGURED)
          .flags("RETRY")
          .prevValue(arr(1))
          .newValue(arr(1, 2)),
      op(CREATE, d(A1, 2))
          .states(RETRYING, CONFIGURED)
          .flags("DERIVED", "RETRY")
          .prevValue(s("item2"))
          .newValue(s("item2"))
          .prevError("failed to add value")
          .error("")
    };
    TxnAssert.assertThat(retry).planned(ops).executed(ops);
  }

  @Test
  @DisplayName(
      "B163 B166 B60 B80 resync records: intermediate pending ops compressed; missing NB values recorded as deletions")
  void resyncRecordsAndCompression() {
    resyncWithEmptySbSetup();
    TxnOptions full = TxnOptions.builder().resync(ResyncType.FULL).build();
    env.commit(
        full.toBuilder().description("testing resync against empty SB").build(),
        A2,
        arr(1),
        A1,
        arr(1, 2));
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE descriptor1",
            "CREATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + A2,
            "CREATE " + d(A2, 1),
            "CREATE " + d(A1, 2));
    RecordedTxn first = env.txn(0);
    assertThat(first.resyncType()).isEqualTo(ResyncType.FULL);
    assertThat(first.values()).containsExactly(nb(A1, arr(1, 2)), nb(A2, arr(1)));
    OpSpec[] created = {
      op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
      op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
      op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
      op(CREATE, d(A2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
      // (a) the NOOP pending create of A1/i2 is dropped; this one starts from NONEXISTENT
      op(CREATE, d(A1, 2))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item2"))
    };
    TxnAssert.assertThat(first).planned(created).executed(created);

    sb.clearCalls();
    env.commit(full);
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE descriptor1",
            "DELETE " + d(A1, 2),
            "DELETE " + d(A2, 1),
            "DELETE " + A2,
            "DELETE " + d(A1, 1),
            "DELETE " + A1);
    assertThat(sb.values()).isEmpty();
    RecordedTxn second = env.txn(1);
    assertThat(second.values()).containsExactly(nb(A1, null), nb(A2, null));
    OpSpec[] deleted = {
      op(DELETE, d(A1, 2)).states(CONFIGURED, REMOVED).flags("DERIVED"),
      op(DELETE, d(A2, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
      // (b) A2 was first un-configured (CONFIGURED->PENDING), then deleted: one record
      op(DELETE, A2).states(CONFIGURED, REMOVED),
      op(DELETE, d(A1, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
      op(DELETE, A1).states(CONFIGURED, REMOVED).newValue(null)
    };
    TxnAssert.assertThat(second).planned(deleted).executed(deleted);
  }

  @Test
  @DisplayName(
      "B166 B80 pending creates compressed in a large transaction: each of 50 derived values waits for a value created later, one CREATE recorded for each")
  void pendingCreatesCompressedAtScale() {
    env = CatalogueFixtures.env(false);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .derivedValues(CatalogueFixtures.derivedItems())
                .dependencies(
                    (key, value) ->
                        key.startsWith(A1 + "/")
                            ? List.of(
                                Dependency.onKey(
                                    "b",
                                    CatalogueFixtures.PREFIX_B + key.substring(A1.length() + 1)))
                            : List.of())
                .build(),
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .build());
    int n = 50;
    int[] items = new int[n];
    List<Object> kv = new ArrayList<>(List.of(A1));
    kv.add(null); // A1's value, set below
    TreeSet<String> bKeys = new TreeSet<>();
    for (int i = 0; i < n; i++) {
      items[i] = i;
      String b = CatalogueFixtures.PREFIX_B + "item" + i;
      bKeys.add(b);
      kv.add(b);
      kv.add(s("b" + i));
    }
    kv.set(1, arr(items));
    long seq = env.commit(kv.toArray());
    // A1 sorts first: its derived values wait (PENDING), then each is created right after its
    // B value; the pending creates are dropped from the record
    List<OpSpec> expected = new ArrayList<>();
    expected.add(op(CREATE, A1).states(NONEXISTENT, CONFIGURED));
    for (String b : bKeys) {
      String item = b.substring(CatalogueFixtures.PREFIX_B.length());
      expected.add(op(CREATE, b).states(NONEXISTENT, CONFIGURED));
      expected.add(
          op(CREATE, A1 + "/" + item)
              .states(NONEXISTENT, CONFIGURED)
              .flags("DERIVED")
              .prevValue(null)
              .newValue(s(item)));
    }
    TxnAssert.assertThat(env.txn(seq)).executed(expected.toArray(new OpSpec[0]));
  }

  @Test
  @DisplayName("B163 B137 resync records list SB-owned values with origin SB")
  void resyncRecordsSbValues() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .derivedValues(CatalogueFixtures.derivedItems())
                .dependencies(
                    (key, value) -> key.equals(A2) ? List.of(Dependency.onKey(A1, A1)) : List.of())
                .build());
    sb.setValue(A1, s("base-value1"), null, ValueOrigin.FROM_SB, false);
    env.commit(TxnOptions.builder().resync(ResyncType.FULL).build(), A2, arr(1));
    assertThat(sb.callLog())
        .containsExactly("RETRIEVE descriptor1", "CREATE " + A2, "CREATE " + d(A2, 1));
    assertThat(env.txn(0).values()).containsExactly(fromSb(A1, s("base-value1")), nb(A2, arr(1)));
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(A2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
  }

  @Test
  @DisplayName("B163 a downstream resync records no values")
  void downstreamResyncRecordsNoValues() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .build());
    env.commit(A1, arr(1));
    sb.setValue(A1, arr(9), 0, ValueOrigin.FROM_NB, false); // drift
    sb.clearCalls();
    long seq = env.commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(seq).isEqualTo(1);
    assertThat(sb.callLog()).containsExactly("RETRIEVE descriptor1", "UPDATE " + A1);
    RecordedTxn txn = env.txn(1);
    assertThat(txn.resyncType()).isEqualTo(ResyncType.DOWNSTREAM);
    assertThat(txn.values()).isEmpty();
    TxnAssert.assertThat(txn)
        .executed(op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(9)).newValue(arr(1)));
  }

  @Test
  @DisplayName(
      "B163 B165 B166 B148 notification records: SB values; lost dependency DELETE keeps NewValue; deletes merged")
  void notificationRecords() {
    notificationsSetup(true);
    notify(A1, arr(1), 10);
    notify(A1, arr(1, 2), 11);
    sb.clearCalls();
    notify(A1, null, null);
    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(B2, 2), "DELETE " + d(B2, 1), "DELETE " + B2);
    RecordedTxn n1 = env.txn(1);
    assertThat(n1.type()).isEqualTo(TxnType.SB_NOTIFICATION);
    assertThat(n1.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(n1.description()).isEmpty();
    assertThat(n1.values()).containsExactly(fromSb(A1, arr(1)));
    RecordedTxn n3 = env.txn(3);
    assertThat(n3.values()).containsExactly(fromSb(A1, null));
    OpSpec[] ops = {
      op(DELETE, d(A1, 1)).states(OBTAINED, REMOVED).flags("DERIVED", "PROPERTY"),
      op(DELETE, d(B2, 2)).states(CONFIGURED, REMOVED).flags("DERIVED"),
      op(DELETE, d(A1, 2)).states(OBTAINED, REMOVED).flags("DERIVED", "PROPERTY"),
      op(DELETE, d(B2, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
      op(DELETE, B2).states(CONFIGURED, PENDING).prevValue(arr(1, 2)).newValue(arr(1, 2)),
      op(DELETE, A1).states(OBTAINED, REMOVED).prevValue(arr(1, 2)).newValue(null)
    };
    TxnAssert.assertThat(n3).planned(ops).executed(ops);
  }

  @Test
  @DisplayName(
      "B164 without simulation nothing is planned; WithSimulation plans the same operations")
  void plannedOnlyWhenSimulated() {
    dataChangeSetup(false);
    env.commit(A1, arr(1));
    RecordedTxn plain = env.txn(0);
    assertThat(plain.withSimulation()).isFalse();
    assertThat(plain.planned()).isEmpty();
    assertThat(plain.executed()).hasSize(2);
    env.commit(TxnOptions.builder().simulation(true).build(), B2, arr(1, 2));
    RecordedTxn simulated = env.txn(1);
    assertThat(simulated.withSimulation()).isTrue();
    TxnAssert.assertThat(simulated)
        .executed(
            op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(B2, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    assertThat(simulated.planned()).isEqualTo(simulated.executed());
  }

  @Test
  @DisplayName("B164 B152 notifications are simulated only by configuration")
  void notificationSimulationByConfiguration() {
    notificationsSetup(false);
    notify(A1, arr(1), 10);
    RecordedTxn n = env.txn(1);
    assertThat(n.withSimulation()).isFalse();
    assertThat(n.planned()).isEmpty();
    assertThat(n.executed()).isNotEmpty();
    env.close();
    assertThat(sb.inconsistencies()).isEmpty();
    sb.reset();
    notificationsSetup(true);
    notify(A1, arr(1), 10);
    RecordedTxn sim = env.txn(1);
    assertThat(sim.withSimulation()).isTrue();
    assertThat(sim.planned()).isNotEmpty().isEqualTo(sim.executed());
  }

  @Test
  @DisplayName("B164 retries are always simulated, even with simulation disabled")
  void retriesAlwaysSimulated() {
    resyncWithRetrySetup(false);
    assertThatThrownBy(() -> env.commit(RESYNC_WITH_RETRY, A1, arr(1, 2)))
        .isInstanceOf(TransactionException.class);
    assertThat(env.txn(0).planned()).isEmpty();
    env.timers().advance(Duration.ofSeconds(3));
    env.kvs().transactionBarrier();
    RecordedTxn retry = env.txn(1);
    assertThat(retry.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(retry.withSimulation()).isTrue();
    assertThat(retry.planned()).hasSize(2).isEqualTo(retry.executed());
  }

  @Test
  @DisplayName(
      "B164 B103 the simulation calls no descriptor (no Validate, no CRUD) and plans optimistic success")
  void simulationCallsNoDescriptor() {
    AtomicInteger validations = new AtomicInteger();
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .derivedValues(CatalogueFixtures.derivedItems())
                .validate((k, v) -> validations.incrementAndGet())
                .build());
    env.commit(A1, arr(1));
    assertThat(validations).hasValue(2); // A1 and A1/i1, once each: execution only
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + d(A1, 1));
    sb.clearCalls();
    sb.planError(A2, new RuntimeException("failed to add value"));
    assertThatThrownBy(() -> env.commit(A2, arr(2))).isInstanceOf(TransactionException.class);
    assertThat(validations).hasValue(3);
    assertThat(sb.callLog()).containsExactly("CREATE " + A2 + " ✗", "RETRIEVE descriptor1");
    TxnAssert.assertThat(env.txn(1))
        .planned(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED).error(""),
            op(CREATE, d(A2, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"))
        .executed(op(CREATE, A2).states(NONEXISTENT, FAILED).error("failed to add value"));
  }

  @Test
  @DisplayName(
      "B164 an empty simulation skips execution: no Validate, nothing recorded, status and watchers untouched")
  void emptyPlanSkipsExecution() {
    AtomicInteger validations = new AtomicInteger();
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .derivedValues(CatalogueFixtures.derivedItems())
                .validate((k, v) -> validations.incrementAndGet())
                .build());
    env.commit(A1, arr(1));
    BaseValueStatus before = env.kvs().valueStatus(A1);
    List<BaseValueStatus> watched = Collections.synchronizedList(new ArrayList<>());
    env.kvs().watchValueStatus(KeySelector.any(), watched::add);
    sb.clearCalls();
    validations.set(0);
    long seq = env.commit(A1, arr(1));
    assertThat(seq).isEqualTo(1);
    assertThat(validations).hasValue(0);
    assertThat(sb.callLog()).isEmpty();
    assertThat(env.txn(1).planned()).isEmpty();
    assertThat(env.txn(1).executed()).isEmpty();
    // B57: the equivalent value is no operation (semantics §5.3 keeps the simulated graph when
    // nothing is planned): the last operation stays CREATE (D61), so watchers hear nothing
    assertThat(before.value().lastOperation()).isEqualTo(CREATE);
    assertThat(env.kvs().valueStatus(A1).value().lastOperation()).isEqualTo(CREATE);
    assertThat(env.kvs().valueStatus(A1).state()).isEqualTo(before.state());
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(before);
    assertThat(watched).isEmpty();
  }

  // ------------------------------------------------------------------ B167 .. B169

  @Test
  @DisplayName(
      "B167 history queries by start time (inclusive, open bounds, empty when until < since) and by seq")
  void historyQueries() {
    dataChangeSetup(true);
    assertThat(env.kvs().transactionHistory(Instant.MIN, Instant.MAX)).isEmpty();
    assertThat(env.kvs().recordedTransaction(0)).isEmpty();
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    env.clock().advance(Duration.ofSeconds(10));
    env.commit(C3, arr(1), A1, arr(1));
    env.clock().advance(Duration.ofSeconds(10));
    env.commit(A1, arr(1, 2));
    RecordedTxn t0 = env.txn(0);
    RecordedTxn t1 = env.txn(1);
    RecordedTxn t2 = env.txn(2);
    var kvs = env.kvs();
    assertThat(kvs.transactionHistory(t1.start(), t1.stop())).containsExactly(t1);
    assertThat(kvs.transactionHistory(Instant.MIN, Instant.MAX)).containsExactly(t0, t1, t2);
    assertThat(kvs.transactionHistory()).containsExactly(t0, t1, t2);
    assertThat(kvs.transactionHistory(Instant.MIN, t1.start())).containsExactly(t0, t1);
    assertThat(kvs.transactionHistory(t1.start().plusNanos(1), Instant.MAX)).containsExactly(t2);
    assertThat(kvs.transactionHistory(t0.stop(), t1.start().minusNanos(1))).isEmpty();
    assertThat(kvs.transactionHistory(t2.start(), t0.start())).isEmpty();
    assertThat(kvs.recordedTransaction(1)).contains(t1);
    assertThat(kvs.recordedTransaction(3)).isEmpty();
    assertThat(kvs.recordedTransaction(-1)).isEmpty();
  }

  @Test
  @DisplayName(
      "B168 B129 every dequeued transaction is recorded: empty resync, ignored notifications, obsolete retry")
  void everyTransactionRecorded() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .build());
    // #0 empty full resync
    long seq =
        env.commit(
            TxnOptions.builder()
                .resync(ResyncType.FULL)
                .description("testing empty resync")
                .build());
    assertThat(seq).isZero();
    assertThat(sb.calls())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.kind()).isEqualTo(MockSouthbound.CallKind.RETRIEVE);
              assertThat(c.correlate()).isEmpty();
            });
    RecordedTxn r0 = env.txn(0);
    assertThat(r0.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(r0.resyncType()).isEqualTo(ResyncType.FULL);
    assertThat(r0.description()).isEqualTo("testing empty resync");
    assertThat(r0.values()).isEmpty();
    assertThat(r0.planned()).isEmpty();
    assertThat(r0.executed()).isEmpty();
    assertThat(r0.retryForTxn()).isZero();
    assertThat(r0.retryAttempt()).isZero();
    assertThat(stats("value-state").total()).isZero();
    assertThat(env.kvs().metadataMap("descriptor1", Object.class).labels()).isEmpty();
    // #1 a value
    assertThat(env.commit(A1, arr(1))).isEqualTo(1);
    sb.clearCalls();
    // #2 notification for a key without descriptor: ignored but recorded
    notify("/prefixZ/x", arr(1), null);
    RecordedTxn r2 = env.txn(2);
    assertThat(r2.type()).isEqualTo(TxnType.SB_NOTIFICATION);
    assertThat(r2.values()).containsExactly(fromSb("/prefixZ/x", arr(1)));
    assertThat(r2.executed()).isEmpty();
    assertThat(env.kvs().valueStatus("/prefixZ/x").state()).isEqualTo(ValueState.NONEXISTENT);
    // #3 notification for an NB-owned key: ignored but recorded
    notify(A1, arr(7), 99);
    TxnAssert.assertThat(env.txn(3)).executedNothing();
    assertThat(env.kvs().valueStatus(A1).value().state()).isEqualTo(CONFIGURED);
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(new KVWithMetadata<>(A1, arr(1), 0, ValueOrigin.FROM_NB));
    // #4 a failure with retry, #5 fixes the value before the retry
    sb.planError(A2, new RuntimeException("failed to add value"));
    assertThatThrownBy(
            () ->
                env.commit(
                    TxnOptions.builder()
                        .retry(new RetryOptions(Duration.ofSeconds(3), 3, false))
                        .build(),
                    A2,
                    arr(2)))
        .isInstanceOf(TransactionException.class);
    assertThat(env.commit(A2, arr(3))).isEqualTo(5);
    sb.clearCalls();
    // #6 the obsolete retry: recorded, executes nothing
    env.timers().advance(Duration.ofSeconds(3));
    env.kvs().transactionBarrier();
    RecordedTxn r6 = env.txn(6);
    assertThat(r6.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(r6.retryForTxn()).isEqualTo(4);
    assertThat(r6.retryAttempt()).isEqualTo(1);
    assertThat(r6.values()).isEmpty();
    assertThat(r6.executed()).isEmpty();
    assertThat(sb.callLog()).isEmpty();
    assertThat(env.commit(A3, arr(1))).isEqualTo(7);
    assertThat(env.kvs().transactionHistory())
        .extracting(RecordedTxn::seqNum)
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
  }

  private SchedulerFixture retentionEnv(UnaryOperator<KVSchedulerBuilder> extra) {
    SchedulerFixture e =
        envWith(
            false,
            b ->
                extra.apply(
                    b.historyAgeLimit(Duration.ofMinutes(10))
                        .permanentHistoryPeriod(Duration.ofMinutes(5))));
    e.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .build());
    return e;
  }

  @Test
  @DisplayName(
      "B169 history retention: records and revisions older than the age limit are trimmed, except the permanent period")
  void historyRetention() {
    env = retentionEnv(b -> b);
    env.commit(A1, arr(1)); // #0 at ~0 (permanent)
    env.clock().advance(Duration.ofMinutes(6));
    env.commit(A1, arr(2), A2, arr(1)); // #1 at ~6 min
    env.clock().advance(Duration.ofMinutes(6));
    env.commit(A2, arr(2)); // #2 at ~12 min
    assertThat(env.kvs().transactionHistory())
        .extracting(RecordedTxn::seqNum)
        .containsExactly(0L, 1L, 2L);
    env.clock().advance(Duration.ofMinutes(11));
    env.commit(A3, arr(1)); // #3 at ~23 min: cutoff ~13 min
    assertThat(env.kvs().transactionHistory())
        .extracting(RecordedTxn::seqNum)
        .containsExactly(0L, 3L);
    assertThat(env.kvs().recordedTransaction(1)).isEmpty();
    assertThat(env.kvs().recordedTransaction(2)).isEmpty();
    // A1: the revision of #0 (permanent) survives although closed at ~6 min
    assertThat(env.kvs().keyTimeline(A1)).extracting(NodeRevision::seqNum).containsExactly(0L, 1L);
    // A2: the revision of #1 closed at ~12 min is older than the cutoff
    assertThat(env.kvs().keyTimeline(A2)).extracting(NodeRevision::seqNum).containsExactly(2L);
  }

  @Test
  @DisplayName("B169 history is trimmed over time (once a minute) even when no transaction runs")
  void historyTrimmedWithoutTransactions() {
    env = retentionEnv(b -> b);
    env.commit(A1, arr(1)); // #0 permanent
    env.timers().advance(Duration.ofMinutes(6));
    env.commit(A2, arr(1)); // #1 at ~6 min
    env.timers().advance(Duration.ofMinutes(11)); // ~17 min: #1 older than 10 min
    env.kvs().transactionBarrier();
    assertThat(env.kvs().transactionHistory()).extracting(RecordedTxn::seqNum).containsExactly(0L);
  }

  @Test
  @DisplayName(
      "B169 historyMaxRecords keeps the newest records; recordHistory(false) keeps nothing")
  void historyLimits() {
    env = retentionEnv(b -> b.historyMaxRecords(3));
    for (int i = 1; i <= 5; i++) {
      env.commit(A1, arr(i));
    }
    assertThat(env.kvs().transactionHistory())
        .extracting(RecordedTxn::seqNum)
        .containsExactly(2L, 3L, 4L);
    assertThat(env.kvs().recordedTransaction(0)).isEmpty();
    env.close();
    assertThat(sb.inconsistencies()).isEmpty();
    sb.reset();
    env = retentionEnv(b -> b.recordHistory(false));
    assertThat(env.commit(A1, arr(1))).isZero();
    assertThat(env.kvs().transactionHistory()).isEmpty();
    assertThat(env.kvs().recordedTransaction(0)).isEmpty();
    assertThat(env.kvs().keyTimeline(A1)).isEmpty();
    assertThat(stats("value-state").total()).isZero();
    // the scheduler itself still works
    assertThat(env.kvs().valueStatus(A1).state()).isEqualTo(CONFIGURED);
  }

  // ------------------------------------------------------------------ B170

  @Test
  @DisplayName("B170 B74 B75 B76 graph revisions per transaction and flag statistics (cycle test)")
  void revisionsAndFlagStatsCycle() {
    cycleSetup();
    env.commit(A1, s("base-value1-data"), A2, s("base-value2-data"), A3, s("base-value3-data"));
    assertThat(stats("value-state")).isEqualTo(new FlagStats(3, counts("PENDING", 3)));
    assertThat(stats("unavailable").total()).isEqualTo(3);
    assertThat(stats("last-update").total()).isEqualTo(3);
    assertThat(stats("error").total()).isZero();
    assertThat(stats("descriptor")).isEqualTo(new FlagStats(3, counts("descriptor1", 3)));
    assertThat(stats("derived").total()).isZero();

    env.commit(A4, s("base-value4-data"));
    assertThat(sb.callLog())
        .containsExactly("CREATE " + A4, "CREATE " + A3, "CREATE " + A2, "CREATE " + A1);
    assertThat(stats("last-update").total()).isEqualTo(7);
    assertThat(stats("value-state"))
        .isEqualTo(new FlagStats(7, counts("PENDING", 3, "CONFIGURED", 4)));
    assertThat(stats("unavailable").total()).isEqualTo(3);

    sb.clearCalls();
    sb.planError(A2, new RuntimeException("failed to remove the value"));
    assertThatThrownBy(() -> env.commit(A2, null)).isInstanceOf(TransactionException.class);
    assertThat(sb.callLog()).containsExactly("DELETE " + A3, "DELETE " + A1, "DELETE " + A2 + " ✗");
    assertThat(stats("last-update").total()).isEqualTo(10);
    assertThat(stats("unavailable").total()).isEqualTo(6);
    assertThat(stats("error").total()).isEqualTo(1);
    assertThat(stats("value-state"))
        .isEqualTo(new FlagStats(10, counts("PENDING", 5, "CONFIGURED", 4, "FAILED", 1)));
    assertThat(stats("last-update").perValue()).isEqualTo(counts("CREATE", 7, "DELETE", 3));
    // selector restricts the statistics
    assertThat(env.kvs().flagStats("value-state", KeySelector.exact(A1)))
        .isEqualTo(new FlagStats(3, counts("PENDING", 2, "CONFIGURED", 1)));

    // A1's timeline: one revision per transaction that changed it
    List<NodeRevision> a1 = env.kvs().keyTimeline(A1);
    assertThat(a1)
        .extracting(
            NodeRevision::seqNum,
            NodeRevision::state,
            NodeRevision::lastOperation,
            NodeRevision::unavailable)
        .containsExactly(
            tuple(0L, PENDING, CREATE, true),
            tuple(1L, CONFIGURED, CREATE, false),
            tuple(2L, PENDING, DELETE, true));
    assertThat(a1.get(0).until()).contains(a1.get(1).since());
    assertThat(a1.get(1).until()).contains(a1.get(2).since());
    assertThat(a1.get(2).until()).isEmpty();
    assertThat(a1.get(2).value()).contains(s("base-value1-data"));
    assertThat(a1.get(2).dependencies()).isEqualTo(Map.of(A2, A2));
    assertThat(a1.get(2).descriptor()).isEqualTo("descriptor1");
    NodeRevision a2 = env.kvs().keyTimeline(A2).get(2);
    assertThat(a2.state()).isEqualTo(FAILED);
    assertThat(a2.error()).isEqualTo("failed to remove the value");
    assertThat(a2.lastUpdateSeq()).isEqualTo(2);

    // snapshots between the transactions
    RecordedTxn t1 = env.txn(1);
    RecordedTxn t2 = env.txn(2);
    assertThat(env.kvs().graphSnapshot(t2.start()))
        .extracting(NodeRevision::key, NodeRevision::state, NodeRevision::seqNum)
        .containsExactly(
            tuple(A1, CONFIGURED, 1L),
            tuple(A2, CONFIGURED, 1L),
            tuple(A3, CONFIGURED, 1L),
            tuple(A4, CONFIGURED, 1L));
    assertThat(env.kvs().graphSnapshot(t1.start()))
        .extracting(NodeRevision::key, NodeRevision::state)
        .containsExactly(tuple(A1, PENDING), tuple(A2, PENDING), tuple(A3, PENDING));
    assertThat(env.kvs().graphSnapshot(env.txn(0).start())).isEmpty();
  }

  @Test
  @DisplayName(
      "B170 refreshes are not recorded as revisions; revision counts of TestResyncWithRetry")
  void revisionsWithRetry() {
    resyncWithRetrySetup(true);
    assertThatThrownBy(() -> env.commit(RESYNC_WITH_RETRY, A1, arr(1, 2)))
        .isInstanceOf(TransactionException.class);
    assertThat(stats("error").total()).isEqualTo(1);
    assertThat(stats("unavailable").total()).isEqualTo(1);
    assertThat(stats("derived").total()).isEqualTo(2);
    assertThat(stats("last-update").total()).isEqualTo(3);
    assertThat(stats("descriptor")).isEqualTo(new FlagStats(3, counts("descriptor1", 3)));
    assertThat(stats("value-state"))
        .isEqualTo(new FlagStats(3, counts("CONFIGURED", 2, "RETRYING", 1)));
    // the DISCOVERED state of the pre-resync refresh was never recorded
    assertThat(env.kvs().keyTimeline(A1))
        .extracting(NodeRevision::state)
        .containsExactly(CONFIGURED);
    env.timers().advance(Duration.ofSeconds(3));
    env.kvs().transactionBarrier();
    assertThat(stats("error").total()).isEqualTo(1);
    assertThat(stats("unavailable").total()).isEqualTo(1);
    // the retry leaves A1/item1 untouched: no revision for it (D61)
    assertThat(stats("derived").total()).isEqualTo(3);
    assertThat(stats("last-update").total()).isEqualTo(5);
    assertThat(stats("descriptor")).isEqualTo(new FlagStats(5, counts("descriptor1", 5)));
    assertThat(stats("value-state"))
        .isEqualTo(new FlagStats(5, counts("CONFIGURED", 4, "RETRYING", 1)));
  }

  @Test
  @DisplayName(
      "B170 a revert records the intermediate (failed, refreshed) state as an extra revision")
  void revertIntermediateRevision() {
    dataChangeSetup(true);
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    sb.planError(
        A1,
        new RuntimeException("failed to modify value"),
        () -> sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false));
    assertThatThrownBy(
            () -> env.commit(TxnOptions.builder().revert(true).build(), C3, arr(1), A1, arr(1)))
        .isInstanceOf(TransactionException.class);
    List<NodeRevision> a1 = env.kvs().keyTimeline(A1);
    assertThat(a1)
        .extracting(NodeRevision::seqNum, NodeRevision::state, NodeRevision::error)
        .containsExactly(
            tuple(0L, CONFIGURED, ""),
            tuple(1L, FAILED, "failed to modify value"),
            tuple(1L, CONFIGURED, ""));
    assertThat(a1.get(1).value()).contains(arr());
    assertThat(a1.get(2).value()).contains(arr(2));
    List<NodeRevision> c3 = env.kvs().keyTimeline(C3);
    assertThat(c3)
        .extracting(
            NodeRevision::seqNum, r -> r.value().orElse(null), r -> r.metadata().orElse(null))
        .containsExactly(tuple(0L, arr(1, 2), 0), tuple(1L, arr(1), 1), tuple(1L, arr(1, 2), 2));
  }

  @Test
  @DisplayName("B170 B66 removal of a deleted base value closes its timeline")
  void removalClosesTimeline() {
    notificationsSetup(true);
    notify(A1, arr(1), 10);
    notify(A1, null, null);
    List<NodeRevision> a1 = env.kvs().keyTimeline(A1);
    assertThat(a1).isNotEmpty();
    assertThat(a1.get(a1.size() - 1).until()).isPresent();
    assertThat(env.kvs().graphSnapshot(env.clock().peek()))
        .extracting(NodeRevision::key, NodeRevision::state)
        .containsExactly(tuple(B2, PENDING));
    List<NodeRevision> property = env.kvs().keyTimeline(d(A1, 1));
    assertThat(property.get(property.size() - 1).until()).isPresent();
  }

  // ------------------------------------------------------------------ B171, B172

  @Test
  @DisplayName(
      "B171 (ours, deliberate difference D12: 'transaction #N failed: ' prefix) error lists KeyErrors: [key (OP): err, ...] in execution order; invalid options throw IllegalArgumentException and consume no seq")
  void transactionErrorFormat() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .build());
    // invalid options are a usage error, not a failed transaction: no sequence number consumed
    assertThatThrownBy(
            () ->
                env.commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build(), A1, arr(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("downstream resync combined with data changes in one transaction");
    assertThatThrownBy(
            () ->
                env.commit(
                    TxnOptions.builder().resync(ResyncType.FULL).revert(true).build(), A1, arr(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("it is not supported to combine resync with revert");
    assertThat(env.kvs().transactionHistory()).isEmpty();
    // key errors
    RuntimeException e1 = new RuntimeException("failed to add value");
    sb.planError(A1, e1);
    sb.planError(A2, new RuntimeException("failed again"));
    assertThatThrownBy(() -> env.commit(A2, arr(2), A1, arr(1), A3, arr(3)))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e -> {
              assertThat(e.seqNum()).isZero();
              assertThat(e.keyErrors())
                  .extracting(KeyError::key, KeyError::operation, KeyError::message)
                  .containsExactly(
                      tuple(A1, CREATE, "failed to add value"), tuple(A2, CREATE, "failed again"));
              assertThat(e.keyErrors().get(0).cause()).isSameAs(e1);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "transaction #0 failed: KeyErrors: ["
                          + A1
                          + " (CREATE): failed to add value, "
                          + A2
                          + " (CREATE): failed again]");
            });
    // full success: no error, the sequence number
    assertThat(env.commit(A1, arr(1), A2, arr(2))).isEqualTo(1);
  }

  @Test
  @DisplayName("B172 transaction log: pre-record block and final block with executed operations")
  void transactionLog() {
    try (TxnLogCapture log = new TxnLogCapture()) {
      env = envWith(true, b -> b.valueFormatter(RecordsAndHistoryTest::protoText));
      // the log's durations are checked in milliseconds: the clock moves 1 ms per reading
      env.clock().tickOnEveryRead(Duration.ofMillis(1));
      env.kvs()
          .registerDescriptors(
              sb.descriptor("descriptor1", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                  .withMetadata()
                  .derivedValues(CatalogueFixtures.derivedItems())
                  .build(),
              sb.descriptor("descriptor2", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                  .withMetadata()
                  .derivedValues(CatalogueFixtures.derivedItems())
                  .dependencies(
                      (key, value) -> {
                        if (key.equals(d(B2, 1))) return List.of(Dependency.onKey(A1, A1));
                        if (key.equals(d(B2, 2)))
                          return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                        return List.of();
                      })
                  .retrieveDependencies("descriptor1")
                  .build(),
              sb.descriptor("descriptor3", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                  .withMetadata()
                  .derivedValues(CatalogueFixtures.derivedItems())
                  .updateWithRecreate((key, o, n, m) -> key.equals(C3))
                  .retrieveDependencies("descriptor2")
                  .build());
      env.commit(
          TxnOptions.builder().description("testing data change").build(),
          B2,
          arr(1, 2),
          A1,
          arr(2),
          C3,
          arr(1, 2));
      assertThat(log.events()).hasSize(2);
      assertThat(log.events()).allSatisfy(e -> assertThat(e.getLevel()).isEqualTo(Level.INFO));
      String pre = log.events().get(0).getFormattedMessage();
      String fin = log.events().get(1).getFormattedMessage();
      String plus = "+" + "=".repeat(118) + "+";
      String header = "| #0 - NBTransaction" + " ".repeat(98) + " |";
      assertThat(header).hasSize(120);
      String ops =
          String.join(
                  "\n",
                  "      1. CREATE:",
                  "          - key: /prefixA/base-value1",
                  "          - value: { items:\"item2\" } ",
                  "      2. CREATE [DERIVED]:",
                  "          - key: /prefixA/base-value1/item2",
                  "          - value: { value:\"item2\" } ",
                  "      3. CREATE:",
                  "          - key: /prefixB/base-value2",
                  "          - value: { items:\"item1\" items:\"item2\" } ",
                  "      4. CREATE [DERIVED]:",
                  "          - key: /prefixB/base-value2/item1",
                  "          - value: { value:\"item1\" } ",
                  "      5. CREATE [DERIVED NOOP IS-PENDING]:",
                  "          - key: /prefixB/base-value2/item2",
                  "          - value: { value:\"item2\" } ",
                  "      6. CREATE:",
                  "          - key: /prefixC/base-value3",
                  "          - value: { items:\"item1\" items:\"item2\" } ",
                  "      7. CREATE [DERIVED]:",
                  "          - key: /prefixC/base-value3/item1",
                  "          - value: { value:\"item1\" } ",
                  "      8. CREATE [DERIVED]:",
                  "          - key: /prefixC/base-value3/item2",
                  "          - value: { value:\"item2\" } ")
              + "\n";
      String expectedPre =
          String.join(
                  "\n",
                  plus,
                  header,
                  plus,
                  "  * transaction arguments:",
                  "      - seqNum: 0",
                  "      - type: NB Transaction",
                  "      - Description: testing data change",
                  "      - values:",
                  "          - key: /prefixA/base-value1",
                  "            val: { items:\"item2\" }",
                  "          - key: /prefixB/base-value2",
                  "            val: { items:\"item1\" items:\"item2\" }",
                  "          - key: /prefixC/base-value3",
                  "            val: { items:\"item1\" items:\"item2\" }",
                  "  * planned operations:")
              + "\n"
              + ops;
      assertThat(pre).isEqualTo("\n" + expectedPre);

      String[] lines = fin.split("\n", -1);
      assertThat(lines[0]).isEmpty();
      assertThat(lines[1]).isEqualTo("o" + "-".repeat(118) + "o");
      assertThat(lines[2])
          .matches(
              "  \\* executed operations \\(2024-01-01 00:00:00(\\.\\d+)?"
                  + " \\+0000 UTC -> 2024-01-01 00:00:00(\\.\\d+)? \\+0000 UTC, dur: \\d+ms\\):");
      String afterHeader = fin.substring(fin.indexOf("):\n") + 3);
      String x = "x" + "-".repeat(118) + "x";
      assertThat(afterHeader).startsWith(ops + x + "\n");
      String took = afterHeader.substring(ops.length() + x.length() + 1);
      assertThat(took)
          .matches("\\| #0 - NBTransaction +took \\d+(\\.\\d+)?ms \\|\n" + Pattern.quote(x) + "\n");
      assertThat(took.substring(0, took.indexOf('\n'))).hasSize(120);
    }
  }

  @Test
  @DisplayName(
      "B172 transaction log of a failing resync and its retry: FAILED/RETRY flags, errors, retry header")
  void transactionLogRetry() {
    try (TxnLogCapture log = new TxnLogCapture()) {
      env = envWith(true, b -> b.valueFormatter(RecordsAndHistoryTest::protoText));
      env.kvs()
          .registerDescriptors(
              sb.descriptor("descriptor1", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                  .withMetadata()
                  .derivedValues(CatalogueFixtures.derivedItems())
                  .build());
      sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false);
      sb.planError(
          d(A1, 2),
          new RuntimeException("failed to add value"),
          () -> sb.setValue(A1, arr(1), 0, ValueOrigin.FROM_NB, false));
      assertThatThrownBy(() -> env.commit(RESYNC_WITH_RETRY, A1, arr(1, 2)))
          .isInstanceOf(TransactionException.class);
      env.timers().advance(Duration.ofSeconds(3));
      env.kvs().transactionBarrier();
      assertThat(log.events()).hasSize(4);
      String pre0 = log.events().get(0).getFormattedMessage();
      String fin0 = log.events().get(1).getFormattedMessage();
      String pre1 = log.events().get(2).getFormattedMessage();
      String fin1 = log.events().get(3).getFormattedMessage();
      String header0 = "| #0 - NBTransaction";
      assertThat(pre0)
          .contains(header0 + " ".repeat(120 - header0.length() - 12) + "FullResync |\n");
      assertThat(pre0).contains("      - type: NB Transaction, Full Resync\n");
      assertThat(fin0)
          .contains(
              String.join(
                  "\n",
                  "      3. CREATE [DERIVED]:",
                  "          - key: /prefixA/base-value1/item2",
                  "          - value: { value:\"item2\" } ",
                  "          - error: failed to add value",
                  ""));
      String info = "retrying failed TXN #0 (attempt 1)";
      String header1 = "| #1 - RetryFailedOps";
      assertThat(pre1)
          .contains(
              header1 + " ".repeat(120 - header1.length() - info.length() - 2) + info + " |\n");
      assertThat(pre1).contains("      - type: Retry Transaction (for txn #0, attempt #1)\n");
      assertThat(fin1)
          .contains(
              String.join(
                  "\n",
                  "      1. UPDATE [RETRY]:",
                  "          - key: /prefixA/base-value1",
                  "          - prev-value: { items:\"item1\" } ",
                  "          - new-value: { items:\"item1\" items:\"item2\" } ",
                  "      2. CREATE [DERIVED RETRY]:",
                  "          - key: /prefixA/base-value1/item2",
                  "          - value: { value:\"item2\" } ",
                  "          - prev-error: failed to add value",
                  ""));
    }
  }

  @Test
  @DisplayName("B172 printTxnSummary(false) disables the transaction log")
  void transactionLogDisabled() {
    try (TxnLogCapture log = new TxnLogCapture()) {
      env = envWith(true, b -> b.printTxnSummary(false));
      env.kvs()
          .registerDescriptors(
              sb.descriptor("descriptor1", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                  .build());
      env.commit(A1, arr(1));
      assertThat(log.events()).isEmpty();
    }
  }

  /** Proto-like single-line text of the test values (as Go prints them). */
  private static String protoText(Object v) {
    if (v instanceof CatalogueFixtures.ArrayValue a) {
      List<String> parts = new ArrayList<>();
      for (String item : a.items()) {
        parts.add("items:\"" + item + "\"");
      }
      return String.join(" ", parts);
    }
    if (v instanceof CatalogueFixtures.StringValue sv) {
      return "value:\"" + sv.value() + "\"";
    }
    return String.valueOf(v);
  }
}
