package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.ValueStatusListener;
import io.kvscheduler.internal.util.UserCode;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Value-status watchers. Statuses of one transaction are handed to the status executor as one task,
 * so a slow listener never blocks the engine; a listener that throws is logged and keeps its
 * subscription.
 */
public final class Watchers {
  private static final Logger LOG = LoggerFactory.getLogger(Watchers.class);

  private record Watch(KeySelector selector, ValueStatusListener listener) {}

  private final CopyOnWriteArrayList<Watch> watches = new CopyOnWriteArrayList<>();
  private final Executor executor;

  public Watchers(Executor executor) {
    this.executor = executor;
  }

  public Subscription add(KeySelector selector, ValueStatusListener listener) {
    Watch w = new Watch(selector, listener);
    watches.add(w);
    return () -> watches.remove(w);
  }

  /** True when at least one watcher is subscribed. */
  public boolean any() {
    return !watches.isEmpty();
  }

  public void deliver(List<BaseValueStatus> statuses) {
    if (statuses.isEmpty() || watches.isEmpty()) {
      return;
    }
    List<Watch> targets = List.copyOf(watches);
    try {
      executor.execute(
          () -> {
            for (Watch w : targets) {
              for (BaseValueStatus s : statuses) {
                boolean selected;
                try {
                  selected = w.selector.test(s.key());
                } catch (Throwable e) { // user code (an AssertionError of a test, too)
                  e = UserCode.contained(e);
                  LOG.warn("status watcher selector failed for {}", s.key(), e);
                  continue;
                }
                if (!selected) {
                  continue;
                }
                try {
                  w.listener.onStatus(s);
                } catch (Throwable e) {
                  e = UserCode.contained(e);
                  LOG.warn("status watcher failed for {}", s.key(), e);
                }
              }
            }
          });
    } catch (RejectedExecutionException e) {
      LOG.warn("status delivery rejected; {} statuses dropped", statuses.size());
    } catch (Throwable e) { // the status executor is the user's (a direct one runs the listeners)
      e = UserCode.contained(e);
      LOG.warn("status delivery failed; {} statuses may be dropped", statuses.size(), e);
    }
  }
}
