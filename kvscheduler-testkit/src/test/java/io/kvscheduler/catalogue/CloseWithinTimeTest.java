package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TxnOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * {@link KVScheduler#close(Duration)}: returns within the time given, even when a descriptor
 * callback ignores interrupts, says what it left behind, and nothing reaches the southbound after
 * it returned.
 */
@Timeout(30)
class CloseWithinTimeTest {
  private static final String PREFIX = "config/slow/";

  /** Lets the stubborn Create return. */
  private final CountDownLatch release = new CountDownLatch(1);

  /** The stubborn Create started. */
  private final CountDownLatch started = new CountDownLatch(1);

  /** Keys the southbound was asked to create. */
  private final List<String> created = new CopyOnWriteArrayList<>();

  private final Logger log = (Logger) LoggerFactory.getLogger("io.kvscheduler.internal.engine");
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  @AfterEach
  void releaseAll() {
    release.countDown();
    log.detachAppender(appender);
  }

  /** Creates "stubborn" values only once {@link #release}d, ignoring interrupts meanwhile. */
  private KVDescriptor<String, Void> stubborn() {
    return KVDescriptor.builder("stubborn", String.class)
        .nbKeyPrefix(PREFIX)
        .create(
            (key, value) -> {
              created.add(key);
              if (value.equals("stubborn")) {
                started.countDown();
                boolean interrupted = false;
                while (true) {
                  try {
                    release.await();
                    break;
                  } catch (InterruptedException e) {
                    interrupted = true; // ignored, on purpose
                  }
                }
                if (interrupted) {
                  Thread.currentThread().interrupt();
                }
              }
              return null;
            })
        .delete((key, value, meta) -> {})
        .build();
  }

  @Test
  @DisplayName(
      "close(Duration) with a callback ignoring interrupts returns in time, says so, and the"
          + " transaction's later calls never reach the southbound")
  void boundedByTheTimeGiven() throws Exception {
    appender.start();
    log.addAppender(appender);
    KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).threadName("kvs-close").build();
    kvs.registerDescriptors(stubborn());
    CompletableFuture<Long> f =
        kvs.startNBTransaction()
            .setValue(PREFIX + "a", "stubborn")
            .setValue(PREFIX + "b", "plain")
            .commitAsync(TxnOptions.defaults());
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

    long t0 = System.nanoTime();
    boolean clean = kvs.close(Duration.ofMillis(300));
    Duration took = Duration.ofNanos(System.nanoTime() - t0);

    assertThat(clean).isFalse();
    assertThat(took).isLessThan(Duration.ofSeconds(3));
    assertThat(appender.list)
        .filteredOn(e -> e.getLevel() == Level.WARN)
        .extracting(ILoggingEvent::getFormattedMessage)
        .anySatisfy(m -> assertThat(m).contains("left behind", "engine thread kvs-close"));
    // the callback returns at last: the transaction goes on, but calls nothing any more
    release.countDown();
    assertThat(f)
        .failsWithin(Duration.ofSeconds(10))
        .withThrowableThat()
        .withMessageContaining("scheduler was closed");
    assertThat(created).containsExactly(PREFIX + "a");
    assertThatThrownBy(() -> kvs.startNBTransaction().setValue(PREFIX + "c", "x").commit())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
  }

  @Test
  @DisplayName("close(Duration) of an idle scheduler returns true at once; closing again too")
  void idle() {
    KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
    kvs.registerDescriptors(stubborn());
    kvs.startNBTransaction().setValue(PREFIX + "a", "plain").commit();
    long t0 = System.nanoTime();
    assertThat(kvs.close(Duration.ofSeconds(5))).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
    assertThat(kvs.close(Duration.ZERO)).isTrue();
    assertThatThrownBy(() -> kvs.close(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
