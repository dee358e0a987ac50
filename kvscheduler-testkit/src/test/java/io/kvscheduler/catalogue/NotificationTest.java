package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UNDEFINED;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.OBTAINED;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Catalogue §14, B145–B152: SB notifications (TestNotifications, TestNotificationsWithRetry).
 * Notifications are processed asynchronously: every push is followed by a transaction barrier.
 */
class NotificationTest {
  static final String D4 = "/prefixD/base-value4";

  private final MockSouthbound sb = new MockSouthbound();
  private final List<BaseValueStatus> statuses = new CopyOnWriteArrayList<>();
  private SchedulerFixture env;

  @AfterEach
  void tearDown() {
    if (env != null) {
      env.close();
    }
    assertThat(sb.inconsistencies()).isEmpty();
  }

  // ------------------------------------------------------------------ helpers

  static ValueStatus vs(
      String key, ValueState state, TxnOperation op, String error, String... details) {
    return new ValueStatus(key, state, error, op, List.of(details));
  }

  static BaseValueStatus bs(ValueStatus value, ValueStatus... derived) {
    return new BaseValueStatus(value, List.of(derived));
  }

  static KVWithMetadata<Object, Object> kvm(
      String key, Object value, Object meta, ValueOrigin origin) {
    return new KVWithMetadata<>(key, value, meta, origin);
  }

  static RecordedTxn.RecordedValue rv(String key, Object value, ValueOrigin origin) {
    return new RecordedTxn.RecordedValue(key, Optional.ofNullable(value), origin);
  }

