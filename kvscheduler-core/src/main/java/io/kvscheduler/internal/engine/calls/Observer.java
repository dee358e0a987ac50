package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.OperationListener;
import io.kvscheduler.api.OperationListener.Call;
import io.kvscheduler.api.OperationListener.CallOutcome;
import io.kvscheduler.api.OperationListener.TxnOutcome;
import io.kvscheduler.api.OperationTimeoutException;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.internal.util.UserCode;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the user's {@link OperationListener} what the engine does, every call guarded: what the
 * listener throws is logged once (the first time) and otherwise ignored. Without a listener ({@link
 * #active()} false) nothing is measured or allocated: callers test it before reading the time.
 *
 * <p>The transaction in hand (its number, kind and start) is written by the engine thread only; its
 * number is read by the call threads too, for the events of the calls they run.
 */
public final class Observer {
  private static final Logger LOG = LoggerFactory.getLogger(Observer.class);

  /** An observer without a listener. */
  public static final Observer NONE = new Observer(null);

  private final OperationListener listener;
  private final AtomicBoolean failedOnce = new AtomicBoolean();

  /** The transaction being processed, or -1 between transactions. */
  private volatile long seq = -1;

  private TxnType type;
  private ResyncType resync;
  private long startNanos;

  /** An observer telling {@code listener}; null for none. */
  public Observer(OperationListener listener) {
    this.listener = listener;
  }

  public boolean active() {
    return listener != null;
  }

  /** The time a call or transaction starts, for {@link #callEnded}; 0 when not active. */
  long now() {
    return listener == null ? 0 : System.nanoTime();
  }

  /** Transaction {@code seqNum} begins (engine thread). */
  public void transactionStarted(long seqNum, TxnType type, ResyncType resync) {
    if (listener == null) {
      return;
    }
    this.seq = seqNum;
    this.type = type;
    this.resync = resync;
    this.startNanos = System.nanoTime();
    OperationListener.TxnStarted e = new OperationListener.TxnStarted(seqNum, type, resync);
    guarded("transactionStarted", () -> listener.transactionStarted(e));
  }

  /** The transaction begun last ended (engine thread); nothing when none was begun. */
  public void transactionEnded(TxnOutcome outcome, int failedKeys) {
    if (listener == null || seq < 0) {
      return;
    }
    OperationListener.TxnEnded e =
        new OperationListener.TxnEnded(
            seq,
            type,
            resync,
            outcome,
            failedKeys,
            Duration.ofNanos(System.nanoTime() - startNanos));
    seq = -1;
    guarded("transactionEnded", () -> listener.transactionEnded(e));
  }

  /**
   * A southbound call started at {@code startNanos} ({@link #now()}) ended, with {@code error}
   * (null: it returned).
   */
  void callEnded(String descriptor, Call call, String key, long startNanos, Throwable error) {
    if (listener == null) {
      return;
    }
    Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
    CallOutcome outcome =
        error == null
            ? CallOutcome.OK
            : error instanceof OperationTimeoutException ? CallOutcome.TIMEOUT : CallOutcome.ERROR;
    OperationListener.SouthboundCall e =
        new OperationListener.SouthboundCall(seq, descriptor, call, key, outcome, error, took);
    guarded("southboundCall", () -> listener.southboundCall(e));
  }

  /** The listener's kind of call for a southbound operation. */
  static Call call(io.kvscheduler.api.TxnOperation op) {
    return switch (op) {
      case CREATE -> Call.CREATE;
      case UPDATE -> Call.UPDATE;
      case DELETE -> Call.DELETE;
      default -> throw new IllegalArgumentException("not a southbound call: " + op);
    };
  }

  private void guarded(String method, Runnable event) {
    try {
      event.run();
    } catch (Throwable t) {
      Throwable c = UserCode.contained(t);
      if (failedOnce.compareAndSet(false, true)) {
        LOG.error(
            "operation listener: {} failed; the scheduler goes on (later failures of the"
                + " listener are not logged)",
            method,
            c);
      }
    }
  }
}
