package io.kvscheduler.internal.engine.record;

import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.util.UserCode;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * Estimated bytes of a transaction record, for the history's byte budget: the input values and the
 * operations' values ({@code SchedulerConfig.valueSizeEstimator()}), keys and error messages, plus
 * a fixed cost per value and operation for the objects around them. A value held by several records
 * (or twice in one) is counted each time: the estimate errs on the large side, so the budget holds
 * whatever is shared.
 */
public final class RecordSize {
  private RecordSize() {}

  /** Bytes counted for a value the estimator cannot size (or fails on). */
  static final long UNKNOWN_VALUE = 64;

  /** Bytes counted for the objects of one value or operation around its content. */
  private static final long PER_ENTRY = 96;

  /** Bytes counted for the record itself. */
  private static final long PER_RECORD = 256;

  /** The default estimator: two bytes per character, a byte array's length, else 64 bytes. */
  public static long defaultValueSize(Object v) {
    if (v instanceof CharSequence cs) {
      return 2L * cs.length();
    }
    if (v instanceof byte[] b) {
      return b.length;
    }
    return UNKNOWN_VALUE;
  }

  /** The estimated bytes of a record of these parts. */
  public static long of(
      ToLongFunction<Object> sizer,
      String description,
      List<ValueToApply> values,
      OpRecord[] planned,
      OpRecord[] executed) {
    long n = PER_RECORD + chars(description);
    for (ValueToApply kv : values) {
      n += PER_ENTRY + chars(kv.key()) + value(sizer, kv.value());
    }
    n += ops(sizer, planned) + ops(sizer, executed);
    return n;
  }

  private static long ops(ToLongFunction<Object> sizer, OpRecord[] ops) {
    long n = 0;
    for (OpRecord op : ops) {
      n += PER_ENTRY + chars(op.key) + value(sizer, op.prevValue) + value(sizer, op.newValue);
      n += error(op.prevErr) + error(op.newErr);
    }
    return n;
  }

  private static long error(Throwable t) {
    if (t == null) {
      return 0;
    }
    String m = t.getMessage(); // contained on entry: reading it does not throw
    return PER_ENTRY + chars(m);
  }

  private static long chars(String s) {
    return s == null ? 0 : 2L * s.length();
  }

  private static long value(ToLongFunction<Object> sizer, Object v) {
    if (v == null) {
      return 0;
    }
    try {
      long n = sizer.applyAsLong(v);
      return n < 0 ? UNKNOWN_VALUE : n;
    } catch (Throwable t) {
      UserCode.rethrowFatal(t);
      return UNKNOWN_VALUE;
    }
  }
}
