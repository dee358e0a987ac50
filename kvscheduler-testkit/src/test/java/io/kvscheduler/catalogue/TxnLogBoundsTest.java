package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.Txn;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The transaction log of a scheduler built with the defaults is bounded: a huge value and a
 * transaction of many operations cost the log a few kilobytes, and the hint about what was left out
 * names the library's API rather than an address only the agent serves.
 */
class TxnLogBoundsTest {
  private final MockSouthbound sb = new MockSouthbound();
  private KVScheduler kvs;

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  private void start() {
    ManualClock clock = new ManualClock();
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .build();
    kvs.registerDescriptors(sb.descriptor("blob", String.class).nbKeyPrefix("blob/").build());
  }

  /** Every logger at INFO, captured while open (the whole output, not only the txn logger). */
  private static final class AllLogs implements AutoCloseable {
    private final Logger root = (Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
    private final Logger txn = (Logger) LoggerFactory.getLogger("io.kvscheduler.txn");
    private final Level rootBefore = root.getLevel();
    private final Level txnBefore = txn.getLevel();
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    AllLogs() {
      appender.start();
      root.addAppender(appender);
      root.setLevel(Level.INFO);
      txn.setLevel(Level.INFO);
    }

    String text() {
      StringBuilder sb = new StringBuilder();
      for (ILoggingEvent e : appender.list) {
        sb.append(e.getFormattedMessage()).append('\n');
        if (e.getThrowableProxy() != null) {
          sb.append(e.getThrowableProxy().getMessage()).append('\n');
        }
      }
      return sb.toString();
    }

    @Override
    public void close() {
      root.detachAppender(appender);
      root.setLevel(rootBefore);
      txn.setLevel(txnBefore);
    }
  }

  @Test
  @DisplayName(
      "two commits of a 20 MB value write a few kilobytes of log, the value cut with its length")
  void hugeValueBounded() {
    start();
    String big = "y".repeat(20 << 20);
    try (AllLogs log = new AllLogs()) {
      kvs.startNBTransaction().setValue("blob/1", big).commit();
      kvs.startNBTransaction().setValue("blob/1", big + "z").commit();

      String text = log.text();
      assertThat(text).contains("- key: blob/1").contains("UPDATE");
      assertThat(text.length()).isLessThan(32 * 1024);
      assertThat(text).contains("… " + (big.length() + 1 - 1024) + " more characters");
    }
    // the history keeps the whole value
    assertThat(kvs.valueStatus("blob/1").value().state().name()).isEqualTo("CONFIGURED");
    assertThat(kvs.recordedTransaction(1).orElseThrow().executed().get(0).newValue())
        .hasValue(big + "z");
  }

  @Test
  @DisplayName(
      "a transaction of 5,000 operations lists 50 of them, then how many more and the API that"
          + " reads the whole record")
  void manyOperationsBounded() {
    start();
    try (AllLogs log = new AllLogs()) {
      Txn t = kvs.startNBTransaction();
      for (int i = 0; i < 5000; i++) {
        t.setValue(String.format("blob/%04d", i), "v" + i);
      }
      long seq = t.commit();

      String text = log.text();
      assertThat(text.length()).isLessThan(64 * 1024);
      assertThat(text).contains("50. CREATE").doesNotContain("51. CREATE");
      assertThat(text)
          .contains("… and 4950 more (KVScheduler.recordedTransaction(" + seq + ") has them all)")
          .doesNotContain("/scheduler/txn-history");
      assertThat(kvs.recordedTransaction(seq).orElseThrow().executed()).hasSize(5000);
    }
  }
}
