package io.kvscheduler.internal.engine.loop;

import io.kvscheduler.api.TransactionException;
import io.kvscheduler.internal.engine.calls.SbCalls;
import io.kvscheduler.internal.util.UserCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs queued transactions one at a time on the engine thread and shuts down cleanly: a bounded
 * FIFO queue (plus a private deque for transactions queued from descriptor callbacks) consumed by
 * one engine thread; on close, what is queued fails with "scheduler was closed", the transaction in
 * hand is finished (interrupted after a grace period) and the threads the scheduler started are
 * stopped.
 */
public final class EngineLoop {
  private static final Logger LOG = LoggerFactory.getLogger(EngineLoop.class);

  /**
   * How long the engine thread, its queue empty, polls before it parks. A caller committing
   * transactions one after another hands the next one over within microseconds; once parked, the
   * engine needs a wake-up, which on an idle core (a halted virtual CPU) can take longer than a
   * one-value transaction itself. The engine yields between polls, so a thread that needs its core
   * (the caller, woken on the same core, or the JIT compiler) usually gets it at once.
   *
   * <p>This spin and the caller's ({@link #CALLER_SPIN_NANOS}) are kept because of benchmark W2
   * (one-value transactions on a graph of 100,000 values, {@code bin/kvs-bench W2 --n 100000}, 5
   * runs each, fresh JVMs alternating): a mean of 6–8 µs per transaction with them, 49–62 µs with
   * blocking hand-offs instead.
   */
  private static final long SPIN_NANOS = 50_000;

  /**
   * How long a caller of a blocking commit (or of a query run on the engine thread) polls for the
   * result before it parks: the same wake-up as in {@link #SPIN_NANOS}, on the caller's side, for
   * results that come within microseconds. The caller yields between polls, so the engine (or the
   * JIT compiler) usually gets the core at once if it needs it.
   */
  private static final long CALLER_SPIN_NANOS = 50_000;

  /**
   * How long {@link #close(Duration)} waits by default for the engine thread, at most (half before
   * interrupting).
   */
  public static final Duration CLOSE_WAIT = Duration.ofSeconds(20);

  private static final Queued STOP = new Queued.Task(() -> {});
  private static final Queued WAKE = new Queued.Task(() -> {});

  /** Runs southbound calls that have a time limit. */
  private final SbCalls sbCalls;

  private final LinkedBlockingDeque<Queued> queue;

  /**
   * Transactions queued from inside descriptor callbacks (the engine thread, or a call thread while
   * the engine waits for it); served before the shared queue, never blocks.
   */
  private final ConcurrentLinkedDeque<Queued> internal = new ConcurrentLinkedDeque<>();

  private final AtomicBoolean closed = new AtomicBoolean();

  /** The threads the scheduler started besides the engine (timer, status, calls). */
  private final List<AutoCloseable> owned;

  private final Thread engine;

  /** Processes one dequeued item that is not a task (set before the engine thread starts). */
  private Consumer<Queued> processor;

  /** Runs after each processed item while open (set before the engine thread starts). */
  private Runnable afterEach;

  /**
   * The loop, its engine thread not yet started ({@link #start}).
   *
   * @param owned closed by {@link #close(Duration)} (or by the engine as it exits): the threads the
   *     scheduler started besides the engine
   */
  public EngineLoop(
      String threadName, int queueCapacity, SbCalls sbCalls, List<AutoCloseable> owned) {
    this.sbCalls = sbCalls;
    this.queue = new LinkedBlockingDeque<>(queueCapacity);
    this.owned = List.copyOf(owned);
    this.engine = new Thread(this::loop, threadName);
    this.engine.setDaemon(true);
  }

  /**
   * Starts the engine thread.
   *
   * @param processor processes each dequeued transaction (tasks are run by the loop itself)
   * @param afterEach runs after each processed item, while the scheduler is open
   */
  public void start(Consumer<Queued> processor, Runnable afterEach) {
    this.processor = processor;
    this.afterEach = afterEach;
    engine.start();
  }

  // ------------------------------------------------------------------ engine loop

