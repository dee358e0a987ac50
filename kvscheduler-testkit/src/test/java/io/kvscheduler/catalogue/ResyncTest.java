package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueOrigin.FROM_NB;
import static io.kvscheduler.api.ValueOrigin.FROM_SB;
import static io.kvscheduler.api.ValueOrigin.UNKNOWN;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.DISCOVERED;
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
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_A;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_B;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_C;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.catalogue.CatalogueFixtures.status;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxn.RecordedValue;
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
import io.kvscheduler.testkit.MockDescriptorBuilder;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Catalogue §13 (resync: startup, full, upstream, downstream), B129-B144, plus B60 and B80 which
 * are checked by TestResyncWithEmptySB. Every scheduler runs with simulation enabled, so each NB
 * transaction records its plan as well.
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class ResyncTest {
  private static final String D1 = "descriptor1";
  private static final String D2 = "descriptor2";
  private static final String D3 = "descriptor3";

  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  // ------------------------------------------------------------------ helpers

  private static TxnOptions resync(ResyncType type) {
    return TxnOptions.builder().resync(type).build();
  }

  private static TxnOptions fullResync(String description) {
    return TxnOptions.builder().resync(ResyncType.FULL).description(description).build();
  }

  private static KVWithMetadata<Object, Object> kv(
      String key, Object value, Object meta, ValueOrigin origin) {
    return new KVWithMetadata<>(key, value, meta, origin);
  }

  private static RecordedValue rv(String key, Object value, ValueOrigin origin) {
    return new RecordedValue(key, Optional.ofNullable(value), origin);
  }

  /** The correlation input of the {@code index}-th SB call (a RETRIEVE). */
  private List<KVWithMetadata<Object, Object>> correlate(int index) {
    MockSouthbound.Call c = sb.calls().get(index);
    assertThat(c.kind()).isEqualTo(MockSouthbound.CallKind.RETRIEVE);
    return c.correlate();
  }

  /** Every view (NB, SB, cached), by descriptor and by key prefix, lists exactly these. */
  private void assertDumps(
      String descriptor, String prefix, View view, List<KVWithMetadata<Object, Object>> expected) {
    assertThat(kvs.dumpValues(descriptor, view))
        .as("%s view of %s", view, descriptor)
        .containsExactlyElementsOf(expected);
    assertThat(kvs.dumpValuesByKeyPrefix(prefix, view))
        .as("%s view of %s", view, prefix)
        .containsExactlyElementsOf(expected);
  }

  private void assertAllDumps(
      String descriptor, String prefix, List<KVWithMetadata<Object, Object>> expected) {
    for (View v : View.values()) {
      assertDumps(descriptor, prefix, v, expected);
    }
    sb.clearCalls(); // SB dumps call Retrieve
  }

  private Map<String, Long> perValue(String flag) {
    return new TreeMap<>(kvs.flagStats(flag, KeySelector.any()).perValue());
  }

  private long total(String flag) {
    return kvs.flagStats(flag, KeySelector.any()).total();
  }

  private Optional<Object> meta(String descriptor, String label) {
    return kvs.metadataMap(descriptor, Object.class).lookup(label);
  }

  private void assertRecord(
      RecordedTxn txn, long seq, ResyncType resync, String description, RecordedValue... values) {
    assertThat(txn.seqNum()).isEqualTo(seq);
    assertThat(txn.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(txn.resyncType()).isEqualTo(resync);
    assertThat(txn.description()).isEqualTo(description);
    assertThat(txn.retryAttempt()).isZero();
    assertThat(txn.retryForTxn()).isZero();
    assertThat(txn.values()).containsExactly(values);
  }

  /** D1 over /prefixA/ with metadata and derived items. */
  private MockDescriptorBuilder<Object> d1() {
    return sb.descriptor(D1, Object.class).nbKeyPrefix(PREFIX_A).withMetadata();
  }

  // ------------------------------------------------------------------ B129

  @Test
  @DisplayName(
      "B129 an empty full resync calls Retrieve once with empty correlation, is recorded, "
          + "executes nothing")
  void emptyResync() {
    kvs.registerDescriptors(d1().build());
    assertThat(kvs.registeredNBKeyPrefixes()).containsExactly(PREFIX_A);
    assertThat(kvs.transactionHistory()).isEmpty();

    long seq = env.commit(fullResync("testing empty resync"));

    assertThat(seq).isZero();
    assertThat(sb.values()).isEmpty();
    assertThat(kvs.metadataMap(D1, Object.class).labels()).isEmpty();
    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1);
    assertThat(correlate(0)).isEmpty();

    List<RecordedTxn> history = kvs.transactionHistory();
    assertThat(history).hasSize(1);
    RecordedTxn txn = history.get(0);
    assertRecord(txn, 0, ResyncType.FULL, "testing empty resync");
    assertThat(txn.planned()).isEmpty();
    assertThat(txn.executed()).isEmpty();
    assertThat(txn.start()).isBeforeOrEqualTo(txn.stop());

    for (String flag :
        List.of("error", "unavailable", "derived", "last-update", "descriptor", "value-state")) {
      assertThat(total(flag)).as(flag).isZero();
    }
    assertThat(kvs.valueStatuses()).isEmpty();
  }

  // ------------------------------------------------------------------ TestResyncWithEmptySB

  private void registerEmptySbDescriptor() {
    kvs.registerDescriptors(
        d1().derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(A2)) {
                    return List.of(Dependency.onKey(d(A1, 1), d(A1, 1))); // base on derived
                  }
                  if (key.equals(d(A1, 2))) {
                    return List.of(Dependency.onKey(d(A2, 1), d(A2, 1))); // derived on derived
                  }
                  return List.of();
                })
            .build());
  }

  @Test
  @DisplayName(
      "B130 B80 startup resync against an empty SB: Retrieve correlates with NB data, "
          + "base and derived values depend on each other, late satisfaction is compressed")
  void resyncWithEmptySbStartup() {
    registerEmptySbDescriptor();

    long seq = env.commit(fullResync("testing resync against empty SB"), A2, arr(1), A1, arr(1, 2));

    assertThat(seq).isZero();
    // SB state
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1), d(A1, 2), A2, d(A2, 1));
    assertThat(sb.get(A1).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A1, arr(1, 2), 0, FROM_NB, false));
    assertThat(sb.get(d(A1, 1)).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(d(A1, 1), s("item1"), null, FROM_NB, true));
    assertThat(sb.get(d(A1, 2)).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(d(A1, 2), s("item2"), null, FROM_NB, true));
    assertThat(sb.get(A2).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A2, arr(1), 1, FROM_NB, false));
    assertThat(sb.get(d(A2, 1)).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(d(A2, 1), s("item1"), null, FROM_NB, true));
    // metadata
    assertThat(meta(D1, "base-value1")).contains(0);
    assertThat(meta(D1, "base-value2")).contains(1);
    // SB ops
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1,
            "CREATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + A2,
            "CREATE " + d(A2, 1),
            "CREATE " + d(A1, 2));
    assertThat(correlate(0))
        .containsExactly(kv(A1, arr(1, 2), null, FROM_NB), kv(A2, arr(1), null, FROM_NB));
    sb.clearCalls();
    // dumps
    assertAllDumps(
        D1, PREFIX_A, List.of(kv(A1, arr(1, 2), 0, FROM_NB), kv(A2, arr(1), 1, FROM_NB)));
    // statuses
    assertThat(kvs)
        .hasStatus(
            status(A1, CONFIGURED, CREATE, ""),
            status(d(A1, 1), CONFIGURED, CREATE, ""),
            status(d(A1, 2), CONFIGURED, CREATE, ""));
    assertThat(kvs)
        .hasStatus(status(A2, CONFIGURED, CREATE, ""), status(d(A2, 1), CONFIGURED, CREATE, ""));
    // record
    List<RecordedTxn> history = kvs.transactionHistory();
    assertThat(history).hasSize(1);
    assertRecord(
        history.get(0),
        0,
        ResyncType.FULL,
        "testing resync against empty SB",
        rv(A1, arr(1, 2), FROM_NB),
        rv(A2, arr(1), FROM_NB));
    OpSpec[] ops = {
      op(CREATE, A1).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(arr(1, 2)),
      op(CREATE, d(A1, 1))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item1")),
      op(CREATE, A2).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(arr(1)),
      op(CREATE, d(A2, 1))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item1")),
      op(CREATE, d(A1, 2))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item2"))
    };
    TxnAssert.assertThat(history.get(0)).planned(ops).executed(ops);
  }

  @Test
  @DisplayName(
      "B131 B132 B60 a second full resync without data correlates with the graph "
          + "(with metadata) and deletes everything; dependent deletes are merged")
  void resyncWithEmptySbRemoveAll() {
    registerEmptySbDescriptor();
    env.commit(fullResync("testing resync against empty SB"), A2, arr(1), A1, arr(1, 2));
    sb.clearCalls();

    long seq = env.commit(resync(ResyncType.FULL));

    assertThat(seq).isEqualTo(1);
    assertThat(sb.values()).isEmpty();
    assertThat(kvs.metadataMap(D1, Object.class).labels()).isEmpty();
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1,
            "DELETE " + d(A1, 2),
            "DELETE " + d(A2, 1),
            "DELETE " + A2,
            "DELETE " + d(A1, 1),
            "DELETE " + A1);
    assertThat(correlate(0))
        .containsExactly(kv(A1, arr(1, 2), 0, FROM_NB), kv(A2, arr(1), 1, FROM_NB));

    List<RecordedTxn> history = kvs.transactionHistory();
    assertThat(history).hasSize(2);
    assertRecord(
        history.get(1), 1, ResyncType.FULL, "", rv(A1, null, FROM_NB), rv(A2, null, FROM_NB));
    OpSpec[] ops = {
      op(DELETE, d(A1, 2))
          .states(CONFIGURED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item2"))
          .newValue(null),
      op(DELETE, d(A2, 1))
          .states(CONFIGURED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, A2).states(CONFIGURED, REMOVED).prevValue(arr(1)).newValue(null),
      op(DELETE, d(A1, 1))
          .states(CONFIGURED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, A1).states(CONFIGURED, REMOVED).prevValue(arr(1, 2)).newValue(null)
    };
    TxnAssert.assertThat(history.get(1)).planned(ops).executed(ops);

    assertThat(kvs.valueStatus(A1).value()).isEqualTo(ValueStatus.nonexistent(A1));
    assertThat(kvs.valueStatus(A2).value()).isEqualTo(ValueStatus.nonexistent(A2));
    // flag statistics over both transactions (removed derived values are not kept)
    assertThat(total("error")).isZero();
    assertThat(total("unavailable")).isEqualTo(2);
    assertThat(total("derived")).isEqualTo(3);
    assertThat(total("last-update")).isEqualTo(7);
    assertThat(perValue("descriptor")).isEqualTo(Map.of(D1, 7L));
    assertThat(perValue("value-state")).isEqualTo(Map.of("CONFIGURED", 5L, "REMOVED", 2L));
  }

  // ------------------------------------------------------------------ TestResyncWithNonEmptySB

  @Test
  @DisplayName(
      "B133 B134 B130 DISCOVERED values are reconciled (re-created, updated, deleted) and "
          + "in-sync DISCOVERED values confirmed silently")
  void resyncWithNonEmptySb() {
    sb.setValue(A1, arr(1), 0, FROM_NB, false);
    sb.setValue(d(A1, 1), s("item1"), null, FROM_NB, true);
    sb.setValue(A2, arr(1), 1, FROM_NB, false);
    sb.setValue(d(A2, 1), s("item1"), null, FROM_NB, true);
    sb.setValue(A3, arr(1), 2, FROM_NB, false);
    sb.setValue(d(A3, 1), s("item1"), null, FROM_NB, true);
    kvs.registerDescriptors(
        d1().firstFreeIndex(3)
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(d(A2, 1))) {
                    return List.of(Dependency.onKey(A1, A1));
                  }
                  if (key.equals(d(A2, 2))) {
                    return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                  }
                  return List.of();
                })
            .updateWithRecreate((key, o, n, m) -> key.equals(A3))
            .build());

    long seq = env.commit(resync(ResyncType.FULL), A1, arr(2), A2, arr(1, 2), A3, arr(1, 2));

    assertThat(seq).isZero();
    // SB state
    assertThat(sb.keys()).containsExactly(A1, d(A1, 2), A2, d(A2, 1), A3, d(A3, 1), d(A3, 2));
    assertThat(sb.get(A1).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A1, arr(2), 0, FROM_NB, false));
    assertThat(sb.get(A2).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A2, arr(1, 2), 1, FROM_NB, false));
    assertThat(sb.get(A3).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A3, arr(1, 2), 3, FROM_NB, false));
    assertThat(sb.get(d(A1, 2)).orElseThrow().value()).isEqualTo(s("item2"));
    assertThat(sb.get(d(A3, 2)).orElseThrow().value()).isEqualTo(s("item2"));
    // metadata
    assertThat(meta(D1, "base-value1")).contains(0);
    assertThat(meta(D1, "base-value2")).contains(1);
    assertThat(meta(D1, "base-value3")).contains(3);
    // SB ops: Retrieve + 9 changes
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1,
            "DELETE " + d(A3, 1),
            "DELETE " + A3,
            "CREATE " + A3,
            "CREATE " + d(A3, 1),
            "CREATE " + d(A3, 2),
            "DELETE " + d(A1, 1),
            "UPDATE " + A1,
            "CREATE " + d(A1, 2),
            "UPDATE " + A2);
    assertThat(correlate(0))
        .containsExactly(
            kv(A1, arr(2), null, FROM_NB),
            kv(A2, arr(1, 2), null, FROM_NB),
            kv(A3, arr(1, 2), null, FROM_NB));
    sb.clearCalls();
    // dumps
    assertAllDumps(
        D1,
        PREFIX_A,
        List.of(
            kv(A1, arr(2), 0, FROM_NB),
            kv(A2, arr(1, 2), 1, FROM_NB),
            kv(A3, arr(1, 2), 3, FROM_NB)));
    // statuses (B134: A2/i1 confirmed silently yet LastOperation UPDATE)
    assertThat(kvs)
        .hasStatus(status(A1, CONFIGURED, UPDATE, ""), status(d(A1, 2), CONFIGURED, CREATE, ""));
    assertThat(kvs)
        .hasStatus(
            status(A2, CONFIGURED, UPDATE, ""),
            status(d(A2, 1), CONFIGURED, UPDATE, ""),
            status(d(A2, 2), PENDING, CREATE, "", d(A1, 1)));
    assertThat(kvs)
        .hasStatus(
            status(A3, CONFIGURED, UPDATE, ""),
            status(d(A3, 1), CONFIGURED, CREATE, ""),
            status(d(A3, 2), CONFIGURED, CREATE, ""));
    // record
    RecordedTxn txn = env.txn(0);
    assertRecord(
        txn,
        0,
        ResyncType.FULL,
        "",
        rv(A1, arr(2), FROM_NB),
        rv(A2, arr(1, 2), FROM_NB),
        rv(A3, arr(1, 2), FROM_NB));
    OpSpec[] ops = {
      op(DELETE, d(A3, 1))
          .states(DISCOVERED, REMOVED)
          .flags("DERIVED", "RECREATE")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, A3).states(DISCOVERED, REMOVED).flags("RECREATE").prevValue(arr(1)).newValue(null),
      op(CREATE, A3)
          .states(REMOVED, CONFIGURED)
          .flags("RECREATE")
          .prevValue(null)
          .newValue(arr(1, 2)),
      op(CREATE, d(A3, 1))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED", "RECREATE")
          .prevValue(null)
          .newValue(s("item1")),
      op(CREATE, d(A3, 2))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item2")),
      op(DELETE, d(A1, 1))
          .states(DISCOVERED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item1"))
          .newValue(null),
      op(UPDATE, A1).states(DISCOVERED, CONFIGURED).prevValue(arr(1)).newValue(arr(2)),
      op(CREATE, d(A1, 2))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item2")),
      op(UPDATE, A2).states(DISCOVERED, CONFIGURED).prevValue(arr(1)).newValue(arr(1, 2)),
      op(CREATE, d(A2, 2))
          .states(NONEXISTENT, PENDING)
          .flags("DERIVED", "NOOP")
          .prevValue(null)
          .newValue(s("item2"))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(RecordedTxnOp.labels(txn.executed().get(1).displayFlags()))
        .contains("DISCOVERED", "RECREATE");
    // flag statistics
    assertThat(total("error")).isZero();
    assertThat(total("unavailable")).isEqualTo(1);
    assertThat(total("derived")).isEqualTo(5);
    assertThat(total("last-update")).isEqualTo(8);
    assertThat(perValue("descriptor")).isEqualTo(Map.of(D1, 8L));
    assertThat(perValue("value-state")).isEqualTo(Map.of("CONFIGURED", 7L, "PENDING", 1L));
  }

  // ------------------------------------------------------------------ B135, B136

  @Test
  @DisplayName("B135 an NB-origin value found only in SB is discovered and deleted by the resync")
  void extraNbOriginValueDeleted() {
    sb.setValue(A1, arr(1), 0, FROM_NB, false);
    sb.setValue(d(A1, 1), s("item1"), null, FROM_NB, true);
    kvs.registerDescriptors(
        d1().firstFreeIndex(1).derivedValues(CatalogueFixtures.derivedItems()).build());

    env.commit(resync(ResyncType.FULL), A2, arr(1));

    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1,
            "DELETE " + d(A1, 1),
            "DELETE " + A1,
            "CREATE " + A2,
            "CREATE " + d(A2, 1));
    assertThat(sb.keys()).containsExactly(A2, d(A2, 1));
    RecordedTxn txn = env.txn(0);
    assertRecord(txn, 0, ResyncType.FULL, "", rv(A1, null, FROM_NB), rv(A2, arr(1), FROM_NB));
    OpSpec[] ops = {
      op(DELETE, d(A1, 1))
          .states(DISCOVERED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, A1).states(DISCOVERED, REMOVED).prevValue(arr(1)).newValue(null),
      op(CREATE, A2).states(NONEXISTENT, CONFIGURED).newValue(arr(1)),
      op(CREATE, d(A2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED")
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(RecordedTxnOp.labels(txn.executed().get(1).displayFlags()))
        .containsExactly("DISCOVERED");
    assertThat(kvs.valueStatus(A1).value()).isEqualTo(ValueStatus.nonexistent(A1));
    assertThat(meta(D1, "base-value1")).isEmpty();
    assertThat(meta(D1, "base-value2")).contains(1);
  }

  @Test
  @DisplayName(
      "B136 B143 a CONFIGURED value (and its derived values) removed behind the "
          + "scheduler's back becomes MISSING and the full resync re-creates it (WAS-MISSING)")
  void missingValueRecreatedByFullResync() {
    kvs.registerDescriptors(d1().derivedValues(CatalogueFixtures.derivedItems()).build());
    env.commit(resync(ResyncType.FULL), A1, arr(1));
    sb.setValue(A1, null, null, FROM_NB, false);
    sb.setValue(d(A1, 1), null, null, FROM_NB, true);
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL), A1, arr(1));

    assertThat(sb.callLog())
        .containsExactly("RETRIEVE " + D1, "CREATE " + A1, "CREATE " + d(A1, 1));
    assertThat(correlate(0)).containsExactly(kv(A1, arr(1), 0, FROM_NB));
    RecordedTxn txn = env.txn(1);
    assertRecord(txn, 1, ResyncType.FULL, "", rv(A1, arr(1), FROM_NB));
    OpSpec[] ops = {
      op(CREATE, A1).states(MISSING, CONFIGURED).prevValue(arr(1)).newValue(arr(1)),
      op(CREATE, d(A1, 1)).states(MISSING, CONFIGURED).flags("DERIVED").newValue(s("item1"))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(RecordedTxnOp.labels(txn.executed().get(0).displayFlags()))
        .containsExactly("WAS-MISSING");
    assertThat(kvs)
        .hasStatus(status(A1, CONFIGURED, CREATE, ""), status(d(A1, 1), CONFIGURED, CREATE, ""));
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1));
    assertThat(meta(D1, "base-value1")).contains(1); // new metadata from the new Create
  }

  @Test
  @DisplayName("B136 a MISSING value no longer requested is deleted as a NOOP (ALREADY-MISSING)")
  void missingValueNotRequestedIsNoopDelete() {
    kvs.registerDescriptors(d1().build());
    env.commit(resync(ResyncType.FULL), A1, arr(1), A2, arr(1));
    sb.setValue(A1, null, null, FROM_NB, false);
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL), A2, arr(1));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1);
    RecordedTxn txn = env.txn(1);
    assertRecord(txn, 1, ResyncType.FULL, "", rv(A1, null, FROM_NB), rv(A2, arr(1), FROM_NB));
    OpSpec[] ops = {op(DELETE, A1).states(MISSING, REMOVED).flags("NOOP").newValue(null)};
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(RecordedTxnOp.labels(txn.executed().get(0).displayFlags()))
        .containsExactly("NOOP", "ALREADY-MISSING");
    assertThat(kvs.valueStatus(A1).value()).isEqualTo(ValueStatus.nonexistent(A1));
    assertThat(meta(D1, "base-value1")).isEmpty();
    assertThat(meta(D1, "base-value2")).contains(1);
  }

  // ------------------------------------------------------------------ B137

  @Test
  @DisplayName(
      "B137 B69 SB-origin values survive a resync untouched, are recorded with origin SB "
          + "and satisfy NB dependencies")
  void resyncNotRemovingSbValues() {
    sb.setValue(A1, s("base-value1"), null, FROM_SB, false);
    kvs.registerDescriptors(
        d1().derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> key.equals(A2) ? List.of(Dependency.onKey(A1, A1)) : List.of())
            .build());

    long seq = env.commit(resync(ResyncType.FULL), A2, arr(1));

    assertThat(seq).isZero();
    assertThat(sb.keys()).containsExactly(A1, A2, d(A2, 1));
    assertThat(sb.get(A1).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A1, s("base-value1"), null, FROM_SB, false));
    assertThat(sb.get(A2).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A2, arr(1), 0, FROM_NB, false));
    assertThat(meta(D1, "base-value1")).isEmpty();
    assertThat(meta(D1, "base-value2")).contains(0);
    assertThat(sb.callLog())
        .containsExactly("RETRIEVE " + D1, "CREATE " + A2, "CREATE " + d(A2, 1));
    assertThat(correlate(0)).containsExactly(kv(A2, arr(1), null, FROM_NB));
    sb.clearCalls();
    // dumps: NB view without the SB value, SB and cached views with it
    assertDumps(D1, PREFIX_A, View.NB, List.of(kv(A2, arr(1), 0, FROM_NB)));
    List<KVWithMetadata<Object, Object>> sbState =
        List.of(kv(A1, s("base-value1"), null, FROM_SB), kv(A2, arr(1), 0, FROM_NB));
    assertDumps(D1, PREFIX_A, View.SB, sbState);
    assertDumps(D1, PREFIX_A, View.CACHED, sbState);
    sb.clearCalls();
    // statuses
    assertThat(kvs).hasStatus(status(A1, OBTAINED, TxnOperation.UNDEFINED, ""));
    assertThat(kvs)
        .hasStatus(status(A2, CONFIGURED, CREATE, ""), status(d(A2, 1), CONFIGURED, CREATE, ""));
    // record
    RecordedTxn txn = env.txn(0);
    assertRecord(
        txn, 0, ResyncType.FULL, "", rv(A1, s("base-value1"), FROM_SB), rv(A2, arr(1), FROM_NB));
    OpSpec[] ops = {
      op(CREATE, A2).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(arr(1)),
      op(CREATE, d(A2, 1))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item1"))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    // flag statistics
    assertThat(total("error")).isZero();
    assertThat(total("unavailable")).isZero();
    assertThat(total("derived")).isEqualTo(1);
    assertThat(total("last-update")).isEqualTo(3);
    assertThat(perValue("descriptor")).isEqualTo(Map.of(D1, 3L));
    assertThat(perValue("value-state")).isEqualTo(Map.of("CONFIGURED", 2L, "OBTAINED", 1L));
  }

  // ------------------------------------------------------------------ B138

  @Test
  @DisplayName(
      "B138 unknown origin: taken from the correlation (NB data → DISCOVERED, updated), "
          + "else SB for a never-seen key (OBTAINED, left alone)")
  void unknownOriginFromCorrelationOrSb() {
    sb.setValue(A1, arr(1), 0, UNKNOWN, false);
    sb.setValue(A4, arr(1), null, UNKNOWN, false);
    kvs.registerDescriptors(d1().firstFreeIndex(1).build());

    env.commit(resync(ResyncType.FULL), A1, arr(2));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1, "UPDATE " + A1);
    RecordedTxn txn = env.txn(0);
    assertRecord(txn, 0, ResyncType.FULL, "", rv(A1, arr(2), FROM_NB), rv(A4, arr(1), FROM_SB));
    OpSpec[] ops = {
      op(UPDATE, A1).states(DISCOVERED, CONFIGURED).prevValue(arr(1)).newValue(arr(2))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(kvs).hasStatus(status(A1, CONFIGURED, UPDATE, ""));
    assertThat(kvs).hasStatus(status(A4, OBTAINED, TxnOperation.UNDEFINED, ""));
    assertThat(sb.keys()).containsExactly(A1, A4);
    assertThat(meta(D1, "base-value1")).contains(0);
  }

  @Test
  @DisplayName(
      "B138 unknown origin of a key absent from the correlation: the key's last recorded "
          + "revision (non-OBTAINED → NB) makes it DISCOVERED, so the resync deletes it")
  void unknownOriginFromHistory() {
    kvs.registerDescriptors(d1().build());
    env.commit(TxnOptions.defaults(), A1, arr(1));
    env.commit(TxnOptions.defaults(), A1, null);
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(NONEXISTENT);
    sb.setValue(A1, arr(1), null, UNKNOWN, false); // re-appears behind the scheduler's back
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1, "DELETE " + A1);
    assertThat(correlate(0)).isEmpty();
    RecordedTxn txn = env.txn(2);
    assertRecord(txn, 2, ResyncType.FULL, "", rv(A1, null, FROM_NB));
    OpSpec[] ops = {op(DELETE, A1).states(DISCOVERED, REMOVED).prevValue(arr(1))};
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(sb.values()).isEmpty();
  }

  @Test
  @DisplayName(
      "B138 (ours, D29) unknown origin of a key whose last revision is REMOVED: the"
          + " revision before it decides, so an SB value a notification removed stays SB-owned when"
          + " it shows up again and the resync leaves it alone")
  void unknownOriginOfANotifiedRemovalStaysSb() {
    kvs.registerDescriptors(d1().build());
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A1, arr(1), null, FROM_SB)));
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A1, null, null, FROM_SB)));
    kvs.transactionBarrier();
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(NONEXISTENT);
    sb.setValue(A1, arr(1), null, UNKNOWN, false); // re-appears behind the scheduler's back
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1); // no Delete
    assertThat(kvs).value(A1).isObtained();
  }

  // ------------------------------------------------------------------ B139

  @Test
  @DisplayName(
      "B139 B130 B133 B134 several descriptors: Retrieve in dependency order with "
          + "filtered correlation, then 9 changes (12 SB ops)")
  void resyncWithMultipleDescriptors() {
    sb.setValue(A1, arr(1), 0, FROM_NB, false);
    sb.setValue(d(A1, 1), s("item1"), null, FROM_NB, true);
    sb.setValue(B2, arr(1), 0, FROM_NB, false);
    sb.setValue(d(B2, 1), s("item1"), null, FROM_NB, true);
    sb.setValue(C3, arr(1), 0, FROM_NB, false);
    sb.setValue(d(C3, 1), s("item1"), null, FROM_NB, true);
    kvs.registerDescriptors(
        sb.descriptor(D1, Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withMetadata()
            .firstFreeIndex(1)
            .derivedValues(CatalogueFixtures.derivedItems())
            .build(),
        sb.descriptor(D2, Object.class)
            .nbKeyPrefix(PREFIX_B)
            .withMetadata()
            .firstFreeIndex(1)
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(d(B2, 1))) {
                    return List.of(Dependency.onKey(A1, A1));
                  }
                  if (key.equals(d(B2, 2))) {
                    return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                  }
                  return List.of();
                })
            .retrieveDependencies(D1)
            .build(),
        sb.descriptor(D3, Object.class)
            .nbKeyPrefix(PREFIX_C)
            .withMetadata()
            .firstFreeIndex(1)
            .derivedValues(CatalogueFixtures.derivedItems())
            .updateWithRecreate((key, o, n, m) -> key.equals(C3))
            .retrieveDependencies(D2)
            .build());
    assertThat(kvs.registeredNBKeyPrefixes())
        .containsExactlyInAnyOrder(PREFIX_A, PREFIX_B, PREFIX_C);

    long seq = env.commit(resync(ResyncType.FULL), B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));

    assertThat(seq).isZero();
    assertThat(sb.keys()).containsExactly(A1, d(A1, 2), B2, d(B2, 1), C3, d(C3, 1), d(C3, 2));
    assertThat(sb.get(A1).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A1, arr(2), 0, FROM_NB, false));
    assertThat(sb.get(B2).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(B2, arr(1, 2), 0, FROM_NB, false));
    assertThat(sb.get(C3).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(C3, arr(1, 2), 1, FROM_NB, false));
    assertThat(meta(D1, "base-value1")).contains(0);
    assertThat(meta(D2, "base-value2")).contains(0);
    assertThat(meta(D3, "base-value3")).contains(1);
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1,
            "RETRIEVE " + D2,
            "RETRIEVE " + D3,
            "DELETE " + d(C3, 1),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "CREATE " + d(C3, 2),
            "DELETE " + d(A1, 1),
            "UPDATE " + A1,
            "CREATE " + d(A1, 2),
            "UPDATE " + B2);
    assertThat(correlate(0)).containsExactly(kv(A1, arr(2), null, FROM_NB));
    assertThat(correlate(1)).containsExactly(kv(B2, arr(1, 2), null, FROM_NB));
    assertThat(correlate(2)).containsExactly(kv(C3, arr(1, 2), null, FROM_NB));
    sb.clearCalls();
    // record
    RecordedTxn txn = env.txn(0);
    assertRecord(
        txn,
        0,
        ResyncType.FULL,
        "",
        rv(A1, arr(2), FROM_NB),
        rv(B2, arr(1, 2), FROM_NB),
        rv(C3, arr(1, 2), FROM_NB));
    // dumps
    assertAllDumps(D1, PREFIX_A, List.of(kv(A1, arr(2), 0, FROM_NB)));
    assertAllDumps(D2, PREFIX_B, List.of(kv(B2, arr(1, 2), 0, FROM_NB)));
    assertAllDumps(D3, PREFIX_C, List.of(kv(C3, arr(1, 2), 1, FROM_NB)));
    // statuses
    assertThat(kvs)
        .hasStatus(status(A1, CONFIGURED, UPDATE, ""), status(d(A1, 2), CONFIGURED, CREATE, ""));
    assertThat(kvs)
        .hasStatus(
            status(B2, CONFIGURED, UPDATE, ""),
            status(d(B2, 1), CONFIGURED, UPDATE, ""),
            status(d(B2, 2), PENDING, CREATE, "", d(A1, 1)));
    assertThat(kvs)
        .hasStatus(
            status(C3, CONFIGURED, UPDATE, ""),
            status(d(C3, 1), CONFIGURED, CREATE, ""),
            status(d(C3, 2), CONFIGURED, CREATE, ""));
    OpSpec[] ops = {
      op(DELETE, d(C3, 1))
          .states(DISCOVERED, REMOVED)
          .flags("DERIVED", "RECREATE")
          .prevValue(s("item1"))
          .newValue(null),
      op(DELETE, C3).states(DISCOVERED, REMOVED).flags("RECREATE").prevValue(arr(1)).newValue(null),
      op(CREATE, C3)
          .states(REMOVED, CONFIGURED)
          .flags("RECREATE")
          .prevValue(null)
          .newValue(arr(1, 2)),
      op(CREATE, d(C3, 1))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED", "RECREATE")
          .prevValue(null)
          .newValue(s("item1")),
      op(CREATE, d(C3, 2))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item2")),
      op(DELETE, d(A1, 1))
          .states(DISCOVERED, REMOVED)
          .flags("DERIVED")
          .prevValue(s("item1"))
          .newValue(null),
      op(UPDATE, A1).states(DISCOVERED, CONFIGURED).prevValue(arr(1)).newValue(arr(2)),
      op(CREATE, d(A1, 2))
          .states(NONEXISTENT, CONFIGURED)
          .flags("DERIVED")
          .prevValue(null)
          .newValue(s("item2")),
      op(UPDATE, B2).states(DISCOVERED, CONFIGURED).prevValue(arr(1)).newValue(arr(1, 2)),
      op(CREATE, d(B2, 2))
          .states(NONEXISTENT, PENDING)
          .flags("DERIVED", "NOOP")
          .prevValue(null)
          .newValue(s("item2"))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    // flag statistics
    assertThat(total("error")).isZero();
    assertThat(total("unavailable")).isEqualTo(1);
    assertThat(total("derived")).isEqualTo(5);
    assertThat(total("last-update")).isEqualTo(8);
    assertThat(perValue("descriptor")).isEqualTo(Map.of(D1, 2L, D2, 3L, D3, 3L));
    assertThat(perValue("value-state")).isEqualTo(Map.of("CONFIGURED", 7L, "PENDING", 1L));
  }

  // ------------------------------------------------------------------ B140

  @Test
  @DisplayName(
      "B140 a descriptor without Retrieve is skipped by refresh; its values keep the "
          + "scheduler's view")
  void descriptorWithoutRetrieveSkipped() {
    kvs.registerDescriptors(
        sb.descriptor(D1, Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withMetadata()
            .withoutRetrieve()
            .build(),
        sb.descriptor(D2, Object.class).nbKeyPrefix(PREFIX_B).withMetadata().build());
    env.commit(resync(ResyncType.FULL), A1, arr(1), B2, arr(1));
    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D2, "CREATE " + A1, "CREATE " + B2);
    sb.setValue(A1, null, null, FROM_NB, false); // both vanish behind the scheduler's back
    sb.setValue(B2, null, null, FROM_NB, false);
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL), A1, arr(1), B2, arr(1));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D2, "CREATE " + B2);
    OpSpec[] ops = {op(CREATE, B2).states(MISSING, CONFIGURED)};
    TxnAssert.assertThat(env.txn(1)).planned(ops).executed(ops);
    assertThat(kvs.valueStatus(A1).value()).isEqualTo(status(A1, CONFIGURED, CREATE, ""));
    assertThat(meta(D1, "base-value1")).contains(0);
  }

  // ------------------------------------------------------------------ B141

  @Test
  @DisplayName(
      "B141 B131 an upstream resync does not call Retrieve and reconciles the graph to the "
          + "given values; it counts as the first resync for correlation")
  void upstreamResync() {
    kvs.registerDescriptors(d1().build());
    env.commit(TxnOptions.defaults(), A1, arr(1), A2, arr(1), A4, arr(1));
    sb.setValue(A4, null, null, FROM_NB, false); // not noticed without a refresh
    sb.clearCalls();

    long seq = env.commit(resync(ResyncType.UPSTREAM), A1, arr(2), A3, arr(1), A4, arr(1));

    assertThat(seq).isEqualTo(1);
    assertThat(sb.callLog()).containsExactly("DELETE " + A2, "CREATE " + A3, "UPDATE " + A1);
    RecordedTxn txn = env.txn(1);
    assertRecord(
        txn,
        1,
        ResyncType.UPSTREAM,
        "",
        rv(A1, arr(2), FROM_NB),
        rv(A2, null, FROM_NB),
        rv(A3, arr(1), FROM_NB),
        rv(A4, arr(1), FROM_NB));
    OpSpec[] ops = {
      op(DELETE, A2).states(CONFIGURED, REMOVED).prevValue(arr(1)).newValue(null),
      op(CREATE, A3).states(NONEXISTENT, CONFIGURED).newValue(arr(1)),
      op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(1)).newValue(arr(2))
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(kvs.valueStatus(A4).state()).isEqualTo(CONFIGURED);
    assertThat(meta(D1, "base-value3")).contains(3);
    sb.clearCalls();

    // the next full resync is not the first one: it correlates with the graph's view
    env.commit(resync(ResyncType.FULL), A1, arr(2), A3, arr(1), A4, arr(1));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1, "CREATE " + A4);
    assertThat(correlate(0))
        .containsExactly(
            kv(A1, arr(2), 0, FROM_NB), kv(A3, arr(1), 3, FROM_NB), kv(A4, arr(1), 2, FROM_NB));
    OpSpec[] ops2 = {op(CREATE, A4).states(MISSING, CONFIGURED)};
    TxnAssert.assertThat(env.txn(2)).planned(ops2).executed(ops2);
    assertThat(meta(D1, "base-value4")).contains(4);
  }

  // ------------------------------------------------------------------ B142

  @Test
  @DisplayName("B142 B48 a downstream resync carrying values is rejected before queuing")
  void downstreamResyncWithValuesRejected() {
    kvs.registerDescriptors(d1().build());
    var txn = kvs.startNBTransaction().setValue(A1, arr(1));

    assertThatThrownBy(() -> txn.commit(resync(ResyncType.DOWNSTREAM)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("downstream resync combined with data changes in one transaction");

    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs.transactionHistory()).isEmpty();
    assertThat(env.commit(TxnOptions.defaults(), A1, arr(1)))
        .isZero(); // no sequence number consumed
  }

  @Test
  @DisplayName(
      "B142 B136 B143 a downstream resync refreshes SB and re-applies the NB intent: "
          + "missing re-created, drift updated, NB-origin extras deleted; no values recorded")
  void downstreamResyncReappliesIntent() {
    kvs.registerDescriptors(d1().derivedValues(CatalogueFixtures.derivedItems()).build());
    env.commit(resync(ResyncType.FULL), A1, arr(1), A2, arr(1), A3, arr(2));
    // behind the scheduler's back: A1 vanishes, A2 drifts, A4 appears (NB origin)
    sb.setValue(A1, null, null, FROM_NB, false);
    sb.setValue(d(A1, 1), null, null, FROM_NB, true);
    sb.setValue(A2, arr(2), 1, FROM_NB, false);
    sb.setValue(d(A2, 1), null, null, FROM_NB, true);
    sb.setValue(d(A2, 2), s("item2"), null, FROM_NB, true);
    sb.setValue(A4, arr(1), 7, FROM_NB, false);
    sb.setValue(d(A4, 1), s("item1"), null, FROM_NB, true);
    int a1Revisions = kvs.keyTimeline(A1).size();
    sb.clearCalls();

    long seq = kvs.startNBTransaction().commit(resync(ResyncType.DOWNSTREAM));

    assertThat(seq).isEqualTo(1);
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1,
            "DELETE " + d(A4, 1),
            "DELETE " + A4,
            "CREATE " + A1,
            "CREATE " + d(A1, 1),
            "DELETE " + d(A2, 2),
            "UPDATE " + A2,
            "CREATE " + d(A2, 1));
    assertThat(correlate(0))
        .containsExactly(
            kv(A1, arr(1), 0, FROM_NB), kv(A2, arr(1), 1, FROM_NB), kv(A3, arr(2), 2, FROM_NB));
    RecordedTxn txn = env.txn(1);
    assertRecord(txn, 1, ResyncType.DOWNSTREAM, "");
    OpSpec[] ops = {
      op(DELETE, d(A4, 1)).states(DISCOVERED, REMOVED).flags("DERIVED"),
      op(DELETE, A4).states(DISCOVERED, REMOVED).prevValue(arr(1)).newValue(null),
      op(CREATE, A1).states(MISSING, CONFIGURED).newValue(arr(1)),
      op(CREATE, d(A1, 1)).states(MISSING, CONFIGURED).flags("DERIVED"),
      op(DELETE, d(A2, 2)).states(DISCOVERED, REMOVED).flags("DERIVED"),
      op(UPDATE, A2).states(CONFIGURED, CONFIGURED).prevValue(arr(2)).newValue(arr(1)),
      op(CREATE, d(A2, 1)).states(MISSING, CONFIGURED).flags("DERIVED")
    };
    TxnAssert.assertThat(txn).planned(ops).executed(ops);
    assertThat(sb.keys()).containsExactly(A1, d(A1, 1), A2, d(A2, 1), A3, d(A3, 2));
    assertThat(meta(D1, "base-value1")).contains(3);
    assertThat(meta(D1, "base-value2")).contains(1);
    assertThat(meta(D1, "base-value4")).isEmpty();
    assertThat(kvs.valueStatus(A4).value()).isEqualTo(ValueStatus.nonexistent(A4));
    // the downstream resync's graph changes are not recorded as revisions
    assertThat(kvs.keyTimeline(A1)).hasSize(a1Revisions);
    // yet readers see them: A2's newest revision (its creation) no longer shows the graph
    assertThat(kvs.valueStatus(A2).value().lastOperation()).isEqualTo(UPDATE);
    assertThat(kvs.keyTimeline(A2).get(kvs.keyTimeline(A2).size() - 1).lastOperation())
        .isEqualTo(CREATE);
  }

  @Test
  @DisplayName(
      "a downstream or full resync while a derived value waits records nothing: the pending"
          + " value re-attempted stays pending with the same value, no call, no operation (D63)")
  void resyncWithPendingDerivedValueRecordsNothing() {
    // the southbound is not read for D1 (no Retrieve): the resync re-applies the intent, and
    // visits A1/item2, which waits for A2 (never given)
    kvs.registerDescriptors(
        d1().withoutRetrieve()
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) ->
                    key.equals(d(A1, 2)) ? List.of(Dependency.onKey(A2, A2)) : List.of())
            .build());
    env.commit(resync(ResyncType.FULL), A1, arr(1, 2));
    BaseValueStatus a1 = kvs.valueStatus(A1);
    assertThat(a1.derived())
        .extracting(ValueStatus::key, ValueStatus::state)
        .containsExactly(Tuple.tuple(d(A1, 1), CONFIGURED), Tuple.tuple(d(A1, 2), PENDING));
    int pendingRevisions = kvs.keyTimeline(d(A1, 2)).size();
    int baseRevisions = kvs.keyTimeline(A1).size();
    sb.clearCalls();

    long seq = kvs.startNBTransaction().commit(resync(ResyncType.DOWNSTREAM));

    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(env.txn(seq).planned()).isEmpty();
    assertThat(kvs.valueStatus(A1)).isEqualTo(a1);
    assertThat(kvs.keyTimeline(d(A1, 2))).hasSize(pendingRevisions);

    seq = env.commit(resync(ResyncType.FULL), A1, arr(1, 2));

    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(env.txn(seq).planned()).isEmpty();
    assertThat(kvs.valueStatus(A1)).isEqualTo(a1);
    assertThat(kvs.keyTimeline(d(A1, 2))).hasSize(pendingRevisions);
    assertThat(kvs.keyTimeline(A1)).hasSize(baseRevisions);
  }

  // ------------------------------------------------------------------ B143

  @Test
  @DisplayName("B143 refresh: a PENDING value found in SB becomes CONFIGURED with SB's metadata")
  void refreshPendingFoundBecomesConfigured() {
    kvs.registerDescriptors(
        d1().dependencies(
                (key, value) -> key.equals(A1) ? List.of(Dependency.onKey(A4, A4)) : List.of())
            .build());
    env.commit(resync(ResyncType.FULL), A1, arr(1));
    assertThat(kvs.valueStatus(A1).value()).isEqualTo(status(A1, PENDING, CREATE, "", A4));
    sb.setValue(A1, arr(1), 7, FROM_NB, false); // created by someone else
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL), A1, arr(1));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1);
    assertThat(correlate(0)).isEmpty(); // PENDING is not available
    TxnAssert.assertThat(env.txn(1)).executedNothing();
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(CONFIGURED);
    assertThat(meta(D1, "base-value1")).contains(7);
  }

  @Test
  @DisplayName(
      "B143 refresh: a FAILED value not found in SB stays FAILED (not MISSING) and is "
          + "created again by the resync")
  void refreshFailedNotFoundKept() {
    kvs.registerDescriptors(d1().build());
    sb.planError(A1, new RuntimeException("failed to create"));
    assertThatThrownBy(() -> env.commit(resync(ResyncType.FULL), A1, arr(1)))
        .isInstanceOf(TransactionException.class);
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(FAILED);
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL), A1, arr(1));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1, "CREATE " + A1);
    assertThat(correlate(0)).isEmpty(); // FAILED is not available
    OpSpec[] ops = {op(CREATE, A1).states(FAILED, CONFIGURED).error("")};
    TxnAssert.assertThat(env.txn(1)).planned(ops).executed(ops);
    assertThat(RecordedTxnOp.labels(env.txn(1).executed().get(0).displayFlags()))
        .containsExactly("FIXED");
    assertThat(kvs.valueStatus(A1).value()).isEqualTo(status(A1, CONFIGURED, CREATE, ""));
  }

  @Test
  @DisplayName(
      "B143 refresh: an OBTAINED value no longer in SB is dropped from the graph, "
          + "without any descriptor call")
  void refreshObtainedNotFoundDropped() {
    kvs.registerDescriptors(d1().build());
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(A3, arr(1), null, FROM_SB)));
    kvs.transactionBarrier();
    assertThat(kvs).value(A3).isObtained();

    env.commit(resync(ResyncType.FULL));

    assertThat(sb.callLog()).containsExactly("RETRIEVE " + D1);
    RecordedTxn txn = env.txn(1);
    assertRecord(txn, 1, ResyncType.FULL, "");
    TxnAssert.assertThat(txn).executedNothing();
    assertThat(kvs.valueStatus(A3).value()).isEqualTo(ValueStatus.nonexistent(A3));
    assertThat(kvs.dumpValues(D1, View.CACHED)).isEmpty();
  }

  @Test
  @DisplayName(
      "B143 refresh: value and metadata are replaced by the retrieved ones, derived values "
          + "recomputed; the resync then updates the drifted value back")
  void refreshReplacesValueAndMetadata() {
    kvs.registerDescriptors(d1().derivedValues(CatalogueFixtures.derivedItems()).build());
    env.commit(resync(ResyncType.FULL), A1, arr(1));
    sb.setValue(A1, arr(2), 9, FROM_NB, false);
    sb.setValue(d(A1, 1), null, null, FROM_NB, true);
    sb.setValue(d(A1, 2), s("item2"), null, FROM_NB, true);
    sb.clearCalls();

    env.commit(resync(ResyncType.FULL), A1, arr(1));

    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE " + D1, "DELETE " + d(A1, 2), "UPDATE " + A1, "CREATE " + d(A1, 1));
    OpSpec[] ops = {
      op(DELETE, d(A1, 2)).states(DISCOVERED, REMOVED).flags("DERIVED").prevValue(s("item2")),
      op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(2)).newValue(arr(1)),
      op(CREATE, d(A1, 1)).states(MISSING, CONFIGURED).flags("DERIVED")
    };
    TxnAssert.assertThat(env.txn(1)).planned(ops).executed(ops);
    assertThat(sb.get(A1).orElseThrow())
        .isEqualTo(new MockSouthbound.Entry(A1, arr(1), 9, FROM_NB, false));
    assertThat(meta(D1, "base-value1")).contains(9);
    assertThat(kvs)
        .hasStatus(status(A1, CONFIGURED, UPDATE, ""), status(d(A1, 1), CONFIGURED, CREATE, ""));
  }

  // ------------------------------------------------------------------ B144

  /** A hand-written descriptor over /prefixA/ whose Retrieve output is scripted. */
  private static final class Scripted {
    final List<String> log = new ArrayList<>();
    List<KVWithMetadata<Object, Void>> retrieved = List.of();
    boolean retrieveFails;

    KVDescriptor<Object, Void> descriptor() {
      return KVDescriptor.builder(D1, Object.class)
          .nbKeyPrefix(PREFIX_A)
          .create(
              (key, value) -> {
                log.add("CREATE " + key);
                return null;
              })
          .update(
              (key, oldValue, newValue, meta) -> {
                log.add("UPDATE " + key);
                return null;
              })
          .delete((key, value, meta) -> log.add("DELETE " + key))
          .retrieve(
              correlate -> {
                log.add("RETRIEVE");
                if (retrieveFails) {
                  throw new IllegalStateException("SB unreachable");
                }
                return retrieved;
              })
          .build();
    }

    /** A descriptor over /prefixB/ without Retrieve, recording its calls into the same log. */
    KVDescriptor<Object, Void> other() {
      return KVDescriptor.builder(D2, Object.class)
          .nbKeyPrefix(PREFIX_B)
          .create(
              (key, value) -> {
                log.add("CREATE " + key);
                return null;
              })
          .delete((key, value, meta) -> log.add("DELETE " + key))
          .build();
    }
  }

  @Test
  @DisplayName(
      "B144 Retrieve entries with empty key, null value, foreign key or a repeated key are "
          + "ignored")
  void badRetrieveOutputIgnored() {
    Scripted s = new Scripted();
    kvs.registerDescriptors(s.descriptor(), s.other());
    s.retrieved =
        List.of(
            new KVWithMetadata<>("", arr(1), null, FROM_NB), // empty key
            new KVWithMetadata<>(A2, null, null, FROM_NB), // null value
            new KVWithMetadata<>(B2, arr(1), null, FROM_NB), // outside the selector
            new KVWithMetadata<>(A1, arr(1), null, FROM_NB),
            new KVWithMetadata<>(A1, arr(2), null, FROM_NB)); // repeated key

    env.commit(resync(ResyncType.FULL), A1, arr(1));

    // A1 was discovered with the first retrieved value and confirmed silently; B2 and A2 unknown
    assertThat(s.log).containsExactly("RETRIEVE");
    TxnAssert.assertThat(env.txn(0)).executedNothing();
    assertThat(env.txn(0).values()).containsExactly(rv(A1, arr(1), FROM_NB));
    assertThat(kvs.valueStatus(A1).value()).isEqualTo(status(A1, CONFIGURED, UPDATE, ""));
    assertThat(kvs.valueStatuses()).extracting(BaseValueStatus::key).containsExactly(A1);
    assertThat(kvs.valueStatus(A2).value()).isEqualTo(ValueStatus.nonexistent(A2));
    assertThat(kvs.valueStatus(B2).value()).isEqualTo(ValueStatus.nonexistent(B2));
  }

  @Test
  @DisplayName(
      "B144 a Retrieve that throws makes the refresh treat that descriptor as not "
          + "refreshable (ours, D58: the resync fails naming it, and its values are unread: no "
          + "call, no status claiming what the southbound holds, until a Retrieve answers)")
  void failingRetrieveSkipsDescriptor() {
    Scripted s = new Scripted();
    kvs.registerDescriptors(s.descriptor());
    env.commit(TxnOptions.defaults(), A1, arr(1), A2, arr(1));
    s.retrieveFails = true;
    s.log.clear();

    TransactionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            TransactionException.class, () -> env.commit(resync(ResyncType.FULL), A1, arr(1)));

    assertThat(e.retrieveErrors())
        .singleElement()
        .satisfies(r -> assertThat(r.descriptor()).isEqualTo(D1))
        .satisfies(r -> assertThat(r.message()).contains("SB unreachable"));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::kind)
        .containsExactlyInAnyOrder(
            Tuple.tuple(A1, KeyError.Kind.UNREAD), Tuple.tuple(A2, KeyError.Kind.UNREAD));
    // not treated as "nothing found": A1 is not MISSING (no re-create); nothing is called while
    // what the southbound holds is unknown, A2's removal included (the failed values are read
    // again after the transaction, F7)
    assertThat(s.log).containsOnly("RETRIEVE");
    assertThat(kvs.valueStatus(A1).value().state()).isNotEqualTo(CONFIGURED);
    assertThat(Set.copyOf(kvs.valueStatuses().stream().map(BaseValueStatus::key).toList()))
        .containsExactlyInAnyOrder(A1, A2);

    // once Retrieve answers, the next resync reads them: A2 is deleted, A1 confirmed
    s.retrieveFails = false;
    s.retrieved =
        List.of(
            new KVWithMetadata<>(A1, arr(1), null, FROM_NB),
            new KVWithMetadata<>(A2, arr(1), null, FROM_NB));
    s.log.clear();
    env.commit(resync(ResyncType.FULL), A1, arr(1));
    assertThat(s.log).contains("DELETE " + A2);
    assertThat(kvs.valueStatus(A1).value().state()).isEqualTo(CONFIGURED);
    assertThat(Set.copyOf(kvs.valueStatuses().stream().map(BaseValueStatus::key).toList()))
        .containsExactly(A1);
  }
}
