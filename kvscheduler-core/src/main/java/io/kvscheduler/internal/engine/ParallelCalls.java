package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the calls of a {@link CallPlan} ahead of the walk, at most {@code parallelism} at a time: a
 * call starts once every call it waits for has returned successfully, and while its descriptor has
 * fewer calls running than it allows ({@code maxConcurrency}). A failed call's followers do not
 * start (the walk decides what to do about them, as without parallelism); a failure that ends the
 * run (in a transaction reverted on failure: a call of one of its own values) lets the running
 * calls return and starts no other. The engine thread dispatches and collects; the calls run on the
 * pool's threads, which count as inside a descriptor callback ({@link SbCalls#runAsCall}).
 *
 * <p>The engine thread alone writes the descriptors' metadata maps: when a call returns, the
 * metadata it gave is put in its map before any call waiting for it starts, as the walk would have
 * put it (a Create that reads the metadata of a value it depends on finds it).
 */
final class ParallelCalls implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ParallelCalls.class);

  private final int parallelism;
  private final Clock clock;
  private final SbCalls sbCalls;
  private final ExecutorService pool;

  ParallelCalls(int parallelism, Clock clock, SbCalls sbCalls, String threadName) {
    this.parallelism = parallelism;
    this.clock = clock;
    this.sbCalls = sbCalls;
    AtomicInteger n = new AtomicInteger();
    // a finished call hands its result back before its thread is free again: the queue holds the
    // next call meanwhile (never more than the limit wait, the engine dispatches at most that many)
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
  boolean enabled() {
    return parallelism > 1;
  }

  /**
   * Runs {@code plan}'s calls and returns once none is running; after a failed call that {@code
   * endsTheRun}, no further call starts.
   */
  void run(CallPlan plan, Predicate<PlannedCall> endsTheRun) {
    PriorityQueue<PlannedCall> ready =
        new PriorityQueue<>((a, b) -> Integer.compare(a.index, b.index));
    for (PlannedCall c : plan.calls()) {
      if (c.waitingFor == 0) {
        ready.add(c);
      }
    }
    LinkedBlockingQueue<PlannedCall> returned = new LinkedBlockingQueue<>();
    Map<String, Integer> runningOf = new HashMap<>();
    List<PlannedCall> held = new ArrayList<>();
    int running = 0;
    boolean ended = false;
    while (true) {
      while (!ended && running < parallelism && !ready.isEmpty()) {
        PlannedCall c = ready.poll();
        int busy = runningOf.getOrDefault(c.handle.name, 0);
        if (busy >= Math.max(1, c.handle.descriptor.maxConcurrency())) {
          held.add(c); // its descriptor is at its limit: later
          continue;
        }
        runningOf.put(c.handle.name, busy + 1);
        c.status = PlannedCall.Status.RUNNING;
        running++;
        pool.execute(
            () -> {
              try {
                sbCalls.runAsCall(() -> c.run(clock));
              } catch (Throwable t) {
                c.error = t; // the handle guards user code: this is the engine's own fault
              } finally {
                returned.add(c);
              }
            });
      }
      ready.addAll(held);
      held.clear();
      if (running == 0) {
        break;
      }
      PlannedCall c;
      try {
        c = returned.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while southbound calls were running", e);
      }
      running--;
      runningOf.merge(c.handle.name, -1, Integer::sum);
      c.status = PlannedCall.Status.DONE;
      if (c.ended == null) {
        c.ended = clock.instant(); // the pool's own fault: the call threw past its guard
      }
      if (c.error != null) {
        ended |= endsTheRun.test(c);
        continue; // its followers never become ready: they are skipped
      }
      if (c.keepsMetadata && c.handle.metadataMap != null) {
        c.handle.metadataMap.put(c.label, c.op == TxnOperation.DELETE ? null : c.returnedMetadata);
      }
      release(c, ready);
    }
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
  static Throwable undo(PlannedCall c) {
    DescriptorHandle h = c.handle;
    Throwable err;
    Object metadata = null;
    switch (c.op) {
      case CREATE -> err = h.delete(c.key, c.value, c.returnedMetadata);
      case UPDATE -> {
        DescriptorHandle.Result<Object> r =
            h.update(c.key, c.value, c.oldValue, c.returnedMetadata);
        err = r.error();
        metadata = r.value();
      }
      case DELETE -> {
        DescriptorHandle.Result<Object> r = h.create(c.key, c.value);
        err = r.error();
        metadata = r.value();
      }
      default -> throw new IllegalStateException("not a southbound call: " + c.op);
    }
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
