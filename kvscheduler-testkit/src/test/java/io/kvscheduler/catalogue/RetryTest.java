package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.DISCOVERED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.api.ValueState.UNIMPLEMENTED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.catalogue.NotificationTest.bs;
import static io.kvscheduler.catalogue.NotificationTest.kvm;
import static io.kvscheduler.catalogue.NotificationTest.rv;
import static io.kvscheduler.catalogue.NotificationTest.vs;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Catalogue §10, B106–B116: when failures become RETRYING, retry transactions (TestResyncWithRetry,
 * the retry part of TestNotificationsWithRetry), retriable errors, delays and back-off, obsolete
 * retries, retries of failed reverts and of UNIMPLEMENTED values. Time only moves through {@code
 * env.timers().advance(...)}; every advance that fires a retry is followed by a barrier.
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class RetryTest {
  private static final String D1 = "/prefixD/base-value1";

  private MockSouthbound sb;
  private final List<BaseValueStatus> statuses = new CopyOnWriteArrayList<>();
  private SchedulerFixture env;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
  }

  // ------------------------------------------------------------------ helpers

  private TransactionException commitFailing(TxnOptions options, Object... kv) {
    return assertThrows(TransactionException.class, () -> env.commit(options, kv));
  }

  private static List<Tuple> keyErrors(TransactionException e) {
    return e.keyErrors().stream().map(k -> tuple(k.key(), k.operation(), k.message())).toList();
  }

  private static RuntimeException err(String msg) {
    return new RuntimeException(msg);
  }

  /** Advances the manual time and waits for the transactions it queued. */
  private void advance(Duration d) {
    env.timers().advance(d);
    env.kvs().transactionBarrier();
  }

  private int historySize() {
    return env.kvs().transactionHistory().size();
  }

  /**
   * The pending retry delays, rounded to whole seconds: the manual clock ticks 1 ms per read, so a
   * delay measured after the transaction has finished is a few ms shorter than scheduled.
   */
  private List<Duration> pendingDelays() {
    return env.timers().pending().stream()
        .map(
            p -> {
              assertThat(p).isBetween(Duration.ofMillis(1), Duration.ofSeconds(3600));
              long s = (p.toMillis() + 500) / 1000;
              assertThat(Duration.ofSeconds(s).minus(p))
                  .isBetween(Duration.ZERO, Duration.ofMillis(50));
              return Duration.ofSeconds(s);
            })
        .toList();
  }

  private static void assertRetryRecord(
      RecordedTxn txn, long seq, long forTxn, int attempt, RecordedTxn.RecordedValue... values) {
    assertThat(txn.seqNum()).isEqualTo(seq);
    assertThat(txn.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(txn.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(txn.description()).isEmpty();
    assertThat(txn.retryForTxn()).isEqualTo(forTxn);
    assertThat(txn.retryAttempt()).isEqualTo(attempt);
    assertThat(txn.values()).containsExactly(values);
  }

  /** descriptor1 for /prefixA/ (string values, no metadata). */
  private void registerA(boolean retrieve) {
    var b = sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A);
    if (!retrieve) b.withoutRetrieve();
    env.kvs().registerDescriptors(b.build());
  }

  // ------------------------------------------------------------------ retries and resyncs (ours)

  /** descriptorA over /prefixA/ and descriptorB over /prefixB/, whose values depend on A1. */
  private void registerBDependingOnA1() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptorA", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .build(),
            sb.descriptor("descriptorB", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .dependencies((k, v) -> List.of(Dependency.onKey("a", A1)))
                .build());
  }

  @Test
  @DisplayName(
      "(ours, D49) a Create that failed although the southbound carried it out: the"
          + " refresh finds the value and the values that waited for it are created at once; its"
          + " retry, a no-op, calls nothing")
  void retryOfAFailedCreateFoundInTheSouthboundReleasesDependents() {
    registerBDependingOnA1();
    sb.planError(
        A1,
        err("timed out"),
        () -> sb.setValue(A1, s("a"), null, ValueOrigin.FROM_NB, false)); // done all the same
    TransactionException e =
        commitFailing(
            TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build(),
            A1,
            s("a"),
            B2,
            s("b"));
    assertThat(keyErrors(e)).containsExactly(tuple(A1, CREATE, "timed out"));
    // the refresh after the failure found A1: B2, which waited for it, goes ahead in the same
    // transaction (recorded with it)
    assertThat(sb.callLog()).containsSubsequence("CREATE " + A1 + " ✗", "CREATE " + B2);
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(CONFIGURED);
    assertThat(env.kvs().recordedTransaction(e.seqNum()).orElseThrow().executed())
        .extracting(op -> op.operation() + " " + op.key())
        .endsWith("CREATE " + B2);
    sb.clearCalls();
    advance(Duration.ofSeconds(1));
    assertThat(env.kvs().valueStatus(A1).state()).isEqualTo(CONFIGURED);
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(CONFIGURED);
    assertThat(sb.callLog()).isEmpty(); // A1 itself: no call, B2 is there already
  }

  @Test
  @DisplayName(
      "(ours, D27) a downstream resync given no retry options keeps each value's retry"
          + " settings: a value committed with retry still fails as RETRYING after it")
  void downstreamResyncKeepsRetrySettings() {
    registerBDependingOnA1();
    RetryOptions retry = new RetryOptions(Duration.ofSeconds(1), 3, false);
    env.commit(TxnOptions.builder().retry(retry).build(), B2, s("b")); // PENDING on A1
    env.commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    sb.planError(B2, err("busy"), null);
    // A1 appears in the southbound: B2 is created, fails, and is retried with the settings it
    // was committed with (before, the resync had replaced them with its own: none)
    env.kvs()
        .pushSBNotification(List.of(new KVWithMetadata<>(A1, s("a"), null, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(RETRYING);
    assertThat(env.kvs().valueStatus(B2).value().error()).isEqualTo("busy");
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(1));
    advance(Duration.ofSeconds(1));
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(CONFIGURED);
  }

  // ------------------------------------------------------------------ B106 B107

  @Test
  @DisplayName(
      "B106 B107 B97 TestResyncWithRetry: a retriable failure of a txn with retry is"
          + " RETRYING; after the period a RetryFailedOps txn re-applies the NB intent (RETRY flags)")
  void resyncWithRetry() {
    sb.setValue(A1, arr(), 0, ValueOrigin.FROM_NB, false);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .firstFreeIndex(1)
                .derivedValues(CatalogueFixtures.derivedItems())
                .build());
    sb.planError(
        d(A1, 2),
        err("failed to add value"),
        () -> sb.setValue(A1, arr(1), 0, ValueOrigin.FROM_NB, false));
    env.kvs().watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_A), statuses::add);

    TransactionException e =
        commitFailing(
            TxnOptions.builder()
                .retry(new RetryOptions(Duration.ofSeconds(3), 3, false))
                .resync(ResyncType.FULL, true)
                .description("testing resync with retry")
                .build(),
            A1,
            arr(1, 2));

    assertThat(e.seqNum()).isZero();
    assertThat(keyErrors(e)).containsExactly(tuple(d(A1, 2), CREATE, "failed to add value"));
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE descriptor1",
            "UPDATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + d(A1, 2) + " ✗",
            "RETRIEVE descriptor1");
    assertThat(sb.calls().get(0).correlate())
        .containsExactly(kvm(A1, arr(1, 2), null, ValueOrigin.FROM_NB));
    // B97: refresh of the failed base value, correlated with the available value + metadata
    assertThat(sb.calls().get(4).correlate())
        .containsExactly(kvm(A1, arr(1, 2), 0, ValueOrigin.FROM_NB));
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(arr(1));
    assertThat(env.kvs().metadataMap("descriptor1", Object.class).lookup("base-value1"))
        .contains(0);

    RecordedTxn txn0 = env.txn(0);
    assertThat(txn0.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(txn0.resyncType()).isEqualTo(ResyncType.FULL);
    assertThat(txn0.description()).isEqualTo("testing resync with retry");
    assertThat(txn0.values()).containsExactly(rv(A1, arr(1, 2), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(txn0)
        .planned(
            op(UPDATE, A1).states(DISCOVERED, CONFIGURED).prevValue(arr()).newValue(arr(1, 2)),
            op(CREATE, d(A1, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED")
                .newValue(s("item1")),
            op(CREATE, d(A1, 2))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED")
                .newValue(s("item2"))
                .error(""));
    TxnAssert.assertThat(txn0)
        .executed(
            op(UPDATE, A1).states(DISCOVERED, CONFIGURED).prevValue(arr()).newValue(arr(1, 2)),
            op(CREATE, d(A1, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED")
                .newValue(s("item1")),
            op(CREATE, d(A1, 2))
                .states(NONEXISTENT, RETRYING)
                .flags("DERIVED")
                .newValue(s("item2"))
                .error("failed to add value"));
    assertThat(statuses)
        .containsExactly(
            bs(
                vs(A1, CONFIGURED, UPDATE, ""),
                vs(d(A1, 1), CONFIGURED, CREATE, ""),
                vs(d(A1, 2), RETRYING, CREATE, "failed to add value")));

    // B107: the retry runs after the period (3 s), not before
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(3));
    sb.clearCalls();
    advance(Duration.ofMillis(2900));
    assertThat(historySize()).isEqualTo(1);
    advance(Duration.ofMillis(100));
    assertThat(historySize()).isEqualTo(2);

    assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, 2));
    RecordedTxn txn1 = env.txn(1);
    assertRetryRecord(txn1, 1, 0, 1, rv(A1, arr(1, 2), ValueOrigin.FROM_NB));
    assertThat(txn1.start()).isAfter(txn0.stop());
    assertThat(txn1.withSimulation()).isTrue();
    OpSpec[] retryOps = {
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
    TxnAssert.assertThat(txn1).planned(retryOps).executed(retryOps);
    assertThat(statuses).hasSize(2);
    assertThat(statuses.get(1))
        .isEqualTo(
            bs(
                vs(A1, CONFIGURED, UPDATE, ""),
                vs(d(A1, 1), CONFIGURED, CREATE, ""),
                vs(d(A1, 2), CONFIGURED, CREATE, "")));
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1), d(A1, 2));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(arr(1, 2));
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);
    assertThat(env.timers().pending()).isEmpty();
  }

  // ------------------------------------------------------------------ B108

  @Test
  @DisplayName(
      "B108 IsRetriableFailure decides: a non-retriable failure goes straight to FAILED"
          + " and is not retried")
  void retriableVersusNonRetriable() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withoutRetrieve()
                .isRetriableFailure(t -> !(t instanceof IllegalArgumentException))
                .build());
    sb.planError(A1, new IllegalStateException("temporary failure"));
    sb.planError(A2, new IllegalArgumentException("permanent failure"));

    TransactionException e =
        commitFailing(
            TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build(),
            A1,
            s("a1"),
            A2,
            s("a2"));

    assertThat(keyErrors(e))
        .containsExactly(
            tuple(A1, CREATE, "temporary failure"), tuple(A2, CREATE, "permanent failure"));
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, RETRYING).error("temporary failure"),
            op(CREATE, A2).states(NONEXISTENT, FAILED).error("permanent failure"));
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(1));
    sb.clearCalls();
    advance(Duration.ofSeconds(1));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1);
    assertRetryRecord(env.txn(1), 1, 0, 1, rv(A1, s("a1"), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, A1)
                .states(RETRYING, CONFIGURED)
                .flags("RETRY")
                .prevError("temporary failure"));
    assertThat(env.kvs().valueStatus(A2))
        .isEqualTo(bs(vs(A2, FAILED, CREATE, "permanent failure")));
    assertThat(env.timers().pending()).isEmpty();
  }

  @Test
  @DisplayName(
      "B108 (ours: a derived-value descriptor without Create) 'operation Create not"
          + " implemented' is never retriable")
  void createNotImplementedIsNotRetriable() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withoutRetrieve()
                .keySelector(
                    k ->
                        k.startsWith(CatalogueFixtures.PREFIX_A)
                            && !k.substring(CatalogueFixtures.PREFIX_A.length()).contains("/"))
                .derivedValues(CatalogueFixtures.derivedItems())
                .build(),
            KVDescriptor.builder("items", Object.class)
                .keySelector(k -> k.startsWith(A1 + "/"))
                .build());

    TransactionException e =
        commitFailing(TxnOptions.builder().retryWithDefaults().build(), A1, arr(1));

    assertThat(e)
        .hasFailedKeys(d(A1, 1))
        .hasKeyError(d(A1, 1), CREATE, "operation Create is not implemented");
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, FAILED).flags("DERIVED"));
    assertThat(env.timers().pending()).isEmpty();
    assertThat(env.kvs().valueStatus(A1).derivedStatus(d(A1, 1)).orElseThrow().state())
        .isEqualTo(FAILED);
  }

  // ------------------------------------------------------------------ B109 B110

  @Test
  @DisplayName(
      "B109 B110 default retry (1 s, max 3, back-off): retries after 1 s, 2 s, 4 s with"
          + " attempts 1..3, the failure of the 3rd retry leaves the value FAILED")
  void defaultRetryBackoffAndLimit() {
    assertThat(RetryOptions.DEFAULT).isEqualTo(new RetryOptions(Duration.ofSeconds(1), 3, true));
    assertThat(TxnOptions.builder().retryWithDefaults().build().retry())
        .contains(RetryOptions.DEFAULT);
    registerA(false);
    for (int i = 1; i <= 4; i++) {
      sb.planError(A1, err("failure " + i));
    }

    TransactionException e =
        commitFailing(TxnOptions.builder().retryWithDefaults().build(), A1, s("a"));
    assertThat(keyErrors(e)).containsExactly(tuple(A1, CREATE, "failure 1"));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, RETRYING, CREATE, "failure 1")));

    Duration[] expectedDelays = {
      Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4)
    };
    for (int attempt = 1; attempt <= 3; attempt++) {
      Duration delay = expectedDelays[attempt - 1];
      assertThat(pendingDelays()).as("delay before retry %d", attempt).containsExactly(delay);
      advance(delay.minusMillis(100));
      assertThat(historySize()).as("retry %d not yet", attempt).isEqualTo(attempt);
      advance(Duration.ofMillis(100));
      assertThat(historySize()).isEqualTo(attempt + 1);
      RecordedTxn retry = env.txn(attempt);
      assertRetryRecord(retry, attempt, 0, attempt, rv(A1, s("a"), ValueOrigin.FROM_NB));
      boolean last = attempt == 3;
      TxnAssert.assertThat(retry)
          .executed(
              op(CREATE, A1)
                  .states(RETRYING, last ? FAILED : RETRYING)
                  .flags("RETRY")
                  .prevError("failure " + attempt)
                  .error("failure " + (attempt + 1)));
      assertThat(env.kvs().valueStatus(A1))
          .isEqualTo(bs(vs(A1, last ? FAILED : RETRYING, CREATE, "failure " + (attempt + 1))));
    }
    assertThat(env.timers().pending()).isEmpty();
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A1 + " ✗",
            "CREATE " + A1 + " ✗",
            "CREATE " + A1 + " ✗",
            "CREATE " + A1 + " ✗");
    advance(Duration.ofSeconds(60));
    assertThat(historySize()).isEqualTo(4);
  }

  @Test
  @DisplayName(
      "B110 without back-off every retry waits Period; MaxCount 2 allows exactly 2" + " retries")
  void retryWithoutBackoff() {
    registerA(false);
    for (int i = 1; i <= 3; i++) {
      sb.planError(A1, err("failure " + i));
    }
    commitFailing(
        TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(2), 2, false)).build(),
        A1,
        s("a"));

    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(2));
    advance(Duration.ofSeconds(2));
    TxnAssert.assertThat(env.txn(1))
        .executed(op(CREATE, A1).states(RETRYING, RETRYING).flags("RETRY").error("failure 2"));
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(2));
    advance(Duration.ofSeconds(2));
    assertRetryRecord(env.txn(2), 2, 0, 2, rv(A1, s("a"), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(env.txn(2))
        .executed(op(CREATE, A1).states(RETRYING, FAILED).flags("RETRY").error("failure 3"));
    assertThat(env.timers().pending()).isEmpty();
  }

  // ------------------------------------------------------------------ B111 B112 B114

  @Test
  @DisplayName(
      "B111 B112 B109 B114 TestNotificationsWithRetry: values failing in the"
          + " notification keep their NB retry options and are retried in separate groups (B2 after"
          + " 1 s, C3 after 3 s), both for txn #2, attempt 1")
  void notificationsWithRetry() {
    NotificationTest.WithRetryScenario sc = new NotificationTest.WithRetryScenario(sb, env);
    sc.runUntilNotification();
    assertThat(env.kvs().valueStatus(B2).derivedStatus(d(B2, 2)))
        .contains(vs(d(B2, 2), RETRYING, CREATE, "failed to add derived value"));
    assertThat(env.kvs().valueStatus(C3).value().state()).isEqualTo(RETRYING);

    // B111: two groups with their own timing
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(3));
    sb.clearCalls();
    advance(Duration.ofSeconds(1));
    assertThat(historySize()).isEqualTo(4);
    assertThat(sb.callLog()).containsExactly("UPDATE " + B2, "CREATE " + d(B2, 2));
    RecordedTxn txn3 = env.txn(3);
    assertRetryRecord(txn3, 3, 2, 1, rv(B2, arr(1, 2), ValueOrigin.FROM_NB));
    OpSpec[] ops3 = {
      op(UPDATE, B2)
          .states(CONFIGURED, CONFIGURED)
          .flags("RETRY")
          .prevValue(arr(1))
          .newValue(arr(1, 2)),
      op(CREATE, d(B2, 2))
          .states(RETRYING, CONFIGURED)
          .flags("DERIVED", "RETRY")
          .prevValue(s("item2"))
          .newValue(s("item2"))
          .prevError("failed to add derived value")
          .error("")
    };
    TxnAssert.assertThat(txn3).planned(ops3).executed(ops3);
    assertThat(sc.prefB).hasSize(2);
    assertThat(sc.prefB.get(1))
        .isEqualTo(
            bs(
                vs(B2, CONFIGURED, UPDATE, ""),
                vs(d(B2, 1), CONFIGURED, CREATE, ""),
                vs(d(B2, 2), CONFIGURED, CREATE, "")));
    assertThat(sc.prefC).hasSize(1);
    assertThat(env.kvs().valueStatus(C3).value().state()).isEqualTo(RETRYING);

    sb.clearCalls();
    advance(Duration.ofMillis(1900));
    assertThat(historySize()).isEqualTo(4);
    advance(Duration.ofMillis(100));
    assertThat(historySize()).isEqualTo(5);
    assertThat(sb.callLog()).containsExactly("CREATE " + C3);
    RecordedTxn txn4 = env.txn(4);
    assertRetryRecord(
        txn4, 4, 2, 1, rv(C3, NotificationTest.WithRetryScenario.C3_DATA, ValueOrigin.FROM_NB));
    OpSpec c3 =
        op(CREATE, C3)
            .states(RETRYING, CONFIGURED)
            .flags("RETRY")
            .prevValue(NotificationTest.WithRetryScenario.C3_DATA)
            .newValue(NotificationTest.WithRetryScenario.C3_DATA)
            .prevError("failed to add value")
            .error("");
    TxnAssert.assertThat(txn4).planned(c3).executed(c3);
    assertThat(sc.prefC).hasSize(2);
    assertThat(sc.prefC.get(1)).isEqualTo(bs(vs(C3, CONFIGURED, CREATE, "")));
    assertThat(sb.keys()).containsExactly(B2, d(B2, 1), d(B2, 2), C3);
    assertThat(sb.get(C3).orElseThrow().metadata()).isEqualTo(0);
    assertThat(env.kvs().metadataMap("descriptor1", Object.class).lookup("base-value1"))
        .contains(10);
    assertThat(env.kvs().metadataMap("descriptor2", Object.class).lookup("base-value2"))
        .contains(0);
    assertThat(env.kvs().metadataMap("descriptor3", Object.class).lookup("base-value3"))
        .contains(0);
    assertThat(env.timers().pending()).isEmpty();
  }

  @Test
  @DisplayName(
      "B112 an NB transaction that touches a value (even only as a dependent) overwrites"
          + " its retry options with its own")
  void nbTransactionOverwritesRetryOptions() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withoutRetrieve()
                .build(),
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .withoutRetrieve()
                .dependencies((key, value) -> List.of(Dependency.onKey(A1, A1)))
                .build());
    env.commit(TxnOptions.builder().retryWithDefaults().build(), B2, s("b"));
    assertThat(env.kvs().valueStatus(B2).value().state()).isEqualTo(PENDING);
    sb.planError(B2, err("failed to add value"));

    // this transaction has no retry: B2, created as A1's dependent, is not retried
    TransactionException e = commitFailing(TxnOptions.defaults(), A1, s("a"));

    assertThat(keyErrors(e)).containsExactly(tuple(B2, CREATE, "failed to add value"));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, B2).states(PENDING, FAILED).error("failed to add value"));
    assertThat(env.timers().pending()).isEmpty();
  }

  // ------------------------------------------------------------------ B113

  @Test
  @DisplayName("B113 keys modified or removed after the failure are dropped from the retry")
  void obsoleteKeysDropped() {
    registerA(false);
    sb.planError(A1, err("failed to add value"));
    sb.planError(A2, err("failed to add value"));
    sb.planError(A3, err("failed to add value"));
    commitFailing(
        TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build(),
        A1,
        s("a1"),
        A2,
        s("a2"),
        A3,
        s("a3"));
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(1));
    env.commit(TxnOptions.defaults(), A1, s("a1-new"));
    env.commit(TxnOptions.defaults(), A2, null);
    TxnAssert.assertThat(env.txn(2))
        .executed(op(DELETE, A2).states(RETRYING, REMOVED).flags("NOOP"));
    sb.clearCalls();

    advance(Duration.ofSeconds(1));

    assertThat(sb.callLog()).containsExactly("CREATE " + A3);
    assertRetryRecord(env.txn(3), 3, 0, 1, rv(A3, s("a3"), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(env.txn(3))
        .executed(op(CREATE, A3).states(RETRYING, CONFIGURED).flags("RETRY"));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(s("a1-new"));
    assertThat(sb.keys()).containsExactly(A1, A3);
  }

  @Test
  @DisplayName(
      "B113 a retry with nothing left executes nothing but is still recorded with a"
          + " sequence number")
  void obsoleteRetryStillRecorded() {
    registerA(false);
    sb.planError(A1, err("failed to add value"));
    commitFailing(
        TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build(),
        A1,
        s("a1"));
    env.commit(TxnOptions.defaults(), A1, s("a1-new"));
    sb.clearCalls();

    advance(Duration.ofSeconds(1));

    assertThat(historySize()).isEqualTo(3);
    RecordedTxn retry = env.txn(2);
    assertRetryRecord(retry, 2, 0, 1);
    TxnAssert.assertThat(retry).executedNothing();
    assertThat(retry.planned()).isEmpty();
    assertThat(sb.calls()).isEmpty();
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, CONFIGURED, CREATE, "")));
    // the next transaction gets the next number
    assertThat(env.commit(TxnOptions.defaults(), A2, s("a2"))).isEqualTo(3);
  }

  // ------------------------------------------------------------------ B114

  @Test
  @DisplayName(
      "B114 retry record and log header: RetryForTxn = the txn of the first failure,"
          + " RetryAttempt counts the retries")
  void retryRecordAndLogHeader() {
    try (TxnLogCapture log = new TxnLogCapture()) {
      registerA(false);
      sb.planError(A1, err("failure 1"));
      sb.planError(A1, err("failure 2"));
      commitFailing(
          TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, true)).build(),
          A1,
          s("a"));
      advance(Duration.ofSeconds(1));
      advance(Duration.ofSeconds(2));

      assertRetryRecord(env.txn(1), 1, 0, 1, rv(A1, s("a"), ValueOrigin.FROM_NB));
      assertRetryRecord(env.txn(2), 2, 0, 2, rv(A1, s("a"), ValueOrigin.FROM_NB));
      List<String> logs = log.messages();
      assertThat(logs)
          .anySatisfy(
              m ->
                  assertThat(m)
                      .containsPattern(
                          "\\| #1 - RetryFailedOps +retrying failed TXN #0 \\(attempt 1\\) \\|")
                      .contains("- type: Retry Transaction (for txn #0, attempt #1)"));
      assertThat(logs)
          .anySatisfy(
              m ->
                  assertThat(m)
                      .containsPattern(
                          "\\| #2 - RetryFailedOps +retrying failed TXN #0 \\(attempt 2\\) \\|")
                      .contains("- type: Retry Transaction (for txn #0, attempt #2)"));
    }
  }

  // ------------------------------------------------------------------ B115

  @Test
  @DisplayName("B115 B105 a failed revert is RETRYING and retried as a revert (REVERT + RETRY)")
  void failedRevertRetriedAsRevert() {
    registerA(true);
    env.commit(TxnOptions.defaults(), A1, s("old"));
    sb.clearCalls();
    sb.planError(
        A1,
        err("failed to modify value"),
        () -> sb.setValue(A1, s("broken"), null, ValueOrigin.FROM_NB, false));
    sb.planError(A1, err("failed to revert value"));

    TransactionException e =
        commitFailing(
            TxnOptions.builder()
                .revert(true)
                .retry(new RetryOptions(Duration.ofSeconds(1), 3, false))
                .build(),
            A1,
            s("new"));

    assertThat(keyErrors(e))
        .containsExactly(
            tuple(A1, UPDATE, "failed to modify value"),
            tuple(A1, UPDATE, "failed to revert value"));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(UPDATE, A1)
                .states(CONFIGURED, FAILED)
                .prevValue(s("old"))
                .newValue(s("new"))
                .error("failed to modify value"),
            op(UPDATE, A1)
                .states(FAILED, RETRYING)
                .flags("REVERT")
                .prevValue(s("broken"))
                .newValue(s("old"))
                .prevError("failed to modify value")
                .error("failed to revert value"));
    assertThat(env.kvs().valueStatus(A1))
        .isEqualTo(bs(vs(A1, RETRYING, UPDATE, "failed to revert value")));
    assertThat(pendingDelays()).containsExactly(Duration.ofSeconds(1));
    sb.clearCalls();

    advance(Duration.ofSeconds(1));

    assertThat(sb.callLog()).containsExactly("UPDATE " + A1);
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(s("old"));
    assertRetryRecord(env.txn(2), 2, 1, 1, rv(A1, s("old"), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(env.txn(2))
        .executed(
            op(UPDATE, A1)
                .states(RETRYING, CONFIGURED)
                .flags("REVERT", "RETRY")
                .prevValue(s("broken"))
                .newValue(s("old"))
                .prevError("failed to revert value")
                .error(""));
    assertThat(env.kvs().valueStatus(A1)).isEqualTo(bs(vs(A1, CONFIGURED, UPDATE, "")));
  }

  // ------------------------------------------------------------------ B116

  @Test
  @DisplayName(
      "B116 a value without descriptor is UNIMPLEMENTED (NOOP, unavailable); a"
          + " RetryUnimplOps txn applies it once its descriptor is registered")
  void unimplementedAppliedAfterRegistration() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .withoutRetrieve()
                .dependencies((key, value) -> List.of(Dependency.onKey(D1, D1)))
                .build());

    assertThat(env.commit(TxnOptions.defaults(), D1, s("d1"), B2, s("b2"))).isZero();

    assertThat(sb.calls()).isEmpty();
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, B2).states(NONEXISTENT, PENDING).flags("NOOP"),
            op(CREATE, D1).states(NONEXISTENT, UNIMPLEMENTED).flags("NOOP").newValue(s("d1")));
    assertThat(env.kvs().valueStatus(D1)).isEqualTo(bs(vs(D1, UNIMPLEMENTED, CREATE, "")));
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, PENDING, CREATE, "", D1)));
    assertThat(env.timers().pending()).isEmpty();

    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor4", Object.class)
                .nbKeyPrefix("/prefixD/")
                .withoutRetrieve()
                .build());
    env.kvs().transactionBarrier();

    assertThat(historySize()).isEqualTo(2);
    assertThat(sb.callLog()).containsExactly("CREATE " + D1, "CREATE " + B2);
    RecordedTxn retry = env.txn(1);
    assertThat(retry.type()).isEqualTo(TxnType.RETRY_UNIMPL_OPS);
    assertThat(retry.retryForTxn()).isZero();
    assertThat(retry.values()).containsExactly(rv(D1, s("d1"), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(retry)
        .executed(
            op(CREATE, D1)
                .states(UNIMPLEMENTED, CONFIGURED)
                .flags("RETRY")
                .prevValue(s("d1"))
                .newValue(s("d1")),
            op(CREATE, B2).states(PENDING, CONFIGURED).flags("RETRY"));
    assertThat(env.kvs().valueStatus(D1)).isEqualTo(bs(vs(D1, CONFIGURED, CREATE, "")));
    assertThat(env.kvs().valueStatus(B2)).isEqualTo(bs(vs(B2, CONFIGURED, CREATE, "")));
  }

  @Test
  @DisplayName("B116 repeating the request of an UNIMPLEMENTED value records nothing")
  void unimplementedRepeatedRecordsNothing() {
    registerA(false);
    env.commit(TxnOptions.defaults(), D1, s("d1"));
    assertThat(env.commit(TxnOptions.defaults(), D1, s("d1"))).isEqualTo(1);
    TxnAssert.assertThat(env.txn(1)).executedNothing();
    assertThat(env.txn(1).planned()).isEmpty();
    assertThat(env.kvs().valueStatus(D1)).isEqualTo(bs(vs(D1, UNIMPLEMENTED, CREATE, "")));
    assertThat(sb.calls()).isEmpty();
  }
}
