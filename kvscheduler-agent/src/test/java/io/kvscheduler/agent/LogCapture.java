package io.kvscheduler.agent;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** The messages a class logs at INFO level and above while open (for asserting on logs). */
final class LogCapture implements AutoCloseable {
  private final Logger logger;
  private final Level level;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  LogCapture(Class<?> type) {
    this(type.getName());
  }

  /** Captures the logger {@code name}: a class, or a package and the classes in it. */
  LogCapture(String name) {
    logger = (Logger) LoggerFactory.getLogger(name);
    level = logger.getLevel();
    logger.setLevel(Level.INFO);
    appender.start();
    logger.addAppender(appender);
  }

  /** The formatted messages so far, in order. */
  List<String> messages() {
    synchronized (appender) {
      return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    logger.setLevel(level);
  }
}
