package io.kvscheduler.internal.engine.record;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.util.UserCode;
import java.time.Instant;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Mutable operation record used while a transaction executes. Once its transaction is recorded
 * ({@link TxnRecord}) it is never changed again: the history keeps it and readers on any thread
 * freeze it into a {@link RecordedTxnOp} when they read the transaction.
 */
public final class OpRecord {
  public TxnOperation op = TxnOperation.UNDEFINED;
  public String key;

  /** Base key of the value (the key itself for base values). */
  public String baseKey;

  public Object prevValue;
  public Object newValue;
  public ValueState prevState = ValueState.NONEXISTENT;
  public ValueState newState = ValueState.NONEXISTENT;
  public Throwable prevErr;
  public Throwable newErr;
  public boolean noop;
  public boolean derived;
  public boolean property;
  public boolean revert;
  public boolean retry;
  public boolean recreate;

  /** A call that ran ahead beyond the failure of a reverted transaction, or its undo. */
  public boolean ranAhead;

  /** The user said the southbound holds nothing for the key (Txn.assumeAbsent): no call. */
  public boolean assumedAbsent;

  /** When the descriptor's call started and returned; null for an operation without a call. */
  public Instant callStarted;

  public Instant callEnded;

  /**
   * The text of {@code t} as statuses, key errors and the log show it ("" for null). The message
   * alone when the exception's type says nothing more (the generic ones a descriptor throws with a
   * message written for the reader, and those of the scheduler and its plugins); otherwise the
   * simple name of its type before the message, since a southbound's message is often just a path
   * or an address ({@code DirectoryNotEmptyException: /srv/a}); the type's full name when there is
   * no message. The message is kept to {@link Excerpt#MAX_MESSAGE_CHARS} characters. Throwables
   * from user code reach the engine through {@link UserCode#contained}, so reading them cannot
   * throw.
   */
  public static String msg(Throwable t) {
    if (t == null) {
      return "";
    }
    String m = t.getMessage();
    if (m != null) {
      m = Excerpt.message(m); // the same string when short enough
    }
    Class<?> type = t.getClass();
    if (m == null || m.isEmpty()) {
      return type.getName();
    }
    String name = type.getSimpleName(); // empty for an anonymous class
    return name.isEmpty()
            || MESSAGE_ONLY.contains(type)
            || type.getName().startsWith("io.kvscheduler.")
        ? m
        : name + ": " + m;
  }

  /** Exception types whose name adds nothing to their message. */
  private static final Set<Class<?>> MESSAGE_ONLY =
      Set.of(
          Exception.class,
          RuntimeException.class,
          IllegalStateException.class,
          IllegalArgumentException.class,
          UnsupportedOperationException.class);

  /**
   * {@code text.apply(v)}, guarded: a value's {@code toString} (or a configured value formatter) is
   * user code; when it throws, the value is shown by its class.
   */
  public static String text(Function<Object, String> text, Object v) {
    try {
      return text.apply(v);
    } catch (Throwable t) {
      UserCode.rethrowFatal(t);
      return "<"
          + (v == null ? "null" : v.getClass().getName())
          + ": text failed with "
          + t.getClass().getName()
          + ">";
    }
  }

  /** {@code String.valueOf(v)}, guarded as {@link #text(java.util.function.Function, Object)}. */
  public static String text(Object v) {
    return text(String::valueOf, v);
  }

  public RecordedTxnOp freeze() {
    return new RecordedTxnOp(
        op,
        key,
        Optional.ofNullable(prevValue),
        Optional.ofNullable(newValue),
        prevState,
        newState,
        msg(prevErr),
        msg(newErr),
        flags(),
        Optional.ofNullable(callStarted),
        Optional.ofNullable(callEnded));
  }

  private Set<RecordedTxnOp.Flag> flags() {
    EnumSet<RecordedTxnOp.Flag> f = EnumSet.noneOf(RecordedTxnOp.Flag.class);
    if (noop) f.add(RecordedTxnOp.Flag.NOOP);
    if (derived) f.add(RecordedTxnOp.Flag.DERIVED);
    if (property) f.add(RecordedTxnOp.Flag.PROPERTY);
    if (revert) f.add(RecordedTxnOp.Flag.REVERT);
    if (retry) f.add(RecordedTxnOp.Flag.RETRY);
    if (recreate) f.add(RecordedTxnOp.Flag.RECREATE);
    if (ranAhead) f.add(RecordedTxnOp.Flag.RAN_AHEAD);
    if (assumedAbsent) f.add(RecordedTxnOp.Flag.ASSUMED_ABSENT);
    return f;
  }

  @Override
  public String toString() {
    return freeze().toString();
  }
}
