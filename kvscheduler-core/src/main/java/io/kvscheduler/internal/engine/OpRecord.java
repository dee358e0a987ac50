package io.kvscheduler.internal.engine;

import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.graph.Node;
import io.kvscheduler.internal.util.UserCode;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Mutable operation record used while a transaction executes. Once its transaction is recorded
 * ({@link TxnRecord}) it is never changed again: the history keeps it and readers on any thread
 * freeze it into a {@link RecordedTxnOp} when they read the transaction.
 */
final class OpRecord {
  TxnOperation op = TxnOperation.UNDEFINED;
  String key;

  /** Base key of the value (the key itself for base values). */
  String baseKey;

  Object prevValue;
  Object newValue;
  ValueState prevState = ValueState.NONEXISTENT;
  ValueState newState = ValueState.NONEXISTENT;
  Throwable prevErr;
  Throwable newErr;
  boolean noop;
  boolean derived;
  boolean property;
  boolean revert;
  boolean retry;
  boolean recreate;

  /** The node the operation was decided on (stands for the key while no node left the graph). */
  Node node;

  /** Added to the transaction's operations (a record that was not may be reused). */
  boolean recorded;

  /** Back to the state of a new record (for reuse by the walk). */
  void clear() {
    op = TxnOperation.UNDEFINED;
    key = null;
    baseKey = null;
    prevValue = null;
    newValue = null;
    prevState = ValueState.NONEXISTENT;
    newState = ValueState.NONEXISTENT;
    prevErr = null;
    newErr = null;
    noop = false;
    derived = false;
    property = false;
    revert = false;
    retry = false;
    recreate = false;
    node = null;
    recorded = false;
  }

  /**
   * The message of {@code t} ("" for null; its class name when it has none). Throwables from user
   * code reach the engine through {@link UserCode#contained}, so reading them cannot throw.
   */
  static String msg(Throwable t) {
    if (t == null) {
      return "";
    }
    String m = t.getMessage();
    return m == null || m.isEmpty() ? t.getClass().getName() : m;
  }

  /**
   * {@code text.apply(v)}, guarded: a value's {@code toString} (or a configured value formatter) is
   * user code; when it throws, the value is shown by its class.
   */
  static String text(Function<Object, String> text, Object v) {
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
  static String text(Object v) {
    return text(String::valueOf, v);
  }

  RecordedTxnOp freeze() {
    return new RecordedTxnOp(
        op,
        key,
        Optional.ofNullable(prevValue),
        Optional.ofNullable(newValue),
        prevState,
        newState,
        msg(prevErr),
        msg(newErr),
        flags());
  }

  private Set<RecordedTxnOp.Flag> flags() {
    EnumSet<RecordedTxnOp.Flag> f = EnumSet.noneOf(RecordedTxnOp.Flag.class);
    if (noop) f.add(RecordedTxnOp.Flag.NOOP);
    if (derived) f.add(RecordedTxnOp.Flag.DERIVED);
    if (property) f.add(RecordedTxnOp.Flag.PROPERTY);
    if (revert) f.add(RecordedTxnOp.Flag.REVERT);
    if (retry) f.add(RecordedTxnOp.Flag.RETRY);
    if (recreate) f.add(RecordedTxnOp.Flag.RECREATE);
    return f;
  }

  @Override
  public String toString() {
    return freeze().toString();
  }
}
