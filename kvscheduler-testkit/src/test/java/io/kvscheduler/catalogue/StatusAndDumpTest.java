package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UNDEFINED;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.INVALID;
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
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.MockSouthbound.CallKind;
import io.kvscheduler.testkit.SchedulerFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Catalogue §15 (value status and watching) and §16 (value dumps). */
class StatusAndDumpTest {
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

  private static ValueStatus st(String key, ValueState state, TxnOperation op, String... details) {
    return new ValueStatus(key, state, "", op, List.of(details));
  }

  private static ValueStatus err(
      String key, ValueState state, TxnOperation op, String error, String... details) {
    return new ValueStatus(key, state, error, op, List.of(details));
  }

  private static BaseValueStatus base(ValueStatus value, ValueStatus... derived) {
    return new BaseValueStatus(value, List.of(derived));
  }

  /** Collects statuses (delivered synchronously by CatalogueFixtures.env). */
  private List<BaseValueStatus> watch(KeySelector selector) {
    List<BaseValueStatus> got = Collections.synchronizedList(new ArrayList<>());
    env.kvs().watchValueStatus(selector, got::add);
    return got;
  }

  private static KVWithMetadata<Object, Object> kvm(
      String key, Object value, Object meta, ValueOrigin origin) {
    return new KVWithMetadata<>(key, value, meta, origin);
  }

  /** The 3-descriptor setup of TestDataChangeTransactions (catalogue §6). */
  private void dataChangeSetup() {
    dataChangeSetup(true);
  }

  private void dataChangeSetup(boolean simulation) {
    env = CatalogueFixtures.env(simulation);
    CatalogueFixtures.registerDataChangeDescriptors(env.kvs(), sb);
  }

  /** TestDependencyCycles: A1 -> A2 -> A3 -> {A1, A4}; no Retrieve. */
  private void cycleSetup() {
    env = CatalogueFixtures.env(true);
    CatalogueFixtures.registerCycleDescriptors(env.kvs(), sb);
  }

  /** TestNotifications setup; a full resync sets B2=[i1,i2] (PENDING, A1 missing). */
  private void notificationsSetup() {
    env = CatalogueFixtures.env(true);
    CatalogueFixtures.registerNotificationDescriptors(env.kvs(), sb);
    env.commit(TxnOptions.builder().resync(ResyncType.FULL).build(), B2, arr(1, 2));
  }

  private void notify(String key, Object value, Object metadata) {
    env.kvs().pushSBNotification(List.of(kvm(key, value, metadata, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
  }

  // ------------------------------------------------------------------ §15 status

  @Test
  @DisplayName(
      "B153 status of a base value lists its derived values; unknown key -> NONEXISTENT only")
  void baseValueStatus() {
    dataChangeSetup();
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    assertThat(env.kvs().valueStatus(B2))
        .isEqualTo(
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), PENDING, CREATE, d(A1, 1))));
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(base(st(A1, CONFIGURED, CREATE), st(d(A1, 2), CONFIGURED, CREATE)));
    assertThat(env.kvs().valueStatus("/prefixA/unknown"))
        .isEqualTo(base(ValueStatus.nonexistent("/prefixA/unknown")));
    assertThat(env.kvs().valueStatus("/prefixA/unknown").value())
        .isEqualTo(
            new ValueStatus("/prefixA/unknown", ValueState.NONEXISTENT, "", UNDEFINED, List.of()));
    assertThat(env.kvs().valueStatuses())
        .extracting(BaseValueStatus::key)
        .containsExactly(A1, B2, C3);
    assertThat(env.kvs().valueStatuses().get(1)).isEqualTo(env.kvs().valueStatus(B2));
  }

