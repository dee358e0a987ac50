package io.kvscheduler.internal.engine.loop;

import io.kvscheduler.api.DelayScheduler;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.internal.util.UserCode;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The injected clock and delay scheduler, guarded: both are user code, called on the engine thread
 * in the middle of a transaction (and by readers of the history). A clock that throws is answered
 * by its last good instant (the system clock before it gave one); a delay scheduler that throws
 * loses that one task (a retry, or the next periodic resync), which is logged. Failures are logged
 * the first time and then once per 1000.
 */
public final class GuardedTime {
  private static final Logger LOG = LoggerFactory.getLogger(GuardedTime.class);

  private GuardedTime() {}

  /**
   * What the guarded delay scheduler returns for a task it could not schedule (the task will not
   * run; cancelling it does nothing).
   */
  public static final Subscription LOST = () -> {};

  static Clock clock(Clock c) {
    return c instanceof SafeClock ? c : new SafeClock(c);
  }

  static DelayScheduler delayScheduler(DelayScheduler d) {
    return d instanceof SafeDelays ? d : new SafeDelays(d);
  }

  private static boolean report(AtomicLong failures) {
    return failures.getAndIncrement() % 1000 == 0;
  }

  private static final class SafeClock extends Clock {
    private final Clock clock;
    private final AtomicLong failures = new AtomicLong();
    private volatile Instant last;

    SafeClock(Clock clock) {
      this.clock = clock;
    }

    @Override
    public Instant instant() {
      try {
        Instant now = clock.instant();
        if (now != null) {
          last = now;
          return now;
        }
        throw new NullPointerException("the clock returned null");
      } catch (Throwable t) {
        t = UserCode.contained(t);
        Instant fallback = last != null ? last : Instant.now();
        if (report(failures)) {
          LOG.error(
              "the scheduler's clock failed; using {} (failures so far: {})",
              fallback,
              failures.get(),
              t);
        }
        return fallback;
      }
    }

    @Override
    public ZoneId getZone() {
      try {
        return clock.getZone();
      } catch (Throwable t) {
        UserCode.rethrowFatal(t);
        return ZoneOffset.UTC;
      }
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return new SafeClock(clock.withZone(zone));
    }
  }

  private static final class SafeDelays implements DelayScheduler {
    private final DelayScheduler delays;
    private final AtomicLong failures = new AtomicLong();

    SafeDelays(DelayScheduler delays) {
      this.delays = delays;
    }

    @Override
    public Subscription schedule(Duration delay, Runnable task) {
      try {
        Subscription s = delays.schedule(delay, task);
        return s != null ? s : () -> {};
      } catch (RejectedExecutionException e) {
        LOG.debug("a task due in {} was rejected (the scheduler is closing)", delay, e);
        return LOST;
      } catch (Throwable t) {
        t = UserCode.contained(t);
        if (report(failures)) {
          LOG.error(
              "the scheduler's delay scheduler failed; a task due in {} (a retry or a"
                  + " periodic resync) is lost (failures so far: {})",
              delay,
              failures.get(),
              t);
        }
        return LOST;
      }
    }
  }
}
