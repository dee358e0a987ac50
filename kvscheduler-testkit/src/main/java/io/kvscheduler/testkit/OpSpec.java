package io.kvscheduler.testkit;

import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Expected recorded operation: operation and key always; states, flags, values and errors when
 * given. Build with {@link #op(TxnOperation, String)}.
 *
 * <p>Flags are those of {@link RecordedTxnOp.Flag}, given as flags or as the labels the transaction
 * log prints ({@code "IS-PENDING"}). The recorded ones (NOOP, DERIVED, PROPERTY, REVERT, RETRY,
 * RECREATE) are matched exactly: one not listed must not be set. The others (IS-PENDING,
 * WAS-MISSING, FIXED, ...) must each be among the operation's {@link RecordedTxnOp#displayFlags()}.
 */
public final class OpSpec {
  private final TxnOperation operation;
  private final String key;
  private ValueState prevState;
  private ValueState newState;
  private final Set<RecordedTxnOp.Flag> recorded = EnumSet.noneOf(RecordedTxnOp.Flag.class);
  private final Set<RecordedTxnOp.Flag> shown = EnumSet.noneOf(RecordedTxnOp.Flag.class);
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

  /**
   * Expected flags, by the labels the transaction log prints (see the class comment).
   *
   * @throws IllegalArgumentException for a label that is no flag
   */
  public OpSpec flags(String... labels) {
    for (String label : labels) {
      flag(RecordedTxnOp.Flag.fromLabel(label));
    }
    return this;
  }

  /** Expected flags (see the class comment). */
  public OpSpec flags(RecordedTxnOp.Flag... flags) {
    for (RecordedTxnOp.Flag f : flags) {
      flag(f);
    }
    return this;
  }

  private void flag(RecordedTxnOp.Flag f) {
    (f.isRecorded() ? recorded : shown).add(f);
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
    if (!actual.flags().equals(recorded)) {
      out.add("flags " + new TreeSet<>(RecordedTxnOp.labels(actual.flags())));
    }
    if (!actual.displayFlags().containsAll(shown)) {
      out.add("logged flags " + RecordedTxnOp.labels(actual.displayFlags()));
    }
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
    return operation
        + " "
        + key
        + (prevState != null ? " (" + prevState + "->" + newState + ")" : "")
        + " "
        + new TreeSet<>(RecordedTxnOp.labels(recorded))
        + (shown.isEmpty() ? "" : " logged " + RecordedTxnOp.labels(shown))
        + (newError != null && !newError.isEmpty() ? " error: " + newError : "");
  }
}
