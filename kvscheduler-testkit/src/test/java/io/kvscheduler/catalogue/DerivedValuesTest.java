package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UNDEFINED;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.OBTAINED;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.catalogue.CatalogueFixtures.status;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Catalogue §8: derived values. */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class DerivedValuesTest {
  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  private static OpSpec[] ops(OpSpec... o) {
    return o;
  }

  private NodeRevision lastRevision(String key) {
    List<NodeRevision> tl = kvs.keyTimeline(key);
    assertThat(tl).as("timeline of %s", key).isNotEmpty();
    return tl.get(tl.size() - 1);
  }

  // ------------------------------------------------------------------ derived values and NB

  /** A1 = [i1] created through descriptor1, which derives A1/item1; the call log cleared. */
  private void baseDerivingItem1() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .build());
    env.commit(A1, arr(1));
    sb.clearCalls();
  }

  @Test
  @DisplayName(
      "(ours: semantics §1; D32) a transaction cannot set or remove a derived value: the"
          + " pair is ignored, the rest of the transaction applies, the base keeps its derived value,"
          + " and the commit fails naming the key (the reference only logs it)")
  void derivedValueNotSetByNb() {
    baseDerivingItem1();
    TransactionException set =
        Assertions.assertThrows(
            TransactionException.class, () -> env.commit(d(A1, 1), s("nb-owned"), A2, arr()));
    assertThat(set.keyErrors())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.key()).isEqualTo(d(A1, 1));
              assertThat(e.operation()).isEqualTo(TxnOperation.UPDATE);
              assertThat(e.message())
                  .isEqualTo(
                      "value ignored: the key holds a value derived from "
                          + A1
                          + ", which only its base value sets");
            });
    TransactionException removal =
        Assertions.assertThrows(TransactionException.class, () -> env.commit(d(A1, 1), null));
    assertThat(removal.keyErrors())
        .extracting(KeyError::key, KeyError::operation)
        .containsExactly(Tuple.tuple(d(A1, 1), TxnOperation.DELETE));
    assertThat(sb.callLog()).containsExactly("CREATE " + A2);
    assertThat(kvs.valueStatus(A1).derived())
        .extracting(ValueStatus::key, ValueStatus::state)
        .containsExactly(Tuple.tuple(d(A1, 1), CONFIGURED));
    assertThat(lastRevision(d(A1, 1)).value()).contains(s("item1"));
    assertThat(lastRevision(d(A1, 1)).derivedFrom()).isEqualTo(A1);
  }

  @Test
  @DisplayName(
      "(ours) a transaction that removes a base value and sets a key the base derived"
          + " gets that key as a value of its own: the removal runs first and frees the key")
  void keyFreedByItsBaseInTheSameTransaction() {
    baseDerivingItem1();
    env.commit(A1, null, d(A1, 1), s("own"));
    assertThat(sb.callLog())
        .containsExactly("DELETE " + d(A1, 1), "DELETE " + A1, "CREATE " + d(A1, 1));
    assertThat(kvs.valueStatus(d(A1, 1)).state()).isEqualTo(CONFIGURED);
    assertThat(lastRevision(d(A1, 1)).value()).contains(s("own"));
    assertThat(lastRevision(d(A1, 1)).derivedFrom()).isEmpty();
  }

  @Test
  @DisplayName(
      "(ours) derived entries that cannot be kept (null, without a value, the base's own"
          + " key, a key given twice) are dropped with a warning naming the base key, the count"
          + " and each dropped key with its reason; the first of a repeated key is kept")
  void droppedDerivedEntriesAreLogged() {
    Logger log = CatalogueFixtures.engineLogger("DescriptorHandle");
    var appender = new ListAppender<ILoggingEvent>();
    appender.start();
    log.addAppender(appender);
    try {
      kvs.registerDescriptors(
          sb.descriptor("descriptor1", Object.class)
              .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
              .derivedValues(
                  (key, value) ->
                      Arrays.asList(
                          KeyValuePair.of(key + "/x", s("first")),
                          null,
                          KeyValuePair.of(key, s("own key")),
                          KeyValuePair.of(key + "/x", s("second")),
                          KeyValuePair.of(key + "/y", null)))
              .build());
      env.commit(A1, s("a"));
    } finally {
      log.detachAppender(appender);
    }
    assertThat(lastRevision(A1 + "/x").value()).contains(s("first"));
    assertThat(kvs.valueStatus(A1).derived())
        .extracting(ValueStatus::key)
        .containsExactly(A1 + "/x");
    // once per computation: the simulation (on in this suite) asks the descriptor again
    assertThat(appender.list)
        .extracting(e -> e.getFormattedMessage())
        .containsOnly(
            "descriptor descriptor1: derivedValues for key " + A1 + " gave 1 null entries; skipped",
            "descriptor descriptor1: derivedValues for key "
                + A1
                + " gave 3 entries that were dropped: "
                + A1
                + " (the base's own key), "
                + A1
                + "/x (a key given before: the first is kept), "
                + A1
                + "/y (without a value)");
  }

  // ------------------------------------------------------------------ B79

  @Test
  @DisplayName(
      "B79 a derived value deleted with its base's re-creation is dropped at once: re-created from NONEXISTENT")
  void derivedDroppedImmediatelyOnRecreate() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .updateWithRecreate((key, o, n, m) -> key.equals(A1))
            .build());
    env.commit(A1, arr(1, 2));
    sb.clearCalls();
    env.commit(A1, arr(1, 3));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(A1, 1),
            "DELETE " + d(A1, 2),
            "DELETE " + A1,
            "CREATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + d(A1, 3));
    OpSpec[] expected =
        ops(
            op(DELETE, d(A1, 1)).states(CONFIGURED, REMOVED).flags("DERIVED", "RECREATE"),
            op(DELETE, d(A1, 2)).states(CONFIGURED, REMOVED).flags("DERIVED", "RECREATE"),
            op(DELETE, A1).states(CONFIGURED, REMOVED).flags("RECREATE"),
            op(CREATE, A1)
                .states(REMOVED, CONFIGURED)
                .flags("RECREATE")
                .prevValue(null)
                .newValue(arr(1, 3)),
            op(CREATE, d(A1, 1))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED", "RECREATE")
                .prevValue(null),
            // A1/i3 was not a derived value of the re-created base: no RECREATE flag
            op(CREATE, d(A1, 3)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    TxnAssert.assertThat(env.txn(1)).executed(expected).planned(expected);
    var st = kvs.valueStatus(A1);
    assertThat(st.derived()).extracting(ValueStatus::key).containsExactly(d(A1, 1), d(A1, 3));
    assertThat(kvs.valueStatus(d(A1, 2)).state()).isEqualTo(NONEXISTENT);
  }

  @Test
  @DisplayName(
      "B79 derived values exist only while the base derives them; deleting the base removes them")
  void derivedRemovedWithBase() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .derivedValues(CatalogueFixtures.derivedItems())
            .build());
    env.commit(A1, arr(1, 2));
    sb.clearCalls();
    // no longer derived -> deleted and gone
    env.commit(A1, arr(1));
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 2), "UPDATE " + A1);
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(DELETE, d(A1, 2)).states(CONFIGURED, REMOVED).flags("DERIVED"),
            op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(1, 2)).newValue(arr(1)));
    // (the unchanged derived value was visited with an equivalent, unrecorded UPDATE: it keeps its
    // CREATE, D61)
    assertThat(kvs.valueStatus(A1).derived())
        .containsExactly(status(d(A1, 1), CONFIGURED, CREATE, ""));
    assertThat(kvs.valueStatus(d(A1, 2)).state()).isEqualTo(NONEXISTENT);

    sb.clearCalls();
    env.commit(A1, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 1), "DELETE " + A1);
    TxnAssert.assertThat(env.txn(2))
        .executed(
            op(DELETE, d(A1, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
            op(DELETE, A1).states(CONFIGURED, REMOVED));
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(NONEXISTENT);
    assertThat(kvs.valueStatus(d(A1, 1)).state()).isEqualTo(NONEXISTENT);
    assertThat(sb.keys()).isEmpty();
  }

  @Test
  @DisplayName(
      "B79 a derived value un-configured because its own dependency disappeared stays PENDING")
  void derivedLosingDependencyStaysPending() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) ->
                    key.equals(d(A1, 1)) ? List.of(Dependency.onKey(B2, B2)) : List.of())
            .build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build());
    env.commit(A1, arr(1), B2, s("b2"));
    // A1/i1 waits for B2 within the transaction
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + B2, "CREATE " + d(A1, 1));
    sb.clearCalls();
    env.commit(B2, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 1), "DELETE " + B2);
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(DELETE, d(A1, 1))
                .states(CONFIGURED, PENDING)
                .flags("DERIVED")
                .prevValue(s("item1"))
                .newValue(s("item1")),
            op(DELETE, B2).states(CONFIGURED, REMOVED));
    assertThat(kvs)
        .hasStatus(status(A1, CONFIGURED, CREATE, ""), status(d(A1, 1), PENDING, DELETE, "", B2));
  }

  // ------------------------------------------------------------------ B80

  @Test
  @DisplayName(
      "B80 base and derived values depend on each other; a late-satisfied derived value is one CREATE from NONEXISTENT")
  void baseAndDerivedInterDependencies() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(A2)) return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                  if (key.equals(d(A1, 2))) return List.of(Dependency.onKey(d(A2, 1), d(A2, 1)));
                  return List.of();
                })
            .build());
    long seq =
        env.commit(
            TxnOptions.builder()
                .resync(ResyncType.FULL)
                .description("testing resync against empty SB")
                .build(),
            A2,
            arr(1),
            A1,
            arr(1, 2));
    assertThat(seq).isZero();
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE descriptor1",
            "CREATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + A2,
            "CREATE " + d(A2, 1),
            "CREATE " + d(A1, 2));
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED).newValue(arr(1, 2)),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED).newValue(arr(1)),
            op(CREATE, d(A2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(A1, 2))
                .states(NONEXISTENT, CONFIGURED)
                .flags("DERIVED")
                .prevValue(null)
                .newValue(s("item2")));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    var meta = kvs.metadataMap("descriptor1", Object.class);
    assertThat(meta.lookup("base-value1")).contains(0);
    assertThat(meta.lookup("base-value2")).contains(1);
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1), d(A1, 2), A2, d(A2, 1));
  }

  // ------------------------------------------------------------------ B81

  /** D1 selects /prefixA/ keys without a further "/": derived keys are properties. */
  private void registerWithProperties() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .keySelector(
                k ->
                    k.startsWith(CatalogueFixtures.PREFIX_A)
                        && k.indexOf('/', CatalogueFixtures.PREFIX_A.length()) < 0)
            .derivedValues(CatalogueFixtures.derivedItems())
            .build(),
        sb.descriptor("descriptor2", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
            .dependencies(
                (key, value) ->
                    key.equals(B2) ? List.of(Dependency.onKey(d(A1, 1), d(A1, 1))) : List.of())
            .build());
  }

  @Test
  @DisplayName(
      "B81 a derived key selected by no descriptor is a property: tracked, no calls, PROPERTY flag, can be a dependency")
  void propertiesOfNbValue() {
    registerWithProperties();
    env.commit(B2, s("b2"));
    assertThat(kvs).value(B2).isExactly(PENDING, CREATE, "", d(A1, 1));

    sb.clearCalls();
    env.commit(A1, arr(1));
    // no descriptor call for the property; B2 (depending on it) is created
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + B2);
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED", "PROPERTY"),
            op(CREATE, B2).states(PENDING, CONFIGURED));
    TxnAssert.assertThat(env.txn(1)).executed(expected).planned(expected);
    NodeRevision prop = lastRevision(d(A1, 1));
    assertThat(prop.descriptor()).isEmpty();
    assertThat(prop.derivedFrom()).isEqualTo(A1);
    assertThat(lastRevision(A1).descriptor()).isEqualTo("descriptor1");
    assertThat(kvs.flagStats("descriptor", k -> k.equals(d(A1, 1))).total()).isZero();
    assertThat(kvs.descriptorForKey(d(A1, 1))).isEmpty();

    // deleting the base removes the property without calls, un-configuring B2 first
    sb.clearCalls();
    env.commit(A1, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + B2, "DELETE " + A1);
    TxnAssert.assertThat(env.txn(2))
        .executed(
            op(DELETE, B2).states(CONFIGURED, PENDING),
            op(DELETE, d(A1, 1)).states(CONFIGURED, REMOVED).flags("DERIVED", "PROPERTY"),
            op(DELETE, A1).states(CONFIGURED, REMOVED));
  }

  @Test
  @DisplayName(
      "B81 B82 properties of an SB value: CREATE A1/i1 (NONEXISTENT->OBTAINED) {DERIVED, PROPERTY}")
  void propertiesOfSbValue() {
    registerWithProperties();
    sb.setValue(A1, arr(1), 10, ValueOrigin.FROM_SB, false);
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A1, arr(1), 10, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();
    assertThat(sb.callLog()).isEmpty();
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, OBTAINED),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, OBTAINED).flags("DERIVED", "PROPERTY"));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    assertThat(RecordedTxnOp.labels(env.txn(0).executed().get(1).displayFlags()))
        .containsExactly("PROPERTY", "OBTAINED");
    assertThat(kvs.metadataMap("descriptor1", Object.class).lookup("base-value1")).contains(10);
  }

  // ------------------------------------------------------------------ B82

  @Test
  @DisplayName(
      "B82 derived values of an SB value are OBTAINED without calls even when a descriptor selects them")
  void derivedInheritSbOrigin() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .build());
    assertThat(kvs.descriptorForKey(d(A1, 1))).isPresent();
    sb.setValue(A1, arr(1, 2), 10, ValueOrigin.FROM_SB, false);
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A1, arr(1, 2), 10, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();

    assertThat(env.txn(0).type()).isEqualTo(TxnType.SB_NOTIFICATION);
    assertThat(sb.callLog()).isEmpty();
    OpSpec[] expected =
        ops(
            op(CREATE, A1).states(NONEXISTENT, OBTAINED),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, OBTAINED).flags("DERIVED"),
            op(CREATE, d(A1, 2)).states(NONEXISTENT, OBTAINED).flags("DERIVED"));
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    assertThat(kvs)
        .hasStatus(
            status(A1, OBTAINED, UNDEFINED, ""),
            status(d(A1, 1), OBTAINED, UNDEFINED, ""),
            status(d(A1, 2), OBTAINED, UNDEFINED, ""));
    assertThat(lastRevision(d(A1, 1)).descriptor()).isEqualTo("descriptor1");

    // derived values of NB values are NB values (created by the descriptor)
    env.commit(A2, arr(1));
    assertThat(sb.callLog()).containsExactly("CREATE " + A2, "CREATE " + d(A2, 1));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, d(A2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    assertThat(sb.get(d(A2, 1)).orElseThrow().origin()).isEqualTo(ValueOrigin.FROM_NB);
  }

  // ------------------------------------------------------------------ B83

  @Test
  @DisplayName(
      "B83 a failed Delete of a derived value aborts the base's Delete (TestFailedDeleteOfDerivedValue)")
  void failedDeleteOfDerivedValue() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .build());
    assertThat(env.commit(A1, arr(1))).isZero();
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);
    sb.clearCalls();

    sb.planError(d(A1, 1), new RuntimeException("failed to delete value"));
    TransactionException e = assertThrows(TransactionException.class, () -> env.commit(A1, null));
    assertThat(e.seqNum()).isEqualTo(1);
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(Tuple.tuple(d(A1, 1), DELETE, "failed to delete value"));

    // the base's Delete is never called; the failed derived value's base is refreshed
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 1) + " ✗", "RETRIEVE descriptor1");
    TxnAssert.assertThat(env.txn(1))
        .planned(
            op(DELETE, d(A1, 1))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED")
                .prevValue(s("item1"))
                .newValue(null),
            op(DELETE, A1).states(CONFIGURED, REMOVED).prevValue(arr(1)).newValue(null))
        .executed(
            op(DELETE, d(A1, 1))
                .states(CONFIGURED, FAILED)
                .flags("DERIVED")
                .prevValue(s("item1"))
                .newValue(null)
                .error("failed to delete value"));
    assertThat(kvs)
        .hasStatus(
            status(A1, CONFIGURED, DELETE, ""),
            status(d(A1, 1), FAILED, DELETE, "failed to delete value"));
    // still in SB, still with its metadata; the NB intent is now "deleted"
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1));
    assertThat(kvs.metadataMap("descriptor1", Object.class).lookup("base-value1")).contains(0);
    assertThat(kvs.dumpValues("descriptor1", View.NB)).isEmpty();
  }

  // ------------------------------------------------------------------ B84

  @Test
  @DisplayName(
      "B84 derived values never carry metadata; dumps (NB, cached, SB) list only base values")
  void derivedWithoutMetadataAndNotDumped() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .build());
    env.commit(A1, arr(1, 2));
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);
    assertThat(sb.get(d(A1, 1)).orElseThrow().metadata()).isNull();
    assertThat(sb.get(d(A1, 2)).orElseThrow().metadata()).isNull();
    assertThat(kvs.metadataMap("descriptor1", Object.class).labels())
        .containsExactly("base-value1");
    assertThat(lastRevision(d(A1, 1)).metadata()).isEmpty();
    assertThat(lastRevision(A1).metadata()).contains(0);

    List<KVWithMetadata<Object, Object>> expected =
        List.of(new KVWithMetadata<>(A1, arr(1, 2), 0, ValueOrigin.FROM_NB));
    List<List<KVWithMetadata<Object, Object>>> dumps = new ArrayList<>();
    for (View v : View.values()) {
      dumps.add(kvs.dumpValues("descriptor1", v));
      dumps.add(kvs.dumpValuesByKeyPrefix(CatalogueFixtures.PREFIX_A, v));
    }
    assertThat(dumps).allSatisfy(dump -> assertThat(dump).isEqualTo(expected));
  }
}