  @Test
  @DisplayName(
      "B153 forEachValueStatus gives the selected base values' statuses one by one, in"
          + " key order, as valueStatuses lists them")
  void forEachValueStatus() {
    dataChangeSetup();
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    List<BaseValueStatus> all = new ArrayList<>();
    env.kvs().forEachValueStatus(KeySelector.any(), all::add);
    assertThat(all)
        .isEqualTo(env.kvs().valueStatuses())
        .extracting(BaseValueStatus::key)
        .containsExactly(A1, B2, C3);
    List<BaseValueStatus> some = new ArrayList<>();
    env.kvs().forEachValueStatus(key -> !key.equals(A1), some::add);
    assertThat(some).containsExactly(env.kvs().valueStatus(B2), env.kvs().valueStatus(C3));
    assertThatThrownBy(() -> env.kvs().forEachValueStatus(null, all::add))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("selector");
    assertThatThrownBy(() -> env.kvs().forEachValueStatus(KeySelector.any(), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("action");
  }

  @Test
  @DisplayName(
      "B154 B74 PENDING details list the unsatisfied dependency labels (cycle: A3 -> [A4, A1])")
  void pendingDetails() {
    cycleSetup();
    env.commit(A1, s("base-value1-data"), A2, s("base-value2-data"), A3, s("base-value3-data"));
    assertThat(sb.callLog()).isEmpty();
    assertThat(env.kvs().valueStatus(A1).value()).isEqualTo(st(A1, PENDING, CREATE, A2));
    assertThat(env.kvs().valueStatus(A2).value()).isEqualTo(st(A2, PENDING, CREATE, A3));
    ValueStatus a3 = env.kvs().valueStatus(A3).value();
    assertThat(a3.state()).isEqualTo(PENDING);
    assertThat(a3.lastOperation()).isEqualTo(CREATE);
    assertThat(a3.error()).isEmpty();
    assertThat(a3.details()).containsExactlyInAnyOrder(A4, A1);
    // once the cycle is complete every detail is gone
    env.commit(A4, s("base-value4-data"));
    for (String k : List.of(A1, A2, A3, A4)) {
      assertThat(env.kvs().valueStatus(k).value()).isEqualTo(st(k, CONFIGURED, CREATE));
    }
  }

  @Test
  @DisplayName("B154 INVALID details are the invalid fields of the validation error")
  void invalidDetails() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .validate(
                    (key, value) -> {
                      if (value.equals(arr(9))) {
                        throw new InvalidValueException("invalid-hw-address", "phys_address");
                      }
                    })
                .build());
    assertThatThrownBy(() -> env.commit(A1, arr(9))).isInstanceOf(TransactionException.class);
    assertThat(sb.callLog()).isEmpty();
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(
            base(
                err(
                    A1,
                    INVALID,
                    CREATE,
                    "field phys_address is invalid: invalid-hw-address",
                    "phys_address")));
    // a valid value fixes it; the details disappear
    env.commit(A1, arr(1));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(base(st(A1, CONFIGURED, CREATE)));
  }

