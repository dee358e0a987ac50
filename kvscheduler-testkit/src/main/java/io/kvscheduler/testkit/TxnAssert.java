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
 * assertThat(txn).executedInOrder(op(CREATE, "a"), op(CREATE, "b")); // others may come between
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

  /**
   * These operations were executed in this order, possibly with others before, between and after
   * them (a partial order: e.g. that a dependency was created before its dependent, whatever else
   * the transaction did). Each expectation matches the first executed operation after the previous
   * match that it fits; see {@link #executed} for the exact list.
   */
  public TxnAssert executedInOrder(OpSpec... expected) {
    isNotNull();
    List<RecordedTxnOp> ops = actual.executed();
    int from = 0;
    for (int e = 0; e < expected.length; e++) {
      int found = -1;
      for (int i = from; i < ops.size(); i++) {
        if (expected[e].mismatches(ops.get(i)).isEmpty()) {
          found = i;
          break;
        }
      }
      if (found < 0) {
        String where = e == 0 ? "" : String.format(" after #%d (%s)", from, expected[e - 1]);
        failWithMessage(
            "executed operations of txn #%s: expected %s%s, not found%s%n" + "actual list:%n%s",
            actual.seqNum(),
            expected[e],
            where,
            e == 0 ? "" : "; expected before it, in order: " + List.of(expected).subList(0, e),
            list(ops));
      }
      from = found + 1;
    }
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
      failWithMessage(
          "expected no executed operation in txn #%s but got:%n%s",
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
          problems.append(
              String.format(
                  "  #%d expected %s%n      but was %s (%s)%n",
                  i + 1, expected[i], ops.get(i), String.join(", ", mm)));
        }
      }
    }
    if (problems.length() > 0) {
      failWithMessage(
          "%s operations of txn #%s differ:%n%sactual list:%n%s",
          what, actual.seqNum(), problems, list(ops));
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
