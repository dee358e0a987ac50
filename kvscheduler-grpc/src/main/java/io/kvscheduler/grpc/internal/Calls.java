package io.kvscheduler.grpc.internal;

import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.ValueState;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.LoggerFactory;

/**
 * Waiting within a call's deadline, and errors as gRPC statuses. A status description travels in
 * the trailing metadata, which clients read up to a small limit (8 KiB by default in grpc-java and
 * grpc-go): descriptions are kept to {@value #MAX_DESCRIPTION_CHARS} characters ({@link
 * #described}), and the errors they are made of quote values through {@link Excerpt}.
 */
final class Calls {
  /** Characters of a status description, at most (before the count of those left out). */
  static final int MAX_DESCRIPTION_CHARS = 2048;

  /** How long one wait lasts before the call's cancellation is checked again. */
  private static final long SLICE_MS = 50;

  /** How often {@code wait_done} reads the values' states (as vpp-agent). */
  private static final long POLL_MS = 10;

  private Calls() {}

  /** {@code status} with {@code text} as its description, kept to the description bound. */
  static Status described(Status status, String text) {
    return status.withDescription(Excerpt.cut(text, MAX_DESCRIPTION_CHARS));
  }

  /** A unary call's work: the response, or a {@link StatusRuntimeException}. */
  @FunctionalInterface
  interface Work<R> {
    R run();
  }

  /**
   * Answers a unary call with {@code work}'s response, or ends it with the status of what it threw
   * ({@code INTERNAL} for an unexpected exception, whose text is given).
   */
  static <R> void unary(StreamObserver<R> out, Work<R> work) {
    R response;
    try {
      response = work.run();
    } catch (StatusRuntimeException e) {
      out.onError(e);
      return;
    } catch (RuntimeException e) {
      LoggerFactory.getLogger(Calls.class).error("gRPC call failed", e);
      out.onError(described(Status.INTERNAL, String.valueOf(e)).withCause(e).asRuntimeException());
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  /** An {@code INVALID_ARGUMENT} error with {@code message}. */
  static StatusRuntimeException invalid(String message) {
    return described(Status.INVALID_ARGUMENT, message).asRuntimeException();
  }

  /**
   * The result of {@code future}, waited for until the call's deadline or cancellation: a
   * transaction error becomes {@code FAILED_PRECONDITION} with its text, a stopped scheduler {@code
   * UNAVAILABLE}.
   */
  static <T> T await(CompletableFuture<T> future) {
    Context ctx = Context.current();
    Deadline deadline = ctx.getDeadline();
    while (true) {
      if (ctx.isCancelled()) {
        throw Status.CANCELLED
            .withDescription("the call was cancelled; the transaction still" + " runs")
            .asRuntimeException();
      }
      long slice = SLICE_MS;
      if (deadline != null) {
        long left = deadline.timeRemaining(TimeUnit.MILLISECONDS);
        if (left <= 0) {
          throw Status.DEADLINE_EXCEEDED
              .withDescription(
                  "the transaction did not finish" + " within the call's deadline; it still runs")
              .asRuntimeException();
        }
        slice = Math.min(slice, left);
      }
      try {
        return future.get(slice, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // check the deadline and cancellation again
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
      } catch (ExecutionException e) {
        throw failure(e.getCause());
      }
    }
  }

  /** {@code cause} of a failed transaction as a status. */
  static StatusRuntimeException failure(Throwable cause) {
    if (cause instanceof TransactionException t) {
      return described(Status.FAILED_PRECONDITION, t.getMessage()).asRuntimeException();
    }
    if (cause instanceof io.kvscheduler.agent.spi.ConfirmationConflictException) {
      return described(Status.FAILED_PRECONDITION, cause.getMessage()).asRuntimeException();
    }
    if (cause instanceof IllegalArgumentException) {
      return described(Status.INVALID_ARGUMENT, cause.getMessage()).asRuntimeException();
    }
    if (cause instanceof IllegalStateException) {
      return described(Status.UNAVAILABLE, cause.getMessage()).asRuntimeException();
    }
    return described(Status.INTERNAL, String.valueOf(cause)).withCause(cause).asRuntimeException();
  }

  /**
   * Returns once no key of {@code keys} is PENDING; {@code DEADLINE_EXCEEDED} (or {@code
   * CANCELLED}) when the call ends first.
   */
  static void waitDone(KVScheduler kvs, Collection<String> keys) {
    Context ctx = Context.current();
    Deadline deadline = ctx.getDeadline();
    while (keys.stream().anyMatch(k -> kvs.valueStatus(k).state() == ValueState.PENDING)) {
      if (ctx.isCancelled()) {
        throw Status.CANCELLED
            .withDescription("the call was cancelled while values were" + " PENDING")
            .asRuntimeException();
      }
      if (deadline != null && deadline.isExpired()) {
        throw described(
                Status.DEADLINE_EXCEEDED,
                "values still PENDING at the deadline: "
                    + keys.stream()
                        .filter(k -> kvs.valueStatus(k).state() == ValueState.PENDING)
                        .limit(5)
                        .toList())
            .asRuntimeException();
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw Status.CANCELLED.withDescription("interrupted").asRuntimeException();
      }
    }
  }
}
