package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What a failed commit tells its caller: where it was called from, a message of bounded size
 * whatever the number of failed keys, and a kind per failed key to branch on.
 */
class TransactionErrorTest {
  private final MockSouthbound sb = new MockSouthbound();
  private KVScheduler kvs;

  @BeforeEach
  void setUp() {
    ManualClock clock = new ManualClock();
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .build();
    kvs.registerDescriptors(
        sb.descriptor("item", String.class)
            .nbKeyPrefix("item/")
            .validate(
                (key, v) -> {
                  if (v.startsWith("bad")) {
                    throw new InvalidValueException("'" + v + "' is not an item", "name");
                  }
                })
            .build());
  }

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  private static TransactionException failureOf(Runnable r) {
    try {
      r.run();
    } catch (TransactionException e) {
      return e;
    }
    throw new AssertionError("the commit did not fail");
  }

  /** The frame of the commit call made by {@link #commitHere}. */
  private static long commitHere(Txn txn) {
    return txn.commit();
  }

  @Test
  @DisplayName("a failed commit's exception shows the caller's call site; the engine's is kept")
  void keepsCallSite() {
    TransactionException e =
        failureOf(() -> commitHere(kvs.startNBTransaction().setValue("item/a", "bad a")));

    assertThat(Arrays.stream(e.getStackTrace()).map(StackTraceElement::getMethodName))
        .contains("commitHere");
    assertThat(e.getSuppressed()).hasSize(1);
    assertThat(e.getSuppressed()[0]).isInstanceOf(TransactionException.class);
    assertThat(e.getSuppressed()[0].getMessage()).isEqualTo(e.getMessage());
    assertThat(e.keyErrors()).hasSize(1);
    assertThat(e.getCause()).isSameAs(e.keyErrors().get(0).cause());
  }

  @Test
  @DisplayName(
      "10,000 failed keys: the message names the first few and how many more; keyErrors()"
          + " lists them all")
  void messageBounded() {
    Txn txn = kvs.startNBTransaction();
    for (int i = 0; i < 10_000; i++) {
      txn.setValue(String.format("item/%05d", i), "bad value number " + i);
    }
    TransactionException e = failureOf(txn::commit);

    assertThat(e.keyErrors()).hasSize(10_000);
    assertThat(e.getMessage())
        .startsWith("transaction #0 failed: KeyErrors: [item/00000 (CREATE): ")
        .contains("item/00009 (CREATE)")
        .doesNotContain("item/00010")
        .endsWith(", and 9990 more]")
        .hasSizeLessThan(2_000);
  }

  @Test
  @DisplayName("each key error has a kind: INVALID for a rejected value, CALL_FAILED for a call")
  void typedKinds() {
    sb.planError("item/b", new IllegalStateException("device busy"));
    TransactionException e =
        failureOf(
            () ->
                kvs.startNBTransaction()
                    .setValue("item/a", "bad a")
                    .setValue("item/b", "b")
                    .commit());

    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::kind)
        .containsExactlyInAnyOrder(
            org.assertj.core.groups.Tuple.tuple(
                "item/a", TxnOperation.CREATE, KeyError.Kind.INVALID),
            org.assertj.core.groups.Tuple.tuple(
                "item/b", TxnOperation.CREATE, KeyError.Kind.CALL_FAILED));
  }
}
