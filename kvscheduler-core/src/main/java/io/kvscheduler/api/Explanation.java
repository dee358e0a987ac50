package io.kvscheduler.api;

import java.util.List;
import java.util.Objects;

/**
 * Why a value is in its state, as a tree: the value, the reason it is not applied, and below it the
 * causes of that reason down to the roots (see {@link KVScheduler#explanation}).
 *
 * <p>Reasons and what they fill in:
 *
 * <ul>
 *   <li>{@link Reason#APPLIED}: nothing to explain (CONFIGURED, OBTAINED, DISCOVERED, ...);
 *   <li>{@link Reason#UNKNOWN_KEY}: the scheduler holds no value under the key;
 *   <li>{@link Reason#WAITING}: PENDING; one cause per unsatisfied dependency;
 *   <li>{@link Reason#MISSING_DEPENDENCY}: a dependency on a key that holds no value ({@link #key}
 *       is that key, {@link #dependency} its label);
 *   <li>{@link Reason#NO_MATCHING_KEY}: an any-of dependency nothing matches ({@link #key} is
 *       empty, {@link #anyOfPrefixes} the prefixes, {@link #dependency} its label);
 *   <li>{@link Reason#INVALID}: rejected by validation ({@link #invalidFields}, {@link #error});
 *   <li>{@link Reason#FAILED}: FAILED or RETRYING ({@link #error}, {@link #failedOperation});
 *   <li>{@link Reason#UNIMPLEMENTED}: no descriptor selects the key;
 *   <li>{@link Reason#MISSING}: configured, but not found in the southbound by the last refresh;
 *   <li>{@link Reason#CYCLE}: the dependencies lead back to a value on the path ({@link #cycle}
 *       names the members, the first repeated at the end).
 * </ul>
 *
 * A cause reached through a dependency carries that dependency's label in {@link #dependency}.
 *
 * @param key the value's key ({@code ""} for an any-of dependency nothing matches)
 * @param state the value's state (NONEXISTENT for a key without value)
 * @param reason why it is in that state
 * @param dependency the label of the dependency through which the parent reached this value, {@code
 *     ""} for the root
 * @param anyOfPrefixes the prefixes of an any-of dependency nothing matches, else empty
 * @param invalidFields the fields validation rejected, else empty
 * @param error the error text of an INVALID, FAILED or RETRYING value, else {@code ""}
 * @param failedOperation the operation that failed, {@link TxnOperation#UNDEFINED} if none
 * @param cycle the members of a dependency cycle, else empty
 * @param causes the explanations of the causes, one level down
 */
public record Explanation(
    String key,
    ValueState state,
    Reason reason,
    String dependency,
    List<String> anyOfPrefixes,
    List<String> invalidFields,
    String error,
    TxnOperation failedOperation,
    List<String> cycle,
    List<Explanation> causes) {

  /** Why a value is in its state. */
  public enum Reason {
    APPLIED,
    UNKNOWN_KEY,
    WAITING,
    MISSING_DEPENDENCY,
    NO_MATCHING_KEY,
    INVALID,
    FAILED,
    UNIMPLEMENTED,
    MISSING,
    CYCLE
  }

  public Explanation {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(dependency, "dependency");
    anyOfPrefixes = List.copyOf(anyOfPrefixes);
    invalidFields = List.copyOf(invalidFields);
    Objects.requireNonNull(error, "error");
    Objects.requireNonNull(failedOperation, "failedOperation");
    cycle = List.copyOf(cycle);
    causes = List.copyOf(causes);
  }

  /** A value with the given reason and nothing else filled in. */
  public static Explanation of(String key, ValueState state, Reason reason) {
    return new Explanation(
        key,
        state,
        reason,
        "",
        List.of(),
        List.of(),
        "",
        TxnOperation.UNDEFINED,
        List.of(),
        List.of());
  }

  /** The same explanation reached through the dependency labelled {@code label}. */
  public Explanation via(String label) {
    return new Explanation(
        key,
        state,
        reason,
        label,
        anyOfPrefixes,
        invalidFields,
        error,
        failedOperation,
        cycle,
        causes);
  }
}
