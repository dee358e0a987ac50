package io.kvscheduler.api;

import java.util.List;
import java.util.Objects;

/**
 * What committing a transaction would do, worked out without doing it ({@link Txn#plan}): the
 * operations in the order the commit would execute them, each with the state it predicts. Nothing
 * was called in the southbound (but Retrieve, for a resync), nothing changed in the scheduler, no
 * transaction was recorded.
 *
 * <p>A plan assumes that every southbound call succeeds: a commit made right after it, with nothing
 * in between, executes the same operations unless a call fails. The plan of a downstream resync is
 * the <em>drift</em>: what the southbound holds that differs from the intent ({@link #hasChanges()}
 * is false when there is none; the plan may still list the values whose intent the resync would
 * apply again without a call, such as values that stay INVALID or PENDING).
 *
 * @param operations the operations, in execution order (an unmodifiable copy)
 */
public record Plan(List<PlannedOperation> operations) {
  private static final Plan EMPTY = new Plan(List.of());

  /**
   * Copies the operations.
   *
   * @throws NullPointerException if {@code operations} or one of them is null
   */
  public Plan {
    operations = List.copyOf(Objects.requireNonNull(operations, "operations"));
  }

  /** A plan without operations. */
  public static Plan empty() {
    return EMPTY;
  }

  /** True when the commit would change nothing: no operation. */
  public boolean isEmpty() {
    return operations.isEmpty();
  }

  /**
   * The operations that would change something ({@link PlannedOperation#isChange}), in order: of a
   * downstream resync's plan, the drift itself.
   */
  public List<PlannedOperation> changes() {
    return operations.stream().filter(PlannedOperation::isChange).toList();
  }

  /**
   * True when an operation would change something ({@link PlannedOperation#isChange}): of a
   * downstream resync's plan, true when the southbound has drifted from the intent.
   */
  public boolean hasChanges() {
    return operations.stream().anyMatch(PlannedOperation::isChange);
  }

  /** The number of operations. */
  public int size() {
    return operations.size();
  }

  /** How many of the operations would call the southbound (those that are not NOOP). */
  public long southboundCalls() {
    return operations.stream().filter(PlannedOperation::callsSouthbound).count();
  }

  @Override
  public String toString() {
    if (operations.isEmpty()) {
      return "Plan[nothing to do]";
    }
    StringBuilder b = new StringBuilder("Plan[");
    for (int i = 0; i < operations.size(); i++) {
      b.append(i == 0 ? "" : ", ").append(operations.get(i));
    }
    return b.append(']').toString();
  }
}
