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
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxn.RecordedValue;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.MockSouthbound.Entry;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Catalogue §9 (B85–B92): update vs re-create, RECREATE flags, fresh metadata, dependents of a
 * re-created value, re-creation of derived values, equivalence, SB-originated changes. Simulation
 * is on, so planned and executed lists are both checked.
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class RecreateTest {
  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  // ------------------------------------------------------------------ fixtures

  /** The 3-descriptor setup of TestDataChangeTransactions. */
  private void registerDataChange() {
    CatalogueFixtures.registerDataChangeDescriptors(kvs, sb);
  }

  /** A mock interface (mock_plugins' ifplugin): name, type, free-text description. */
  record Iface(String name, String type, String description) {}

  /** A mock bridge domain listing its interfaces. */
  record Bd(String name, List<String> interfaces) {}

  /** A bridge-domain membership, derived from the bridge domain. */
  record Binding(String bd, String iface) {}

  /** A FIB entry pointing to an interface inside a bridge domain. */
  record Fib(String bd, String iface) {}

  private static String ifKey(String name) {
    return "/if/" + name;
  }

  private static String bdKey(String name) {
    return "/bd/" + name;
  }

  private static String bindingKey(String bd, String iface) {
    return "/bd/" + bd + "/interface/" + iface;
  }

  /**
   * Interfaces (/if/), bridge domains (/bd/, deriving one binding per interface), bindings (derived
   * only, depending on their interface) and FIB entries (/fib/, depending on the binding of their
   * interface).
   */
  private void registerL2(
      KVDescriptor.RecreateDecider<Iface, Object> ifaceRecreate,
      KVDescriptor.Equivalence<Iface> ifaceComparator,
      KVDescriptor.Equivalence<Bd> bdComparator) {
    var iface =
        sb.descriptor("iface", Iface.class)
            .nbKeyPrefix("/if/")
            .withMetadata()
            .updateWithRecreate(ifaceRecreate);
    if (ifaceComparator != null) {
      iface.equivalence(ifaceComparator);
    }
    var bd =
        sb.descriptor("bd", Bd.class)
            .nbKeyPrefix("/bd/")
            .keySelector(k -> k.startsWith("/bd/") && !k.contains("/interface/"))
            .derivedValues(
                (key, v) ->
                    v.interfaces().stream()
                        .map(
                            i -> KeyValuePair.of(key + "/interface/" + i, new Binding(v.name(), i)))
                        .toList());
    if (bdComparator != null) {
      bd.equivalence(bdComparator);
    }
    kvs.registerDescriptors(
        iface.build(),
        bd.build(),
        sb.descriptor("binding", Binding.class)
            .keySelector(k -> k.startsWith("/bd/") && k.contains("/interface/"))
            .baseKeys(k -> false)
            .dependencies((key, b) -> List.of(Dependency.onKey(ifKey(b.iface()), ifKey(b.iface()))))
            .build(),
        sb.descriptor("fib", Fib.class)
            .nbKeyPrefix("/fib/")
            .dependencies(
                (key, f) ->
                    List.of(
                        Dependency.onKey(
                            bindingKey(f.bd(), f.iface()), bindingKey(f.bd(), f.iface()))))
            .build());
  }

  private static ValueStatus st(String key, ValueState state, TxnOperation op, String... details) {
    return new ValueStatus(key, state, "", op, List.of(details));
  }

  private static BaseValueStatus base(ValueStatus value, ValueStatus... derived) {
    return new BaseValueStatus(value, List.of(derived));
  }

  private static void assertBoth(RecordedTxn txn, OpSpec... ops) {
    TxnAssert.assertThat(txn).executed(ops).planned(ops);
  }

  private Optional<Object> meta(String descriptor, String label) {
    return kvs.metadataMap(descriptor, Object.class).lookup(label);
  }

  // ------------------------------------------------------------------ B85 – B88

  @Test
  @DisplayName(
      "B85 B86 B87 re-creating C3 twice: derived deleted, base Delete+Create, new derived"
          + " created; RECREATE only on the base and its previously derived keys; fresh metadata"
          + " 0 → 1 → 2")
  void recreateBaseTwice() {
    registerDataChange();
    env.commit(C3, arr(1, 2));
    assertThat(meta("descriptor3", "base-value3")).contains(0);

    sb.clearCalls();
    long seq = env.commit(C3, arr(1));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(C3, 1),
            "DELETE " + d(C3, 2),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1));
    assertBoth(
        env.txn(seq),
        op(DELETE, d(C3, 1))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED", "RECREATE")
            .prevValue(s("item1"))
            .newValue(null),
        op(DELETE, d(C3, 2))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED", "RECREATE")
            .prevValue(s("item2"))
            .newValue(null),
        op(DELETE, C3)
            .states(CONFIGURED, REMOVED)
            .flags("RECREATE")
            .prevValue(arr(1, 2))
            .newValue(null),
        op(CREATE, C3)
            .states(REMOVED, CONFIGURED)
            .flags("RECREATE")
            .prevValue(null)
            .newValue(arr(1)),
        op(CREATE, d(C3, 1))
            .states(NONEXISTENT, CONFIGURED)
            .flags("DERIVED", "RECREATE")
            .prevValue(null)
            .newValue(s("item1")));
    assertThat(kvs.valueStatus(C3))
        .isEqualTo(base(st(C3, CONFIGURED, UPDATE), st(d(C3, 1), CONFIGURED, CREATE)));
    assertThat(meta("descriptor3", "base-value3")).contains(1);
    assertThat(sb.get(C3).orElseThrow().metadata()).isEqualTo(1);

    sb.clearCalls();
    seq = env.commit(C3, arr(1, 2));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(C3, 1),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "CREATE " + d(C3, 2));
    assertBoth(
        env.txn(seq),
        op(DELETE, d(C3, 1)).states(CONFIGURED, REMOVED).flags("DERIVED", "RECREATE"),
        op(DELETE, C3)
            .states(CONFIGURED, REMOVED)
            .flags("RECREATE")
            .prevValue(arr(1))
            .newValue(null),
        op(CREATE, C3)
            .states(REMOVED, CONFIGURED)
            .flags("RECREATE")
            .prevValue(null)
            .newValue(arr(1, 2)),
        op(CREATE, d(C3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED", "RECREATE"),
        op(CREATE, d(C3, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED").newValue(s("item2")));
    assertThat(kvs.valueStatus(C3))
        .isEqualTo(
            base(
                st(C3, CONFIGURED, UPDATE),
                st(d(C3, 1), CONFIGURED, CREATE),
                st(d(C3, 2), CONFIGURED, CREATE)));
    assertThat(meta("descriptor3", "base-value3")).contains(2);
    assertThat(sb.values().values())
        .containsExactly(
            new Entry(C3, arr(1, 2), 2, ValueOrigin.FROM_NB, false),
            new Entry(d(C3, 1), s("item1"), null, ValueOrigin.FROM_NB, true),
            new Entry(d(C3, 2), s("item2"), null, ValueOrigin.FROM_NB, true));
  }

  @Test
  @DisplayName(
      "B88 without Update every real change is Delete+Create {RECREATE}; with Update and"
          + " no decider every change is an Update; the decider gets (key, old, new, metadata)")
  void recreateRuleFromDescriptor() {
    String x = "/noupd/x";
    String y = "/upd/y";
    String z = "/dec/z";
    List<List<Object>> deciderCalls = Collections.synchronizedList(new ArrayList<>());
    kvs.registerDescriptors(
        sb.descriptor("noUpdate", Object.class)
            .nbKeyPrefix("/noupd/")
            .withMetadata()
            .withoutUpdate()
            .build(),
        sb.descriptor("withUpdate", Object.class).nbKeyPrefix("/upd/").withMetadata().build(),
        sb.descriptor("decider", Object.class)
            .nbKeyPrefix("/dec/")
            .withMetadata()
            .updateWithRecreate(
                (key, o, n, m) -> {
                  deciderCalls.add(List.of(key, o, n, m));
                  return false;
                })
            .build());
    env.commit(x, s("a"), y, s("a"), z, s("a"));
    sb.clearCalls();

    long seq = env.commit(x, s("b"), y, s("b"), z, s("b"));
    // ordering: the re-creation (x) before the in-place updates (y, z)
    assertThat(sb.callLog())
        .containsExactly("DELETE " + x, "CREATE " + x, "UPDATE " + z, "UPDATE " + y);
    assertBoth(
        env.txn(seq),
        op(DELETE, x)
            .states(CONFIGURED, REMOVED)
            .flags("RECREATE")
            .prevValue(s("a"))
            .newValue(null),
        op(CREATE, x)
            .states(REMOVED, CONFIGURED)
            .flags("RECREATE")
            .prevValue(null)
            .newValue(s("b")),
        op(UPDATE, z).states(CONFIGURED, CONFIGURED).prevValue(s("a")).newValue(s("b")),
        op(UPDATE, y).states(CONFIGURED, CONFIGURED).prevValue(s("a")).newValue(s("b")));
    assertThat(meta("noUpdate", "x")).contains(1);
    assertThat(meta("withUpdate", "y")).contains(0);
    assertThat(meta("decider", "z")).contains(0);
    assertThat(deciderCalls)
        .isNotEmpty()
        .allSatisfy(c -> assertThat(c).containsExactly(z, s("a"), s("b"), 0));
    assertThat(kvs.valueStatus(x).value()).isEqualTo(st(x, CONFIGURED, UPDATE));

    // an equivalent value is not a change: nothing happens even without Update
    sb.clearCalls();
    seq = env.commit(x, s("b"));
    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(meta("noUpdate", "x")).contains(1);
  }

  // ------------------------------------------------------------------ B89

  @Test
  @DisplayName(
      "B89 re-creating an interface takes its dependents down first (FIB, then"
          + " membership) and restores them after the Create")
  void dependentsOfRecreatedValue() {
    registerL2((key, o, n, m) -> !o.type().equals(n.type()), null, null);
    Iface tap = new Iface("tap1", "TAP", "");
    Iface loop = new Iface("tap1", "LOOPBACK", "");
    String tap1 = ifKey("tap1");
    String bd2 = bdKey("bd2");
    String member = bindingKey("bd2", "tap1");
    String fib3 = "/fib/fib3";
    env.commit(tap1, tap, bd2, new Bd("bd2", List.of("tap1")), fib3, new Fib("bd2", "tap1"));
    assertThat(kvs.valueStatus(fib3).state()).isEqualTo(CONFIGURED);
    assertThat(kvs.valueStatus(bd2).derivedStatus(member).orElseThrow().state())
        .isEqualTo(CONFIGURED);
    assertThat(meta("iface", "tap1")).contains(0);

    sb.clearCalls();
    long seq = env.commit(tap1, loop);
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + fib3,
            "DELETE " + member,
            "DELETE " + tap1,
            "CREATE " + tap1,
            "CREATE " + member,
            "CREATE " + fib3);
    assertBoth(
        env.txn(seq),
        op(DELETE, fib3)
            .states(CONFIGURED, PENDING)
            .prevValue(new Fib("bd2", "tap1"))
            .newValue(new Fib("bd2", "tap1")),
        op(DELETE, member)
            .states(CONFIGURED, PENDING)
            .flags("DERIVED")
            .prevValue(new Binding("bd2", "tap1"))
            .newValue(new Binding("bd2", "tap1")),
        op(DELETE, tap1)
            .states(CONFIGURED, REMOVED)
            .flags("RECREATE")
            .prevValue(tap)
            .newValue(null),
        op(CREATE, tap1)
            .states(REMOVED, CONFIGURED)
            .flags("RECREATE")
            .prevValue(null)
            .newValue(loop),
        op(CREATE, member)
            .states(PENDING, CONFIGURED)
            .flags("DERIVED")
            .prevValue(new Binding("bd2", "tap1"))
            .newValue(new Binding("bd2", "tap1")),
        op(CREATE, fib3)
            .states(PENDING, CONFIGURED)
            .prevValue(new Fib("bd2", "tap1"))
            .newValue(new Fib("bd2", "tap1")));
    assertThat(kvs.valueStatus(tap1)).isEqualTo(base(st(tap1, CONFIGURED, UPDATE)));
    assertThat(kvs.valueStatus(bd2))
        .isEqualTo(base(st(bd2, CONFIGURED, CREATE), st(member, CONFIGURED, CREATE)));
    assertThat(kvs.valueStatus(fib3)).isEqualTo(base(st(fib3, CONFIGURED, CREATE)));
    assertThat(meta("iface", "tap1")).contains(1);
    assertThat(sb.get(tap1).orElseThrow().value()).isEqualTo(loop);
  }

  // ------------------------------------------------------------------ B90

  /** ArrayValue whose derived values carry a suffix: K/item → "item" + suffix. */
  record SuffixArray(List<String> items, String suffix) {}

  @Test
  @DisplayName(
      "B90 re-creating a derived value: base UPDATE first, then derived DELETE and"
          + " CREATE (PrevState REMOVED); a failing re-Create leaves it FAILED")
  void failedRecreateOfDerivedValue() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(
                (key, v) ->
                    v instanceof SuffixArray a
                        ? a.items().stream()
                            .map(i -> KeyValuePair.of(key + "/" + i, s(i + a.suffix())))
                            .toList()
                        : List.of())
            .updateWithRecreate((key, o, n, m) -> key.equals(d(A1, 1)))
            .build());
    SuffixArray v1 = new SuffixArray(List.of("item1"), "-v1");
    SuffixArray v2 = new SuffixArray(List.of("item1"), "-v2");
    assertThat(env.commit(A1, v1)).isZero();
    assertThat(sb.get(d(A1, 1)).orElseThrow().value()).isEqualTo(s("item1-v1"));
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);

    sb.planError(d(A1, 1), null); // the Delete passes
    sb.planError(d(A1, 1), new RuntimeException("failed to create value")); // the re-Create fails
    sb.clearCalls();
    assertThatThrownBy(() -> env.commit(A1, v2))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e -> {
              assertThat(e.seqNum()).isEqualTo(1);
              assertThat(e.keyErrors())
                  .extracting(KeyError::key, KeyError::operation, KeyError::message)
                  .containsExactly(tuple(d(A1, 1), CREATE, "failed to create value"));
            });
    assertThat(sb.callLog())
        .startsWith("UPDATE " + A1, "DELETE " + d(A1, 1), "CREATE " + d(A1, 1) + " ✗");
    // the rest are refresh calls after the failure, never CRUD
    assertThat(sb.callLog().subList(3, sb.callLog().size()))
        .allSatisfy(c -> assertThat(c).startsWith("RETRIEVE "));

    RecordedTxn txn = env.txn(1);
    assertThat(txn.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(txn.values())
        .containsExactly(new RecordedValue(A1, Optional.of(v2), ValueOrigin.FROM_NB));
    TxnAssert.assertThat(txn)
        .planned(
            op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(v1).newValue(v2),
            op(DELETE, d(A1, 1))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "RECREATE")
                .prevValue(s("item1-v1"))
                .newValue(null),
            op(CREATE, d(A1, 1))
                .states(REMOVED, CONFIGURED)
                .flags("DERIVED", "RECREATE")
                .prevValue(null)
                .newValue(s("item1-v2"))
                .error(""));
    TxnAssert.assertThat(txn)
        .executed(
            op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(v1).newValue(v2).error(""),
            op(DELETE, d(A1, 1))
                .states(CONFIGURED, REMOVED)
                .flags("DERIVED", "RECREATE")
                .prevValue(s("item1-v1"))
                .newValue(null)
                .error(""),
            op(CREATE, d(A1, 1))
                .states(REMOVED, FAILED)
                .flags("DERIVED", "RECREATE")
                .prevValue(null)
                .newValue(s("item1-v2"))
                .error("failed to create value"));

    ValueStatus derived = kvs.valueStatus(A1).derivedStatus(d(A1, 1)).orElseThrow();
    assertThat(derived.state()).isEqualTo(FAILED);
    assertThat(derived.error()).isEqualTo("failed to create value");
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(v2);
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);
    assertThat(sb.get(d(A1, 1))).isEmpty();
  }

  // ------------------------------------------------------------------ B91

  @Test
  @DisplayName(
      "B91 the comparator decides: an 'always equal' bridge domain only has its derived"
          + " memberships deleted/created; an equivalent interface is neither updated nor re-created")
  void equivalenceViaComparator() {
    registerL2(
        (key, o, n, m) -> true, // every real change would be a re-creation
        (key, o, n) -> o.name().equals(n.name()) && o.type().equals(n.type()), // ignores text
        (key, o, n) -> true);
    String tap1 = ifKey("tap1");
    String tap2 = ifKey("tap2");
    String bd2 = bdKey("bd2");
    Bd withTap1 = new Bd("bd2", List.of("tap1"));
    Bd withTap2 = new Bd("bd2", List.of("tap2"));
    env.commit(
        tap1, new Iface("tap1", "TAP", "first"), tap2, new Iface("tap2", "TAP", ""), bd2, withTap1);
    sb.clearCalls();

    long seq = env.commit(bd2, withTap2);
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + bindingKey("bd2", "tap1"), "CREATE " + bindingKey("bd2", "tap2"));
    assertBoth(
        env.txn(seq),
        op(DELETE, bindingKey("bd2", "tap1"))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED")
            .prevValue(new Binding("bd2", "tap1"))
            .newValue(null),
        op(CREATE, bindingKey("bd2", "tap2"))
            .states(NONEXISTENT, CONFIGURED)
            .flags("DERIVED")
            .prevValue(null)
            .newValue(new Binding("bd2", "tap2")));
    assertThat(kvs.valueStatus(bd2))
        .isEqualTo(
            base(st(bd2, CONFIGURED, CREATE), st(bindingKey("bd2", "tap2"), CONFIGURED, CREATE)));
    // no Update reached the SB; the NB view holds the new value
    assertThat(sb.get(bd2).orElseThrow().value()).isEqualTo(withTap1);
    assertThat(kvs.dumpValues("bd", View.NB))
        .extracting(KVWithMetadata::value)
        .containsExactly(withTap2);

    sb.clearCalls();
    seq = env.commit(tap1, new Iface("tap1", "TAP", "second"));
    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(env.txn(seq).planned()).isEmpty();
    assertThat(kvs.valueStatus(tap1)).isEqualTo(base(st(tap1, CONFIGURED, CREATE)));
    assertThat(meta("iface", "tap1")).contains(0);
  }

  // ------------------------------------------------------------------ B92

  @Test
  @DisplayName(
      "B92 SB-originated changes never re-create: no descriptor CRUD call, the value is"
          + " updated in the graph with the SB's metadata, derived values follow")
  void sbChangesNeverRecreate() {
    kvs.registerDescriptors(
        sb.descriptor("sbDescr", Object.class)
            .nbKeyPrefix("/sbr/")
            .withMetadata()
            .withoutUpdate() // an NB change would always be a re-creation
            .derivedValues(CatalogueFixtures.derivedItems())
            .build());
    String x = "/sbr/x";
    kvs.pushSBNotification(List.of(new KVWithMetadata<>(x, arr(1), 7, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();
    RecordedTxn t0 = env.txn(0);
    assertThat(t0.type()).isEqualTo(TxnType.SB_NOTIFICATION);
    assertBoth(
        t0,
        op(CREATE, x).states(NONEXISTENT, OBTAINED).newValue(arr(1)),
        op(CREATE, d(x, 1)).states(NONEXISTENT, OBTAINED).flags("DERIVED"));
    assertThat(meta("sbDescr", "x")).contains(7);

    kvs.pushSBNotification(List.of(new KVWithMetadata<>(x, arr(2), 8, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();
    assertBoth(
        env.txn(1),
        op(DELETE, d(x, 1))
            .states(OBTAINED, REMOVED)
            .flags("DERIVED")
            .prevValue(s("item1"))
            .newValue(null),
        op(UPDATE, x).states(OBTAINED, OBTAINED).prevValue(arr(1)).newValue(arr(2)),
        op(CREATE, d(x, 2)).states(NONEXISTENT, OBTAINED).flags("DERIVED").newValue(s("item2")));
    assertThat(meta("sbDescr", "x")).contains(8);
    assertThat(kvs.valueStatus(x))
        .isEqualTo(base(st(x, OBTAINED, UNDEFINED), st(d(x, 2), OBTAINED, UNDEFINED)));

    kvs.pushSBNotification(List.of(new KVWithMetadata<>(x, null, null, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();
    assertBoth(
        env.txn(2),
        op(DELETE, d(x, 2)).states(OBTAINED, REMOVED).flags("DERIVED"),
        op(DELETE, x).states(OBTAINED, REMOVED).prevValue(arr(2)).newValue(null));
    assertThat(kvs.valueStatus(x).state()).isEqualTo(NONEXISTENT);
    assertThat(meta("sbDescr", "x")).isEmpty();
    assertThat(sb.callLog()).isEmpty();
  }
}
