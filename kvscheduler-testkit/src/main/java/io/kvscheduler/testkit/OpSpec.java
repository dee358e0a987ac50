package io.kvscheduler.testkit;

import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Expected recorded operation: operation and key always; states, flags, values and errors when
 * given. Flags are matched exactly: a flag not listed must be false. Build with {@link
 * #op(TxnOperation, String)}.
 */
public final class OpSpec {
  private final TxnOperation operation;
  private final String key;
  private ValueState prevState;
  private ValueState newState;
  private final Set<String> flags = new TreeSet<>();
  private Optional<Object> prevValue;
  private Optional<Object> newValue;
  private String prevError;
  private String newError;

  private OpSpec(TxnOperation operation, String key) {
    this.operation = operation;
    this.key = key;
  }

  /** An expected operation on {@code key}. */
  public static OpSpec op(TxnOperation operation, String key) {
    return new OpSpec(operation, key);
  }

  /** Expected states before and after. */
  public OpSpec states(ValueState prev, ValueState next) {
    this.prevState = prev;
    this.newState = next;
    return this;
  }

  /** Expected flags (NOOP, DERIVED, PROPERTY, REVERT, RETRY, RECREATE); all others false. */
  public OpSpec flags(String... f) {
    flags.addAll(List.of(f));
    return this;
  }

  /** Expected previous value ({@code null} = none). */
  public OpSpec prevValue(Object v) {
    this.prevValue = Optional.ofNullable(v);
    return this;
  }

  /** Expected new value ({@code null} = none). */
  public OpSpec newValue(Object v) {
    this.newValue = Optional.ofNullable(v);
    return this;
  }

  /** Expected previous error message ({@code ""} = none). */
  public OpSpec prevError(String e) {
    this.prevError = e;
    return this;
  }

  /** Expected error message ({@code ""} = none). */
  public OpSpec error(String e) {
    this.newError = e;
    return this;
  }

  /** Differences between this expectation and {@code actual} (empty when it matches). */
  public List<String> mismatches(RecordedTxnOp actual) {
    List<String> out = new ArrayList<>();
    if (actual.operation() != operation) out.add("operation " + actual.operation());
    if (!actual.key().equals(key)) out.add("key " + actual.key());
    if (prevState != null && actual.prevState() != prevState) {
      out.add("prevState " + actual.prevState());
    }
    if (newState != null && actual.newState() != newState) {
      out.add("newState " + actual.newState());
    }
    if (!new TreeSet<>(actual.flags()).equals(flags)) out.add("flags " + actual.flags());
    if (prevValue != null && !Objects.equals(actual.prevValue(), prevValue)) {
      out.add("prevValue " + actual.prevValue().orElse(null));
    }
    if (newValue != null && !Objects.equals(actual.newValue(), newValue)) {
      out.add("newValue " + actual.newValue().orElse(null));
    }
    if (prevError != null && !actual.prevError().equals(prevError)) {
      out.add("prevError '" + actual.prevError() + "'");
    }
    if (newError != null && !actual.newError().equals(newError)) {
      out.add("error '" + actual.newError() + "'");
    }
    return out;
  }

  @Override
  public String toString() {
    return operation + " " + key
        + (prevState != null ? " (" + prevState + "->" + newState + ")" : "") + " " + flags
        + (newError != null && !newError.isEmpty() ? " error: " + newError : "");
  }
}
