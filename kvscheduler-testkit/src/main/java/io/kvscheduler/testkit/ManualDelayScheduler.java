package io.kvscheduler.testkit;

import io.kvscheduler.api.DelayScheduler;
import io.kvscheduler.api.Subscription;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A {@link DelayScheduler} driven by a {@link ManualClock}: tasks run when the test calls {@link
 * #advance(Duration)}, on the calling thread, in due-time order. No sleeping, fully deterministic.
 */
public final class ManualDelayScheduler implements DelayScheduler {
  private record Task(Instant due, long order, Runnable run, boolean[] cancelled) {}

  private final ManualClock clock;
  private final PriorityQueue<Task> tasks =
      new PriorityQueue<>(
          (a, b) -> a.due.equals(b.due) ? Long.compare(a.order, b.order) : a.due.compareTo(b.due));
  private long order;

  public ManualDelayScheduler(ManualClock clock) {
    this.clock = clock;
  }

  @Override
  public synchronized Subscription schedule(Duration delay, Runnable task) {
    boolean[] cancelled = {false};
    tasks.add(new Task(clock.peek().plus(delay), order++, task, cancelled));
    return () -> cancelled[0] = true;
  }

  /** Delays of the pending tasks, relative to now, in due order. */
  public synchronized List<Duration> pending() {
    List<Task> sorted = new ArrayList<>(tasks);
    sorted.sort(tasks.comparator());
    List<Duration> out = new ArrayList<>();
    for (Task t : sorted) {
      if (!t.cancelled[0]) {
        out.add(Duration.between(clock.peek(), t.due));
      }
    }
    return out;
  }

  /** Advances the clock by {@code d}, running every task that falls due, in order. */
  public void advance(Duration d) {
    Instant end = clock.peek().plus(d);
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.due.isAfter(end)) {
          break;
        }
        tasks.poll();
      }
      Duration step = Duration.between(clock.peek(), next.due);
      if (!step.isNegative()) {
        clock.advance(step);
      }
      if (!next.cancelled[0]) {
        next.run.run();
      }
    }
    Duration rest = Duration.between(clock.peek(), end);
    if (!rest.isNegative()) {
      clock.advance(rest);
    }
  }
}
