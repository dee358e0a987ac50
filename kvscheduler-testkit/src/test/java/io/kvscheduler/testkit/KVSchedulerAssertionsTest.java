package io.kvscheduler.testkit;

import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThatCommitFails;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.RecordedTxnOp.Flag;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The testkit's assertions fail when they should, with messages that say what differs; and the
 * fixture's own checks (argument pairs, the mock southbound's consistency).
 */
class KVSchedulerAssertionsTest {
  static final String ETH0 = "config/interfaces/eth0";
  static final String ETH1 = "config/interfaces/eth1";
  static final String ROUTE = "config/routes/r1";

  private SchedulerFixture fx;

  @BeforeEach
  void setUp() {
    fx = SchedulerFixture.create();
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
                    (key, out) ->
                        List.of(
                            Dependency.onKey("interface-exists", "config/interfaces/" + out),
                            Dependency.onKey("table-exists", "config/tables/main")))
                .build());
  }

  @AfterEach
  void tearDown() {
    fx.close();
  }

  @Test
  @DisplayName("status assertions fail on another state, other dependencies, another error")
  void statusAssertionsFail() {
    fx.commit(ROUTE, "eth0");

    assertThat(fx.kvs()).value(ROUTE).isPending().waitingFor("table-exists", "interface-exists");
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ROUTE).isConfigured())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected " + ROUTE + " to be CONFIGURED but it is PENDING")
        .hasMessageContaining("interface-exists");
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ROUTE).waitingFor("interface-exists"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to wait for [interface-exists] but it waits for");
    assertThatThrownBy(
            () ->
                assertThat(fx.kvs())
                    .value(ROUTE)
                    .waitingFor("interface-exists", "interface-exists"))
        .isInstanceOf(AssertionError.class);
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ROUTE).hasError("boom"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected error of " + ROUTE + " to be 'boom' but it is ''");
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ROUTE).lastOperation(TxnOperation.DELETE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to be DELETE but it is CREATE");
    assertThat(fx.kvs()).value(ETH1).doesNotExist();
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ETH1).isPending())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("it is NONEXISTENT");
  }

  @Test
  @DisplayName("executedInOrder: a partial order, other operations may come between")
  void executedInOrder() {
    long seq = fx.commit(ETH0, "a", ETH1, "b", "config/interfaces/eth2", "c");

    assertThat(fx.kvs())
        .txn(seq)
        .executedInOrder(
            op(TxnOperation.CREATE, ETH0), op(TxnOperation.CREATE, "config/interfaces/eth2"))
        .executedInOrder();
    assertThatThrownBy(
            () ->
                assertThat(fx.kvs())
                    .txn(seq)
                    .executedInOrder(op(TxnOperation.CREATE, ETH1), op(TxnOperation.CREATE, ETH0)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected CREATE " + ETH0)
        .hasMessageContaining("after #2 (CREATE " + ETH1)
        .hasMessageContaining("1. ");
    assertThatThrownBy(
            () -> assertThat(fx.kvs()).txn(seq).executedInOrder(op(TxnOperation.DELETE, ETH0)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected DELETE " + ETH0);
    assertThatThrownBy(
            () ->
                assertThat(fx.kvs())
                    .txn(seq)
                    .executedInOrder(op(TxnOperation.CREATE, ETH0), op(TxnOperation.CREATE, ETH0)))
        .as("one executed operation matches one expectation only")
        .isInstanceOf(AssertionError.class);
    assertThatThrownBy(() -> assertThat(fx.kvs()).txn(seq + 1))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected a record of txn #" + (seq + 1));
  }

  @Test
  @DisplayName(
      "an expected operation lists the flags the log prints (IS-PENDING, WAS-PENDING),"
          + " by label or as RecordedTxnOp.Flag; the recorded ones are matched exactly")
  void logFlagsInExpectedOperations() {
    long pending = fx.commit(ROUTE, "eth0");
    assertThat(fx.kvs())
        .txn(pending)
        .executed(op(TxnOperation.CREATE, ROUTE).flags("NOOP", "IS-PENDING"))
        .executed(op(TxnOperation.CREATE, ROUTE).flags(Flag.NOOP, Flag.IS_PENDING));
    assertThatThrownBy(
            () ->
                assertThat(fx.kvs())
                    .txn(pending)
                    .executed(op(TxnOperation.CREATE, ROUTE).flags("IS-PENDING")))
        .as("NOOP is recorded: leaving it out is a mismatch")
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("flags [NOOP]");
    assertThatThrownBy(
            () ->
                assertThat(fx.kvs())
                    .txn(pending)
                    .executed(op(TxnOperation.CREATE, ROUTE).flags("NOOP", "WAS-PENDING")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("logged flags [NOOP, IS-PENDING]");
    assertThatThrownBy(() -> op(TxnOperation.CREATE, ROUTE).flags("IS_PENDING"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("unknown operation flag 'IS_PENDING'");

    long removed = fx.commit(ROUTE, null);
    RecordedTxnOp delete = fx.txn(removed).executed().get(0);
    assertThat(delete.flags()).containsExactly(Flag.NOOP);
    assertThat(delete.displayFlags()).containsExactly(Flag.NOOP, Flag.WAS_PENDING);
    assertThat(RecordedTxnOp.labels(delete.displayFlags())).containsExactly("NOOP", "WAS-PENDING");
    assertThat(fx.kvs())
        .txn(removed)
        .executed(op(TxnOperation.DELETE, ROUTE).flags(Flag.NOOP, Flag.WAS_PENDING));
  }

  @Test
  @DisplayName(
      "awaitState returns at once for a value already in the state, waits for one that"
          + " gets there, times out otherwise; Txn.delete removes; KVWithMetadata.fromNb")
  void awaitStateDeleteAndFromNb() throws Exception {
    fx.commit(ROUTE, "eth0");
    assertThat(fx.kvs().awaitState(ROUTE, ValueState.PENDING, Duration.ZERO)).isTrue();
    assertThat(fx.kvs().awaitState(ETH0, ValueState.CONFIGURED, Duration.ofMillis(20))).isFalse();

    Thread committer = new Thread(() -> fx.commit(ETH0, "a"));
    committer.start();
    assertThat(fx.kvs().awaitState(ETH0, ValueState.CONFIGURED, Duration.ofSeconds(10))).isTrue();
    committer.join();

    long seq = fx.kvs().startNBTransaction().delete(ETH0).commit();
    assertThat(fx.kvs()).txn(seq).executed(op(TxnOperation.DELETE, ETH0));
    assertThat(fx.kvs().awaitState(ETH0, ValueState.NONEXISTENT, Duration.ZERO)).isTrue();
    assertThatThrownBy(
            () -> fx.kvs().awaitState(ETH0, ValueState.CONFIGURED, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);

    assertThat(KVWithMetadata.fromNb(ETH0, "a"))
        .isEqualTo(new KVWithMetadata<>(ETH0, "a", null, ValueOrigin.FROM_NB));
  }

  @Test
  @DisplayName(
      "a key no descriptor selects waits as UNIMPLEMENTED; with rejectUnselectedKeys the"
          + " commit fails naming the keys and nothing is queued")
  void unselectedKeys() {
    fx.commit("config/unknown/a", "x");
    assertThat(fx.kvs()).value("config/unknown/a").isUnimplemented();
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ETH0).isUnimplemented())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to be UNIMPLEMENTED but it is NONEXISTENT");

    try (SchedulerFixture strict = SchedulerFixture.create(b -> b.rejectUnselectedKeys(true))) {
      strict
          .kvs()
          .registerDescriptors(
              strict
                  .southbound()
                  .descriptor("interface", String.class)
                  .nbKeyPrefix("config/interfaces/")
                  .build());
      var txn =
          strict
              .kvs()
              .startNBTransaction()
              .setValue(ETH0, "a")
              .setValue("config/unknown/a", "x")
              .setValue("config/unknown/b", "y");
      assertThatThrownBy(txn::commit)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("no registered descriptor selects keys config/unknown/a, config/unknown/b");
      strict.kvs().transactionBarrier();
      assertThat(strict.kvs().transactionHistory()).isEmpty();
      assertThat(
              strict
                  .kvs()
                  .startNBTransaction()
                  .setValue(ETH0, "a")
                  .delete("config/unknown/a")
                  .commit())
          .as("a removal is accepted")
          .isZero();
    }
  }

  @Test
  @DisplayName(
      "exact status assertions compare state, last operation, error and details, of base and"
          + " derived values")
  void exactStatusAssertionsFail() {
    String via = "config/routes/via-eth0";
    try (SchedulerFixture d = SchedulerFixture.create()) {
      d.kvs()
          .registerDescriptors(
              d.southbound()
                  .descriptor("interface", String.class)
                  .nbKeyPrefix("config/interfaces/")
                  .validate(
                      (key, name) -> {
                        if (name.isEmpty()) {
                          throw new InvalidValueException("no name", "name");
                        }
                      })
                  .derivedValues((key, name) -> List.of(KeyValuePair.of(via, name)))
                  .build(),
              d.southbound()
                  .descriptor("route", String.class)
                  .nbKeyPrefix("config/routes/")
                  .dependencies(
                      (key, out) -> List.of(Dependency.onKey("table-exists", "config/tables/main")))
                  .build());
      d.commit(ETH0, "eth0");
      assertThatCommitFails(() -> d.commit(ETH1, ""))
          .hasFailedKeys(ETH1)
          .hasKeyError(ETH1, TxnOperation.CREATE, "no name");

      assertThat(d.kvs()).value(ETH0).isExactly(ValueState.CONFIGURED, TxnOperation.CREATE, "");
      assertThat(d.kvs())
          .derivedValue(ETH0, via)
          .isExactly(ValueState.PENDING, TxnOperation.CREATE, "", "table-exists");
      assertThat(d.kvs())
          .hasStatus(
              new ValueStatus(ETH0, ValueState.CONFIGURED, "", TxnOperation.CREATE, List.of()),
              new ValueStatus(
                  via, ValueState.PENDING, "", TxnOperation.CREATE, List.of("table-exists")));
      assertThat(d.kvs()).value(ETH1).isInvalid().hasDetails("name");
      assertThatThrownBy(() -> assertThat(d.kvs()).value(ETH0).isInvalid())
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("to be INVALID but it is CONFIGURED");

      assertThatThrownBy(
              () ->
                  assertThat(d.kvs())
                      .value(ETH0)
                      .isExactly(ValueState.CONFIGURED, TxnOperation.UPDATE, ""))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("expected status ValueStatus[key=" + ETH0)
          .hasMessageContaining("lastOperation=UPDATE");
      assertThatThrownBy(
              () ->
                  assertThat(d.kvs())
                      .derivedValue(ETH0, via)
                      .isExactly(ValueState.PENDING, TxnOperation.CREATE, "", "other"))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("details=[other]");
      assertThatThrownBy(
              () ->
                  assertThat(d.kvs())
                      .value(ETH0)
                      .isExactly(ValueState.CONFIGURED, TxnOperation.CREATE, "boom"))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("error=boom");
      assertThatThrownBy(() -> assertThat(d.kvs()).derivedValue(ETH1, via))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("expected " + via + " among the derived values of " + ETH1);
      assertThatThrownBy(
              () ->
                  assertThat(d.kvs())
                      .hasStatus(
                          new ValueStatus(
                              ETH0, ValueState.CONFIGURED, "", TxnOperation.CREATE, List.of())))
          .isInstanceOf(AssertionError.class)
          .hasMessageContaining("expected the derived values of " + ETH0 + " to be []");
    }
  }

  @Test
  @DisplayName("a value the southbound created is OBTAINED")
  void obtainedValues() {
    fx.southbound().setValue(ETH1, "from-sb", null, ValueOrigin.FROM_SB, false);
    fx.commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    assertThat(fx.kvs()).value(ETH1).isObtained().hasNoError();
    assertThatThrownBy(() -> assertThat(fx.kvs()).value(ETH1).isConfigured())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to be CONFIGURED but it is OBTAINED");
  }

  @Test
  @DisplayName("key-error assertions fail on another key, operation, message or cause")
  void keyErrorAssertionsFail() {
    fx.southbound().planError(ETH0, new IllegalStateException("southbound busy"));
    TransactionException e =
        Assertions.assertThrows(TransactionException.class, () -> fx.commit(ETH0, "a", ETH1, "b"));

    assertThat(e)
        .hasFailedKeys(ETH0)
        .hasKeyError(ETH0, TxnOperation.CREATE, "busy")
        .hasKeyErrorCausedBy(ETH0, IllegalStateException.class)
        .hasMessageContaining("southbound busy");
    assertThatThrownBy(() -> assertThat(e).hasFailedKeys(ETH0, ETH1))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected failed keys [" + ETH0 + ", " + ETH1 + "]");
    assertThatThrownBy(() -> assertThat(e).hasKeyError(ETH1, TxnOperation.CREATE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected " + ETH1 + " among the failed keys");
    assertThatThrownBy(() -> assertThat(e).hasKeyError(ETH0, TxnOperation.UPDATE))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to fail in UPDATE but it failed in CREATE");
    assertThatThrownBy(() -> assertThat(e).hasKeyError(ETH0, TxnOperation.CREATE, "timeout"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to contain 'timeout'");
    assertThat(e).hasKeyErrorMessage(ETH0, "southbound busy");
    assertThatThrownBy(() -> assertThat(e).hasKeyErrorMessage(ETH0, "southbound"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("to be 'southbound' but it is 'southbound busy'");
    assertThatThrownBy(() -> assertThat(e).hasKeyErrorCausedBy(ETH0, ArithmeticException.class))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("caused by a java.lang.ArithmeticException");

    assertThatThrownBy(() -> assertThatCommitFails(() -> fx.commit(ETH1, "c")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("but it succeeded");
    assertThatThrownBy(() -> assertThatCommitFails(() -> fx.commit(ETH1)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("but it threw java.lang.IllegalArgumentException")
        .hasRootCauseMessage("key/value pairs expected, got 1 arguments");
  }

  @Test
  @DisplayName("the fixture rejects arguments that are not key/value pairs")
  void commitArguments() {
    assertThatThrownBy(() -> fx.commit(ETH0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("key/value pairs expected, got 1 arguments");
    assertThatThrownBy(() -> fx.commit(ETH0, "a", 7, "b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("argument 2 is a key and must be a String, got 7");
    assertThat(fx.southbound().calls()).isEmpty();
  }

  @Test
  @DisplayName("the southbound check names every inconsistent call")
  void southboundCheck() {
    fx.assertSouthboundConsistent();
    fx.southbound().setValue(ETH0, "already there", null, ValueOrigin.FROM_NB, false);
    fx.commit(ETH0, "a"); // the scheduler does not know: it creates the key again

    assertThatThrownBy(fx::assertSouthboundConsistent)
        .isInstanceOf(AssertionError.class)
        .hasMessage("inconsistent calls on the mock southbound:\n  CREATE of existing key " + ETH0);
  }
}
