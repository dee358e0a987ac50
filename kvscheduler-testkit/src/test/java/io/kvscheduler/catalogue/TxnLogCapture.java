package io.kvscheduler.catalogue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * The transaction log (logger {@code io.kvscheduler.txn}, switched to INFO) captured while open;
 * closing restores the logger. The test configuration keeps that logger at WARN otherwise.
 */
final class TxnLogCapture implements AutoCloseable {
  private final Logger log = (Logger) LoggerFactory.getLogger("io.kvscheduler.txn");
  private final Level before = log.getLevel();
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  TxnLogCapture() {
    appender.start();
    log.addAppender(appender);
    log.setLevel(Level.INFO);
  }

  /** The events logged so far. */
  List<ILoggingEvent> events() {
    return appender.list;
  }

  /** The formatted messages logged so far. */
  List<String> messages() {
    return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    log.detachAppender(appender);
    log.setLevel(before);
  }
}
