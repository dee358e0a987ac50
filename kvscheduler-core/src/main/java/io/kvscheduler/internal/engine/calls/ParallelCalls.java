package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.TxnOperation;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the calls of a {@link CallPlan} ahead of the walk, at most {@code parallelism} at a time: a
 * call starts once every call it waits for has returned successfully, and while its descriptor has
 * fewer calls running than it allows ({@code maxConcurrency}). A failed call's followers do not
 * start (the walk decides what to do about them, as without parallelism); a failure that ends the
 * run (in a transaction reverted on failure: a call of one of its own values) lets the running
 * calls return and starts no other. The engine thread starts the run and waits for its end.
 *
 * <p>The calls run on the pool's threads, which count as inside a descriptor callback ({@link
 * SbCalls#runAsCall}) throughout. A thread whose call returned does the bookkeeping itself, under
 * the run's lock: it puts the metadata the call gave in its descriptor's metadata map (before any
 * call waiting for it starts, as the walk would have put it: a Create that reads the metadata of a
 * value it depends on finds it), counts the call done for its followers, and starts those now ready
 * — the first on its own thread, so a chain of calls passes from one to the next without waking
 * another thread (kvs-bench W6 at parallelism 64 on two cores: a median speedup of 34× against 28×
 * when each returned call went through the engine thread). The metadata maps keep one writer at a
 * time: the engine thread waits meanwhile.
 */
