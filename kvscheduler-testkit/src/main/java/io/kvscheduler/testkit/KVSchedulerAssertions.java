package io.kvscheduler.testkit;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.ValueStatus;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;

/**
 * The entry points of the testkit's fluent assertions, for one static import beside AssertJ's
 * {@code Assertions.assertThat} (these overloads are the more specific ones):
 *
 * <pre>{@code
 * import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
 *
 * assertThat(kvs).value(K).isPending().waitingFor("interface-exists");
 * assertThat(kvs).txn(seq).executedInOrder(op(CREATE, A), op(CREATE, B));
 * assertThatCommitFails(() -> fx.commit(K, bad)).hasKeyError(K, CREATE, "busy");
 * }</pre>
 */
public final class KVSchedulerAssertions {
  private KVSchedulerAssertions() {}

  /** Assertions on the scheduler's value statuses and recorded transactions. */
  public static KVSchedulerAssert assertThat(KVScheduler kvs) {
    return new KVSchedulerAssert(kvs);
  }

  /** Assertions on one value status. */
  public static StatusAssert assertThat(ValueStatus status) {
    return new StatusAssert(status);
  }

  /** Assertions on a recorded transaction (same as {@link TxnAssert#assertThat}). */
  public static TxnAssert assertThat(RecordedTxn txn) {
    return TxnAssert.assertThat(txn);
  }

  /** Assertions on a transaction's error and its failed keys. */
  public static TransactionExceptionAssert assertThat(TransactionException error) {
    return new TransactionExceptionAssert(error);
  }

  /**
   * Runs {@code commit} and asserts that it throws a {@link TransactionException}; returns
   * assertions on it.
   *
   * @throws AssertionError if {@code commit} returns normally or throws something else
   */
  public static TransactionExceptionAssert assertThatCommitFails(ThrowingCallable commit) {
    Throwable thrown;
    try {
      commit.call();
      thrown = null;
    } catch (Throwable t) {
      thrown = t;
    }
    if (thrown == null) {
      throw new AssertionError(
          "expected the commit to fail with a TransactionException, but it" + " succeeded");
    }
    if (!(thrown instanceof TransactionException e)) {
      AssertionError error =
          new AssertionError(
              "expected the commit to fail with a TransactionException, but it threw " + thrown);
      error.initCause(thrown);
      throw error;
    }
    return new TransactionExceptionAssert(e);
  }
}
