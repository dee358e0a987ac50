package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.INVALID;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.A4;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The engine never dies on exceptions thrown by user code (descriptor callbacks): the failing value
 * gets a status naming the problem, the other values of the transaction are applied, and later
 * transactions still run. (Guarantee of KVDescriptor's "Callbacks" contract; no catalogue entry.)
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class CallbackGuardTest {
  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  private TransactionException commitFails(Object... kv) {
    return assertThrows(TransactionException.class, () -> env.commit(kv));
  }

  /** A further transaction is processed normally. */
  private void engineStillWorks(String key) {
    sb.clearCalls();
    long seq = env.commit(key, s("later"));
    assertThat(sb.callLog()).containsExactly("CREATE " + key);
    TxnAssert.assertThat(env.txn(seq)).executed(op(CREATE, key).states(NONEXISTENT, CONFIGURED));
    assertThat(kvs.valueStatus(key).value())
        .isEqualTo(new ValueStatus(key, CONFIGURED, "", CREATE, List.of()));
  }

  @Test
  @DisplayName(
      "Create throwing a RuntimeException: value FAILED with the message, other values applied")
  void createThrows() {
    KVDescriptor<Object, Void> exploding =
        KVDescriptor.builder("exploding", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .create(
                (key, value) -> {
                  throw new IllegalStateException("create exploded for " + key);
                })
            .delete((key, value, meta) -> {})
            .build();
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .build(),
        exploding);

    TransactionException e = commitFails(A1, s("a1"), C3, s("c3"), A2, s("a2"));
    String msg = "create exploded for " + C3;
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(tuple(C3, CREATE, msg));
    assertThat(e.keyErrors().get(0).cause()).isInstanceOf(IllegalStateException.class);
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + A2);
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, C3).states(NONEXISTENT, FAILED).error(msg));
    assertThat(kvs.valueStatus(C3).value())
        .isEqualTo(new ValueStatus(C3, FAILED, msg, CREATE, List.of()));
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(CONFIGURED);
    assertThat(kvs.valueStatus(A2).state()).isEqualTo(CONFIGURED);
    engineStillWorks(A3);
  }

  @Test
  @DisplayName(
      "Create throwing an Error or a message-less exception: value FAILED, engine keeps running")
  void createThrowsErrorOrNoMessage() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .build());
    sb.planError(A2, new AssertionError("assertion in user code"));
    sb.planError(A3, new NullPointerException());

    TransactionException e = commitFails(A1, s("a1"), A2, s("a2"), A3, s("a3"));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::message)
        .containsExactly(
            tuple(A2, "AssertionError: assertion in user code"), // a specific type keeps its name
            tuple(A3, "java.lang.NullPointerException"));
    assertThat(sb.callLog())
        .containsExactly("CREATE " + A1, "CREATE " + A2 + " ✗", "CREATE " + A3 + " ✗");
    assertThat(kvs.valueStatus(A2).value())
        .isEqualTo(
            new ValueStatus(
                A2, FAILED, "AssertionError: assertion in user code", CREATE, List.of()));
    assertThat(kvs.valueStatus(A3).value().state()).isEqualTo(FAILED);
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(CONFIGURED);
    engineStillWorks(A4);
  }

  @Test
  @DisplayName(
      "dependencies() throwing: value INVALID with an error naming descriptor and key; others applied")
  void dependenciesThrows() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .dependencies(
                (key, value) -> {
                  if (key.equals(A2)) {
                    throw new IllegalStateException("deps exploded");
                  }
                  return List.of();
                })
            .build());

    TransactionException e = commitFails(A1, s("a1"), A2, s("a2"), A3, s("a3"));
    assertThat(e.keyErrors()).hasSize(1);
    KeyError ke = e.keyErrors().get(0);
    assertThat(ke.key()).isEqualTo(A2);
    assertThat(ke.operation()).isEqualTo(CREATE);
    assertThat(ke.message()).contains("descriptor1").contains(A2).contains("deps exploded");
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + A3);
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, A2).states(NONEXISTENT, INVALID).flags("NOOP").error(ke.message()),
            op(CREATE, A3).states(NONEXISTENT, CONFIGURED));
    assertThat(kvs.valueStatus(A2).value())
        .isEqualTo(new ValueStatus(A2, INVALID, ke.message(), CREATE, List.of()));
    engineStillWorks(A4);
  }

  @Test
  @DisplayName(
      "derivedValues() throwing: value INVALID with an error naming descriptor and key; others applied")
  void derivedValuesThrows() {
    KVDescriptor.DerivedValues<Object> items = CatalogueFixtures.derivedItems();
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .derivedValues(
                (key, value) -> {
                  if (key.equals(A2)) {
                    throw new IllegalStateException("derive exploded");
                  }
                  return items.derive(key, value);
                })
            .build());

    TransactionException e = commitFails(A1, arr(1), A2, arr(1), A3, arr(1));
    assertThat(e.keyErrors()).hasSize(1);
    KeyError ke = e.keyErrors().get(0);
    assertThat(ke.key()).isEqualTo(A2);
    assertThat(ke.message()).contains("descriptor1").contains(A2).contains("derive exploded");
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A1, "CREATE " + d(A1, 1), "CREATE " + A3, "CREATE " + d(A3, 1));
    OpSpec[] expected = {
      op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
      op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
      op(CREATE, A2).states(NONEXISTENT, INVALID).flags("NOOP").error(ke.message()),
      op(CREATE, A3).states(NONEXISTENT, CONFIGURED),
      op(CREATE, d(A3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED")
    };
    TxnAssert.assertThat(env.txn(0)).executed(expected);
    assertThat(kvs.valueStatus(A2).value())
        .isEqualTo(new ValueStatus(A2, INVALID, ke.message(), CREATE, List.of()));
    assertThat(kvs.valueStatus(A2).derived()).isEmpty();
    engineStillWorks(A4);
  }

  /** A value whose equals throws when it compares itself with another instance. */
  private record Fragile(String v) {
    @Override
    public boolean equals(Object o) {
      throw new IllegalStateException("equals exploded");
    }

    @Override
    public int hashCode() {
      return v.hashCode();
    }
  }

  @Test
  @DisplayName(
      "equals of a value throwing, no equivalence (ours: values treated as different): Update is called, value CONFIGURED, the rest of the transaction applied")
  void valueEqualsThrows() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .build());
    env.commit(A1, new Fragile("x"));
    sb.clearCalls();

    long seq =
        kvs.startNBTransaction().setValue(A1, new Fragile("x")).setValue(A2, s("y")).commit();
    assertThat(sb.callLog()).containsExactly("CREATE " + A2, "UPDATE " + A1); // creates first
    TxnAssert.assertThat(env.txn(seq))
        .executed(
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(UPDATE, A1).states(CONFIGURED, CONFIGURED));
    assertThat(kvs.valueStatus(A1).value())
        .isEqualTo(new ValueStatus(A1, CONFIGURED, "", UPDATE, List.of()));
    engineStillWorks(A3);
  }

  @Test
  @DisplayName(
      "equivalence throwing (ours: values treated as different): Update is called, value CONFIGURED")
  void equivalenceThrows() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .equivalence(
                (key, o, n) -> {
                  throw new IllegalStateException("compare exploded");
                })
            .build());
    env.commit(A1, s("x"));
    sb.clearCalls();

    long seq = env.commit(A1, s("x"));
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1);
    TxnAssert.assertThat(env.txn(seq))
        .executed(op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(s("x")).newValue(s("x")));
    assertThat(kvs.valueStatus(A1).value())
        .isEqualTo(new ValueStatus(A1, CONFIGURED, "", UPDATE, List.of()));
    engineStillWorks(A2);
  }
}
