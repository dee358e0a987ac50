package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The 3-descriptor setup of TestDataChangeTransactions (catalogue §6). */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class DataChangeTest {
  private static final TxnOptions DATA_CHANGE =
      TxnOptions.builder().description("testing data change").build();

  private MockSouthbound sb;
  private SchedulerFixture env;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    CatalogueFixtures.registerDataChangeDescriptors(env.kvs(), sb);
  }

  @Test
  @DisplayName(
      "B52 B53 B54 B123 first transaction creates base values, derived values; B2/i2 pending")
  void firstTransaction() {
    long seq = env.commit(DATA_CHANGE, B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    assertThat(seq).isZero();
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A1,
            "CREATE " + d(A1, 2),
            "CREATE " + B2,
            "CREATE " + d(B2, 1),
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "CREATE " + d(C3, 2));
    var expected =
        new OpSpec[] {
          op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
          op(CREATE, d(A1, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
          op(CREATE, B2).states(NONEXISTENT, CONFIGURED),
          op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
          op(CREATE, d(B2, 2)).states(NONEXISTENT, PENDING).flags("DERIVED", "NOOP"),
          op(CREATE, C3).states(NONEXISTENT, CONFIGURED),
          op(CREATE, d(C3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
          op(CREATE, d(C3, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED")
        };
    TxnAssert.assertThat(env.txn(0)).executed(expected).planned(expected);
    BaseValueStatus b2 = env.kvs().valueStatus(B2);
    assertThat(b2.state()).isEqualTo(CONFIGURED);
    assertThat(b2.derivedStatus(d(B2, 2)).orElseThrow().details()).containsExactly(d(A1, 1));
    assertThat(b2.derivedStatus(d(B2, 2)).orElseThrow().state()).isEqualTo(PENDING);
    assertThat(env.kvs().metadataMap("descriptor1", Object.class).lookup("base-value1"))
        .contains(0);
  }

  @Test
  @DisplayName("B51 B55 B56 B85 B79 B87 B124 second transaction re-creates C3 first, updates A1")
  void secondTransaction() {
    env.commit(DATA_CHANGE, B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    sb.clearCalls();
    env.commit(DATA_CHANGE, C3, arr(1), A1, arr(1));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(C3, 1),
            "DELETE " + d(C3, 2),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "DELETE " + d(A1, 2),
            "UPDATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + d(B2, 2));
    TxnAssert.assertThat(env.txn(1))
        .executed(
            op(DELETE, d(C3, 1)).states(CONFIGURED, REMOVED).flags("DERIVED", "RECREATE"),
            op(DELETE, d(C3, 2)).states(CONFIGURED, REMOVED).flags("DERIVED", "RECREATE"),
            op(DELETE, C3).states(CONFIGURED, REMOVED).flags("RECREATE"),
            op(CREATE, C3).states(REMOVED, CONFIGURED).flags("RECREATE"),
            op(CREATE, d(C3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED", "RECREATE"),
            op(DELETE, d(A1, 2)).states(CONFIGURED, REMOVED).flags("DERIVED"),
            op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(2)).newValue(arr(1)),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(CREATE, d(B2, 2))
                .states(PENDING, CONFIGURED)
                .flags("DERIVED")
                .prevValue(s("item2"))
                .newValue(s("item2")));
    assertThat(env.kvs().valueStatus(C3).value().lastOperation()).isEqualTo(TxnOperation.UPDATE);
    assertThat(env.kvs().metadataMap("descriptor3", Object.class).lookup("base-value3"))
        .contains(1);
    assertThat(env.kvs().metadataMap("descriptor1", Object.class).lookup("base-value1"))
        .contains(0);
    assertThat(env.kvs().valueStatus(A1).state()).isEqualTo(ValueState.CONFIGURED);
  }
}
