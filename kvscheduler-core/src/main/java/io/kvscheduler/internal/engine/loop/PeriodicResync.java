package io.kvscheduler.internal.engine.loop;

import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Queues a downstream resync every period (plus a random jitter), while the scheduler is open. */
public final class PeriodicResync {
  private static final Logger LOG = LoggerFactory.getLogger(PeriodicResync.class);

  private final SchedulerConfig config;
  private final EngineLoop loop;
  private final SplittableRandom jitter = new SplittableRandom();

  /**
   * True when the delay scheduler could not arm the next periodic resync: the engine arms it again
   * after the next item it processes (the periodic resyncs would stop otherwise).
   */
  private volatile boolean lost;

  /** Needs {@code config.downstreamResyncPeriod()}; nothing is armed before {@link #arm()}. */
  public PeriodicResync(SchedulerConfig config, EngineLoop loop) {
    this.config = config;
    this.loop = loop;
  }

  /** Arms the next periodic resync. */
  public void arm() {
    Duration delay = config.downstreamResyncPeriod();
    long j = config.downstreamResyncJitter().toMillis();
    if (j > 0) {
      delay = delay.plusMillis(jitter.nextLong(j + 1));
    }
    lost =
        config
                .delayScheduler()
                .schedule(
                    delay,
                    () -> {
                      if (loop.isClosed()) {
                        return;
                      }
                      Queued.Nb q =
                          new Queued.Nb(
                              List.of(),
                              TxnOptions.builder()
                                  .resync(ResyncType.DOWNSTREAM)
                                  .description("periodic downstream resync")
                                  .build(),
                              new CompletableFuture<>());
                      if (!loop.offer(q)) {
                        LOG.warn(
                            "periodic downstream resync skipped: the transaction queue is full");
                      }
                      arm();
                    })
            == GuardedTime.LOST;
  }

  /** Run by the engine after each item it processes: arms again a resync the scheduler lost. */
  public void rearmIfLost() {
    if (lost) {
      arm();
    }
  }
}