  static void pushAndWait(SchedulerFixture env, String key, Object value, Object metadata) {
    env.kvs()
        .pushSBNotification(
            List.of(new KVWithMetadata<>(key, value, metadata, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
  }

  private static void assertSbEntry(
      MockSouthbound sb, String key, Object value, Object meta, ValueOrigin origin) {
    MockSouthbound.Entry e = sb.get(key).orElseThrow(() -> new AssertionError("no " + key));
    assertThat(e.value()).isEqualTo(value);
    assertThat(e.metadata()).isEqualTo(meta);
    assertThat(e.origin()).isEqualTo(origin);
  }

  private Optional<Object> meta(String descriptor, String label) {
    return env.kvs().metadataMap(descriptor, Object.class).lookup(label);
  }

  private static void assertRecord(
      RecordedTxn txn, long seq, TxnType type, RecordedTxn.RecordedValue... values) {
    assertThat(txn.seqNum()).isEqualTo(seq);
    assertThat(txn.type()).isEqualTo(type);
    assertThat(txn.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(txn.description()).isEmpty();
    assertThat(txn.values()).containsExactly(values);
    assertThat(txn.start()).isBefore(txn.stop());
  }

  // --------------------------------------------------------- TestNotifications

  /**
   * Setup of TestNotifications: descriptor1 (/prefixA/, base keys only, no Retrieve, metadata),
   * descriptor2 (/prefixB/, B2 → A1, B2/i2 → A1/i2, metadata); full resync with B2=[i1,i2].
   */
  private void notificationsSetUp() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .keySelector(
                    k ->
                        k.startsWith(CatalogueFixtures.PREFIX_A)
                            && !k.substring(CatalogueFixtures.PREFIX_A.length()).contains("/"))
                .derivedValues(CatalogueFixtures.derivedItems())
                .withMetadata()
                .withoutRetrieve()
                .build(),
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .derivedValues(CatalogueFixtures.derivedItems())
                .dependencies(
                    (key, value) -> {
                      if (key.equals(B2)) return List.of(Dependency.onKey(A1, A1));
                      if (key.equals(d(B2, 2)))
                        return List.of(Dependency.onKey(d(A1, 2), d(A1, 2)));
                      return List.of();
                    })
                .withMetadata()
                .retrieveDependencies("descriptor1")
                .build());
    var txn = env.kvs().startNBTransaction();
    txn.setValue(B2, arr(1, 2));
    assertThat(txn.commit(TxnOptions.builder().resync(ResyncType.FULL, true).build())).isZero();
    assertThat(sb.callLog()).containsExactly("RETRIEVE descriptor2");
    assertThat(sb.calls().get(0).correlate())
        .containsExactly(kvm(B2, arr(1, 2), null, ValueOrigin.FROM_NB));
    OpSpec pending = op(CREATE, B2).states(NONEXISTENT, PENDING).flags("NOOP").newValue(arr(1, 2));
    TxnAssert.assertThat(env.txn(0)).planned(pending).executed(pending);
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, PENDING, CREATE, "", A1)));
    assertThat(env.kvs().metadataMap("descriptor2", Object.class).labels()).isEmpty();
    sb.clearCalls();
  }

  private void firstNotification() {
    sb.setValue(A1, arr(1), 10, ValueOrigin.FROM_SB, false);
    pushAndWait(env, A1, arr(1), 10);
  }

  private void secondNotification() {
    sb.setValue(A1, arr(1, 2), 11, ValueOrigin.FROM_SB, false);
    pushAndWait(env, A1, arr(1, 2), 11);
  }

  @Test
  @DisplayName(
      "(ours) a notified value of the wrong class is ignored, as a retrieved one is: the"
          + " descriptor's code never sees it, and the other pairs of the notification apply")
  void notifiedValueOfTheWrongClassIgnored() {
    env = CatalogueFixtures.env(true);
    List<String> seen = new CopyOnWriteArrayList<>();
    env.kvs()
        .registerDescriptors(
            KVDescriptor.builder("typed", CatalogueFixtures.StringValue.class)
                .nbKeyPrefix("/typed/")
                .create((k, v) -> null)
                .delete((k, v, m) -> {})
                .retrieve(
                    correlate -> {
                      for (var c : correlate) {
                        seen.add(c.value().value()); // a String here would fail with a cast
                      }
                      return List.of();
                    })
                .build());
    env.kvs()
        .pushSBNotification(
            List.<KVWithMetadata<?, ?>>of(
                kvm("/typed/x", "not a StringValue", null, ValueOrigin.FROM_SB),
                kvm("/typed/y", s("ok"), null, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
    assertThat(env.kvs().valueStatus("/typed/x").state()).isEqualTo(NONEXISTENT);
    assertThat(env.kvs()).value("/typed/y").isObtained();
    assertThat(env.kvs().dumpValues("typed", View.SB)).isEmpty(); // Retrieve ran, and found none
    assertThat(seen).containsExactly("ok");
  }

  @Test
  @DisplayName(
      "B145 B146 B152 a notified value is OBTAINED without calls; its pending"
          + " dependents are created before its derived values (TestNotifications, 1st notification)")
  void notifiedNewValue() {
    notificationsSetUp();
    env.kvs().watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_A), statuses::add);

    firstNotification();

    // B146: only the dependent is created through its descriptor
    assertThat(sb.callLog()).containsExactly("CREATE " + B2, "CREATE " + d(B2, 1));
    assertSbEntry(sb, A1, arr(1), 10, ValueOrigin.FROM_SB);
    assertSbEntry(sb, B2, arr(1, 2), 0, ValueOrigin.FROM_NB);
    assertSbEntry(sb, d(B2, 1), s("item1"), null, ValueOrigin.FROM_NB);
    assertThat(sb.get(d(B2, 2))).isEmpty();
    assertThat(meta("descriptor1", "base-value1")).contains(10);
    assertThat(meta("descriptor2", "base-value2")).contains(0);

    RecordedTxn txn = env.txn(1);
    assertRecord(txn, 1, TxnType.SB_NOTIFICATION, rv(A1, arr(1), ValueOrigin.FROM_SB));
    OpSpec[] ops = {
      op(CREATE, A1).states(NONEXISTENT, OBTAINED).prevValue(null).newValue(arr(1)),
      op(CREATE, B2).states(PENDING, CONFIGURED).prevValue(arr(1, 2)).newValue(arr(1, 2)),
      op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED").newValue(s("item1")),
      op(CREATE, d(B2, 2))
          .states(NONEXISTENT, PENDING)
          .flags("DERIVED", "NOOP")
          .newValue(s("item2")),
      op(CREATE, d(A1, 1))
          .states(NONEXISTENT, OBTAINED)
          .flags("DERIVED", "PROPERTY")
          .newValue(s("item1"))
    };
    // B152: simulation enabled in the scheduler configuration ⇒ the notification has a plan
    assertThat(txn.withSimulation()).isTrue();
    TxnAssert.assertThat(txn).planned(ops).executed(ops);

    assertThat(env.kvs().valueStatus(B2))
        .isEqualTo(
            bs(
                vs(B2, CONFIGURED, CREATE, ""),
                vs(d(B2, 1), CONFIGURED, CREATE, ""),
                vs(d(B2, 2), PENDING, CREATE, "", d(A1, 2))));
    BaseValueStatus a1 = bs(vs(A1, OBTAINED, UNDEFINED, ""), vs(d(A1, 1), OBTAINED, UNDEFINED, ""));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(a1);
    assertThat(statuses).containsExactly(a1);
    // cached view holds the SB value with its metadata; the NB view does not
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(kvm(A1, arr(1), 10, ValueOrigin.FROM_SB));
    assertThat(env.kvs().dumpValues("descriptor1", View.NB)).isEmpty();
  }

  @Test
  @DisplayName(
      "B147 a notified update changes the OBTAINED value in place (no call), replaces its"
          + " metadata, adds derived values and triggers dependents (TestNotifications, 2nd)")
  void notifiedUpdate() {
    notificationsSetUp();
    firstNotification();
    sb.clearCalls();

    secondNotification();

    assertThat(sb.callLog()).containsExactly("CREATE " + d(B2, 2));
    assertSbEntry(sb, A1, arr(1, 2), 11, ValueOrigin.FROM_SB);
    assertSbEntry(sb, d(B2, 2), s("item2"), null, ValueOrigin.FROM_NB);
    assertThat(sb.keys()).containsExactly(A1, B2, d(B2, 1), d(B2, 2));
    assertThat(meta("descriptor1", "base-value1")).contains(11);
    assertThat(meta("descriptor2", "base-value2")).contains(0);

    RecordedTxn txn = env.txn(2);
    assertRecord(txn, 2, TxnType.SB_NOTIFICATION, rv(A1, arr(1, 2), ValueOrigin.FROM_SB));
    OpSpec[] ops = {
      op(UPDATE, A1).states(OBTAINED, OBTAINED).prevValue(arr(1)).newValue(arr(1, 2)),
      op(CREATE, d(A1, 2))
          .states(NONEXISTENT, OBTAINED)
          .flags("DERIVED", "PROPERTY")
          .newValue(s("item2")),
      op(CREATE, d(B2, 2))
          .states(PENDING, CONFIGURED)
          .flags("DERIVED")
          .prevValue(s("item2"))
          .newValue(s("item2"))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(env.kvs().valueStatus(B2))
        .isEqualTo(
            bs(
                vs(B2, CONFIGURED, CREATE, ""),
                vs(d(B2, 1), CONFIGURED, CREATE, ""),
                vs(d(B2, 2), CONFIGURED, CREATE, "")));
  }

  @Test
  @DisplayName(
      "B148 a notified removal deletes the value without a call, derived values first,"
          + " and un-configures its NB dependents to PENDING (TestNotifications, 3rd)")
  void notifiedRemoval() {
    notificationsSetUp();
    firstNotification();
    secondNotification();
    sb.clearCalls();

    sb.setValue(A1, null, null, ValueOrigin.FROM_SB, false);
    pushAndWait(env, A1, null, null);

    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(B2, 2), "DELETE " + d(B2, 1), "DELETE " + B2);
    assertThat(sb.keys()).isEmpty();
    assertThat(env.kvs().metadataMap("descriptor2", Object.class).labels()).isEmpty();

    RecordedTxn txn = env.txn(3);
    assertRecord(txn, 3, TxnType.SB_NOTIFICATION, rv(A1, null, ValueOrigin.FROM_SB));
    OpSpec[] ops = {
      op(DELETE, d(A1, 1))
          .states(OBTAINED, REMOVED)
          .flags("DERIVED", "PROPERTY")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, d(B2, 2))
          .states(CONFIGURED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item2"))
          .newValue(null),
      op(DELETE, d(A1, 2))
          .states(OBTAINED, REMOVED)
          .flags("DERIVED", "PROPERTY")
          .prevValue(s("item2"))
          .newValue(null),
      op(DELETE, d(B2, 1))
          .states(CONFIGURED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, B2).states(CONFIGURED, PENDING).prevValue(arr(1, 2)).newValue(arr(1, 2)),
      op(DELETE, A1).states(OBTAINED, REMOVED).prevValue(arr(1, 2)).newValue(null)
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, PENDING, DELETE, "", A1)));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(ValueStatus.nonexistent(A1)));
  }

  @Test
  @DisplayName(
      "B149 notifications for keys without descriptor or for NB-owned values are ignored"
          + " (still recorded); (ours, D14) every pair is checked; one push = one transaction")
  void notificationFilter() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .build());
    env.kvs().startNBTransaction().setValue(A1, s("nb")).commit();
    sb.clearCalls();

    // #1: no descriptor selects the key
    pushAndWait(env, D4, s("x"), null);
    // #2: A1 is owned by the northbound
    pushAndWait(env, A1, s("sb"), 5);
    // #3: the NB-owned first pair is ignored, the second (A2) is applied (ours: every pair is
    // checked; the reference would drop the whole notification)
    env.kvs()
        .pushSBNotification(
            List.of(
                new KVWithMetadata<>(A1, s("sb"), 5, ValueOrigin.FROM_SB),
                new KVWithMetadata<>(A2, s("a2"), 6, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
    // #4: two SB values in one push ⇒ one transaction; a later pair without descriptor and a
    // later NB-owned pair are ignored (the reference would apply the NB-owned one as OBTAINED)
    env.kvs()
        .pushSBNotification(
            List.of(
                new KVWithMetadata<>(A2, s("a2"), 6, ValueOrigin.FROM_SB),
                new KVWithMetadata<>(A3, s("a3"), 7, ValueOrigin.FROM_SB),
                new KVWithMetadata<>(D4, s("y"), null, ValueOrigin.FROM_SB),
                new KVWithMetadata<>(A1, s("sb2"), 8, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();

    assertThat(sb.callLog()).isEmpty();
    assertThat(env.kvs().transactionHistory())
        .extracting(RecordedTxn::seqNum, RecordedTxn::type)
        .containsExactly(
            tuple(0L, TxnType.NB_TRANSACTION),
            tuple(1L, TxnType.SB_NOTIFICATION),
            tuple(2L, TxnType.SB_NOTIFICATION),
            tuple(3L, TxnType.SB_NOTIFICATION),
            tuple(4L, TxnType.SB_NOTIFICATION));
    TxnAssert.assertThat(env.txn(1)).executedNothing();
    assertThat(env.txn(1).values()).containsExactly(rv(D4, s("x"), ValueOrigin.FROM_SB));
    TxnAssert.assertThat(env.txn(2)).executedNothing();
    TxnAssert.assertThat(env.txn(3))
        .executed(op(CREATE, A2).states(NONEXISTENT, OBTAINED).newValue(s("a2")));
    assertThat(env.kvs().valueStatus(D4)).isEqualTo(bs(ValueStatus.nonexistent(D4)));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, CONFIGURED, CREATE, "")));
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .contains(kvm(A1, s("nb"), 0, ValueOrigin.FROM_NB));
    TxnAssert.assertThat(env.txn(4))
        .executed(op(CREATE, A3).states(NONEXISTENT, OBTAINED).newValue(s("a3")));
    assertThat(env.txn(4).values())
        .containsExactly(
            rv(A1, s("sb2"), ValueOrigin.FROM_SB), rv(A2, s("a2"), ValueOrigin.FROM_SB),
            rv(A3, s("a3"), ValueOrigin.FROM_SB), rv(D4, s("y"), ValueOrigin.FROM_SB));
    assertThat(env.kvs().valueStatus(D4)).isEqualTo(bs(ValueStatus.nonexistent(D4)));
    assertThat(meta("descriptor1", "base-value2")).contains(6);
    assertThat(meta("descriptor1", "base-value3")).contains(7);
  }

  // -------------------------------------------------------- TestNotificationsWithRetry

  /**
   * TestNotificationsWithRetry up to (and including) the notification: descriptor1 (/prefixA/, no
   * Retrieve), descriptor2 (/prefixB/, B2 → A1, B2/i2 → A1/i2), descriptor3 (/prefixC/, C3 → any of
   * /prefixA/, retrieved after descriptor2); planned errors for B2/i2 (SB left with B2=[i1]) and
   * C3; txn #0 B2=[i1,i2] with default retry, txn #1 C3 with retry (3 s, 3, back-off); then
   * watchers on /prefixB/ and /prefixC/ and the notification A1=[i1,i2] (meta 10) = txn #2.
   */
  static final class WithRetryScenario {
    static final Object C3_DATA = s("base-value3-data");

    final MockSouthbound sb;
    final SchedulerFixture env;
    final List<BaseValueStatus> prefB = new CopyOnWriteArrayList<>();
    final List<BaseValueStatus> prefC = new CopyOnWriteArrayList<>();

    WithRetryScenario(MockSouthbound sb, SchedulerFixture env) {
      this.sb = sb;
      this.env = env;
    }

    void runUntilNotification() {
      env.kvs()
          .registerDescriptors(
              sb.descriptor("descriptor1", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                  .derivedValues(CatalogueFixtures.derivedItems())
                  .withMetadata()
                  .withoutRetrieve()
                  .build(),
              sb.descriptor("descriptor2", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                  .dependencies(
                      (key, value) -> {
                        if (key.equals(B2)) return List.of(Dependency.onKey(A1, A1));
                        if (key.equals(d(B2, 2)))
                          return List.of(Dependency.onKey(d(A1, 2), d(A1, 2)));
                        return List.of();
                      })
                  .derivedValues(CatalogueFixtures.derivedItems())
                  .withMetadata()
                  .build(),
              sb.descriptor("descriptor3", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                  .dependencies(
                      (key, value) ->
                          key.equals(C3)
                              ? List.of(
                                  Dependency.anyOfPrefixes(
                                      CatalogueFixtures.PREFIX_A, CatalogueFixtures.PREFIX_A))
                              : List.of())
                  .withMetadata()
                  .retrieveDependencies("descriptor2")
                  .build());
      sb.planError(
          d(B2, 2),
          new RuntimeException("failed to add derived value"),
          () -> sb.setValue(B2, arr(1), 0, ValueOrigin.FROM_NB, false));
      sb.planError(
          C3,
          new RuntimeException("failed to add value"),
          () -> sb.setValue(C3, null, null, ValueOrigin.FROM_NB, false));

      assertThat(
              env.kvs()
                  .startNBTransaction()
                  .setValue(B2, arr(1, 2))
                  .commit(TxnOptions.builder().retryWithDefaults().build()))
          .isZero();
      assertThat(
              env.kvs()
                  .startNBTransaction()
                  .setValue(C3, C3_DATA)
                  .commit(
                      TxnOptions.builder()
                          .retry(new RetryOptions(Duration.ofSeconds(3), 3, true))
                          .build()))
          .isEqualTo(1);
      assertThat(sb.keys()).isEmpty();
      assertThat(sb.calls()).isEmpty();

      env.kvs().watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_B), prefB::add);
      env.kvs().watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_C), prefC::add);
      pushAndWait(env, A1, arr(1, 2), 10);
    }
  }

  @Test
  @DisplayName(
      "B150 B93 B94 B97 B100 a notification makes NB dependents fail: best effort,"
          + " RETRYING with errors in the record and to watchers, refresh of failed values"
          + " (TestNotificationsWithRetry, txn #2)")
  void notificationWithFailingDependents() {
    env = CatalogueFixtures.env(true);
    WithRetryScenario sc = new WithRetryScenario(sb, env);
    sc.runUntilNotification();

    // B150: failures reported through the watchers
    assertThat(sc.prefB)
        .containsExactly(
            bs(
                vs(B2, CONFIGURED, CREATE, ""),
                vs(d(B2, 1), CONFIGURED, CREATE, ""),
                vs(d(B2, 2), RETRYING, CREATE, "failed to add derived value")));
    assertThat(sc.prefC).containsExactly(bs(vs(C3, RETRYING, CREATE, "failed to add value")));
    // B93: the rest is applied
    assertThat(sb.keys()).containsExactly(B2, d(B2, 1));
    assertSbEntry(sb, B2, arr(1), 0, ValueOrigin.FROM_NB);
    assertSbEntry(sb, d(B2, 1), s("item1"), null, ValueOrigin.FROM_NB);
    assertThat(meta("descriptor1", "base-value1")).contains(10);
    assertThat(meta("descriptor2", "base-value2")).contains(0);
    assertThat(meta("descriptor3", "base-value3")).isEmpty();
    // B97: refresh of the descriptors of failed values, registry order, available correlation
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + B2,
            "CREATE " + d(B2, 1),
            "CREATE " + C3 + " ✗",
            "CREATE " + d(B2, 2) + " ✗",
            "RETRIEVE descriptor2",
            "RETRIEVE descriptor3");
    assertThat(sb.calls().get(4).correlate())
        .containsExactly(kvm(B2, arr(1, 2), 0, ValueOrigin.FROM_NB));
    assertThat(sb.calls().get(5).correlate()).isEmpty();

    assertThat(env.kvs().transactionHistory()).hasSize(3);
    RecordedTxn txn = env.txn(2);
    assertRecord(txn, 2, TxnType.SB_NOTIFICATION, rv(A1, arr(1, 2), ValueOrigin.FROM_SB));
    TxnAssert.assertThat(txn)
        .planned(
            op(CREATE, A1).states(NONEXISTENT, OBTAINED).newValue(arr(1, 2)),
            op(CREATE, B2).states(PENDING, CONFIGURED).prevValue(arr(1, 2)).newValue(arr(1, 2)),
            op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, C3)
                .states(PENDING, CONFIGURED)
                .prevValue(WithRetryScenario.C3_DATA)
                .newValue(WithRetryScenario.C3_DATA),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, OBTAINED).flags("DERIVED"),
            op(CREATE, d(A1, 2)).states(NONEXISTENT, OBTAINED).flags("DERIVED"),
            op(CREATE, d(B2, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED").error(""));
    // B94 B100: failures of values the notification reached indirectly
    TxnAssert.assertThat(txn)
        .executed(
            op(CREATE, A1).states(NONEXISTENT, OBTAINED).newValue(arr(1, 2)),
            op(CREATE, B2).states(PENDING, CONFIGURED).prevValue(arr(1, 2)).newValue(arr(1, 2)),
            op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, C3)
                .states(PENDING, RETRYING)
                .prevValue(WithRetryScenario.C3_DATA)
                .newValue(WithRetryScenario.C3_DATA)
                .error("failed to add value"),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, OBTAINED).flags("DERIVED"),
            op(CREATE, d(A1, 2)).states(NONEXISTENT, OBTAINED).flags("DERIVED"),
            op(CREATE, d(B2, 2))
                .states(NONEXISTENT, RETRYING)
                .flags("DERIVED")
                .newValue(s("item2"))
                .error("failed to add derived value"));
    assertThat(env.kvs().valueStatus(C3))
        .isEqualTo(bs(vs(C3, RETRYING, CREATE, "failed to add value")));
  }

  // ------------------------------------------------------------------ B151, B152

  @Test
  @DisplayName(
      "B151 NB takes over an OBTAINED value: a different value is applied by Update,"
          + " an equivalent one is a NOOP UPDATE (WAS-OBTAINED), an NB delete calls Delete")
  void nbTakesOverSbValue() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .withoutRetrieve()
                .build());
    sb.setValue(A1, s("sb1"), 10, ValueOrigin.FROM_SB, false);
    sb.setValue(A2, s("sb2"), 20, ValueOrigin.FROM_SB, false);
    env.kvs()
        .pushSBNotification(
            List.of(
                kvm(A1, s("sb1"), 10, ValueOrigin.FROM_SB),
                kvm(A2, s("sb2"), 20, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
    assertThat(env.kvs()).value(A1).isObtained();
    assertThat(env.kvs()).value(A2).isObtained();
    assertThat(sb.calls()).isEmpty();

    // different value ⇒ Update, CONFIGURED
    env.kvs().startNBTransaction().setValue(A1, s("nb1")).setValue(A2, s("sb2")).commit();
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1);
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(UPDATE, A1).states(OBTAINED, CONFIGURED).prevValue(s("sb1")).newValue(s("nb1")),
            op(UPDATE, A2)
                .states(OBTAINED, CONFIGURED)
                .flags("NOOP")
                .prevValue(s("sb2"))
                .newValue(s("sb2")));
    assertThat(RecordedTxnOp.labels(env.txn(1).executed().get(1).displayFlags()))
        .contains("NOOP", "WAS-OBTAINED");
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, CONFIGURED, UPDATE, "")));
    assertThat(env.kvs().valueStatus(A2)).isEqualTo(bs(vs(A2, CONFIGURED, UPDATE, "")));
    assertThat(env.kvs().dumpValues("descriptor1", View.NB))
        .containsExactly(
            kvm(A1, s("nb1"), 10, ValueOrigin.FROM_NB), kvm(A2, s("sb2"), 20, ValueOrigin.FROM_NB));

    // NB delete of an OBTAINED value calls Delete
    env.kvs().pushSBNotification(List.of(kvm(A3, s("sb3"), 30, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
    sb.setValue(A3, s("sb3"), 30, ValueOrigin.FROM_SB, false);
    sb.clearCalls();
    env.kvs().startNBTransaction().setValue(A3, null).commit();
    assertThat(sb.callLog()).containsExactly("DELETE " + A3);
    TxnAssert.assertThat(env.txn(3))
        .executed(op(DELETE, A3).states(OBTAINED, REMOVED).prevValue(s("sb3")));
    assertThat(sb.get(A3)).isEmpty();
    assertThat(env.kvs().valueStatus(A3)).isEqualTo(bs(ValueStatus.nonexistent(A3)));
  }

  @Test
  @DisplayName(
      "B152 without simulation in the scheduler configuration a notification has no" + " plan")
  void notificationSimulationIsAConfigSwitch() {
    env = CatalogueFixtures.env(false);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withoutRetrieve()
                .build());
    pushAndWait(env, A1, s("sb"), null);
    RecordedTxn txn = env.txn(0);
    assertThat(txn.type()).isEqualTo(TxnType.SB_NOTIFICATION);
    assertThat(txn.withSimulation()).isFalse();
    assertThat(txn.planned()).isEmpty();
    TxnAssert.assertThat(txn).executed(op(CREATE, A1).states(NONEXISTENT, OBTAINED));
  }
}
