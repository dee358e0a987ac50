package io.kvscheduler.testkit;

import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThatCommitFails;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * {@link KVSchedulerTest}: each test gets its own deterministic scheduler with a mock southbound,
 * parameters of one test share it, and it is closed after the test.
 */
@KVSchedulerTest(simulation = true)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KVSchedulerExtensionTest {
  static final String ETH0 = "config/interfaces/eth0";
  static final String ROUTE = "config/routes/r1";

  /** The schedulers the tests were given, to check after them that each was closed. */
  private static final List<KVScheduler> GIVEN = new ArrayList<>();

  private SchedulerFixture beforeEachFixture;

  @BeforeEach
  void registerDescriptors(SchedulerFixture fx) {
    beforeEachFixture = fx;
    GIVEN.add(fx.kvs());
    fx.kvs()
        .registerDescriptors(
            fx.southbound()
                .descriptor("interface", String.class)
                .nbKeyPrefix("config/interfaces/")
                .build(),
            fx.southbound()
                .descriptor("route", String.class)
                .nbKeyPrefix("config/routes/")
                .dependencies(
                    (key, outInterface) ->
                        List.of(
                            Dependency.onKey(
                                "interface-exists", "config/interfaces/" + outInterface)))
                .build());
  }

  @AfterAll
  static void everySchedulerWasClosed() {
    assertThat(GIVEN).hasSize(5).doesNotHaveDuplicates();
    for (KVScheduler kvs : GIVEN) {
      assertThatThrownBy(() -> kvs.startNBTransaction().setValue(ETH0, "eth0").commit())
          .hasMessageContaining("closed");
    }
  }

  @Test
  @Order(1)
  @DisplayName("parameters of a test and of its @BeforeEach are parts of one fixture")
  void partsOfOneFixture(
      SchedulerFixture fx,
      KVScheduler kvs,
      MockSouthbound sb,
      ManualClock clock,
      ManualDelayScheduler timers) {
    assertThat(fx).isSameAs(beforeEachFixture);
    assertThat(kvs).isSameAs(fx.kvs());
    assertThat(sb).isSameAs(fx.southbound());
    assertThat(clock).isSameAs(fx.clock());
    assertThat(timers).isSameAs(fx.timers());
  }

  @Test
  @Order(2)
  @DisplayName("a value waits for its dependency; the record shows the order and the simulation")
  void pendingThenConfigured(SchedulerFixture fx) {
    fx.commit(ROUTE, "eth0");
    assertThat(fx.kvs())
        .value(ROUTE)
        .isPending()
        .waitingFor("interface-exists")
        .lastOperation(TxnOperation.CREATE)
        .hasNoError();

    long seq = fx.commit(ETH0, "up");

    assertThat(fx.kvs()).value(ROUTE).isConfigured().hasDetails().hasNoError();
    assertThat(fx.kvs())
        .txn(seq)
        .executed(
            op(TxnOperation.CREATE, ETH0),
            op(TxnOperation.CREATE, ROUTE).states(ValueState.PENDING, ValueState.CONFIGURED))
        .executedInOrder(op(TxnOperation.CREATE, ETH0), op(TxnOperation.CREATE, ROUTE))
        .executedInOrder(op(TxnOperation.CREATE, ROUTE));
    assertThat(fx.txn(seq).planned()).hasSize(2); // simulation = true
    assertThat(fx.southbound().callLog()).containsExactly("CREATE " + ETH0, "CREATE " + ROUTE);
  }

  @Test
  @Order(3)
  @DisplayName("statuses are delivered before commit returns; retries wait for the manual timers")
  void synchronousStatusesAndManualTime(SchedulerFixture fx) {
    List<ValueStatus> seen = new ArrayList<>();
    fx.kvs().watchValueStatus(key -> key.equals(ETH0), s -> seen.add(s.value()));
    fx.southbound().planError(ETH0, new IllegalStateException("southbound busy"));
    TxnOptions retry =
        TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build();

    assertThatCommitFails(() -> fx.commit(retry, ETH0, "up"))
        .hasFailedKeys(ETH0)
        .hasKeyError(ETH0, TxnOperation.CREATE, "southbound busy")
        .hasKeyErrorCausedBy(ETH0, IllegalStateException.class)
        .hasMessageContaining(ETH0);
    assertThat(seen).extracting(ValueStatus::state).containsExactly(ValueState.RETRYING);
    assertThat(fx.kvs()).value(ETH0).isRetrying().hasError("southbound busy");
    // a retry in a second (the manual clock ticks 1 ms per reading, so slightly less is left)
    assertThat(fx.timers().pending())
        .singleElement()
        .satisfies(d -> assertThat(d).isBetween(Duration.ofMillis(990), Duration.ofSeconds(1)));

    fx.timers().advance(Duration.ofSeconds(1));
    fx.kvs().transactionBarrier();

    assertThat(fx.kvs()).value(ETH0).isConfigured().hasNoError();
    assertThat(seen)
        .extracting(ValueStatus::state)
        .containsExactly(ValueState.RETRYING, ValueState.CONFIGURED);
  }

  @Test
  @Order(5)
  @DisplayName("the testing guide's example: a failed removal after its dependent's")
  void testingGuideExample(SchedulerFixture fx) {
    fx.commit(ROUTE, "eth0");
    assertThat(fx.kvs()).value(ROUTE).isPending().waitingFor("interface-exists");

    long seq = fx.commit(ETH0, "up");
    assertThat(fx.kvs())
        .txn(seq)
        .executedInOrder(op(TxnOperation.CREATE, ETH0), op(TxnOperation.CREATE, ROUTE));
    fx.southbound().planError(ETH0, new IOException("busy"));
    assertThatCommitFails(() -> fx.commit(ETH0, null))
        .hasFailedKeys(ETH0)
        .hasKeyError(ETH0, TxnOperation.DELETE, "busy");
    // the dependent goes first; the failed key is read back, and as the interface is still
    // there, the route that waits for it is created again
    assertThat(fx.southbound().callLog())
        .containsExactly(
            "CREATE " + ETH0,
            "CREATE " + ROUTE,
            "DELETE " + ROUTE,
            "DELETE " + ETH0 + " ✗",
            "RETRIEVE interface",
            "CREATE " + ROUTE);
  }

  @Test
  @Order(4)
  @DisplayName("a test method may take the fixture's parts alone")
  void partsAlone(KVScheduler kvs, MockSouthbound sb) {
    sb.setValue(ETH0, "down", null, ValueOrigin.FROM_NB, false);
    kvs.startNBTransaction()
        .setValue(ETH0, "up")
        .commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    assertThat(sb.callLog())
        .containsExactly("RETRIEVE interface", "RETRIEVE route", "UPDATE " + ETH0);
  }
}
