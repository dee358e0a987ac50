package io.kvscheduler.agent.internal.logging;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * The agent's recent log, kept in memory for bug reports: the last {@code capacity} lines of what
 * the agent logs (transaction logs included), as the console shows them. Attached to logback when
 * logback is the logging backend; otherwise it stays empty and says why.
 */
public final class LogTail extends AppenderBase<ILoggingEvent> {
  /** Loggers the tail listens to: the root, and the transaction log, which does not add up. */
  private static final List<String> LOGGERS =
      List.of(org.slf4j.Logger.ROOT_LOGGER_NAME, "io.kvscheduler.txn");

  private final int capacity;
  private final ArrayDeque<String> lines;
  private final PatternLayout layout = new PatternLayout();
  private final List<Logger> attachedTo = new ArrayList<>();
  private long dropped;

  /** Whether {@link #attach} found another logging backend than logback. */
  private boolean notLogback;

  /** A tail of at most {@code capacity} lines (not yet attached). */
  public LogTail(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, got " + capacity);
    }
    this.capacity = capacity;
    this.lines = new ArrayDeque<>(Math.min(capacity, 1024));
    setName("kvs-log-tail");
  }

  /** Attaches the tail to the logging backend; returns whether it could (logback present). */
  public synchronized boolean attach() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
      notLogback = true;
      return false;
    }
    setContext(ctx);
    layout.setContext(ctx);
    // control characters escaped, as on the console (see logback.xml)
    layout.getInstanceConverterMap().put("safemsg", EscapedMessageConverter::new);
    layout.getInstanceConverterMap().put("safeex", EscapedThrowableConverter::new);
    layout.setPattern("%d{HH:mm:ss.SSS} %-5level %logger{30} - %safemsg%n%safeex{short}");
    layout.start();
    start();
    for (String name : LOGGERS) {
      Logger l = ctx.getLogger(name);
      l.addAppender(this);
      attachedTo.add(l);
    }
    return true;
  }

  /** Detaches from the logging backend. */
  public synchronized void detach() {
    attachedTo.forEach(l -> l.detachAppender(this));
    attachedTo.clear();
    stop();
  }

  @Override
  protected synchronized void append(ILoggingEvent event) {
    String text = layout.doLayout(event);
    for (String line : text.split("\n", -1)) {
      if (line.isEmpty()) {
        continue;
      }
      if (lines.size() == capacity) {
        lines.removeFirst();
        dropped++;
      }
      lines.addLast(line);
    }
  }

  /** The kept lines, oldest first, after a note of how many older lines were dropped. */
  public synchronized String text() {
    StringBuilder b = new StringBuilder();
    if (notLogback) {
      b.append("(the log tail is not attached: logback is not the logging backend)\n");
    }
    if (dropped > 0) {
      b.append("(")
          .append(dropped)
          .append(" older lines not kept; the tail keeps the last ")
          .append(capacity)
          .append(")\n");
    }
    lines.forEach(l -> b.append(l).append('\n'));
    return b.toString();
  }
}
