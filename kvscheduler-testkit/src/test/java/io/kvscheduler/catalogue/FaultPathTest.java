package io.kvscheduler.catalogue;

import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.INVALID;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.View;
import io.kvscheduler.catalogue.CatalogueFixtures.ArrayValue;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine under faults, one root cause per test: the smallest step sequences the randomized
 * {@link FaultInjectionConvergenceTest} reduced to, each checking a promise a status makes (a
 * RETRYING value has a retry scheduled; a CONFIGURED value is what the southbound holds; an
 * operation's old value is what the southbound holds).
 */
@KVSchedulerTest
class FaultPathTest {
  private static final String A = "/a/k0";
  private static final String A1 = "/a/k1";
  private static final String P = "/p/k0";
  private static final String P1 = "/p/k1";
  private static final ArrayValue BAD = new ArrayValue(List.of("BAD"));
  private static final RetryOptions RETRY = new RetryOptions(Duration.ofSeconds(1), 3, true);

  private MockSouthbound sb;
  private ManualClock clock;
  private ManualDelayScheduler timers;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    clock = fx.clock();
    timers = fx.timers();
    kvs = fx.kvs();
    kvs.registerDescriptors(
        sb.descriptor("items", Object.class)
            .keySelector(k -> k.startsWith("/a/") && k.indexOf('/', 3) > 0)
            .baseKeys(k -> false)
            .derivedOnly()
            .withoutRetrieve()
            .build(),
        sb.descriptor("bases", Object.class)
            .nbKeyPrefix("/a/")
            .keySelector(k -> k.startsWith("/a/") && k.indexOf('/', 3) < 0)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies((k, v) -> k.equals(A1) ? List.of(Dependency.onKey("p0", P)) : List.of())
            .validate(
                (k, v) -> {
                  if (v.equals(BAD)) {
                    throw new InvalidValueException("marker value rejected", "items");
                  }
                })
            .build(),
        sb.descriptor("plain", Object.class)
            .nbKeyPrefix("/p/")
            .withoutRetrieve()
            .dependencies((k, v) -> k.equals(P1) ? List.of(Dependency.onKey("a0", A)) : List.of())
            .build());
  }

  private void advance(Duration d) {
    timers.advance(d);
    kvs.transactionBarrier();
  }

  // FailurePolicy rule F11
  @Test
  @DisplayName(
      "a derived value whose retry a new value of its base made obsolete is FAILED, not"
          + " RETRYING")
  void obsoleteRetryOfDerivedValue() {
    env.commit(TxnOptions.defaults(), A, arr(1));
    // the removal of A is abandoned: its derived value cannot be deleted (retry planned)
    sb.planError(d(A, 1), new RuntimeException("busy"));
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.builder().retry(RETRY).build(), A, null));
    assertThat(kvs).derivedValue(A, d(A, 1)).hasState(RETRYING);
    assertThat(kvs).value(A).hasState(CONFIGURED);

    // a new value of A, rejected by Validate: nothing is applied, the retry of the removal is
    // obsolete, so the derived value will never be retried
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.builder().retry(RETRY).build(), A, BAD));
    assertThat(kvs).value(A).hasState(INVALID);
    assertThat(kvs).derivedValue(A, d(A, 1)).isFailed().hasErrorContaining("busy");

    // the retry fires, finds A changed and does nothing: no value is left RETRYING
    advance(Duration.ofSeconds(10));
    assertThat(timers.pending()).isEmpty();
    assertThat(kvs.valueStatuses())
        .flatExtracting(
            bs -> {
              List<ValueState> states = new ArrayList<>();
              states.add(bs.value().state());
              bs.derived().forEach(s -> states.add(s.state()));
              return states;
            })
        .doesNotContain(RETRYING);
  }

  // FailurePolicy rule F13 (and F7)
  @Test
  @DisplayName(
      "a new value of a base whose content is unknown gets no call, and the retry of its"
          + " derived value's failed Delete is obsolete: that derived value is FAILED, not"
          + " RETRYING")
  void obsoleteRetryOfDerivedValueUnderAnUnreadBase() {
    env.commit(TxnOptions.defaults(), A, arr(1));
    // the removal of A is abandoned: its derived value cannot be deleted (retry planned), and
    // the Retrieve after the failure fails too, so what the southbound holds for A is unknown
    sb.planError(d(A, 1), new RuntimeException("busy"));
    sb.planRetrieveError("bases", new IllegalStateException("device busy"));
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.builder().retry(RETRY).build(), A, null));
    assertThat(kvs).derivedValue(A, d(A, 1)).hasState(RETRYING);

    // a new value of A without retry: the read before it fails again, so A fails as unknown
    // without a call, and so does the read after that failure; the retry of the removal is
    // obsolete (A has a newer last update)
    sb.planRetrieveError("bases", new IllegalStateException("device busy"));
    sb.planRetrieveError("bases", new IllegalStateException("device busy"));
    TransactionException e =
        assertThrows(
            TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, arr(2)));
    assertThat(e.getMessage()).contains("unknown");
    assertThat(kvs).value(A).isFailed();
    assertThat(kvs).derivedValue(A, d(A, 1)).isFailed().hasErrorContaining("busy");

    // the retry fires, finds A changed and does nothing: no value is left RETRYING
    advance(Duration.ofSeconds(10));
    assertThat(timers.pending()).isEmpty();
    assertThat(kvs.valueStatuses())
        .flatExtracting(
            bs -> {
              List<ValueState> states = new ArrayList<>();
              states.add(bs.value().state());
              bs.derived().forEach(s -> states.add(s.state()));
              return states;
            })
        .doesNotContain(RETRYING);
  }

  // FailurePolicy rule F16
  @Test
  @DisplayName("an update rejected by Validate keeps the old object; removing the value deletes it")
  void invalidValueRemovedDeletesWhatTheSouthboundHolds() {
    env.commit(TxnOptions.defaults(), A, arr(1));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, BAD));
    assertThat(kvs).value(A).hasState(INVALID);
    assertThat(sb.keys()).containsExactly(A, d(A, 1)); // nothing was called

    sb.clearCalls();
    env.commit(TxnOptions.defaults(), A, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A, 1), "DELETE " + A);
    assertThat(sb.keys()).isEmpty();
    assertThat(kvs.valueStatuses()).isEmpty();
  }

  // FailurePolicy rule F19 (and F16)
  @Test
  @DisplayName(
      "a revert gives an INVALID value back the object the southbound held for it: the removal"
          + " that deleted it is undone with a Create, and the value is INVALID again")
  void revertRecreatesTheObjectAnInvalidValueHeld() {
    env.commit(TxnOptions.defaults(), A, arr(1));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, BAD));
    assertThat(kvs).value(A).hasState(INVALID);

    // the removal of A deletes the object it holds; A1, invalid, reverts the transaction
    sb.clearCalls();
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.builder().revert(true).build(), A, null, A1, BAD));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(A, 1),
            "DELETE " + A,
            "RETRIEVE bases",
            "CREATE " + A,
            "CREATE " + d(A, 1));
    assertThat(sb.get(A).orElseThrow().value()).isEqualTo(arr(1));
    assertThat(sb.keys()).containsExactly(A, d(A, 1));
    assertThat(kvs).value(A).hasState(INVALID).hasErrorContaining("marker value rejected");
    assertThat(kvs).derivedValue(A, d(A, 1)).hasState(CONFIGURED);
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(ValueState.NONEXISTENT);

    // the object is held again: removing A deletes it, a valid value updates it
    sb.clearCalls();
    env.commit(TxnOptions.defaults(), A, arr(2));
    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(A, 1), "UPDATE " + A, "CREATE " + d(A, 2));
    assertThat(kvs).value(A).hasState(CONFIGURED);
  }

  // FailurePolicy rule F19 (and F16, F6)
  @Test
  @DisplayName(
      "a revert re-creates what depended on an INVALID value's object (a FIB entry on a bridge"
          + " domain made INVALID), though the transaction never named it")
  void revertRestoresWhatDependedOnAnInvalidValuesObject() {
    // A: a bridge domain with an interface (derived); P1: a FIB entry on it
    env.commit(TxnOptions.defaults(), A, arr(1), P1, CatalogueFixtures.s("fib"));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, BAD));
    assertThat(kvs).value(A).hasState(INVALID);
    assertThat(kvs).value(P1).hasState(CONFIGURED);
    assertThat(sb.keys()).containsExactly(A, d(A, 1), P1);

    // the bridge domain is removed, and P fails: the transaction is reverted
    sb.clearCalls();
    sb.planError(P, new RuntimeException("busy"));
    assertThrows(
        TransactionException.class,
        () ->
            env.commit(
                TxnOptions.builder().revert(true).build(), A, null, P, CatalogueFixtures.s("v")));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(A, 1),
            "DELETE " + P1,
            "DELETE " + A,
            "CREATE " + P + " ✗",
            "CREATE " + A,
            "CREATE " + P1,
            "CREATE " + d(A, 1));
    assertThat(sb.keys()).containsExactly(A, d(A, 1), P1);
    assertThat(sb.get(A).orElseThrow().value()).isEqualTo(arr(1));
    assertThat(kvs).value(A).hasState(INVALID);
    assertThat(kvs).derivedValue(A, d(A, 1)).hasState(CONFIGURED);
    assertThat(kvs).value(P1).hasState(CONFIGURED);
  }

  // FailurePolicy rule F16
  @Test
  @DisplayName(
      "a resync finding the old object of an INVALID value keeps its dependents waiting, and a"
          + " second resync calls nothing")
  void resyncKeepsDependentsOfInvalidValueWaiting() {
    env.commit(TxnOptions.defaults(), A, arr(1));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, BAD));
    env.commit(TxnOptions.defaults(), P1, CatalogueFixtures.s("v1"));
    assertThat(kvs).value(P1).hasState(ValueState.PENDING);

    for (int i = 0; i < 2; i++) {
      sb.clearCalls();
      assertThrows(
          TransactionException.class,
          () ->
              kvs.startNBTransaction()
                  .commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build()));
      assertThat(sb.callLog()).as("resync %d", i + 1).doesNotContain("CREATE " + P1);
      assertThat(sb.callLog()).as("resync %d", i + 1).allMatch(c -> c.startsWith("RETRIEVE"));
      assertThat(kvs).value(A).hasState(INVALID);
      assertThat(kvs).value(P1).hasState(ValueState.PENDING);
    }
    assertThat(sb.keys()).containsExactly(A, d(A, 1)); // the old object stays (B120)

    // and its removal still deletes the object the southbound holds
    sb.clearCalls();
    env.commit(TxnOptions.defaults(), A, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A, 1), "DELETE " + A);
  }

  // FailurePolicy rule F16
  @Test
  @DisplayName("an INVALID value made valid again updates the object the southbound holds")
  void invalidValueFixedUpdatesTheOldObject() {
    env.commit(TxnOptions.defaults(), A, arr(1));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, BAD));

    sb.clearCalls();
    env.commit(TxnOptions.defaults(), A, arr(2));
    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(A, 1), "UPDATE " + A, "CREATE " + d(A, 2));
    assertThat(sb.get(A).orElseThrow().value()).isEqualTo(arr(2));
    assertThat(sb.keys()).containsExactly(A, d(A, 2));
    assertThat(kvs).value(A).hasState(CONFIGURED);
    assertThat(kvs).derivedValue(A, d(A, 2)).hasState(CONFIGURED);
    assertThat(kvs.recordedTransaction(2).orElseThrow().executed())
        .filteredOn(op -> op.key().equals(A))
        .singleElement()
        .satisfies(
            op -> {
              assertThat(op.operation()).isEqualTo(TxnOperation.UPDATE);
              assertThat(op.prevValue()).contains(arr(1)); // as the southbound held it
            });
  }

  // FailurePolicy rule F5, F2 (no Retrieve: F7 reads nothing)
  @Test
  @DisplayName(
      "a retried removal whose Delete failed deletes the object (no Retrieve to re-read" + " it)")
  void failedDeleteIsRetriedForReal() {
    env.commit(TxnOptions.defaults(), P, CatalogueFixtures.s("v1"));
    sb.planError(P, new RuntimeException("busy"));
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.builder().retry(RETRY).build(), P, null));
    assertThat(kvs).value(P).hasState(RETRYING);
    assertThat(sb.keys()).containsExactly(P);

    sb.clearCalls();
    advance(Duration.ofSeconds(1));
    assertThat(sb.callLog()).containsExactly("DELETE " + P);
    assertThat(sb.keys()).isEmpty();
    assertThat(kvs.valueStatuses()).isEmpty();
  }

  // FailurePolicy rule F5
  @Test
  @DisplayName("a value asked for again after its Delete failed is not created a second time")
  void valueAskedForAgainAfterAFailedDelete() {
    env.commit(TxnOptions.defaults(), P, CatalogueFixtures.s("v1"));
    sb.planError(P, new RuntimeException("busy"));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), P, null));
    assertThat(kvs).value(P).hasState(FAILED);

    sb.clearCalls();
    env.commit(
        TxnOptions.defaults(), P, CatalogueFixtures.s("v1")); // what the southbound holds: no call
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(P).hasState(CONFIGURED);

    env.commit(TxnOptions.defaults(), P, CatalogueFixtures.s("v2"));
    assertThat(sb.callLog()).containsExactly("UPDATE " + P);
    assertThat(sb.get(P).orElseThrow().value()).isEqualTo(CatalogueFixtures.s("v2"));
  }

  // FailurePolicy rule F18
  @Test
  @DisplayName(
      "the northbound may not set a key of a descriptor of derived values only, even"
          + " when no base value derives it")
  void derivedOnlyDescriptorRefusesNorthboundValues() {
    TransactionException e =
        assertThrows(
            TransactionException.class,
            () -> env.commit(TxnOptions.defaults(), d(A, 1), CatalogueFixtures.s("item1")));
    assertThat(e.keyErrors())
        .singleElement()
        .satisfies(
            k -> {
              assertThat(k.key()).isEqualTo(d(A, 1));
              assertThat(k.message()).contains("describes only derived values");
            });
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs.valueStatus(d(A, 1)).state()).isEqualTo(ValueState.NONEXISTENT);

    // with a base deriving it, the key is refused as well; the base's value is untouched
    env.commit(TxnOptions.defaults(), A, arr(1));
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.defaults(), d(A, 1), CatalogueFixtures.s("other")));
    assertThat(sb.get(d(A, 1)).orElseThrow().value()).isEqualTo(CatalogueFixtures.s("item1"));
  }

  // FailurePolicy rule F17
  @Test
  @DisplayName(
      "a value taken down for its dependencies and then not found by a refresh keeps its"
          + " NB value (MISSING, not REMOVED)")
  void refreshKeepsTheIntentOfAValueTakenDownForItsDependencies() {
    env.commit(TxnOptions.defaults(), P, CatalogueFixtures.s("v1"));
    env.commit(TxnOptions.defaults(), A1, arr(1));
    // P's removal takes A1 down, which fails at its derived value (and A1 vanishes from the
    // southbound meanwhile): P and A1 stay; the refresh after the failure does not find A1
    sb.planError(
        d(A1, 1),
        new RuntimeException("busy"),
        () -> {
          sb.setValue(d(A1, 1), null, null, ValueOrigin.FROM_NB, true);
          sb.setValue(A1, null, null, ValueOrigin.FROM_NB, false);
        });
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), P, null));

    // A1's last operation was that DELETE, but the northbound still asks for it: it is missing
    assertThat(kvs).value(A1).hasState(ValueState.MISSING).lastOperation(TxnOperation.DELETE);
    assertThat(kvs.dumpValues("bases", View.NB)).extracting(kv -> kv.key()).containsExactly(A1);

    // a downstream resync removes P at last; A1 waits for it
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(sb.keys()).isEmpty();
    assertThat(kvs).value(A1).hasState(ValueState.PENDING).hasDetails("p0");
  }

  // FailurePolicy rule F3, F7
  @Test
  @DisplayName(
      "a value removed behind the scheduler's back stays CONFIGURED until a refresh; an"
          + " equal value calls nothing for it, and a device refusing its derived value reveals it")
  void equalValueForABaseRemovedBehindTheScheduler() {
    String q = "/q/k0";
    kvs.registerDescriptors(
        sb.descriptor("dependent", Object.class)
            .nbKeyPrefix("/q/")
            .withoutRetrieve()
            .dependencies((k, v) -> List.of(Dependency.onKey("a0", A)))
            .build());
    env.commit(TxnOptions.defaults(), A, arr(1));
    env.commit(TxnOptions.defaults(), q, CatalogueFixtures.s("v1"));
    // the removal of A is abandoned after its derived value went: the dependent's Delete fails
    sb.planError(q, new RuntimeException("busy"));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, null));
    assertThat(kvs).value(A).hasState(CONFIGURED);
    assertThat(sb.keys()).containsExactly(A, q);

    // A vanishes behind the scheduler's back: nothing tells the scheduler
    sb.setValue(A, null, null, ValueOrigin.FROM_NB, false);
    sb.clearCalls();
    // A asked for again, equal to what the scheduler believes the southbound holds: no call for
    // A (as the reference), its derived value is created, and the device refuses a sub-object of
    // an object it does not hold; the refresh after the failure finds A gone
    sb.planError(d(A, 1), new RuntimeException("no such object " + A));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, arr(1)));
    assertThat(sb.callLog()).first().isEqualTo("CREATE " + d(A, 1) + " ✗");
    assertThat(sb.callLog()).noneMatch(c -> c.equals("CREATE " + A) || c.startsWith("UPDATE " + A));
    assertThat(sb.keys()).doesNotContain(d(A, 1));
    assertThat(kvs.valueStatus(A).value().state()).isNotEqualTo(CONFIGURED);

    // a downstream resync brings the base and its derived value back, in that order
    sb.clearCalls();
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(sb.keys()).containsExactly(A, d(A, 1), q);
    assertThat(kvs).value(A).hasState(CONFIGURED);
    assertThat(kvs).derivedValue(A, d(A, 1)).hasState(CONFIGURED);
  }

  // FailurePolicy rule F8
  @Test
  @DisplayName(
      "(D50) a value whose call failed during a revert gets no further call in that"
          + " transaction: what the southbound holds for it is unknown until it is read again")
  void noCallAfterAFailedRevertCall() {
    String q = "/q/k0";
    kvs.registerDescriptors(
        sb.descriptor("dependent", Object.class)
            .nbKeyPrefix("/q/")
            .dependencies((k, v) -> List.of(Dependency.onKey("a0", A)))
            .build());
    env.commit(TxnOptions.defaults(), q, CatalogueFixtures.s("v1"));
    assertThat(kvs).value(q).hasState(ValueState.PENDING);
    // the Create of q fails and leaves junk behind; the revert's Update of q fails as well
    sb.planError(
        q,
        new RuntimeException("create failed"),
        () -> sb.setValue(q, CatalogueFixtures.s("junk"), null, ValueOrigin.FROM_NB, false));
    sb.planError(q, new RuntimeException("update failed"));
    sb.clearCalls();
    Txn t = kvs.startNBTransaction();
    t.setValue(A, arr(1));
    t.setValue(q, CatalogueFixtures.s("v2"));
    TransactionException e =
        assertThrows(
            TransactionException.class,
            () -> t.commit(TxnOptions.builder().revert(true).retry(RETRY).build()));

    // forward: A is created, q (waiting for A) fails; q's own value is not tried again, q is
    // read (junk), and the revert puts q back (the Update fails) and takes A away. q's object
    // is unknown after that failure: it is not deleted with an old value the southbound may not
    // hold, so A, which q needs, stays (with q's failure reported) until q is read again
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A,
            "CREATE " + q + " ✗",
            "CREATE " + d(A, 1),
            "RETRIEVE dependent",
            "UPDATE " + q + " ✗",
            "DELETE " + d(A, 1),
            "RETRIEVE dependent"); // the refresh of the failed value after the transaction
    assertThat(sb.inconsistencies()).isEmpty();
    assertThat(sb.get(q).orElseThrow().value()).isEqualTo(CatalogueFixtures.s("junk"));
    assertThat(kvs.valueStatus(q).value().state()).isIn(FAILED, RETRYING);
    assertThat(kvs).value(q).hasErrorContaining("update failed");
    assertThat(kvs).value(A).hasState(CONFIGURED);
    assertThat(kvs.recordedTransaction(e.seqNum()).orElseThrow().executed())
        .extracting(
            op ->
                op.operation()
                    + " "
                    + op.key()
                    + (op.is(RecordedTxnOp.Flag.REVERT) ? " revert" : "")
                    + (op.newError().isEmpty() ? "" : " failed"))
        .containsExactly(
            "CREATE " + A,
            "CREATE " + q + " failed",
            "CREATE " + d(A, 1),
            "UPDATE " + q + " revert failed",
            "DELETE " + d(A, 1) + " revert");
  }

  // FailurePolicy rule F9
  @Test
  @DisplayName(
      "(D49) a value whose removal failed and which a refresh found still there lets"
          + " the values waiting for it go ahead: none stays PENDING without a missing dependency")
  void dependentsGoAheadWhenARefreshFindsTheirDependency() {
    String dir = "/d/k0";
    String file = "/f/k0";
    kvs.registerDescriptors(
        sb.descriptor("dirs", Object.class).nbKeyPrefix("/d/").build(),
        sb.descriptor("files", Object.class)
            .nbKeyPrefix("/f/")
            .withoutRetrieve()
            .dependencies((k, v) -> List.of(Dependency.onKey("dir", dir)))
            .build());
    Txn t = kvs.startNBTransaction();
    t.setValue(dir, CatalogueFixtures.s("d1"));
    t.setValue(file, CatalogueFixtures.s("f1"));
    t.commit(TxnOptions.defaults());
    sb.clearCalls();

    // the removal of the directory takes the file down first; then the directory cannot be
    // removed (not empty, for a reason of the device's own) and the refresh finds it there
    sb.planError(dir, new RuntimeException("directory not empty"));
    TransactionException e =
        assertThrows(
            TransactionException.class, () -> env.commit(TxnOptions.defaults(), dir, null));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + file, "DELETE " + dir + " ✗", "RETRIEVE dirs", "CREATE " + file);
    assertThat(sb.keys()).containsExactly(dir, file);
    assertThat(kvs).value(dir).hasState(FAILED);
    assertThat(kvs).value(file).hasState(CONFIGURED).hasDetails();
    assertThat(kvs.recordedTransaction(e.seqNum()).orElseThrow().executed())
        .extracting(
            op -> op.operation() + " " + op.key() + " " + op.prevState() + "->" + op.newState())
        .containsExactly(
            "DELETE " + file + " CONFIGURED->PENDING",
            "DELETE " + dir + " CONFIGURED->FAILED",
            "CREATE " + file + " PENDING->CONFIGURED");

    // the removal asked for again: the file goes first, then the directory
    sb.clearCalls();
    env.commit(TxnOptions.defaults(), dir, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + file, "DELETE " + dir);
    assertThat(kvs).value(file).hasState(ValueState.PENDING);
    assertThat(kvs).value(file).hasDetails("dir");
  }

  // FailurePolicy rule F9, F7
  @Test
  @DisplayName(
      "an Update the southbound carried out and then reported failed: the refresh reads"
          + " the new value, and the retry calls nothing")
  void updateCarriedOutThenReportedFailed() {
    String q = "/q/k0";
    kvs.registerDescriptors(sb.descriptor("values", Object.class).nbKeyPrefix("/q/").build());
    env.commit(TxnOptions.defaults(), q, CatalogueFixtures.s("v1"));
    sb.planError(
        q,
        new RuntimeException("answer lost"),
        () ->
            sb.setValue(
                q,
                CatalogueFixtures.s("v2"),
                null,
                ValueOrigin.FROM_NB,
                false)); // carried out all the same
    sb.clearCalls();
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.builder().retry(RETRY).build(), q, CatalogueFixtures.s("v2")));
    assertThat(sb.callLog()).containsExactly("UPDATE " + q + " ✗", "RETRIEVE values");
    assertThat(kvs).value(q).hasState(RETRYING);
    assertThat(kvs).value(q).hasError("answer lost");

    sb.clearCalls();
    advance(Duration.ofSeconds(1));
    assertThat(sb.callLog()).isEmpty(); // the southbound holds v2 already
    assertThat(kvs).value(q).hasState(CONFIGURED);
    assertThat(timers.pending()).isEmpty();
  }

  // FailurePolicy rule F8, F3
  @Test
  @DisplayName(
      "(D50) a derived value whose Create the southbound carried out but reported failed"
          + " is not taken for absent by the revert: its base is not deleted from under it")
  void derivedCreateCarriedOutIsNotTakenForAbsentByTheRevert() {
    String r = "/r/k0";
    kvs.registerDescriptors(sb.descriptor("others", Object.class).nbKeyPrefix("/r/").build());
    env.commit(TxnOptions.defaults(), A1, arr(1)); // PENDING: waits for P
    sb.planError(
        d(A1, 1),
        new RuntimeException("answer lost"),
        () ->
            sb.setValue(
                d(A1, 1),
                CatalogueFixtures.s("item1"),
                null,
                ValueOrigin.FROM_NB,
                true)); // carried out
    sb.planError(r, new RuntimeException("refused"));
    sb.clearCalls();
    Txn t = kvs.startNBTransaction();
    t.setValue(P, CatalogueFixtures.s("v1"));
    t.setValue(r, CatalogueFixtures.s("v1"));
    assertThrows(
        TransactionException.class, () -> t.commit(TxnOptions.builder().revert(true).build()));

    // P lets A1 be created (its derived value "fails"); r fails: the revert takes P away, which
    // takes A1 down first. A1's derived value is unread since its failure: it is not removed as
    // if absent, so neither A1 nor P is deleted; the refresh after the transaction reads A1
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + P,
            "CREATE " + A1,
            "CREATE " + d(A1, 1) + " ✗",
            "CREATE " + r + " ✗",
            "RETRIEVE others",
            "RETRIEVE bases");
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1), P);
    assertThat(kvs).value(A1).hasState(CONFIGURED);
    assertThat(kvs).derivedValue(A1, d(A1, 1)).hasState(FAILED);
    assertThat(kvs).value(P).hasState(CONFIGURED);
  }

  // FailurePolicy rule F17
  @Test
  @DisplayName(
      "a value taken for removed because a refresh did not find it is present again when a"
          + " later refresh finds it: no transaction creates it a second time")
  void valueTakenForRemovedAndFoundAgainIsNotCreatedTwice() {
    String q = "/q/k0";
    kvs.registerDescriptors(
        sb.descriptor("dependent", Object.class)
            .nbKeyPrefix("/q/")
            .dependencies((k, v) -> List.of(Dependency.onKey("item3", d(A, 3))))
            .build());
    Txn first = kvs.startNBTransaction();
    first.setValue(A, arr(2, 3));
    first.setValue(q, CatalogueFixtures.s("v1"));
    first.commit(TxnOptions.defaults());

    // A loses its items; q, which needs item3, cannot be removed, so item3 is kept as it was:
    // CONFIGURED, its last request a delete
    sb.planError(q, new RuntimeException("busy"));
    sb.clearCalls();
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, arr()));
    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(A, 2), "DELETE " + q + " ✗", "RETRIEVE dependent");
    assertThat(kvs).derivedValue(A, d(A, 3)).hasState(CONFIGURED);
    assertThat(kvs).derivedValue(A, d(A, 3)).lastOperation(TxnOperation.DELETE);

    // behind the scheduler's back A goes with its items; the full resync's refresh does not find
    // item3 (taken for REMOVED), then A's Create fails yet leaves A with both items behind, and
    // the refresh after the failure finds item3 again
    sb.setValue(A, null, null, ValueOrigin.FROM_NB, false);
    sb.setValue(d(A, 3), null, null, ValueOrigin.FROM_NB, true);
    sb.planError(
        A,
        new RuntimeException("create failed"),
        () -> {
          sb.setValue(A, arr(2, 3), null, ValueOrigin.FROM_NB, false);
          sb.setValue(d(A, 2), CatalogueFixtures.s("item2"), null, ValueOrigin.FROM_NB, true);
          sb.setValue(d(A, 3), CatalogueFixtures.s("item3"), null, ValueOrigin.FROM_NB, true);
        });
    sb.clearCalls();
    Txn resync = kvs.startNBTransaction();
    resync.setValue(A, arr());
    resync.setValue(q, CatalogueFixtures.s("v1"));
    assertThrows(
        TransactionException.class,
        () -> resync.commit(TxnOptions.builder().resync(ResyncType.FULL).build()));
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE bases",
            "RETRIEVE dependent",
            "CREATE " + A + " ✗",
            "DELETE " + q,
            "RETRIEVE bases",
            "CREATE " + q); // item3 is there again: q, waiting for it, goes ahead (D49)
    assertThat(kvs).derivedValue(A, d(A, 3)).hasState(ValueState.DISCOVERED);
    assertThat(kvs).value(q).hasState(CONFIGURED);

    // A asked for with item3: the item the southbound holds is kept, not created again (before,
    // it stayed REMOVED and this Create duplicated it)
    sb.clearCalls();
    env.commit(TxnOptions.defaults(), A, arr(3));
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A, 2), "UPDATE " + A);
    assertThat(sb.keys()).containsExactly(A, d(A, 3), q);
    assertThat(kvs).derivedValue(A, d(A, 3)).hasState(CONFIGURED);
    assertThat(kvs).value(A).hasState(CONFIGURED);
  }

  // FailurePolicy rule F7
  @Test
  @DisplayName(
      "a call failed and so did the Retrieve after it: the next transaction reads the key"
          + " first and starts from what it finds")
  void keyLeftUnreadIsReadByTheNextTransaction() {
    String q = updateCarriedOutWhoseReadFails();

    // the next change reads q first: the Update starts from v2, which the southbound holds (not
    // from v1, which the scheduler last knew)
    sb.clearCalls();
    env.commit(TxnOptions.defaults(), q, CatalogueFixtures.s("v3"));
    assertThat(sb.callLog()).containsExactly("RETRIEVE values", "UPDATE " + q);
    assertThat(sb.calls().get(1).value()).isEqualTo(CatalogueFixtures.s("v3"));
    assertThat(sb.get(q).orElseThrow().value()).isEqualTo(CatalogueFixtures.s("v3"));
    assertThat(kvs).value(q).hasState(CONFIGURED);
  }

  // FailurePolicy rule F7, F1
  @Test
  @DisplayName(
      "a key no Retrieve could read since its call failed gets no call: it fails as unknown"
          + " (retriable), and its retry reads it and goes on from what it finds")
  void keyStillUnreadGetsNoCall() {
    String q = updateCarriedOutWhoseReadFails();

    // the read before the next change fails too: no Update from a guess; the refresh after the
    // failure reads q (v2), and the retry updates it from there
    sb.planRetrieveError("values", new IllegalStateException("device busy"));
    sb.clearCalls();
    TransactionException e =
        assertThrows(
            TransactionException.class,
            () ->
                env.commit(
                    TxnOptions.builder().retry(RETRY).build(), q, CatalogueFixtures.s("v3")));
    assertThat(sb.callLog()).containsExactly("RETRIEVE values ✗", "RETRIEVE values");
    assertThat(e.getMessage()).contains(q).contains("unknown");
    assertThat(kvs).value(q).hasState(RETRYING);
    assertThat(kvs.recordedTransaction(e.seqNum()).orElseThrow().executed())
        .extracting(op -> op.operation() + " " + op.key() + " " + op.newState())
        .containsExactly("UPDATE " + q + " RETRYING");

    sb.clearCalls();
    advance(Duration.ofSeconds(1));
    assertThat(sb.callLog()).containsExactly("UPDATE " + q);
    assertThat(sb.get(q).orElseThrow().value()).isEqualTo(CatalogueFixtures.s("v3"));
    assertThat(kvs).value(q).hasState(CONFIGURED);
    assertThat(timers.pending()).isEmpty();
  }

  // FailurePolicy rule F7, F9
  @ParameterizedTest(name = "revert on failure: {0}")
  @ValueSource(booleans = {false, true})
  @DisplayName(
      "a key left unread is read first by the next transaction, with or without revert on"
          + " failure, and a value waiting for it goes ahead when the read finds it")
  void whatWaitsForAKeyReadFirstFollowsWhatTheReadFound(boolean revert) {
    String q = "/q/k0";
    String dep = "/r/k0";
    String other = "/q/k1";
    kvs.registerDescriptors(
        sb.descriptor("values", Object.class).nbKeyPrefix("/q/").build(),
        sb.descriptor("dependent", Object.class)
            .nbKeyPrefix("/r/")
            .dependencies((k, v) -> List.of(Dependency.onKey("q", q)))
            .build());
    // q's Create is carried out but reported failed, and the Retrieve after it fails too: q is
    // unread, and dep waits for it
    sb.planError(
        q,
        new RuntimeException("answer lost"),
        () -> sb.setValue(q, CatalogueFixtures.s("v1"), null, ValueOrigin.FROM_NB, false));
    sb.planRetrieveError("values", new IllegalStateException("device busy"));
    Txn first = kvs.startNBTransaction();
    first.setValue(q, CatalogueFixtures.s("v1"));
    first.setValue(dep, CatalogueFixtures.s("x"));
    assertThrows(TransactionException.class, () -> first.commit(TxnOptions.defaults()));
    assertThat(kvs).value(dep).hasState(ValueState.PENDING);

    // another value's transaction reads q first and finds it: dep goes ahead after its values
    sb.clearCalls();
    env.commit(TxnOptions.builder().revert(revert).build(), other, CatalogueFixtures.s("v"));
    assertThat(sb.callLog()).containsExactly("RETRIEVE values", "CREATE " + other, "CREATE " + dep);
    assertThat(kvs).value(dep).hasState(CONFIGURED);
    assertThat(sb.keys()).contains(q, other, dep);
  }

  // FailurePolicy rule F17
  @Test
  @DisplayName(
      "a value the read before a transaction found gone is dropped from the graph, although the"
          + " transaction's simulation, rolled back, created it and its execution stopped before it")
  void valueFoundGoneBeforeARevertedSimulatedTransactionIsDropped() {
    String early = "/0/k0"; // ordered before A
    kvs.registerDescriptors(
        sb.descriptor("early", Object.class).nbKeyPrefix("/0/").withoutRetrieve().build());
    env.commit(TxnOptions.defaults(), A, arr(1));
    // A and its derived value go behind the scheduler's back; A's removal is then abandoned (the
    // derived value's Delete fails) and the Retrieve after it fails: A is left unread, known as
    // configured
    sb.setValue(d(A, 1), null, null, ValueOrigin.FROM_NB, true);
    sb.setValue(A, null, null, ValueOrigin.FROM_NB, false);
    sb.planError(d(A, 1), new RuntimeException("no such value"));
    sb.planRetrieveError("bases", new IllegalStateException("device busy"));
    assertThrows(TransactionException.class, () -> env.commit(TxnOptions.defaults(), A, null));
    assertThat(kvs).value(A).hasState(CONFIGURED);

    // the next transaction reads A first and finds it gone; its simulation creates A and is
    // rolled back; its execution fails before A and reverts
    sb.planError(early, new RuntimeException("busy"));
    sb.clearCalls();
    Txn t = kvs.startNBTransaction();
    t.setValue(early, CatalogueFixtures.s("x"));
    t.setValue(A, arr(1));
    assertThrows(
        TransactionException.class,
        () -> t.commit(TxnOptions.builder().revert(true).simulation(true).build()));
    assertThat(sb.callLog()).containsExactly("RETRIEVE bases", "CREATE " + early + " ✗");
    assertThat(sb.keys()).doesNotContain(A, d(A, 1));
    // nothing created A: the scheduler no longer knows it (no value left REMOVED)
    assertThat(kvs.valueStatus(A).state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(kvs.valueStatuses()).extracting(s -> s.key()).doesNotContain(A);
  }

  /**
   * A value {@code /q/k0} (descriptor "values") whose Update from v1 to v2 the southbound carried
   * out and reported failed, and whose Retrieve after that failed too: FAILED, unread; returns its
   * key.
   */
  private String updateCarriedOutWhoseReadFails() {
    String q = "/q/k0";
    kvs.registerDescriptors(sb.descriptor("values", Object.class).nbKeyPrefix("/q/").build());
    env.commit(TxnOptions.defaults(), q, CatalogueFixtures.s("v1"));
    sb.planError(
        q,
        new RuntimeException("answer lost"),
        () ->
            sb.setValue(
                q, CatalogueFixtures.s("v2"), null, ValueOrigin.FROM_NB, false)); // carried out
    sb.planRetrieveError("values", new IllegalStateException("device busy"));
    sb.clearCalls();
    assertThrows(
        TransactionException.class,
        () -> env.commit(TxnOptions.defaults(), q, CatalogueFixtures.s("v2")));
    assertThat(sb.callLog()).containsExactly("UPDATE " + q + " ✗", "RETRIEVE values ✗");
    assertThat(kvs).value(q).hasState(FAILED);
    return q;
  }
}
