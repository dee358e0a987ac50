package io.kvscheduler.testkit;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import java.util.List;
import org.assertj.core.api.AbstractAssert;

/**
 * Fluent assertions on a recorded transaction:
 *
 * <pre>{@code
 * assertThat(txn).executed(
 *     op(CREATE, "a").states(NONEXISTENT, CONFIGURED),
 *     op(CREATE, "a/x").states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
 * }</pre>
 */
public final class TxnAssert extends AbstractAssert<TxnAssert, RecordedTxn> {
  TxnAssert(RecordedTxn actual) {
    super(actual, TxnAssert.class);
  }

  /** Entry point. */
  public static TxnAssert assertThat(RecordedTxn txn) {
    return new TxnAssert(txn);
  }

  /** The executed operations are exactly these, in this order. */
  public TxnAssert executed(OpSpec... expected) {
    isNotNull();
    matchOps("executed", actual.executed(), expected);
    return this;
  }

  /** The planned (simulated) operations are exactly these, in this order. */
  public TxnAssert planned(OpSpec... expected) {
    isNotNull();
    matchOps("planned", actual.planned(), expected);
    return this;
  }

  /** Nothing was executed. */
  public TxnAssert executedNothing() {
    isNotNull();
    if (!actual.executed().isEmpty()) {
      failWithMessage("expected no executed operation in txn #%s but got:%n%s",
          actual.seqNum(), list(actual.executed()));
    }
    return this;
  }

  private void matchOps(String what, List<RecordedTxnOp> ops, OpSpec[] expected) {
    StringBuilder problems = new StringBuilder();
    int n = Math.max(ops.size(), expected.length);
    for (int i = 0; i < n; i++) {
      if (i >= ops.size()) {
        problems.append(String.format("  #%d missing: %s%n", i + 1, expected[i]));
      } else if (i >= expected.length) {
        problems.append(String.format("  #%d unexpected: %s%n", i + 1, ops.get(i)));
      } else {
        List<String> mm = expected[i].mismatches(ops.get(i));
        if (!mm.isEmpty()) {
          problems.append(String.format("  #%d expected %s%n      but was %s (%s)%n", i + 1,
              expected[i], ops.get(i), String.join(", ", mm)));
        }
      }
    }
    if (problems.length() > 0) {
      failWithMessage("%s operations of txn #%s differ:%n%sactual list:%n%s", what,
          actual.seqNum(), problems, list(ops));
    }
  }

  private static String list(List<RecordedTxnOp> ops) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < ops.size(); i++) {
      sb.append(String.format("  %d. %s%n", i + 1, ops.get(i)));
    }
    return sb.toString();
  }
}
