package io.kvscheduler.internal.engine.calls;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Southbound calls with a time limit: the call runs on a call thread while the engine thread waits
 * for it at most the limit. A call that overruns is interrupted and abandoned (its thread is not
 * reused until the call returns; a later call gets another thread), so a hanging southbound costs
 * one blocked thread, never the engine.
 *
 * <p>Call threads are created on demand and end after 30 s without work. While a call runs, its
 * thread counts as "inside a descriptor callback" ({@link #inCall()}): a transaction committed from
 * there is queued to run after the current one, exactly as from the engine thread.
 */
public final class SbCalls implements AutoCloseable {
  private final ThreadLocal<Boolean> inCall = new ThreadLocal<>();
  private final ThreadPoolExecutor threads;

  /** Told the key of an abandoned call when that call returns at last (or throws). */
  private volatile Consumer<String> lateReturns = key -> {};

  public SbCalls(String threadName) {
    AtomicInteger n = new AtomicInteger();
    this.threads =
        new ThreadPoolExecutor(
            0,
            Integer.MAX_VALUE,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t = new Thread(r, threadName + "-sb-call-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Sets what is told the key of an abandoned call when the call returns at last: the southbound
   * may have done what the call asked after all, so the scheduler reads the key again.
   */
  public void onLateReturn(Consumer<String> sink) {
    this.lateReturns = Objects.requireNonNull(sink, "sink");
  }

  /** True on a call thread while it runs a southbound call. */
  public boolean inCall() {
    return inCall.get() != null;
  }

  /**
   * Runs {@code call} on the current thread (a thread of {@link ParallelCalls}) as a southbound
   * call: meanwhile the thread counts as inside a descriptor callback ({@link #inCall()}).
   */
  void runAsCall(Runnable call) {
    boolean outer = inCall.get() == null;
    inCall.set(Boolean.TRUE);
    try {
      call.run();
    } finally {
      if (outer) {
        inCall.remove();
      }
    }
  }

  /**
   * Runs {@code call} on a call thread and waits at most {@code limit} for it.
   *
   * @param key the key the call is for, or null: told {@link #onLateReturn}'s sink when the call
   *     returns after it was abandoned
   * @return what the call returned
   * @throws Exception what the call threw, or {@code overrun.get()} when it did not return in time
   *     (the call is then interrupted)
   */
  <T> T call(
      Callable<T> call, Duration limit, Supplier<? extends RuntimeException> overrun, String key)
      throws Exception {
    AtomicBoolean abandoned = new AtomicBoolean();
    FutureTask<T> task =
        new FutureTask<>(
            () -> {
              inCall.set(Boolean.TRUE);
              try {
                return call.call();
              } finally {
                inCall.remove();
                // flagged before the engine gave up on it: a call that returned before that was
                // seen
                // by the refresh that follows the failure
                if (abandoned.get() && key != null) {
                  try {
                    lateReturns.accept(key);
                  } catch (RuntimeException ex) {
                    // the sink only queues a task; whatever it throws must not fail this call's
                    // thread
                  }
                }
              }
            });
    threads.execute(task);
    try {
      return task.get(limit.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      abandoned.set(true);
      task.cancel(true);
      throw overrun.get();
    } catch (InterruptedException e) {
      abandoned.set(true);
      task.cancel(true);
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for a southbound call", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception ex) {
        throw ex;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw e;
    }
  }

  /** Southbound calls running on call threads now (abandoned ones among them). */
  public int running() {
    return threads.getActiveCount();
  }

  /** True once the scheduler closed: no southbound call starts any more. */
  boolean isClosed() {
    return threads.isShutdown();
  }

  @Override
  public void close() {
    threads.shutdownNow();
  }
}
