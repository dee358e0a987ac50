package io.kvscheduler.catalogue;

import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A value that no operation touched keeps its status: its last operation stays the one that was
 * made, its timeline gains no revision, and a transaction that did nothing records nothing.
 */
@KVSchedulerTest(simulation = true)
class UntouchedStatusTest {
  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
  }

  private void registerPlain() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_A).build());
  }

  private static TxnOptions resync(ResyncType type) {
    return TxnOptions.builder().resync(type).build();
  }

  @Test
  @DisplayName("a full resync with the same values keeps CREATE as last operation, no revision")
  void noOpFullResyncKeepsLastOperation() {
    registerPlain();
    env.commit(A1, s("a1"), A2, s("a2"));
    List<NodeRevision> before = kvs.keyTimeline(A1);

    env.commit(resync(ResyncType.FULL), A1, s("a1"), A2, s("a2"));

    assertThat(kvs.valueStatus(A1).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
    assertThat(kvs.keyTimeline(A1)).isEqualTo(before);
  }

  @Test
  @DisplayName("a downstream resync that finds everything in place keeps CREATE, no revision")
  void noOpDownstreamResyncKeepsLastOperation() {
    registerPlain();
    env.commit(A1, s("a1"));
    List<NodeRevision> before = kvs.keyTimeline(A1);

    long seq = env.commit(resync(ResyncType.DOWNSTREAM));

    assertThat(kvs.valueStatus(A1).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
    assertThat(kvs.keyTimeline(A1)).isEqualTo(before);
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
  }

  @Test
  @DisplayName(
      "an upstream resync that only deletes another value keeps the untouched value's CREATE")
  void resyncDeletingAnotherKeyKeepsLastOperation() {
    registerPlain();
    env.commit(A1, s("a1"), A2, s("a2"));
    List<NodeRevision> before = kvs.keyTimeline(A1);

    env.commit(resync(ResyncType.UPSTREAM), A1, s("a1"));

    assertThat(kvs.valueStatus(A2).state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(kvs.valueStatus(A1).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
    assertThat(kvs.keyTimeline(A1)).isEqualTo(before);
  }

  @Test
  @DisplayName("an equivalent value given again by a change keeps CREATE")
  void equalValueAgainKeepsLastOperation() {
    registerPlain();
    env.commit(A1, s("a1"));
    List<NodeRevision> before = kvs.keyTimeline(A1);

    env.commit(A1, s("a1"));

    assertThat(kvs.valueStatus(A1).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
    assertThat(kvs.keyTimeline(A1)).isEqualTo(before);
  }

  @Test
  @DisplayName(
      "a resync while a derived value waits for its dependency records nothing: no PENDING ->"
          + " PENDING operation, executedNothing")
  void resyncWithWaitingDerivedValueRecordsNothing() {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies(
                (key, value) ->
                    key.equals(d(A1, 1)) ? List.of(Dependency.onKey(B2, B2)) : List.of())
            .build(),
        sb.descriptor("descriptor2", Object.class).nbKeyPrefix(CatalogueFixtures.PREFIX_B).build());
    env.commit(A1, arr(1));
    assertThat(kvs.valueStatus(d(A1, 1)).value().state()).isEqualTo(ValueState.PENDING);
    List<NodeRevision> before = kvs.keyTimeline(d(A1, 1));
    List<NodeRevision> baseBefore = kvs.keyTimeline(A1);

    long down = env.commit(resync(ResyncType.DOWNSTREAM));
    long full = env.commit(resync(ResyncType.FULL), A1, arr(1));

    assertThat(env.txn(down).executed()).isEmpty();
    TxnAssert.assertThat(env.txn(down)).executedNothing();
    assertThat(env.txn(full).executed()).isEmpty();
    TxnAssert.assertThat(env.txn(full)).executedNothing();
    assertThat(kvs.keyTimeline(d(A1, 1))).isEqualTo(before);
    assertThat(kvs.keyTimeline(A1)).isEqualTo(baseBefore);
    assertThat(kvs.valueStatus(A1).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
  }
}
