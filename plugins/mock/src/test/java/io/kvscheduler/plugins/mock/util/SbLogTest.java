package io.kvscheduler.plugins.mock.util;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The mock southbound's log: a line per operation at INFO up to a threshold, then a summary. */
class SbLogTest {
  private final Logger logger = (Logger) LoggerFactory.getLogger("io.kvscheduler.plugins.mock.sb");
  private final ListAppender<ILoggingEvent> events = new ListAppender<>();
  private Level level;

  @BeforeEach
  void attach() {
    level = logger.getLevel();
    logger.setLevel(Level.DEBUG);
    events.start();
    logger.addAppender(events);
  }

  @AfterEach
  void detach() {
    logger.detachAppender(events);
    logger.setLevel(level);
  }

  private List<String> at(Level l) {
    return events.list.stream()
        .filter(e -> e.getLevel() == l)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  @Test
  void fewOperationsAreEachLoggedAtInfo() {
    SbPrinter printer = SbPrinter.logging();
    printer.print("Created TAP interface: tap1 (handle 0)");
    printer.print("Created LOOPBACK interface: loop1 (handle 1)");

    assertThat(at(Level.INFO))
        .containsExactly(
            "Created TAP interface: tap1 (handle 0)",
            "Created LOOPBACK interface: loop1 (handle 1)");
    assertThat(at(Level.DEBUG)).isEmpty();
  }

  @Test
  void operationsAboveTheThresholdAreLoggedAtDebugAndSummedUpAtInfo() {
    AtomicLong now = new AtomicLong(0);
    SbLog log = new SbLog(LoggerFactory.getLogger(logger.getName()), 3, 1_000_000_000L, now::get);
    for (int i = 0; i < 10; i++) {
      log.print("op " + i);
    }
    assertThat(at(Level.INFO)).containsExactly("op 0", "op 1", "op 2");
    assertThat(at(Level.DEBUG))
        .containsExactly("op 3", "op 4", "op 5", "op 6", "op 7", "op 8", "op 9");

    now.set(1_000_000_000L); // the next window: the summary first, then lines at INFO again
    log.print("op 10");
    assertThat(at(Level.INFO))
        .containsExactly(
            "op 0",
            "op 1",
            "op 2",
            "7 more southbound operations within 1000 ms, logged at DEBUG"
                + " (logger io.kvscheduler.plugins.mock.sb)",
            "op 10");
  }

  @Test
  void theSummaryComesWithoutAFurtherOperation() throws Exception {
    SbLog log =
        new SbLog(LoggerFactory.getLogger(logger.getName()), 1, 50_000_000L, System::nanoTime);
    log.print("op 0");
    log.print("op 1");
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (at(Level.INFO).size() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(at(Level.INFO))
        .containsExactly(
            "op 0",
            "1 more southbound operations within 50 ms, logged at DEBUG"
                + " (logger io.kvscheduler.plugins.mock.sb)");
  }
}