  private void loop() {
    // closed: the transaction being processed was finished; what is still queued is failed
    while (!closed.get()) {
      Queued q = internal.pollFirst();
      if (q == null) {
        q = spinPoll();
      }
      if (q == null) {
        try {
          q = queue.takeFirst();
        } catch (InterruptedException e) {
          if (closed.get()) {
            break;
          }
          continue;
        }
      }
      if (q == STOP || closed.get()) {
        // closed while this was being taken from the queue: it fails like the rest
        if (q != STOP) {
          fail(q);
        }
        break;
      }
      try {
        if (q instanceof Queued.Task t) {
          t.run().run();
        } else {
          processor.accept(q);
        }
      } catch (Throwable t) {
        // the engine thread never dies, and no caller waits for ever
        LOG.error("engine: unexpected failure while processing {}", q, t);
        UserCode.reportIfFatal(t); // first: the caller may end the application when it learns of it
        if (q instanceof Queued.Nb nb) {
          nb.result().completeExceptionally(t);
        }
      }
      if (!closed.get()) {
        afterEach.run();
      }
    }
    failPending();
    closeOwned();
  }

  /** The next queued transaction if one arrives within {@link #SPIN_NANOS}, else null. */
  private Queued spinPoll() {
    long deadline = System.nanoTime() + SPIN_NANOS;
    do {
      Queued q = queue.pollFirst();
      if (q != null) {
        return q;
      }
      Thread.yield();
    } while (System.nanoTime() < deadline);
    return null;
  }

  /** Fails everything still queued: the callers waiting for it get "scheduler was closed". */
  private void failPending() {
    List<Queued> rest = new ArrayList<>();
    for (Queued q = internal.pollFirst(); q != null; q = internal.pollFirst()) {
      rest.add(q);
    }
    queue.drainTo(rest);
    for (Queued q : rest) {
      fail(q);
    }
  }

  private static void fail(Queued q) {
    CompletableFuture<?> waiter =
        q instanceof Queued.Nb nb ? nb.result() : q instanceof Queued.Task t ? t.waiter() : null;
    if (waiter != null) {
      waiter.completeExceptionally(new IllegalStateException("scheduler was closed"));
    }
  }

  // ------------------------------------------------------------------ hand-over

  /** Puts {@code q} at the end of the queue unless it is full (then false). */
  public boolean offer(Queued q) {
    return queue.offerLast(q);
  }

  /** Like {@link #offer}, and false once the scheduler is closed. */
  public boolean offerIfOpen(Queued q) {
    return !closed.get() && queue.offerLast(q);
  }

  /** Queues {@code q} before the shared queue; from the engine thread, never blocks. */
  public void pushInternal(Queued q) {
    internal.addLast(q);
  }

  public int queueLength() {
    return queue.size();
  }

  /**
   * Puts {@code q} at the end of the queue, waiting for room when the queue is full. A scheduler
   * closed meanwhile fails {@code q} (close drains the queue, which may be what made the room): the
   * caller's wait then ends at once.
   */
  public void putWaiting(Queued q) {
    try {
      queue.putLast(q);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while queuing", e);
    }
    failIfClosed(q);
  }

  /**
   * Fails {@code q}, just queued, when the scheduler was closed meanwhile and {@code q} is still in
   * the queue (otherwise close's drain, or the engine, has it).
   */
  public void failIfClosed(Queued q) {
    if (closed.get() && queue.remove(q)) {
      fail(q);
    }
  }

  public boolean onEngine() {
    return Thread.currentThread() == engine;
  }

  /**
   * Queues {@code q} from inside a descriptor callback. From a call thread the engine may not be
   * waiting for the call any more (it overran its time limit): an empty task wakes the engine up if
   * it is idle.
   */
  public void queueFromCallback(Queued q) {
    internal.addLast(q);
    if (!onEngine()) {
      queue.offerLast(WAKE);
    }
  }

  /**
   * True inside a descriptor callback: on the engine thread, or on a call thread running a
   * southbound call the engine waits for. Waiting for the engine from there would deadlock.
   */
  public boolean inCallback() {
    return onEngine() || sbCalls.inCall();
  }

  public boolean isClosed() {
    return closed.get();
  }

