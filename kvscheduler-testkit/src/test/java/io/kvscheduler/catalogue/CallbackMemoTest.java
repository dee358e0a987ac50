package io.kvscheduler.catalogue;

import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_A;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_B;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Dependencies and DerivedValues are functions of key and value (KVDescriptor's callback contract):
 * the engine remembers their last answer per key and asks again only for a value that is not equal
 * to the one answered. (Ours; no catalogue entry.)
 */
@KVSchedulerTest(printTxnSummary = true)
class CallbackMemoTest {
  private MockSouthbound sb;
  private final AtomicInteger derivations = new AtomicInteger();
  private final AtomicInteger dependencyCalls = new AtomicInteger();
  private final AtomicBoolean failDependencies = new AtomicBoolean();
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  /** A over /prefixA/ deriving A/itemN from [..]; B over /prefixB/ depending on A1/item1. */
  private void register() {
    kvs.registerDescriptors(
        sb.descriptor("A", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .derivedValues(
                (key, value) -> {
                  derivations.incrementAndGet();
                  return CatalogueFixtures.derivedItems().derive(key, value);
                })
            .build(),
        sb.descriptor("B", Object.class)
            .nbKeyPrefix(PREFIX_B)
            .dependencies(
                (key, value) -> {
                  dependencyCalls.incrementAndGet();
                  if (failDependencies.get()) {
                    throw new IllegalStateException("dependencies not ready");
                  }
                  return List.of(Dependency.onKey("item", d(A1, 1)));
                })
            .build());
  }

  @Test
  @DisplayName("an equal value (another object) is not derived again; a different one is")
  void equalValueReusesTheLastAnswers() {
    register();
    env.commit(A1, arr(1, 2));
    env.commit(B2, s("b"));
    assertThat(derivations).hasValue(1);
    assertThat(dependencyCalls).hasValue(1);

    env.commit(A1, arr(1, 2)); // equal, not the same object
    env.commit(B2, s("b"));
    assertThat(derivations).hasValue(1);
    assertThat(dependencyCalls).hasValue(1);
    assertThat(kvs.valueStatus(A1).derivedStatus(d(A1, 2)).orElseThrow().state())
        .isEqualTo(ValueState.CONFIGURED);

    env.commit(A1, arr(1, 3)); // different: derived again, A1/item2 replaced by A1/item3
    assertThat(derivations).hasValue(2);
    assertThat(kvs.valueStatus(A1).derivedStatus(d(A1, 2))).isEmpty();
    assertThat(kvs.valueStatus(A1).derivedStatus(d(A1, 3)).orElseThrow().state())
        .isEqualTo(ValueState.CONFIGURED);

    env.commit(A1, arr(1, 2)); // back to the first value: only the last answer is remembered
    assertThat(derivations).hasValue(3);
    assertThat(kvs.valueStatus(B2).value().state()).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  @DisplayName("a full resync re-applying what the southbound holds asks each callback once")
  void resyncOfMatchingSouthboundDerivesOnce() {
    register();
    env.commit(A1, arr(1, 2));
    env.commit(B2, s("b"));
    kvs.startNBTransaction()
        .setValue(A1, arr(1, 2))
        .setValue(B2, s("b"))
        .commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    // the retrieved values and the NB values equal the remembered ones: no call at all
    assertThat(derivations).hasValue(1);
    assertThat(dependencyCalls).hasValue(1);
    assertThat(kvs.valueStatus(B2).value().state()).isEqualTo(ValueState.CONFIGURED);
  }

  /** A value counting the calls of its {@code equals} (a stand-in for a costly comparison). */
  private static final class Counted {
    static final AtomicInteger EQUALS = new AtomicInteger();
    final List<Integer> items;

    Counted(Integer... items) {
      this.items = List.of(items);
    }

    @Override
    public boolean equals(Object o) {
      EQUALS.incrementAndGet();
      return o instanceof Counted c && c.items.equals(items);
    }

    @Override
    public int hashCode() {
      return items.hashCode();
    }
  }

  @Test
  @DisplayName(
      "an equal value compares equal once: the answers remembered for the old value are found without a second equals")
  void equalValueIsComparedOnce() {
    kvs.registerDescriptors(
        sb.descriptor("A", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .dependencies(
                (key, value) -> {
                  dependencyCalls.incrementAndGet();
                  return List.of();
                })
            .derivedValues(
                (key, value) -> {
                  derivations.incrementAndGet();
                  return List.of(new KeyValuePair(d(A1, 1), s("p")));
                })
            .build());
    env.commit(A1, new Counted(1, 2));
    Counted.EQUALS.set(0);
    int dependencies = dependencyCalls.get(); // of A1 and of its derived value (also selected by A)

    env.commit(A1, new Counted(1, 2)); // equal, not the same object
    assertThat(Counted.EQUALS).hasValue(1); // equivalence; the remembered answers match by identity
    assertThat(derivations).hasValue(1);
    assertThat(dependencyCalls).hasValue(dependencies);
    assertThat(kvs.valueStatus(A1).derivedStatus(d(A1, 1)).orElseThrow().state())
        .isEqualTo(ValueState.CONFIGURED);

    env.commit(A1, new Counted(1, 3)); // different: asked again
    assertThat(derivations).hasValue(2);
    assertThat(dependencyCalls).hasValue(dependencies + 1);
  }

  @Test
  @DisplayName("a failed Dependencies call is not remembered: the same value is asked again")
  void failedAnswerIsAskedAgain() {
    register();
    env.commit(A1, arr(1));
    failDependencies.set(true);
    assertThrows(TransactionException.class, () -> env.commit(B2, s("b")));
    assertThat(kvs.valueStatus(B2).value().state()).isEqualTo(ValueState.INVALID);
    int calls = dependencyCalls.get();

    failDependencies.set(false);
    env.commit(B2, s("b"));
    assertThat(dependencyCalls).hasValue(calls + 1);
    assertThat(kvs.valueStatus(B2).value().state()).isEqualTo(ValueState.CONFIGURED);
  }
}
