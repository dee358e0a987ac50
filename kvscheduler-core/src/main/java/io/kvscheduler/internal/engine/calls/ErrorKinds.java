package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.OperationTimeoutException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.record.OpRecord;

/**
 * The {@link KeyError.Kind} of an error the engine reports, from the error's class (the engine's
 * own error classes are not exported: callers branch on the kind) and the state it left the value
 * in.
 */
public final class ErrorKinds {
  private ErrorKinds() {}

  /** The kind of {@code err}, which left its value in {@code state} (null when unknown). */
  public static KeyError.Kind of(Throwable err, ValueState state) {
    if (err instanceof UnreadStateException) {
      return KeyError.Kind.UNREAD;
    }
    if (err instanceof OperationTimeoutException) {
      return KeyError.Kind.TIMEOUT;
    }
    if (err instanceof DescriptorHandle.NotImplementedException) {
      return KeyError.Kind.NOT_IMPLEMENTED;
    }
    if (err instanceof KeyConflictException) {
      return KeyError.Kind.CONFLICT;
    }
    if (err instanceof ContractException) {
      return KeyError.Kind.CONTRACT;
    }
    if (err instanceof VerificationException) {
      return KeyError.Kind.VERIFICATION;
    }
    if (err instanceof InvalidValueException || state == ValueState.INVALID) {
      return KeyError.Kind.INVALID;
    }
    return KeyError.Kind.CALL_FAILED;
  }

  /** The key error of {@code key}'s operation {@code op} that failed with {@code err}. */
  public static KeyError keyError(String key, TxnOperation op, Throwable err, ValueState state) {
    return new KeyError(key, op, OpRecord.msg(err), err, of(err, state));
  }
}
