package io.kvscheduler.internal.engine.loop;

import io.kvscheduler.api.DelayScheduler;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The configuration a scheduler runs with: a timer thread and a status thread of its own where none
 * was injected, and the injected clock and delay scheduler guarded against their failures.
 */
public final class SchedulerThreads {
  private SchedulerThreads() {}

  /**
   * {@code c} ready to run: the timer and status threads started here are added to {@code owned},
   * which the scheduler closes when it closes.
   */
  public static SchedulerConfig withDefaults(SchedulerConfig c, List<AutoCloseable> owned) {
    DelayScheduler ds = c.delayScheduler();
    if (ds == null) {
      ScheduledExecutorService ses =
          Executors.newSingleThreadScheduledExecutor(daemon(c.threadName() + "-timer"));
      owned.add(ses::shutdownNow);
      ds =
          (delay, task) -> {
            var f = ses.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
          };
    }
    Executor ex = c.statusExecutor();
    if (ex == null) {
      var es = Executors.newSingleThreadExecutor(daemon(c.threadName() + "-status"));
      owned.add(es::shutdownNow);
      ex = es;
    }
    // the injected clock and delay scheduler are user code: guarded once, here, for every use
    return new SchedulerConfig(
        GuardedTime.clock(c.clock()),
        GuardedTime.delayScheduler(ds),
        ex,
        c.queueCapacity(),
        c.simulation(),
        c.printTxnSummary(),
        c.valueFormatter(),
        c.recordHistory(),
        c.historyAgeLimit(),
        c.permanentHistoryPeriod(),
        c.historyMaxRecords(),
        c.historyMaxBytes(),
        c.valueSizeEstimator(),
        c.threadName(),
        c.verify(),
        c.downstreamResyncPeriod(),
        c.downstreamResyncJitter(),
        c.operationTimeout(),
        c.txnLogMaxItems(),
        c.txnLogMoreHint(),
        c.rejectUnselectedKeys(),
        c.parallelism(),
        c.revertInParallel(),
        c.operationListener());
  }

  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }
}