  @Test
  @DisplayName(
      "B155 last operation: DELETE for a value un-configured by a lost dependency, UNDEFINED for OBTAINED")
  void lastOperationDeleteAndUndefined() {
    notificationsSetup();
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(base(st(B2, PENDING, CREATE, A1)));
    notify(A1, arr(1), 10);
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(base(st(A1, OBTAINED, UNDEFINED), st(d(A1, 1), OBTAINED, UNDEFINED)));
    assertThat(env.kvs().valueStatus(B2))
        .isEqualTo(
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), PENDING, CREATE, d(A1, 2))));
    notify(A1, null, null);
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(base(st(B2, PENDING, DELETE, A1)));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(base(ValueStatus.nonexistent(A1)));
  }

  @Test
  @DisplayName(
      "B155 B57 re-applying an equal value records nothing and keeps the last operation (D61)")
  void lastOperationUpdateForEqualValue() {
    // without simulation: with it the empty plan skips execution (B164)
    env = CatalogueFixtures.env(false);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .derivedValues(CatalogueFixtures.derivedItems())
                .build());
    env.commit(A1, arr(1));
    sb.clearCalls();
    env.commit(A1, arr(1));
    assertThat(sb.callLog()).isEmpty();
    assertThat(env.txn(1).executed()).isEmpty();
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(base(st(A1, CONFIGURED, CREATE), st(d(A1, 1), CONFIGURED, CREATE)));
  }

  @Test
  @DisplayName(
      "B156 watcher gets one status per changed base key, keys ascending, with derived statuses")
  void watcherPerTransaction() {
    // without simulation: an equal value is executed (bookkeeping only), see B164
    dataChangeSetup(false);
    List<BaseValueStatus> all = watch(KeySelector.any());
    List<BaseValueStatus> onlyB = watch(KeySelector.prefix(CatalogueFixtures.PREFIX_B));
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    assertThat(all)
        .containsExactly(
            base(st(A1, CONFIGURED, CREATE), st(d(A1, 2), CONFIGURED, CREATE)),
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), PENDING, CREATE, d(A1, 1))),
            base(
                st(C3, CONFIGURED, CREATE),
                st(d(C3, 1), CONFIGURED, CREATE),
                st(d(C3, 2), CONFIGURED, CREATE)));
    assertThat(onlyB).containsExactly(all.get(1));
    all.clear();
    onlyB.clear();
    // only B2's derived value changes: one status for its base B2
    env.commit(A1, arr(1, 2));
    assertThat(all)
        .containsExactly(
            base(
                st(A1, CONFIGURED, UPDATE),
                st(d(A1, 1), CONFIGURED, CREATE),
                st(d(A1, 2), CONFIGURED, CREATE)),
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), CONFIGURED, CREATE)));
    assertThat(onlyB).containsExactly(all.get(1));
    // an equal value changes nothing, not even the last operation (D61): nothing is delivered
    all.clear();
    env.commit(C3, arr(1, 2));
    assertThat(all).isEmpty();
    // nor the next time
    all.clear();
    env.commit(C3, arr(1, 2));
    assertThat(all).isEmpty();
    assertThat(onlyB).hasSize(1);
  }

  @Test
  @DisplayName(
      "B156 B102 after a reverted transaction the /prefixA/ watcher gets exactly one status for A1")
  void watcherAfterRevert() {
    dataChangeSetup();
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    List<BaseValueStatus> a = watch(KeySelector.prefix(CatalogueFixtures.PREFIX_A));
    List<BaseValueStatus> b = watch(KeySelector.prefix(CatalogueFixtures.PREFIX_B));
    List<BaseValueStatus> c = watch(KeySelector.prefix(CatalogueFixtures.PREFIX_C));
    sb.planError(
        A1,
        new RuntimeException("failed to modify value"),
        () -> sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false));
    assertThatThrownBy(
            () -> env.commit(TxnOptions.builder().revert(true).build(), C3, arr(1), A1, arr(1)))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e ->
                assertThat(e.keyErrors())
                    .extracting(KeyError::key, KeyError::operation, KeyError::message)
                    .containsExactly(Tuple.tuple(A1, UPDATE, "failed to modify value")));
    assertThat(a)
        .containsExactly(base(st(A1, CONFIGURED, UPDATE), st(d(A1, 2), CONFIGURED, CREATE)));
    assertThat(b).isEmpty();
    assertThat(c).hasSize(1);
    assertThat(c.get(0).value()).isEqualTo(st(C3, CONFIGURED, UPDATE));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(arr(2));
    assertThat(sb.get(C3).orElseThrow().value()).isEqualTo(arr(1, 2));
  }

  @Test
  @DisplayName(
      "B156 B106 B107 with retry the watcher gets one status after the failing resync and one after the retry")
  void watcherWithRetry() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .derivedValues(CatalogueFixtures.derivedItems())
                .build());
    List<BaseValueStatus> got = watch(KeySelector.prefix(CatalogueFixtures.PREFIX_A));
    sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false);
    sb.planError(
        d(A1, 2),
        new RuntimeException("failed to add value"),
        () -> sb.setValue(A1, arr(1), 0, ValueOrigin.FROM_NB, false));
    assertThatThrownBy(
            () ->
                env.commit(
                    TxnOptions.builder()
                        .resync(ResyncType.FULL)
                        .retry(new RetryOptions(Duration.ofSeconds(3), 3, false))
                        .build(),
                    A1,
                    arr(1, 2)))
        .isInstanceOf(TransactionException.class);
    assertThat(got)
        .containsExactly(
            base(
                st(A1, CONFIGURED, UPDATE),
                st(d(A1, 1), CONFIGURED, CREATE),
                err(d(A1, 2), RETRYING, CREATE, "failed to add value")));
    got.clear();
    env.timers().advance(Duration.ofSeconds(3));
    env.kvs().transactionBarrier();
    assertThat(got)
        .containsExactly(
            base(
                st(A1, CONFIGURED, UPDATE),
                st(d(A1, 1), CONFIGURED, CREATE),
                st(d(A1, 2), CONFIGURED, CREATE)));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(got.get(0));
  }

  @Test
  @DisplayName("B156 a closed subscription receives nothing more")
  void closedSubscription() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .build());
    List<BaseValueStatus> got = Collections.synchronizedList(new ArrayList<>());
    Subscription sub = env.kvs().watchValueStatus(KeySelector.any(), got::add);
    env.commit(A1, arr(1));
    assertThat(got).containsExactly(base(st(A1, CONFIGURED, CREATE)));
    sub.close();
    sub.close();
    env.commit(A1, arr(2), A2, arr(1));
    assertThat(got).hasSize(1);
  }

  @Test
  @DisplayName("B157 B66 a deleted base value is reported once as REMOVED, then it is gone")
  void removedReportedOnce() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .derivedValues(CatalogueFixtures.derivedItems())
                .build());
    List<BaseValueStatus> got = watch(KeySelector.any());
    env.commit(A1, arr(1));
    got.clear();
    env.commit(A1, null);
    assertThat(got).containsExactly(base(st(A1, REMOVED, DELETE)));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(base(ValueStatus.nonexistent(A1)));
    assertThat(env.kvs().valueStatuses()).isEmpty();
    got.clear();
    env.commit(A2, arr(1));
    assertThat(got).extracting(BaseValueStatus::key).containsExactly(A2);
  }

  @Test
  @DisplayName(
      "B157 (ours, deliberate difference: statuses queue on the status executor instead of being dropped) a blocked listener never blocks transactions")
  void blockedListenerDoesNotBlockEngine() throws Exception {
    ExecutorService statusThread = Executors.newSingleThreadExecutor();
    try (KVScheduler kvs = KVScheduler.builder().statusExecutor(statusThread).build()) {
      kvs.registerDescriptors(
          sb.descriptor("descriptor1", Object.class)
              .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
              .build());
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch delivered = new CountDownLatch(4);
      List<String> keys = Collections.synchronizedList(new ArrayList<>());
      kvs.watchValueStatus(
          KeySelector.any(),
          s -> {
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            keys.add(s.key() + " " + s.state());
            delivered.countDown();
          });
      List<BaseValueStatus> failing = Collections.synchronizedList(new ArrayList<>());
      kvs.watchValueStatus(
          KeySelector.any(),
          s -> {
            failing.add(s);
            throw new IllegalStateException("listener bug");
          });
      // four transactions complete although the first listener is stuck
      kvs.startNBTransaction().setValue(A1, arr(1)).commit();
      kvs.startNBTransaction().setValue(A2, arr(1)).commit();
      kvs.startNBTransaction().setValue(A1, arr(2)).commit();
      long seq = kvs.startNBTransaction().setValue(A2, null).commit();
      assertThat(seq).isEqualTo(3);
      assertThat(keys).isEmpty();
      release.countDown();
      assertThat(delivered.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(keys)
          .containsExactly(
              A1 + " CONFIGURED", A2 + " CONFIGURED", A1 + " CONFIGURED", A2 + " REMOVED");
      // the throwing listener kept its subscription and saw every status too
      statusThread.submit(() -> {}).get(10, TimeUnit.SECONDS);
      assertThat(failing).extracting(BaseValueStatus::key).containsExactly(A1, A2, A1, A2);
    } finally {
      statusThread.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ §16 dumps

  @Test
  @DisplayName(
      "(ours) bulk transactions: statuses and dumps follow creation, change, removal and pending of thousands of values")
  void bulkTransactionsArePublishedExactly() {
    dataChangeSetup(false);
    KVScheduler kvs = env.kvs();
    int n = 3000; // above the size at which the published map is rebuilt in one pass
    Object[] create = new Object[4 * n];
    for (int i = 0; i < n; i++) {
      create[2 * i] = CatalogueFixtures.PREFIX_A + "v" + i;
      create[2 * i + 1] = arr(1);
      create[2 * n + 2 * i] =
          CatalogueFixtures.PREFIX_B + "v" + i; // B values wait for nothing: no dependency
      create[2 * n + 2 * i + 1] = s("b" + i);
    }
    env.commit(create);
    assertThat(kvs.dumpValues("descriptor1", View.CACHED)).hasSize(n);
    assertThat(kvs.dumpValues("descriptor2", View.CACHED)).hasSize(n);
    assertThat(kvs.valueStatus(CatalogueFixtures.PREFIX_A + "v7"))
        .isEqualTo(
            base(
                st(CatalogueFixtures.PREFIX_A + "v7", CONFIGURED, CREATE),
                st(d(CatalogueFixtures.PREFIX_A + "v7", 1), CONFIGURED, CREATE)));
    assertThat(kvs.valueStatuses()).hasSize(2 * n);

    // a second bulk transaction: every even A value removed, every odd one changed; the B
    // values are untouched and their published statuses must survive the rebuild
    Object[] change = new Object[2 * n];
    for (int i = 0; i < n; i++) {
      change[2 * i] = CatalogueFixtures.PREFIX_A + "v" + i;
      change[2 * i + 1] = i % 2 == 0 ? null : arr(2);
    }
    env.commit(change);
    assertThat(kvs.dumpValues("descriptor1", View.CACHED))
        .extracting(KVWithMetadata::key)
        .hasSize(n / 2)
        .allMatch(
            k -> Integer.parseInt(k.substring(CatalogueFixtures.PREFIX_A.length() + 1)) % 2 == 1);
    assertThat(kvs.valueStatus(CatalogueFixtures.PREFIX_A + "v8"))
        .isEqualTo(base(ValueStatus.nonexistent(CatalogueFixtures.PREFIX_A + "v8")));
    assertThat(kvs.valueStatus(CatalogueFixtures.PREFIX_A + "v9"))
        .isEqualTo(
            base(
                st(CatalogueFixtures.PREFIX_A + "v9", CONFIGURED, UPDATE),
                st(d(CatalogueFixtures.PREFIX_A + "v9", 2), CONFIGURED, CREATE)));
    assertThat(kvs.valueStatus(CatalogueFixtures.PREFIX_B + "v8"))
        .isEqualTo(base(st(CatalogueFixtures.PREFIX_B + "v8", CONFIGURED, CREATE)));
    assertThat(kvs.valueStatuses()).hasSize(n + n / 2);
    assertThat(kvs.dumpValues("descriptor2", View.CACHED)).hasSize(n);

    // B2's derived values depend on A1 (and A1/item1): B2 waits while A1 is absent, in a bulk
    // transaction that also re-creates every removed A value
    Object[] again = new Object[2 * (n / 2) + 2];
    int j = 0;
    for (int i = 0; i < n; i += 2) {
      again[j++] = CatalogueFixtures.PREFIX_A + "v" + i;
      again[j++] = arr(3);
    }
    again[j++] = B2;
    again[j] = arr(1);
    env.commit(again);
    assertThat(kvs.valueStatus(B2))
        .isEqualTo(base(st(B2, CONFIGURED, CREATE), st(d(B2, 1), PENDING, CREATE, A1)));
    env.commit(A1, arr(1));
    assertThat(kvs.valueStatus(B2))
        .isEqualTo(base(st(B2, CONFIGURED, CREATE), st(d(B2, 1), CONFIGURED, CREATE)));
    assertThat(kvs.valueStatuses()).hasSize(2 * n + 2);
  }

  @Test
  @DisplayName(
      "B158 B159 B160 views of a pending NB value, an OBTAINED value and a descriptor without Retrieve")
  void dumpsAroundNotifications() {
    notificationsSetup();
    var kvs = env.kvs();
    // pending B2: intent only
    assertThat(kvs.dumpValues("descriptor2", View.NB))
        .containsExactly(kvm(B2, arr(1, 2), null, ValueOrigin.FROM_NB));
    assertThat(kvs.dumpValues("descriptor2", View.CACHED)).isEmpty();
    sb.clearCalls();
    assertThat(kvs.dumpValues("descriptor2", View.SB)).isEmpty();
    assertThat(sb.calls()).hasSize(1);
    assertThat(sb.calls().get(0).kind()).isEqualTo(CallKind.RETRIEVE);
    assertThat(sb.calls().get(0).key()).isEqualTo("descriptor2");
    assertThat(sb.calls().get(0).correlate()).isEmpty();
    // D1 has no Retrieve
    assertThatThrownBy(() -> kvs.dumpValues("descriptor1", View.SB))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor1")
        .hasMessageContaining("does not support Retrieve operation");
    assertThatThrownBy(() -> kvs.dumpValuesByKeyPrefix(CatalogueFixtures.PREFIX_A, View.SB))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("does not support Retrieve operation");

    notify(A1, arr(1), 10);
    // OBTAINED A1: cached (origin SB), not NB
    assertThat(kvs.dumpValues("descriptor1", View.CACHED))
        .containsExactly(kvm(A1, arr(1), 10, ValueOrigin.FROM_SB));
    assertThat(kvs.dumpValues("descriptor1", View.NB)).isEmpty();
    // B2 created: the three views agree
    assertThat(kvs.dumpValues("descriptor2", View.NB))
        .containsExactly(kvm(B2, arr(1, 2), 0, ValueOrigin.FROM_NB));
    assertThat(kvs.dumpValues("descriptor2", View.CACHED))
        .containsExactly(kvm(B2, arr(1, 2), 0, ValueOrigin.FROM_NB));
    sb.clearCalls();
    assertThat(kvs.dumpValues("descriptor2", View.SB))
        .containsExactly(kvm(B2, arr(1, 2), 0, ValueOrigin.FROM_NB));
    // Retrieve got the cached view as correlation input
    assertThat(sb.calls()).hasSize(1);
    assertThat(sb.calls().get(0).correlate())
        .containsExactly(kvm(B2, arr(1, 2), 0, ValueOrigin.FROM_NB));
  }

  @Test
  @DisplayName(
      "B158 the NB view shows the requested value of FAILED and INVALID values; the cached view does not")
  void nbViewOfFailedAndInvalid() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .validate(
                    (key, value) -> {
                      if (value.equals(arr(9))) {
                        throw new InvalidValueException("bad value", "items");
                      }
                    })
                .build());
    env.commit(A3, arr(3));
    sb.planError(A1, new RuntimeException("failed to add value"));
    assertThatThrownBy(() -> env.commit(A1, arr(1), A2, arr(9)))
        .isInstanceOf(TransactionException.class);
    assertThat(env.kvs().valueStatus(A1).state()).isEqualTo(FAILED);
    assertThat(env.kvs()).value(A2).isInvalid();
    assertThat(env.kvs().dumpValues("descriptor1", View.NB))
        .containsExactly(
            kvm(A1, arr(1), null, ValueOrigin.FROM_NB),
            kvm(A2, arr(9), null, ValueOrigin.FROM_NB),
            kvm(A3, arr(3), 0, ValueOrigin.FROM_NB));
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(kvm(A3, arr(3), 0, ValueOrigin.FROM_NB));
    assertThat(env.kvs().dumpValues("descriptor1", View.SB))
        .containsExactly(kvm(A3, arr(3), 0, ValueOrigin.FROM_NB));
    // a value whose last request is a deletion is not in the NB view
    env.commit(A3, null);
    assertThat(env.kvs().dumpValues("descriptor1", View.NB))
        .extracting(KVWithMetadata::key)
        .containsExactly(A1, A2);
  }

  @Test
  @DisplayName(
      "B159 B137 an SB-origin value found by a resync is in the cached and SB views, not in the NB view")
  void obtainedByResync() {
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
    assertThat(env.kvs().dumpValues("descriptor1", View.NB))
        .containsExactly(kvm(A2, arr(1), 0, ValueOrigin.FROM_NB));
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(
            kvm(A1, s("base-value1"), null, ValueOrigin.FROM_SB),
            kvm(A2, arr(1), 0, ValueOrigin.FROM_NB));
    assertThat(env.kvs().dumpValues("descriptor1", View.SB))
        .containsExactly(
            kvm(A1, s("base-value1"), null, ValueOrigin.FROM_SB),
            kvm(A2, arr(1), 0, ValueOrigin.FROM_NB));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(base(st(A1, OBTAINED, UNDEFINED)));
  }

  @Test
  @DisplayName("B160 B161 dump errors: unknown descriptor, no descriptor for the exact key prefix")
  void dumpErrors() {
    dataChangeSetup();
    for (View v : View.values()) {
      assertThatThrownBy(() -> env.kvs().dumpValues("descriptorX", v))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("descriptorX")
          .hasMessageContaining("not registered");
      assertThatThrownBy(() -> env.kvs().dumpValuesByKeyPrefix("/prefixX/", v))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no descriptor found matching the key prefix");
      // the prefix must match exactly
      assertThatThrownBy(() -> env.kvs().dumpValuesByKeyPrefix("/prefixA", v))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no descriptor found matching the key prefix");
      assertThatThrownBy(() -> env.kvs().dumpValuesByKeyPrefix(A1, v))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("no descriptor found matching the key prefix");
    }
    assertThat(sb.callLog()).isEmpty();
  }

  @Test
  @DisplayName(
      "B161 in a synchronized state the three views of each prefix agree (base values only)")
  void dumpByPrefixSynchronized() {
    dataChangeSetup();
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    sb.clearCalls();
    for (View v : View.values()) {
      assertThat(env.kvs().dumpValuesByKeyPrefix(CatalogueFixtures.PREFIX_A, v))
          .as("view %s", v)
          .containsExactly(kvm(A1, arr(2), 0, ValueOrigin.FROM_NB));
      assertThat(env.kvs().dumpValuesByKeyPrefix(CatalogueFixtures.PREFIX_B, v))
          .as("view %s", v)
          .containsExactly(kvm(B2, arr(1, 2), 0, ValueOrigin.FROM_NB));
      assertThat(env.kvs().dumpValuesByKeyPrefix(CatalogueFixtures.PREFIX_C, v))
          .as("view %s", v)
          .containsExactly(kvm(C3, arr(1, 2), 0, ValueOrigin.FROM_NB));
      assertThat(env.kvs().dumpValues("descriptor1", v))
          .isEqualTo(env.kvs().dumpValuesByKeyPrefix(CatalogueFixtures.PREFIX_A, v));
    }
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE descriptor1",
            "RETRIEVE descriptor2",
            "RETRIEVE descriptor3",
            "RETRIEVE descriptor1",
            "RETRIEVE descriptor1");
  }
}