public final class ParallelCalls implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ParallelCalls.class);

  private static final Comparator<PlannedCall> WALK_ORDER =
      (a, b) -> Integer.compare(a.index, b.index);

  private final int parallelism;
  private final Clock clock;
  private final SbCalls sbCalls;
  private final ExecutorService pool;

  public ParallelCalls(int parallelism, Clock clock, SbCalls sbCalls, String threadName) {
    this.parallelism = parallelism;
    this.clock = clock;
    this.sbCalls = sbCalls;
    AtomicInteger n = new AtomicInteger();
    // a thread that finished a call takes the next one itself when it can: the queue holds the
    // calls started while every thread is busy (never more than the limit: at most that many run)
    ThreadPoolExecutor threads =
        new ThreadPoolExecutor(
            parallelism,
            parallelism,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, threadName + "-sb-parallel-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    threads.allowCoreThreadTimeOut(true);
    this.pool = threads;
  }

  /** True when the scheduler runs calls in parallel. */
  public boolean enabled() {
    return parallelism > 1;
  }

  /**
   * Runs {@code plan}'s calls and returns once none is running; after a failed call that {@code
   * endsTheRun}, no further call starts.
   */
  public void run(CallPlan plan, Predicate<PlannedCall> endsTheRun) {
    Run run = new Run(endsTheRun);
    run.begin(plan);
    run.awaitEnd();
    for (PlannedCall c : plan.calls()) {
      if (c.status == PlannedCall.Status.PLANNED) {
        c.status = PlannedCall.Status.SKIPPED;
      }
    }
    if (LOG.isDebugEnabled()) {
      LOG.debug(
          "{} of {} planned southbound calls ran ahead of the walk", count(plan), plan.size());
    }
  }

  /**
   * One run of a plan. Its state is read and written under {@link #lock} only, by the engine thread
   * (start, end) and by the threads whose calls return.
   */
  private final class Run {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition idle = lock.newCondition();
    private final PriorityQueue<PlannedCall> ready = new PriorityQueue<>(WALK_ORDER);
    private final Map<String, Integer> runningOf = new HashMap<>();
    private final List<PlannedCall> held = new ArrayList<>();
    private final Predicate<PlannedCall> endsTheRun;
    private int running;

    /** Set by a failure that ends the run, or by the run's own fault: no call starts any more. */
    private boolean stopped;

    /** The run's own fault (never a call's: the handle guards user code), or null. */
    private Throwable broken;

    Run(Predicate<PlannedCall> endsTheRun) {
      this.endsTheRun = endsTheRun;
    }

    void begin(CallPlan plan) {
      List<PlannedCall> start;
      lock.lock();
      try {
        for (PlannedCall c : plan.calls()) {
          if (c.waitingFor == 0) {
            ready.add(c);
          }
        }
        start = startable();
      } finally {
        lock.unlock();
      }
      submit(start);
    }

    /** On the engine thread: waits until no call runs and none can start. */
    void awaitEnd() {
      lock.lock();
      try {
        while (running > 0 || !stopped && !ready.isEmpty()) {
          idle.await();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while southbound calls were running", e);
      } finally {
        lock.unlock();
      }
      if (broken != null) {
        throw new IllegalStateException(
            "running southbound calls ahead of the walk failed", broken);
      }
    }

    /** Under the lock: the ready calls that may start now, counted as running. */
    private List<PlannedCall> startable() {
      if (stopped || ready.isEmpty() || running >= parallelism) {
        return List.of();
      }
      List<PlannedCall> out = new ArrayList<>();
      while (running < parallelism && !ready.isEmpty()) {
        PlannedCall c = ready.poll();
        int busy = runningOf.getOrDefault(c.handle.name, 0);
        if (busy >= Math.max(1, c.handle.descriptor.maxConcurrency())) {
          held.add(c); // its descriptor is at its limit: later
          continue;
        }
        runningOf.put(c.handle.name, busy + 1);
        c.status = PlannedCall.Status.RUNNING;
        running++;
        out.add(c);
      }
      ready.addAll(held);
      held.clear();
      return out;
    }

    /** Hands {@code calls} to the pool's threads. */
    private void submit(List<PlannedCall> calls) {
      ArrayDeque<PlannedCall> todo = new ArrayDeque<>(calls);
      while (!todo.isEmpty()) {
        PlannedCall c = todo.poll();
        try {
          // the thread counts as inside a descriptor callback for its calls and for the
          // bookkeeping after them (metadata watchers run then)
          pool.execute(() -> sbCalls.runAsCall(() -> runFrom(c)));
        } catch (RejectedExecutionException e) {
          // the scheduler is closing: the call counts as failed without reaching the southbound
          c.error = e;
          todo.addAll(returned(c));
        }
      }
    }

    /** On a pool thread: runs {@code first}, then each call its return lets start first. */
    private void runFrom(PlannedCall first) {
      PlannedCall c = first;
      while (c != null) {
        PlannedCall call = c;
        try {
          call.run(clock);
        } catch (Throwable t) {
          call.error = t; // the handle guards user code: this is the engine's own fault
        }
        List<PlannedCall> next = returned(call);
        c = next.isEmpty() ? null : next.get(0);
        if (next.size() > 1) {
          submit(next.subList(1, next.size()));
        }
      }
    }

    /**
     * Counts returned call {@code c} done: its metadata put in its map, its followers released;
     * returns the calls that may start now.
     */
    private List<PlannedCall> returned(PlannedCall c) {
      lock.lock();
      try {
        running--;
        try {
          runningOf.merge(c.handle.name, -1, Integer::sum);
          c.status = PlannedCall.Status.DONE;
          if (c.ended == null) {
            c.ended = clock.instant(); // it threw past its guard, or never ran
          }
          if (c.error != null) {
            stopped |= endsTheRun.test(c);
            return startable(); // its followers never become ready: they are skipped
          }
          if (c.keepsMetadata && c.handle.metadataMap != null) {
            c.handle.metadataMap.put(
                c.label, c.op == TxnOperation.DELETE ? null : c.returnedMetadata);
          }
          release(c, ready);
          return startable();
        } catch (Throwable t) {
          broken = t;
          stopped = true;
          return List.of();
        }
      } finally {
        if (running == 0) {
          idle.signalAll();
        }
        lock.unlock();
      }
    }
  }

  /**
   * Counts done call {@code c} for the calls waiting for it: those waiting for nothing else are
   * ready; a join point among them is passed through at once.
   */
  private static void release(PlannedCall c, PriorityQueue<PlannedCall> ready) {
    ArrayList<PlannedCall> done = new ArrayList<>();
    done.add(c);
    while (!done.isEmpty()) {
      PlannedCall d = done.remove(done.size() - 1);
      for (PlannedCall f : d.next) {
        if (--f.waitingFor == 0 && f.status == PlannedCall.Status.PLANNED) {
          if (f.isJoin()) {
            f.status = PlannedCall.Status.DONE;
            done.add(f);
          } else {
            ready.add(f);
          }
        }
      }
    }
  }

  private static long count(CallPlan plan) {
    return plan.calls().stream().filter(c -> c.status == PlannedCall.Status.DONE).count();
  }

  /**
   * Undoes {@code c}, a call that ran ahead but that the walk never asked for, with the opposite
   * call (a Create by a Delete, an Update by the Update back, a Delete by a Create); the metadata
   * map follows. Returns what the undo failed with, or null.
   */
  public static Throwable undo(PlannedCall c) {
    DescriptorHandle h = c.handle;
    DescriptorHandle.Result<Object> r =
        switch (c.op) {
          case CREATE ->
              SbCallChain.DIRECT.call(
                  SbCall.direct(TxnOperation.DELETE, h, c.key, c.value, null, c.returnedMetadata));
          case UPDATE ->
              SbCallChain.DIRECT.call(
                  SbCall.direct(
                      TxnOperation.UPDATE, h, c.key, c.oldValue, c.value, c.returnedMetadata));
          case DELETE ->
              SbCallChain.DIRECT.call(
                  SbCall.direct(TxnOperation.CREATE, h, c.key, c.value, null, null));
          default -> throw new IllegalStateException("not a southbound call: " + c.op);
        };
    Throwable err = r.error();
    Object metadata = r.value();
    c.undoMetadata = metadata;
    if (err == null && c.keepsMetadata && h.metadataMap != null) {
      h.metadataMap.put(c.label, c.op == TxnOperation.CREATE ? null : metadata);
    }
    return err;
  }

  @Override
  public void close() {
    pool.shutdownNow();
  }
}
