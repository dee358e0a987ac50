package io.kvscheduler.testkit;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.assertj.core.api.AbstractAssert;

/**
 * Fluent assertions on the status of one value, usually reached from the scheduler:
 *
 * <pre>{@code
 * assertThat(kvs).value("config/routes/r1").isPending().waitingFor("interface-exists");
 * assertThat(kvs).value("config/interfaces/eth0").isConfigured().hasNoError();
 * assertThat(kvs).value("config/interfaces/eth1").isFailed().hasErrorContaining("busy");
 * }</pre>
 *
 * Entry points: {@link KVSchedulerAssertions#assertThat(io.kvscheduler.api.KVScheduler)} and {@link
 * KVSchedulerAssertions#assertThat(ValueStatus)}.
 */
public final class StatusAssert extends AbstractAssert<StatusAssert, ValueStatus> {
  StatusAssert(ValueStatus actual) {
    super(actual, StatusAssert.class);
  }

  /** The value is in {@code state}. */
  public StatusAssert hasState(ValueState state) {
    isNotNull();
    if (actual.state() != state) {
      failWithMessage(
          "expected %s to be %s but it is %s%s",
          actual.key(), state, actual.state(), describe(actual));
    }
    return this;
  }

  /** The value is CONFIGURED: the southbound holds it as desired. */
  public StatusAssert isConfigured() {
    return hasState(ValueState.CONFIGURED);
  }

  /** The value is PENDING: some of its dependencies are missing. */
  public StatusAssert isPending() {
    return hasState(ValueState.PENDING);
  }

  /** The value is FAILED: its last operation failed and will not be retried. */
  public StatusAssert isFailed() {
    return hasState(ValueState.FAILED);
  }

  /** The value is RETRYING: its last operation failed and a retry is scheduled. */
  public StatusAssert isRetrying() {
    return hasState(ValueState.RETRYING);
  }

  /** The value is INVALID: Validate rejected it. */
  public StatusAssert isInvalid() {
    return hasState(ValueState.INVALID);
  }

  /** The value is OBTAINED: the southbound created it and the scheduler leaves it alone. */
  public StatusAssert isObtained() {
    return hasState(ValueState.OBTAINED);
  }

  /** The value is UNIMPLEMENTED: no descriptor selects its key. */
  public StatusAssert isUnimplemented() {
    return hasState(ValueState.UNIMPLEMENTED);
  }

  /** The scheduler has no such value (NONEXISTENT). */
  public StatusAssert doesNotExist() {
    return hasState(ValueState.NONEXISTENT);
  }

  /** The value is PENDING and waits for exactly these dependencies (their labels, in any order). */
  public StatusAssert waitingFor(String... dependencyLabels) {
    isPending();
    List<String> expected = new ArrayList<>(Arrays.asList(dependencyLabels));
    List<String> waiting = new ArrayList<>(actual.details());
    Collections.sort(expected);
    Collections.sort(waiting);
    if (!waiting.equals(expected)) {
      failWithMessage(
          "expected %s to wait for %s but it waits for %s",
          actual.key(), Arrays.asList(dependencyLabels), actual.details());
    }
    return this;
  }

  /**
   * The status details are exactly these, in this order (for PENDING the missing dependency labels,
   * for INVALID the invalid fields).
   */
  public StatusAssert hasDetails(String... details) {
    isNotNull();
    if (!actual.details().equals(List.of(details))) {
      failWithMessage(
          "expected details of %s to be %s but they are %s",
          actual.key(), Arrays.asList(details), actual.details());
    }
    return this;
  }

  /**
   * The status is exactly this: its state, last operation, error message ({@code ""} for none) and
   * details (in this order) all equal the given ones.
   *
   * @throws AssertionError naming every field that differs
   */
  public StatusAssert isExactly(
      ValueState state, TxnOperation lastOperation, String error, String... details) {
    isNotNull();
    ValueStatus expected =
        new ValueStatus(actual.key(), state, error, lastOperation, List.of(details));
    if (!actual.equals(expected)) {
      failWithMessage("expected status %s but it is %s", expected, actual);
    }
    return this;
  }

  /** The last failure's message is exactly {@code message}. */
  public StatusAssert hasError(String message) {
    isNotNull();
    if (!actual.error().equals(message)) {
      failWithMessage(
          "expected error of %s to be '%s' but it is '%s'", actual.key(), message, actual.error());
    }
    return this;
  }

  /** The last failure's message contains {@code part}. */
  public StatusAssert hasErrorContaining(String part) {
    isNotNull();
    if (!actual.error().contains(part)) {
      failWithMessage(
          "expected error of %s to contain '%s' but it is '%s'",
          actual.key(), part, actual.error());
    }
    return this;
  }

  /** The value carries no error. */
  public StatusAssert hasNoError() {
    return hasError("");
  }

  /** The last operation the scheduler decided for the value is {@code operation}. */
  public StatusAssert lastOperation(TxnOperation operation) {
    isNotNull();
    if (actual.lastOperation() != operation) {
      failWithMessage(
          "expected last operation of %s to be %s but it is %s",
          actual.key(), operation, actual.lastOperation());
    }
    return this;
  }

  private static String describe(ValueStatus s) {
    StringBuilder sb = new StringBuilder();
    if (!s.details().isEmpty()) {
      sb.append(", details ").append(s.details());
    }
    if (!s.error().isEmpty()) {
      sb.append(", error '").append(s.error()).append('\'');
    }
    return sb.toString();
  }
}
