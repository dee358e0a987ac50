package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A4;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Catalogue §10, B93–B105: best effort, failed Create/Update/Delete, the refresh of failed values,
 * revert on failure (TestDataChangeTransactionWithRevert) and failures during revert.
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class FailureAndRevertTest {
  private static final String B3 = "/prefixB/base-value3";

  private MockSouthbound sb;
  private final List<BaseValueStatus> statuses = new CopyOnWriteArrayList<>();
  private SchedulerFixture env;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
  }

  // ------------------------------------------------------------------ fixtures

  /** The three descriptors of TestDataChangeTransactionWithRevert (as in DataChangeTest). */
  private void registerDataChangeDescriptors() {
    CatalogueFixtures.registerDataChangeDescriptors(env.kvs(), sb);
  }

  /**
   * descriptor1 for /prefixA/ and descriptor2 for /prefixB/ where every base B value depends on A1
   * (label = A1).
   */
  private void registerAB(boolean retrieveA, boolean retrieveB, boolean derivedA) {
    var d1 =
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata();
    if (!retrieveA) d1.withoutRetrieve();
    if (derivedA) d1.derivedValues(CatalogueFixtures.derivedItems());
    var d2 =
        sb.descriptor("descriptor2", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
            .withMetadata()
            .dependencies(
                (key, value) ->
                    key.substring(CatalogueFixtures.PREFIX_B.length()).contains("/")
                        ? List.of()
                        : List.of(Dependency.onKey(A1, A1)));
    if (!retrieveB) d2.withoutRetrieve();
    env.kvs().registerDescriptors(d1.build(), d2.retrieveDependencies("descriptor1").build());
  }

  private TransactionException commitFailing(TxnOptions options, Object... kv) {
    return assertThrows(TransactionException.class, () -> env.commit(options, kv));
  }

  private static List<Tuple> keyErrors(TransactionException e) {
    return e.keyErrors().stream().map(k -> tuple(k.key(), k.operation(), k.message())).toList();
  }

  private static RuntimeException err(String msg) {
    return new RuntimeException(msg);
  }

  private static ValueStatus vs(
      String key, ValueState state, TxnOperation op, String error, String... details) {
    return new ValueStatus(key, state, error, op, List.of(details));
  }

  private static BaseValueStatus bs(ValueStatus value, ValueStatus... derived) {
    return new BaseValueStatus(value, List.of(derived));
  }

  private static KVWithMetadata<Object, Object> kvm(
      String key, Object value, Object meta, ValueOrigin origin) {
    return new KVWithMetadata<>(key, value, meta, origin);
  }

  private Optional<Object> meta(String descriptor, String label) {
    return env.kvs().metadataMap(descriptor, Object.class).lookup(label);
  }

  // ------------------------------------------------------------------ tests

  @Test
  @DisplayName(
      "B101 B102 B103 revert on failure (TestDataChangeTransactionWithRevert): 15 SB ops,"
          + " REVERT records from the refreshed state, optimistic plan, one status for A1")
  void revertOnFailure() {
    registerDataChangeDescriptors();
    env.commit(TxnOptions.defaults(), B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    sb.clearCalls();
    sb.planError(
        A1,
        err("failed to modify value"),
        () -> sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false));
    env.kvs().watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_A), statuses::add);

    TransactionException e =
        commitFailing(TxnOptions.builder().revert(true).build(), C3, arr(1), A1, arr(1));

    assertThat(e.seqNum()).isEqualTo(1);
    assertThat(keyErrors(e)).containsExactly(tuple(A1, UPDATE, "failed to modify value"));
    // B101: SB operations, including the refresh of the failed key before reverting
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(C3, 1),
            "DELETE " + d(C3, 2),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "DELETE " + d(A1, 2),
            "UPDATE " + A1 + " ✗",
            "RETRIEVE descriptor1",
            "UPDATE " + A1,
            "CREATE " + d(A1, 2),
            "DELETE " + d(C3, 1),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "CREATE " + d(C3, 2));
    assertThat(sb.calls().get(7).correlate())
        .containsExactly(kvm(A1, arr(1), 0, ValueOrigin.FROM_NB));
    assertThat(sb.calls().get(8).value()).isEqualTo(arr(2));
    assertThat(sb.calls().get(12).value()).isEqualTo(arr(1, 2));
    // final SB = state before the transaction (C3 re-created twice: metadata 2)
    assertThat(sb.keys()).containsExactly(A1, d(A1, 2), B2, d(B2, 1), C3, d(C3, 1), d(C3, 2));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(arr(2));
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);
    assertThat(sb.get(B2).orElseThrow().value()).isEqualTo(arr(1, 2));
    assertThat(sb.get(C3).orElseThrow().value()).isEqualTo(arr(1, 2));
    assertThat(sb.get(C3).orElseThrow().metadata()).isEqualTo(2);
    assertThat(meta("descriptor1", "base-value1")).contains(0);
    assertThat(meta("descriptor2", "base-value2")).contains(0);
    assertThat(meta("descriptor3", "base-value3")).contains(2);

    RecordedTxn txn = env.txn(1);
    assertThat(txn.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(txn.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(txn.description()).isEmpty();
    assertThat(txn.values())
        .containsExactly(
            new RecordedTxn.RecordedValue(A1, Optional.of(arr(1)), ValueOrigin.FROM_NB),
            new RecordedTxn.RecordedValue(C3, Optional.of(arr(1)), ValueOrigin.FROM_NB));
    // B103: the plan is optimistic (no failure, no revert; even B2/i2 gets created)
    TxnAssert.assertThat(txn)
        .planned(
            op(DELETE, d(C3, 1))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "RECREATE")
                .prevValue(s("item1")),
            op(DELETE, d(C3, 2))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "RECREATE")
                .prevValue(s("item2")),
            op(DELETE, C3).states(CONFIGURED, REMOVED).flags("RECREATE").prevValue(arr(1, 2)),
            op(CREATE, C3)
                .states(REMOVED, CONFIGURED)
                .flags("RECREATE")
                .prevValue(null)
                .newValue(arr(1)),
            op(CREATE, d(C3, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED", "RECREATE")
                .newValue(s("item1")),
            op(DELETE, d(A1, 2)).states(CONFIGURED, REMOVED).flags("DERIVED").prevValue(s("item2")),
            op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(2)).newValue(arr(1)),
            op(CREATE, d(A1, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED")
                .newValue(s("item1")),
            op(CREATE, d(B2, 2))
                .states(PENDING, CONFIGURED)
                .flags("DERIVED")
                .prevValue(s("item2"))
                .newValue(s("item2")));
    // B102: revert operations appended with REVERT, starting from the refreshed state
    TxnAssert.assertThat(txn)
        .executed(
            op(DELETE, d(C3, 1))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "RECREATE")
                .prevValue(s("item1")),
            op(DELETE, d(C3, 2))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "RECREATE")
                .prevValue(s("item2")),
            op(DELETE, C3).states(CONFIGURED, REMOVED).flags("RECREATE").prevValue(arr(1, 2)),
            op(CREATE, C3)
                .states(REMOVED, CONFIGURED)
                .flags("RECREATE")
                .prevValue(null)
                .newValue(arr(1)),
            op(CREATE, d(C3, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED", "RECREATE")
                .newValue(s("item1")),
            op(DELETE, d(A1, 2)).states(CONFIGURED, REMOVED).flags("DERIVED").prevValue(s("item2")),
            op(UPDATE, A1)
                .states(CONFIGURED, FAILED)
                .prevValue(arr(2))
                .newValue(arr(1))
                .prevError("")
                .error("failed to modify value"),
            // reverting:
            op(UPDATE, A1)
                .states(FAILED, CONFIGURED)
                .flags("REVERT")
                .prevValue(arr())
                .newValue(arr(2))
                .prevError("failed to modify value")
                .error(""),
            op(CREATE, d(A1, 2))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED", "REVERT")
                .newValue(s("item2")),
            op(DELETE, d(C3, 1))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "REVERT", "RECREATE")
                .prevValue(s("item1")),
            op(DELETE, C3)
                .states(CONFIGURED, REMOVED)
                .flags("REVERT", "RECREATE")
                .prevValue(arr(1)),
            op(CREATE, C3)
                .states(REMOVED, CONFIGURED)
                .flags("REVERT", "RECREATE")
                .newValue(arr(1, 2)),
            op(CREATE, d(C3, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED", "REVERT", "RECREATE")
                .newValue(s("item1")),
            op(CREATE, d(C3, 2))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED", "REVERT")
                .newValue(s("item2")));
    // B102: exactly one status for A1 (reverted to the original)
    assertThat(statuses)
        .containsExactly(bs(vs(A1, CONFIGURED, UPDATE, ""), vs(d(A1, 2), CONFIGURED, CREATE, "")));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(statuses.get(0));
    BaseValueStatus b2 = env.kvs().valueStatus(B2);
    assertThat(b2.value()).isEqualTo(vs(B2, CONFIGURED, CREATE, ""));
    assertThat(b2.derivedStatus(d(B2, 2))).contains(vs(d(B2, 2), PENDING, CREATE, "", d(A1, 1)));
    assertThat(env.kvs().valueStatus(C3).value()).isEqualTo(vs(C3, CONFIGURED, UPDATE, ""));
  }

  @Test
  @DisplayName(
      "B93 B97 best effort: failed values keep their error, everything else is applied;"
          + " key errors in execution order; only descriptors of failed keys are refreshed, only"
          + " failed keys updated")
  void bestEffortAndRefreshOfFailedValues() {
    registerDataChangeDescriptors();
    // a value in SB the scheduler does not know: a refresh of failed keys must not pick it up
    sb.setValue(A4, arr(3), 7, ValueOrigin.FROM_SB, false);
    sb.planError(d(A1, 2), err("failed to add derived value"));
    sb.planError(C3, err("failed to add value"));

    TransactionException e =
        commitFailing(TxnOptions.defaults(), A1, arr(2), B2, arr(1, 2), C3, arr(1, 2));

    assertThat(e.seqNum()).isZero();
    assertThat(keyErrors(e))
        .containsExactly(
            tuple(d(A1, 2), CREATE, "failed to add derived value"),
            tuple(C3, CREATE, "failed to add value"));
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A1,
            "CREATE " + d(A1, 2) + " ✗",
            "CREATE " + B2,
            "CREATE " + d(B2, 1),
            "CREATE " + C3 + " ✗",
            "RETRIEVE descriptor1",
            "RETRIEVE descriptor3");
    assertThat(sb.calls().get(5).correlate())
        .containsExactly(kvm(A1, arr(2), 0, ValueOrigin.FROM_NB));
    assertThat(sb.calls().get(6).correlate()).isEmpty(); // C3 is unavailable
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED).error(""),
            op(CREATE, d(A1, 2))
                .states(NONEXISTENT, FAILED)
                .flags("DERIVED")
                .error("failed to add derived value"),
            op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(B2, 2)).states(NONEXISTENT, PENDING).flags("DERIVED", "NOOP"),
            op(CREATE, C3).states(NONEXISTENT, FAILED).error("failed to add value"))
        .planned(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(A1, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED").error(""),
            op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(B2, 2)).states(NONEXISTENT, PENDING).flags("DERIVED", "NOOP"),
            op(CREATE, C3).states(NONEXISTENT, CONFIGURED).error(""),
            op(CREATE, d(C3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(C3, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    // successful changes are kept
    assertThat(sb.keys()).containsExactly(A1, A4, B2, d(B2, 1));
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(
            bs(
                vs(A1, CONFIGURED, CREATE, ""),
                vs(d(A1, 2), FAILED, CREATE, "failed to add derived value")));
    assertThat(env.kvs().valueStatus(C3))
        .isEqualTo(bs(vs(C3, FAILED, CREATE, "failed to add value")));
    assertThat(env.kvs().valueStatus(B2).value()).isEqualTo(vs(B2, CONFIGURED, CREATE, ""));
    // B97: only the failed keys were updated from the Retrieve result (A4 stays unknown)
    assertThat(env.kvs().valueStatus(A4).value()).isEqualTo(ValueStatus.nonexistent(A4));
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(kvm(A1, arr(2), 0, ValueOrigin.FROM_NB));
    assertThat(meta("descriptor3", "base-value3")).isEmpty();
  }

  @Test
  @DisplayName(
      "B94 failed Create: FAILED with the error, unavailable (its dependents stay"
          + " PENDING), nothing in SB, no metadata")
  void failedCreate() {
    registerAB(true, true, false);
    sb.planError(A1, err("failed to add value"));

    TransactionException e = commitFailing(TxnOptions.defaults(), A1, s("a"), B2, s("b"));

    assertThat(keyErrors(e)).containsExactly(tuple(A1, CREATE, "failed to add value"));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1 + " ✗", "RETRIEVE descriptor1");
    assertThat(sb.calls().get(1).correlate()).isEmpty();
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1)
                .states(NONEXISTENT, FAILED)
                .newValue(s("a"))
                .error("failed to add value"),
            op(CREATE, B2).states(NONEXISTENT, PENDING).flags("NOOP").error(""));
    assertThat(sb.keys()).isEmpty();
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(bs(vs(A1, FAILED, CREATE, "failed to add value")));
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, PENDING, CREATE, "", A1)));
    assertThat(meta("descriptor1", "base-value1")).isEmpty();
  }

  @Test
  @DisplayName(
      "B95 B97 failed Update: FAILED with the error but still available to dependents;"
          + " the refresh replaces the stored value by SB's")
  void failedUpdate() {
    registerAB(true, true, true);
    env.commit(TxnOptions.defaults(), A1, arr(1), B2, s("b"));
    sb.clearCalls();
    sb.planError(
        A1,
        err("failed to modify value"),
        () -> sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false));

    TransactionException e = commitFailing(TxnOptions.defaults(), A1, arr(2));

    assertThat(keyErrors(e)).containsExactly(tuple(A1, UPDATE, "failed to modify value"));
    // the dependent B2 is not taken down
    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(A1, 1), "UPDATE " + A1 + " ✗", "RETRIEVE descriptor1");
    assertThat(sb.calls().get(2).correlate())
        .containsExactly(kvm(A1, arr(2), 0, ValueOrigin.FROM_NB));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(DELETE, d(A1, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
            op(UPDATE, A1)
                .states(CONFIGURED, FAILED)
                .prevValue(arr(1))
                .newValue(arr(2))
                .error("failed to modify value"));
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(bs(vs(A1, FAILED, UPDATE, "failed to modify value")));
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, CONFIGURED, CREATE, "")));
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(kvm(A1, arr(), 0, ValueOrigin.FROM_NB));

    // A1 is still available: a new dependent is created at once
    sb.clearCalls();
    env.commit(TxnOptions.defaults(), B3, s("b3"));
    assertThat(sb.callLog()).containsExactly("CREATE " + B3);
    assertThat(env.kvs().valueStatus(B3)).isEqualTo(bs(vs(B3, CONFIGURED, CREATE, "")));
    assertThat(env.kvs().valueStatus(A1).value().state()).isEqualTo(FAILED);
  }

  @Test
  @DisplayName(
      "B96 B98 failed Delete: FAILED, unavailable, still in SB, dependents PENDING;"
          + " without Retrieve nothing is refreshed")
  void failedDeleteWithoutRetrieve() {
    registerAB(false, false, false);
    env.commit(TxnOptions.defaults(), A1, s("a"), B2, s("b"));
    sb.clearCalls();
    sb.planError(A1, err("failed to remove the value"));

    TransactionException e = commitFailing(TxnOptions.defaults(), A1, null);

    assertThat(keyErrors(e)).containsExactly(tuple(A1, DELETE, "failed to remove the value"));
    // B98: no Retrieve call
    assertThat(sb.callLog()).containsExactly("DELETE " + B2, "DELETE " + A1 + " ✗");
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(DELETE, B2).states(CONFIGURED, PENDING).prevValue(s("b")).newValue(s("b")),
            op(DELETE, A1)
                .states(CONFIGURED, FAILED)
                .prevValue(s("a"))
                .newValue(null)
                .error("failed to remove the value"));
    assertThat(sb.keys()).containsExactly(A1);
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(bs(vs(A1, FAILED, DELETE, "failed to remove the value")));
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, PENDING, DELETE, "", A1)));
    // unavailable: not part of the cached view (which lists available values only, B159)
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED)).isEmpty();
  }

  @Test
  @DisplayName(
      "B99 a value that failed earlier in the same transaction is not touched again when"
          + " reached as a dependent")
  void brokenValueNotTouchedAgain() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withoutRetrieve()
                .dependencies(
                    (key, value) ->
                        List.of(
                            Dependency.anyOfPrefixes(
                                CatalogueFixtures.PREFIX_B, CatalogueFixtures.PREFIX_B)))
                .build(),
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .withoutRetrieve()
                .build());
    env.commit(TxnOptions.defaults(), B2, s("b2"));
    sb.clearCalls();
    // only the first Create of A1 fails: a second Create would succeed
    sb.planError(A1, err("failed to add value"));

    // A1 (ready thanks to B2) fails first; creating B3 then revisits A1 as its dependent
    TransactionException e = commitFailing(TxnOptions.defaults(), A1, s("a1"), B3, s("b3"));

    assertThat(keyErrors(e)).containsExactly(tuple(A1, CREATE, "failed to add value"));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1 + " ✗", "CREATE " + B3);
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, FAILED).error("failed to add value"),
            op(CREATE, B3).states(NONEXISTENT, CONFIGURED));
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(bs(vs(A1, FAILED, CREATE, "failed to add value")));
  }

  @Test
  @DisplayName(
      "B100 a failure of a value reached only indirectly is recorded and reported but"
          + " does not trigger revert")
  void indirectErrorDoesNotRevert() {
    registerAB(false, true, false);
    env.commit(TxnOptions.defaults(), B2, s("b"));
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(PENDING);
    sb.clearCalls();
    sb.planError(B2, err("failed to add value"));

    TransactionException e =
        commitFailing(TxnOptions.builder().revert(true).build(), A1, s("a"), A4, s("a4"));

    assertThat(keyErrors(e)).containsExactly(tuple(B2, CREATE, "failed to add value"));
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A1, "CREATE " + B2 + " ✗", "CREATE " + A4, "RETRIEVE descriptor2");
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, B2).states(PENDING, FAILED).error("failed to add value"),
            op(CREATE, A4).states(NONEXISTENT, CONFIGURED));
    assertThat(sb.keys()).containsExactly(A1, A4);
    assertThat(env.kvs().valueStatus(B2))
        .isEqualTo(bs(vs(B2, FAILED, CREATE, "failed to add value")));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, CONFIGURED, CREATE, "")));
  }

  @Test
  @DisplayName(
      "B104 an error during revert is recorded on the revert operation and reported,"
          + " the revert goes on and nothing more is triggered")
  void failureDuringRevert() {
    registerAB(true, true, false);
    env.commit(TxnOptions.defaults(), A1, s("old"));
    sb.clearCalls();
    sb.planError(
        A1,
        err("failed to modify value"),
        () -> sb.setValue(A1, s("broken"), 0, ValueOrigin.FROM_NB, false));
    sb.planError(A1, err("failed to revert value"));

    TransactionException e =
        commitFailing(TxnOptions.builder().revert(true).build(), A1, s("new"), A2, s("a2"));

    assertThat(keyErrors(e))
        .containsExactly(
            tuple(A1, UPDATE, "failed to modify value"),
            tuple(A1, UPDATE, "failed to revert value"));
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A2,
            "UPDATE " + A1 + " ✗",
            "RETRIEVE descriptor1",
            "UPDATE " + A1 + " ✗",
            "DELETE " + A2,
            "RETRIEVE descriptor1");
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(UPDATE, A1)
                .states(CONFIGURED, FAILED)
                .prevValue(s("old"))
                .newValue(s("new"))
                .error("failed to modify value"),
            op(UPDATE, A1)
                .states(FAILED, FAILED)
                .flags("REVERT")
                .prevValue(s("broken"))
                .newValue(s("old"))
                .prevError("failed to modify value")
                .error("failed to revert value"),
            op(DELETE, A2)
                .states(CONFIGURED, REMOVED)
                .flags("REVERT")
                .prevValue(s("a2"))
                .newValue(null));
    assertThat(sb.keys()).containsExactly(A1);
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(s("broken"));
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(bs(vs(A1, FAILED, UPDATE, "failed to revert value")));
    assertThat(env.kvs().valueStatus(A2).value()).isEqualTo(ValueStatus.nonexistent(A2));
    assertThat(env.timers().pending()).isEmpty();
    assertThat(env.kvs().transactionHistory()).hasSize(2);
  }

  @Test
  @DisplayName(
      "B105 a failure that will be reverted is FAILED, never RETRYING, even with retry"
          + " enabled and a retriable error")
  void revertedFailureIsNeverRetrying() {
    registerAB(true, true, false);
    env.commit(TxnOptions.defaults(), A1, s("old"));
    sb.clearCalls();
    sb.planError(
        A1,
        err("failed to modify value"),
        () -> sb.setValue(A1, s("broken"), 0, ValueOrigin.FROM_NB, false));

    TransactionException e =
        commitFailing(
            TxnOptions.builder()
                .revert(true)
                .retry(new RetryOptions(Duration.ofSeconds(1), 3, false))
                .build(),
            A1,
            s("new"));

    assertThat(keyErrors(e)).containsExactly(tuple(A1, UPDATE, "failed to modify value"));
    assertThat(sb.callLog())
        .containsExactly("UPDATE " + A1 + " ✗", "RETRIEVE descriptor1", "UPDATE " + A1);
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(UPDATE, A1)
                .states(CONFIGURED, FAILED)
                .prevValue(s("old"))
                .newValue(s("new"))
                .error("failed to modify value"),
            op(UPDATE, A1)
                .states(FAILED, CONFIGURED)
                .flags("REVERT")
                .prevValue(s("broken"))
                .newValue(s("old"))
                .prevError("failed to modify value")
                .error(""));
    assertThat(env.timers().pending()).isEmpty();
    env.timers().advance(Duration.ofSeconds(10));
    env.kvs().transactionBarrier();
    assertThat(env.kvs().transactionHistory()).hasSize(2);
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, CONFIGURED, UPDATE, "")));
  }
}
