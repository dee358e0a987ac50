package io.kvscheduler.testkit;

import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.assertj.core.api.AbstractThrowableAssert;

/**
 * Fluent assertions on the failed keys of a {@link TransactionException}, beside AssertJ's usual
 * ones on a throwable ({@code hasMessageContaining}, ...):
 *
 * <pre>{@code
 * assertThatCommitFails(() -> kvs.startNBTransaction().setValue(K, v).commit())
 *     .hasFailedKeys(K)
 *     .hasKeyError(K, CREATE, "southbound busy");
 * }</pre>
 *
 * Entry points: {@link KVSchedulerAssertions#assertThat(TransactionException)} and {@link
 * KVSchedulerAssertions#assertThatCommitFails}.
 */
public final class TransactionExceptionAssert
    extends AbstractThrowableAssert<TransactionExceptionAssert, TransactionException> {
  TransactionExceptionAssert(TransactionException actual) {
    super(actual, TransactionExceptionAssert.class);
  }

  /** The failed keys are exactly these, in execution order. */
  public TransactionExceptionAssert hasFailedKeys(String... keys) {
    isNotNull();
    List<String> failed = new ArrayList<>();
    for (KeyError e : actual.keyErrors()) {
      failed.add(e.key());
    }
    if (!failed.equals(Arrays.asList(keys))) {
      failWithMessage(
          "expected failed keys %s but they are %s (%s)",
          Arrays.asList(keys), failed, actual.keyErrors());
    }
    return this;
  }

  /** {@code key} failed in {@code operation}. */
  public TransactionExceptionAssert hasKeyError(String key, TxnOperation operation) {
    KeyError e = keyError(key);
    if (e.operation() != operation) {
      failWithMessage(
          "expected %s to fail in %s but it failed in %s: %s",
          key, operation, e.operation(), e.message());
    }
    return this;
  }

  /** {@code key} failed in {@code operation} with a message containing {@code messagePart}. */
  public TransactionExceptionAssert hasKeyError(
      String key, TxnOperation operation, String messagePart) {
    hasKeyError(key, operation);
    KeyError e = keyError(key);
    if (!e.message().contains(messagePart)) {
      failWithMessage(
          "expected the error of %s to contain '%s' but it is '%s'", key, messagePart, e.message());
    }
    return this;
  }

  /** {@code key} failed with exactly this message. */
  public TransactionExceptionAssert hasKeyErrorMessage(String key, String message) {
    KeyError e = keyError(key);
    if (!e.message().equals(message)) {
      failWithMessage(
          "expected the error of %s to be '%s' but it is '%s'", key, message, e.message());
    }
    return this;
  }

  /** {@code key} failed with a cause of class {@code type} (or a subclass). */
  public TransactionExceptionAssert hasKeyErrorCausedBy(
      String key, Class<? extends Throwable> type) {
    KeyError e = keyError(key);
    if (!type.isInstance(e.cause())) {
      failWithMessage(
          "expected the error of %s to be caused by a %s but the cause is %s",
          key, type.getName(), e.cause());
    }
    return this;
  }

  private KeyError keyError(String key) {
    isNotNull();
    for (KeyError e : actual.keyErrors()) {
      if (e.key().equals(key)) {
        return e;
      }
    }
    failWithMessage("expected %s among the failed keys but they are %s", key, actual.keyErrors());
    throw new AssertionError("unreachable");
  }
}
