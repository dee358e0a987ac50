package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UNDEFINED;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.MISSING;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.OBTAINED;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
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
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.RecordedTxn.RecordedValue;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Catalogue §7: dependencies (AND, AnyOf, availability, cycles). */
@KVSchedulerTest(simulation = true, printTxnSummary = true, checkSouthbound = false)
class DependencyTest {
  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  /** Inconsistent SB calls a test expects on purpose (checked in tearDown). */
  private final List<String> expectedInconsistencies = new ArrayList<>();

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  @AfterEach
  void tearDown() {
    assertThat(sb.inconsistencies()).containsExactlyElementsOf(expectedInconsistencies);
  }

  // ------------------------------------------------------------------ helpers

  private TransactionException commitFails(Object... kv) {
    return assertThrows(TransactionException.class, () -> env.commit(kv));
  }

  private static OpSpec[] ops(OpSpec... o) {
    return o;
  }

  // ------------------------------------------------------------------ B68

  @Test
  @DisplayName(
      "B68 dependencies are AND-ed; PENDING details list the labels without available target")
  void andedDependencies() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .dependencies(
                (key, value) ->
                    List.of(Dependency.onKey("needs-a1", A1), Dependency.onKey("needs-b2", B2)))
            .build());

    env.commit(C3, s("c3"));
    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(0))
        .executed(op(CREATE, C3).states(NONEXISTENT, PENDING).flags("NOOP"));
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(PENDING);
    assertThat(kvs.valueStatus(C3).value().details())
        .containsExactlyInAnyOrder("needs-a1", "needs-b2");

    // one of two dependencies is not enough
    env.commit(A1, s("a1"));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1);
    TxnAssert.assertThat(env.txn(1)).executed(op(CREATE, A1).states(NONEXISTENT, CONFIGURED));
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "needs-b2");

    // both: created in the transaction that brings the second one
    sb.clearCalls();
    env.commit(B2, s("b2"));
    assertThat(sb.callLog()).containsExactly("CREATE " + B2, "CREATE " + C3);
    OpSpec[] expected =
        ops(
            op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, C3).states(PENDING, CONFIGURED).prevValue(s("c3")).newValue(s("c3")));
    TxnAssert.assertThat(env.txn(2)).executed(expected).planned(expected);
    assertThat(kvs).value(C3).isExactly(CONFIGURED, CREATE, "");
  }

  @Test
  @DisplayName(
      "B68 (ours: labels must be unique within a value; a duplicate label makes the value INVALID)")
  void duplicateLabelIsInvalid() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .dependencies(
                (key, value) -> List.of(Dependency.onKey("dup", A1), Dependency.onKey("dup", A2)))
            .build());
    TransactionException e = commitFails(A1, s("a1"), A2, s("a2"), C3, s("c3"));
    // the callback answered, wrongly: said as a broken contract, not as a failed callback
    assertThat(e)
        .hasFailedKeys(C3)
        .hasKeyErrorMessage(
            C3,
            "descriptor descriptor3: dependencies of key "
                + C3
                + ": dependency label 'dup' used twice");
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + A2);
    assertThat(kvs).value(C3).isInvalid();
  }

  // ------------------------------------------------------------------ B69

  @Test
  @DisplayName(
      "B69 a value OBTAINED from SB (full resync) satisfies an NB dependency and is left untouched")
  void obtainedValueSatisfiesNbDependency() {
    sb.setValue(A1, s("base-value1"), null, ValueOrigin.FROM_SB, false);
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> key.equals(A2) ? List.of(Dependency.onKey(A1, A1)) : List.of())
            .build());

    long seq = env.commit(TxnOptions.builder().resync(ResyncType.FULL).build(), A2, arr(1));
    assertThat(seq).isZero();

    assertThat(sb.callLog())
        .containsExactly("RETRIEVE descriptor1", "CREATE " + A2, "CREATE " + d(A2, 1));
    OpSpec[] expected =
        ops(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED).newValue(arr(1)),
            op(CREATE, d(A2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    assertThat(env.txn(0).values())
        .containsExactly(
            new RecordedValue(A1, Optional.of(s("base-value1")), ValueOrigin.FROM_SB),
            new RecordedValue(A2, Optional.of(arr(1)), ValueOrigin.FROM_NB));

    assertThat(sb.get(A1).orElseThrow())
        .isEqualTo(
            new MockSouthbound.Entry(A1, s("base-value1"), null, ValueOrigin.FROM_SB, false));
    assertThat(kvs).value(A1).isExactly(OBTAINED, UNDEFINED, "");
    assertThat(kvs).value(A2).isExactly(CONFIGURED, CREATE, "");
    var meta = kvs.metadataMap("descriptor1", Object.class);
    assertThat(meta.lookup("base-value1")).isEmpty();
    assertThat(meta.lookup("base-value2")).contains(0);
  }

  // ------------------------------------------------------------------ B70

  @Test
  @DisplayName(
      "B70 AnyOf by key prefix: pending until a value with the prefix appears (SB notification)")
  void anyOfPrefixSatisfiedByLaterValue() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .dependencies(
                (key, value) ->
                    List.of(Dependency.anyOfPrefixes("any-A", CatalogueFixtures.PREFIX_A)))
            .build());

    env.commit(C3, s("c3"));
    TxnAssert.assertThat(env.txn(0))
        .executed(op(CREATE, C3).states(NONEXISTENT, PENDING).flags("NOOP"));
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "any-A");

    // a key outside the prefix does not satisfy it
    env.commit(B2, s("b2"));
    assertThat(sb.callLog()).containsExactly("CREATE " + B2);
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "any-A");

    // an SB value appearing later under the prefix makes C3 ready in the same transaction
    sb.clearCalls();
    sb.setValue(A1, s("a1"), null, ValueOrigin.FROM_SB, false);
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A1, s("a1"), null, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();
    assertThat(env.txn(2).type()).isEqualTo(TxnType.SB_NOTIFICATION);
    assertThat(sb.callLog()).containsExactly("CREATE " + C3);
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, OBTAINED),
            op(CREATE, C3).states(PENDING, CONFIGURED).prevValue(s("c3")).newValue(s("c3")));
    TxnAssert.assertThat(env.txn(2)).executed(expected).planned(expected);
    assertThat(kvs).value(C3).isExactly(CONFIGURED, CREATE, "");
  }

  // ------------------------------------------------------------------ B71

  @Test
  @DisplayName(
      "B71 AnyOf with key prefix AND key selector: only keys in the intersection satisfy it")
  void anyOfPrefixIntersectSelector() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .dependencies(
                (key, value) ->
                    List.of(
                        Dependency.anyOf(
                            "sel", List.of(CatalogueFixtures.PREFIX_A), k -> k.endsWith("2"))))
            .build());

    env.commit(C3, s("c3"));
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "sel");

    // A1: prefix ok, selector no; B2: selector ok, prefix no
    env.commit(A1, s("a1"), B2, s("b2"));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + B2);
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "sel");

    sb.clearCalls();
    env.commit(A2, s("a2"));
    assertThat(sb.callLog()).containsExactly("CREATE " + A2, "CREATE " + C3);
    TxnAssert.assertThat(env.txn(2))
        .executed(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, C3).states(PENDING, CONFIGURED));
    assertThat(kvs).value(C3).isExactly(CONFIGURED, CREATE, "");
  }

  @Test
  @DisplayName(
      "B71 AnyOf with a key selector only: evaluated on every key, re-evaluated as keys appear")
  void anyOfSelectorOnly() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .dependencies(
                (key, value) ->
                    List.of(Dependency.anyOf("sel", List.of(), k -> k.endsWith("base-value2"))))
            .build());

    env.commit(C3, s("c3"));
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "sel");
    env.commit(A1, s("a1"));
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "sel");

    sb.clearCalls();
    env.commit(B2, s("b2"));
    assertThat(sb.callLog()).containsExactly("CREATE " + B2, "CREATE " + C3);
    TxnAssert.assertThat(env.txn(2))
        .executed(
            op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, C3).states(PENDING, CONFIGURED));
    assertThat(kvs).value(C3).isExactly(CONFIGURED, CREATE, "");
  }

  // ------------------------------------------------------------------ B72

  /**
   * D1 (/prefixA/, validates: s("invalid") is rejected; A1 depends on B2 when its value is
   * s("needs-b2")), D2 (/prefixB/), D3 (/prefixC/: C3 = s(k) depends on key k, label "dep").
   */
  private void registerForAvailability(boolean withRetrieve) {
    var d1 =
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .derivedValues(CatalogueFixtures.derivedItems())
            .validate(
                (key, value) -> {
                  if (s("invalid").equals(value)) {
                    throw new InvalidValueException("bad", "value");
                  }
                })
            .dependencies(
                (key, value) ->
                    s("needs-b2").equals(value) ? List.of(Dependency.onKey(B2, B2)) : List.of());
    if (!withRetrieve) {
      d1.withoutRetrieve();
    }
    kvs.registerDescriptors(
        d1.build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .dependencies(
                (key, value) ->
                    List.of(
                        Dependency.onKey("dep", ((CatalogueFixtures.StringValue) value).value())))
            .build());
  }

  @Test
  @DisplayName("B72 a PENDING value does not satisfy dependencies")
  void pendingIsUnavailable() {
    registerForAvailability(false);
    env.commit(A1, s("needs-b2"), C3, s(A1));
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(A1).isExactly(PENDING, CREATE, "", B2);
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "dep");
  }

  @Test
  @DisplayName("B72 an INVALID value does not satisfy dependencies")
  void invalidIsUnavailable() {
    registerForAvailability(false);
    commitFails(A1, s("invalid"));
    env.commit(C3, s(A1));
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(A1).isInvalid();
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "dep");
  }

  @Test
  @DisplayName("B72 an UNIMPLEMENTED value does not satisfy dependencies")
  void unimplementedIsUnavailable() {
    registerForAvailability(false);
    String x = "/prefixX/x";
    env.commit(x, s("x"), C3, s(x));
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(x).isUnimplemented();
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "dep");
  }

  @Test
  @DisplayName("B72 a MISSING value (not found by a refresh) does not satisfy dependencies")
  void missingIsUnavailable() {
    registerForAvailability(true);
    env.commit(A1, arr(1));
    // the Create of A1/i2 fails and A1 disappears from SB meanwhile; the post-failure refresh
    // of A1 does not find it
    sb.planError(
        d(A1, 2),
        new RuntimeException("failed to create"),
        () -> sb.setValue(A1, null, null, ValueOrigin.FROM_NB, false));
    commitFails(A1, arr(1, 2));
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(MISSING);

    sb.clearCalls();
    env.commit(C3, s(A1));
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "dep");
  }

  @Test
  @DisplayName("B72 a value whose Create failed does not satisfy dependencies")
  void failedCreateIsUnavailable() {
    registerForAvailability(false);
    sb.planError(A1, new RuntimeException("failed to create"));
    commitFails(A1, s("a1"));
    assertThat(kvs).value(A1).isExactly(FAILED, CREATE, "failed to create");
    sb.clearCalls();
    env.commit(C3, s(A1));
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "dep");
  }

  @Test
  @DisplayName("B72 a value whose Delete failed does not satisfy dependencies")
  void failedDeleteIsUnavailable() {
    registerForAvailability(false);
    env.commit(A1, s("a1"));
    sb.planError(A1, new RuntimeException("failed to delete"));
    commitFails(A1, null);
    assertThat(kvs).value(A1).isExactly(FAILED, DELETE, "failed to delete");
    assertThat(sb.get(A1)).isPresent();
    sb.clearCalls();
    env.commit(C3, s(A1));
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs).value(C3).isExactly(PENDING, CREATE, "", "dep");
  }

  @Test
  @DisplayName(
      "B72 a value is unavailable from the start of its own deletion (dependents go first)")
  void unavailableFromStartOfDeletion() {
    registerForAvailability(false);
    env.commit(A1, s("a1"), C3, s(A1));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + C3);
    sb.clearCalls();
    env.commit(A1, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + C3, "DELETE " + A1);
    OpSpec[] expected =
        ops(
            op(DELETE, C3).states(CONFIGURED, PENDING).prevValue(s(A1)).newValue(s(A1)),
            op(DELETE, A1).states(CONFIGURED, REMOVED).prevValue(s("a1")).newValue(null));
    TxnAssert.assertThat(env.txn(1)).executed(expected).planned(expected);
    assertThat(kvs).value(C3).isExactly(PENDING, DELETE, "", "dep");
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(NONEXISTENT);
  }

  @Test
  @DisplayName("B72 a value whose Update failed stays available")
  void failedUpdateStaysAvailable() {
    registerForAvailability(false);
    env.commit(A1, s("v1"));
    sb.planError(A1, new RuntimeException("failed to update"));
    commitFails(A1, s("v2"));
    assertThat(kvs).value(A1).isExactly(FAILED, UPDATE, "failed to update");
    sb.clearCalls();
    env.commit(C3, s(A1));
    assertThat(sb.callLog()).containsExactly("CREATE " + C3);
    assertThat(kvs).value(C3).isExactly(CONFIGURED, CREATE, "");
  }

  // ------------------------------------------------------------------ B73

  @Test
  @DisplayName(
      "B73 values from SB (and their derived values) are OBTAINED even with unmet dependencies")
  void sbValuesNeverBlocked() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(A1)) return List.of(Dependency.onKey(B2, B2));
                  if (key.equals(d(A1, 1))) return List.of(Dependency.onKey(C3, C3));
                  return List.of();
                })
            .build());
    sb.setValue(A1, arr(1), null, ValueOrigin.FROM_SB, false);
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A1, arr(1), null, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();

    assertThat(sb.callLog()).isEmpty();
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, OBTAINED),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, OBTAINED).flags("DERIVED"));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    var st = kvs.valueStatus(A1);
    assertThat(st.value()).isEqualTo(new ValueStatus(A1, OBTAINED, "", UNDEFINED, List.of()));
    assertThat(st.derived())
        .containsExactly(new ValueStatus(d(A1, 1), OBTAINED, "", UNDEFINED, List.of()));
  }

  // ------------------------------------------------------------------ B74..B77

  private static final CatalogueFixtures.StringValue V1 = s("base-value1-data");
  private static final CatalogueFixtures.StringValue V2 = s("base-value2-data");
  private static final CatalogueFixtures.StringValue V3 = s("base-value3-data");
  private static final CatalogueFixtures.StringValue V4 = s("base-value4-data");
  private static final CatalogueFixtures.StringValue V2_NEW = s("base-value2-data-new");

  /** TestDependencyCycles: A1→A2, A2→A3, A3→{A1,A4}; labels are the keys; no Retrieve. */
  private void registerCycle() {
    KVDescriptor<Object, Object> d =
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .dependencies(
                (key, value) -> {
                  if (key.equals(A1)) return List.of(Dependency.onKey(A2, A2));
                  if (key.equals(A2)) return List.of(Dependency.onKey(A3, A3));
                  if (key.equals(A3))
                    return List.of(Dependency.onKey(A1, A1), Dependency.onKey(A4, A4));
                  return List.of();
                })
            .build();
    kvs.registerDescriptors(d);
  }

  private void cycleTxn1() {
    long seq =
        env.commit(
            TxnOptions.builder().description("testing dependency cycles").build(),
            A1,
            V1,
            A2,
            V2,
            A3,
            V3);
    assertThat(seq).isZero();
    assertThat(sb.callLog()).isEmpty();
    assertThat(sb.keys()).isEmpty();
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, PENDING).flags("NOOP").newValue(V1),
            op(CREATE, A2).states(NONEXISTENT, PENDING).flags("NOOP").newValue(V2),
            op(CREATE, A3).states(NONEXISTENT, PENDING).flags("NOOP").newValue(V3));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    assertThat(kvs).value(A1).isExactly(PENDING, CREATE, "", A2);
    assertThat(kvs).value(A2).isExactly(PENDING, CREATE, "", A3);
    ValueStatus a3 = kvs.valueStatus(A3).value();
    assertThat(a3.state()).isEqualTo(PENDING);
    assertThat(a3.lastOperation()).isEqualTo(CREATE);
    assertThat(a3.details()).containsExactlyInAnyOrder(A4, A1);
  }

  private void cycleTxn2() {
    sb.clearCalls();
    assertThat(env.commit(A4, V4)).isEqualTo(1);
    assertThat(sb.callLog())
        .containsExactly("CREATE " + A4, "CREATE " + A3, "CREATE " + A2, "CREATE " + A1);
    OpSpec[] expected =
        ops(
            op(CREATE, A4).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(V4),
            op(CREATE, A3).states(PENDING, CONFIGURED).prevValue(V3).newValue(V3),
            op(CREATE, A2).states(PENDING, CONFIGURED).prevValue(V2).newValue(V2),
            op(CREATE, A1).states(PENDING, CONFIGURED).prevValue(V1).newValue(V1));
    TxnAssert.assertThat(env.txn(1)).executed(expected).planned(expected);
    for (String k : List.of(A1, A2, A3, A4)) {
      assertThat(kvs).value(k).isExactly(CONFIGURED, CREATE, "");
    }
  }

  private void cycleTxn3() {
    sb.clearCalls();
    sb.planError(A2, new RuntimeException("failed to remove the value"));
    TransactionException e = commitFails(A2, null);
    assertThat(e.seqNum()).isEqualTo(2);
    assertThat(e)
        .hasFailedKeys(A2)
        .hasKeyError(A2, DELETE)
        .hasKeyErrorMessage(A2, "failed to remove the value");
    assertThat(sb.callLog()).containsExactly("DELETE " + A3, "DELETE " + A1, "DELETE " + A2 + " ✗");
    TxnAssert.assertThat(env.txn(2))
        .planned(
            op(DELETE, A3).states(CONFIGURED, PENDING).prevValue(V3).newValue(V3),
            op(DELETE, A1).states(CONFIGURED, PENDING).prevValue(V1).newValue(V1),
            op(DELETE, A2).states(CONFIGURED, REMOVED).prevValue(V2).newValue(null).error(""))
        .executed(
            op(DELETE, A3).states(CONFIGURED, PENDING).prevValue(V3).newValue(V3),
            op(DELETE, A1).states(CONFIGURED, PENDING).prevValue(V1).newValue(V1),
            op(DELETE, A2)
                .states(CONFIGURED, FAILED)
                .prevValue(V2)
                .newValue(null)
                .error("failed to remove the value"));
    // SB: A2 could not be removed, A4 untouched
    assertThat(sb.keys()).containsExactly(A2, A4);
    assertThat(sb.get(A2).orElseThrow().value()).isEqualTo(V2);
    assertThat(kvs).value(A1).isExactly(PENDING, DELETE, "", A2);
    assertThat(kvs).value(A2).isExactly(FAILED, DELETE, "failed to remove the value");
    assertThat(kvs).value(A3).isExactly(PENDING, DELETE, "", A1);
    assertThat(kvs).value(A4).isExactly(CONFIGURED, CREATE, "");
  }

  private void cycleTxn4() {
    sb.clearCalls();
    assertThat(env.commit(A2, V2_NEW)).isEqualTo(3);
    // the reference re-applies a FAILED (unavailable) value with Create although the southbound
    // still holds it; we update the object its failed Delete left in place (D35)
    assertThat(sb.callLog()).containsExactly("UPDATE " + A2, "CREATE " + A1, "CREATE " + A3);
    TxnAssert.assertThat(env.txn(3))
        .executed(
            op(UPDATE, A2)
                .states(FAILED, CONFIGURED)
                .prevValue(V2)
                .newValue(V2_NEW)
                .prevError("failed to remove the value")
                .error(""),
            op(CREATE, A1).states(PENDING, CONFIGURED).prevValue(V1).newValue(V1),
            op(CREATE, A3).states(PENDING, CONFIGURED).prevValue(V3).newValue(V3));
    assertThat(sb.keys()).containsExactly(A1, A2, A3, A4);
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(V1);
    assertThat(sb.get(A2).orElseThrow().value()).isEqualTo(V2_NEW);
    assertThat(sb.get(A3).orElseThrow().value()).isEqualTo(V3);
    assertThat(sb.get(A4).orElseThrow().value()).isEqualTo(V4);
    for (String k : List.of(A1, A3, A4)) {
      assertThat(kvs).value(k).isExactly(CONFIGURED, CREATE, "");
    }
    assertThat(kvs).value(A2).isExactly(CONFIGURED, UPDATE, "");
  }

  @Test
  @DisplayName("B74 B68 a dependency cycle with an unmet external dependency stays pending")
  void cycleStaysPending() {
    registerCycle();
    cycleTxn1();
  }

  @Test
  @DisplayName(
      "B75 a completed cycle is created as one unit, following reverse edges from the new value")
  void completedCycleCreated() {
    registerCycle();
    cycleTxn1();
    cycleTxn2();
  }

  @Test
  @DisplayName(
      "B76 breaking a cycle with a failing Delete: others un-configured, value FAILED, commit error")
  void breakingCycleWithFailingDelete() {
    registerCycle();
    cycleTxn1();
    cycleTxn2();
    cycleTxn3();
  }

  @Test
  @DisplayName(
      "B77 re-adding the failed member restores the whole cycle (D35: an Update of the"
          + " object its failed Delete left, not a second Create)")
  void readdingFailedMemberRestoresCycle() {
    registerCycle();
    cycleTxn1();
    cycleTxn2();
    cycleTxn3();
    cycleTxn4();
  }

  // ------------------------------------------------------------------ B78

  @Test
  @DisplayName(
      "B78 (ours: observable guarantee) a cycle created in one transaction: walks terminate, one Create per key")
  void cycleCreatedInOneTransaction() {
    registerCycle();
    env.commit(A1, V1, A2, V2, A3, V3, A4, V4);
    assertThat(sb.callLog())
        .containsExactly("CREATE " + A4, "CREATE " + A3, "CREATE " + A2, "CREATE " + A1);
    // the intermediate pending creates are compressed away (B80 rule)
    OpSpec[] expected =
        ops(
            op(CREATE, A4).states(NONEXISTENT, CONFIGURED),
            op(CREATE, A3).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(V3),
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(V2),
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(V1));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
  }

  @Test
  @DisplayName(
      "B78 (ours: observable guarantee) a whole cycle deleted in one transaction: one Delete per key")
  void cycleDeletedInOneTransaction() {
    registerCycle();
    env.commit(A1, V1, A2, V2, A3, V3, A4, V4);
    sb.clearCalls();
    env.commit(A1, null, A2, null, A3, null, A4, null);
    assertThat(sb.callLog())
        .containsExactly("DELETE " + A2, "DELETE " + A3, "DELETE " + A1, "DELETE " + A4);
    OpSpec[] expected =
        ops(
            op(DELETE, A2).states(CONFIGURED, REMOVED).prevValue(V2).newValue(null),
            op(DELETE, A3).states(CONFIGURED, REMOVED).prevValue(V3).newValue(null),
            op(DELETE, A1).states(CONFIGURED, REMOVED).prevValue(V1).newValue(null),
            op(DELETE, A4).states(CONFIGURED, REMOVED).prevValue(V4).newValue(null));
    TxnAssert.assertThat(env.txn(1)).executed(expected).planned(expected);
    assertThat(sb.keys()).isEmpty();
    assertThat(kvs.valueStatuses()).isEmpty();
  }
}
