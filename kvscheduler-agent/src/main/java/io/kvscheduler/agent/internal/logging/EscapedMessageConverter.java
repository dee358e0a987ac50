package io.kvscheduler.agent.internal.logging;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import io.kvscheduler.api.Excerpt;

/**
 * {@code %safemsg}: the message of a log event with its control characters escaped ({@link
 * Excerpt#escaped}), so that user data in it (a key holding a line feed, an escape sequence) can
 * neither forge a log line nor drive the terminal. The transaction log ({@value #TXN_LOGGER}) keeps
 * its line feeds: its lines are laid out by the scheduler, which escapes the user data in them.
 */
public final class EscapedMessageConverter extends ClassicConverter {
  /** The logger of the transaction log. */
  public static final String TXN_LOGGER = "io.kvscheduler.txn";

  @Override
  public String convert(ILoggingEvent event) {
    return Excerpt.escaped(event.getFormattedMessage(), TXN_LOGGER.equals(event.getLoggerName()));
  }
}