  public void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("scheduler was closed");
    }
  }

  /**
   * Runs {@code work} ({@code what}, for the error message) on the engine thread between
   * transactions and waits for its result.
   *
   * @throws IllegalStateException on a call thread running a southbound call: the engine waits for
   *     that call, so waiting for the engine would last until the call's time limit and fail the
   *     call's operation
   */
  public <T> T onEngine(String what, Supplier<T> work) {
    if (onEngine()) {
      return work.get();
    }
    if (sbCalls.inCall()) {
      throw new IllegalStateException(
          what
              + " cannot be called from a southbound call that runs"
              + " with a time limit (operationTimeout): it needs the engine thread, which is waiting"
              + " for this call");
    }
    ensureOpen();
    CompletableFuture<T> f = new CompletableFuture<>();
    putWaiting(
        new Queued.Task(
            () -> {
              try {
                f.complete(work.get());
              } catch (Throwable t) {
                f.completeExceptionally(t);
              }
            },
            f));
    return await(f);
  }

  /** Waits for {@code f} (polling briefly first), rethrowing its failure unchecked. */
  public static <T> T await(CompletableFuture<T> f) {
    long deadline = System.nanoTime() + CALLER_SPIN_NANOS;
    while (!f.isDone() && System.nanoTime() < deadline) {
      Thread.yield();
    }
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("waiting for result of blocking transaction was canceled", e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof TransactionException te) {
        throw onCallerThread(te);
      }
      if (c instanceof RuntimeException re) {
        throw re;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(c);
    }
  }

  /**
   * The failure {@code te} of a transaction, made again on the waiting caller's thread: its stack
   * trace shows the caller's call site (the engine's shows only engine frames); the engine's
   * exception is kept as suppressed.
   */
  private static TransactionException onCallerThread(TransactionException te) {
    TransactionException here =
        new TransactionException(te.seqNum(), te.keyErrors(), te.retrieveErrors());
    here.addSuppressed(te);
    return here;
  }

  // ------------------------------------------------------------------ close

  /**
   * Closes the scheduler: fails what is queued, lets the engine finish the transaction in hand
   * (interrupting it after half of {@code timeout}) and stops the threads the scheduler started.
   * Returns within about {@code timeout}, waiting for nothing beyond it. Only the first call does
   * anything; a later one (and one from a descriptor callback) returns whether the engine thread
   * has ended.
   *
   * @return true when the engine thread ended and no southbound call is left running; false when
   *     something was left behind (named in a warning): the engine thread, still in a callback that
   *     ignored the interrupt, and call threads of calls abandoned after their time limit. A
   *     southbound call the engine would make after that fails at once ("scheduler was closed").
   */
  public boolean close(Duration timeout) {
    if (!closed.compareAndSet(false, true)) {
      return !engine.isAlive();
    }
    // what is queued fails now; the engine finishes what it is processing, then sees the flag
    // (STOP wakes it up if it waits for work)
    failPending();
    while (!queue.offerFirst(STOP)) {
      failPending(); // filled again by callers that were waiting for room: they fail too
    }
    if (onEngine() || sbCalls.inCall()) {
      // called from a descriptor callback: the engine stops once the callback's transaction is
      // finished, and closes the timer and call threads itself (joining here would wait for
      // the thread that waits for this call)
      return false;
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      engine.join(Math.max(1, timeout.toMillis() / 2));
      if (engine.isAlive()) {
        LOG.warn(
            "close: the engine thread is still processing a transaction after {} ms;"
                + " interrupting it",
            Math.max(1, timeout.toMillis() / 2));
        engine.interrupt();
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left > 0) {
          engine.join(left);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    failPending();
    closeOwned();
    return reportLeftBehind(timeout);
  }

  /** True when nothing is left running; else false, with a warning naming what is. */
  private boolean reportLeftBehind(Duration timeout) {
    List<String> left = new ArrayList<>();
    if (engine.isAlive()) {
      StackTraceElement at = firstOutsideJdk(engine.getStackTrace());
      left.add(
          "the engine thread "
              + engine.getName()
              + (at == null ? "" : " (at " + at + ")")
              + ", in a callback that ignored the interrupt: it stops when the callback returns,"
              + " and the southbound calls it would make next fail");
    }
    int calls = sbCalls.running();
    if (calls > 0) {
      left.add(
          calls
              + " southbound call"
              + (calls == 1 ? "" : "s")
              + " abandoned after its time limit and still running on call threads");
    }
    if (left.isEmpty()) {
      return true;
    }
    LOG.warn("close: left behind after {}: {}", timeout, String.join("; ", left));
    return false;
  }

  /** The innermost frame of {@code stack} outside the JDK (the callback's, usually), or null. */
  private static StackTraceElement firstOutsideJdk(StackTraceElement[] stack) {
    for (StackTraceElement e : stack) {
      String c = e.getClassName();
      if (!c.startsWith("java.") && !c.startsWith("jdk.") && !c.startsWith("sun.")) {
        return e;
      }
    }
    return stack.length == 0 ? null : stack[0];
  }

  /** Stops the threads the scheduler started besides the engine (timer, status, calls). */
  private void closeOwned() {
    for (AutoCloseable c : owned) {
      try {
        c.close();
      } catch (Exception e) {
        LOG.debug("closing {}", c, e);
      }
    }
  }
}
