package io.kvscheduler.catalogue;

import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_A;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_B;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.catalogue.CatalogueFixtures.StringValue;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A base value whose derived values grow by one per transaction (a bridge domain gaining a member):
 * each update calls the southbound for the base and the added member only, and a member that
 * something else changed since the base's last update (its dependency went, its Create failed) is
 * applied again like any other, never taken for unchanged. Run with simulation off and on ({@link
 * GrowingDerivedListTest}, {@link GrowingDerivedListSimulatedTest}): a simulated walk is rolled
 * back before the real one.
 */
abstract class GrowingDerivedList {
  private SchedulerFixture env;
  private MockSouthbound sb;
  private KVScheduler kvs;

  /** The keys of the members the domains' comparator was asked about, in order. */
  private final List<String> comparedMembers = new CopyOnWriteArrayList<>();

  /** The interface member {@code i} of A1 depends on. */
  private static String iface(int i) {
    return PREFIX_B + "if" + i;
  }

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
    kvs.registerDescriptors(
        sb.descriptor("domains", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .derivedValues(CatalogueFixtures.derivedItems())
            .equivalence(
                (key, a, b) -> {
                  if (a instanceof StringValue) {
                    comparedMembers.add(key);
                  }
                  return Objects.equals(a, b);
                })
            .dependencies(
                (key, value) ->
                    value instanceof StringValue v
                        ? List.of(Dependency.onKey("interface", iface(itemNumber(v))))
                        : List.of())
            .build(),
        sb.descriptor("interfaces", Object.class).nbKeyPrefix(PREFIX_B).build());
    Object[] ifaces = new Object[2 * 12];
    for (int i = 1; i <= 12; i++) {
      ifaces[2 * i - 2] = iface(i);
      ifaces[2 * i - 1] = s("up");
    }
    env.commit(ifaces);
    sb.clearCalls();
  }

  private static int itemNumber(StringValue v) {
    return Integer.parseInt(v.value().substring("item".length()));
  }

  /** Sets A1 to list members 1..n. */
  private void members(int n) {
    env.commit(A1, arr(IntStream.rangeClosed(1, n).toArray()));
  }

  @Test
  @DisplayName(
      "each update of a growing base calls the southbound for the base and the added member")
  void eachUpdateCallsForTheAddedMemberOnly() {
    members(1);
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + d(A1, 1));
    for (int n = 2; n <= 8; n++) {
      sb.clearCalls();
      members(n);
      assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, n));
    }
    for (int i = 1; i <= 8; i++) {
      assertThat(kvs.valueStatus(d(A1, i)).state()).isEqualTo(CONFIGURED);
    }
    sb.clearCalls();
    members(5);
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(A1, 6), "DELETE " + d(A1, 7), "DELETE " + d(A1, 8), "UPDATE " + A1);
  }

  @Test
  @DisplayName(
      "a member created by an earlier update is not visited again: an update that adds one"
          + " member compares none of the members it keeps")
  void membersCreatedBeforeAreNotVisitedAgain() {
    for (int n = 1; n <= 8; n++) {
      members(n);
    }
    for (int n = 9; n <= 11; n++) {
      comparedMembers.clear();
      members(n);
      assertThat(comparedMembers).isEmpty();
    }
    for (int i = 1; i <= 11; i++) {
      assertThat(kvs.valueStatus(d(A1, i)).value().lastOperation()).isEqualTo(TxnOperation.CREATE);
    }
  }

  @Test
  @DisplayName(
      "a member taken down by its dependency between two updates stays pending through the next"
          + " update, and is created once its dependency is back")
  void memberTakenDownBetweenUpdates() {
    for (int n = 1; n <= 5; n++) {
      members(n);
    }
    sb.clearCalls();
    env.commit(iface(3), null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 3), "DELETE " + iface(3));
    assertThat(kvs.valueStatus(d(A1, 3)).state()).isEqualTo(PENDING);
    sb.clearCalls();
    members(6);
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, 6));
    assertThat(kvs.valueStatus(d(A1, 3)).state()).isEqualTo(PENDING);
    sb.clearCalls();
    env.commit(iface(3), s("up"));
    assertThat(sb.callLog()).containsExactly("CREATE " + iface(3), "CREATE " + d(A1, 3));
    sb.clearCalls();
    members(7);
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, 7));
  }

  @Test
  @DisplayName(
      "a member whose Create failed after it had been configured is settled by the base's next"
          + " update (the southbound holds it after all: no call), as any member that changed")
  void failedMemberIsVisitedByTheNextUpdate() {
    for (int n = 1; n <= 5; n++) {
      members(n);
    }
    env.commit(iface(2), null);
    sb.planError(d(A1, 2), new IllegalStateException("device busy"));
    assertThrows(TransactionException.class, () -> env.commit(iface(2), s("up")));
    assertThat(kvs.valueStatus(d(A1, 2)).state()).isEqualTo(FAILED);
    sb.clearCalls();
    long seq = env.commit(A1, arr(1, 2, 3, 4, 5, 6));
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, 6));
    assertThat(env.txn(seq).executed())
        .extracting(RecordedTxnOp::key, RecordedTxnOp::prevState, RecordedTxnOp::newState)
        .containsExactly(
            tuple(A1, CONFIGURED, CONFIGURED),
            tuple(d(A1, 2), FAILED, CONFIGURED),
            tuple(d(A1, 6), NONEXISTENT, CONFIGURED));
    assertThat(kvs.valueStatus(d(A1, 2)).state()).isEqualTo(CONFIGURED);
    sb.clearCalls();
    seq = env.commit(A1, arr(1, 2, 3, 4, 5, 6, 7));
    assertThat(sb.callLog()).containsExactly("UPDATE " + A1, "CREATE " + d(A1, 7));
    assertThat(env.txn(seq).executed())
        .extracting(RecordedTxnOp::key)
        .containsExactly(A1, d(A1, 7));
  }
}
