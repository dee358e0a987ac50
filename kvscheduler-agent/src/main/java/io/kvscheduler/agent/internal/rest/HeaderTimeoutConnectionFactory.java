package io.kvscheduler.agent.internal.rest;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.internal.HttpConnection;
import org.eclipse.jetty.util.thread.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTP/1.1 connections whose request headers must arrive within a time: a connection that sends no
 * byte for that long after it opens, or whose request line and headers are still incomplete that
 * long after they started, is closed. Jetty parses headers without a thread, so a slow client costs
 * no thread, but it holds a connection and its buffers until the idle timeout, which each trickled
 * byte renews; this bounds that.
 *
 * <p>A kept-alive connection waiting for its next request is not affected (the idle timeout
 * applies), nor is a request whose body is being read (the minimum data rate applies).
 */
final class HeaderTimeoutConnectionFactory extends HttpConnectionFactory {
  private static final Logger LOG = LoggerFactory.getLogger(RestServer.class);

  private final long timeoutNanos;
  private final long periodMillis;

  HeaderTimeoutConnectionFactory(HttpConfiguration config, Duration timeout) {
    super(config);
    this.timeoutNanos = timeout.toNanos();
    this.periodMillis = Math.max(20, timeout.toMillis() / 4);
  }

  @Override
  public Connection newConnection(Connector connector, EndPoint endPoint) {
    Connection c = super.newConnection(connector, endPoint);
    if (c instanceof HttpConnection http) {
      new Watch(http, endPoint, connector.getScheduler()).next();
    }
    return c;
  }

  /** Checks one connection every {@link #periodMillis} until it closes. */
  private final class Watch implements Runnable {
    private final HttpConnection http;
    private final EndPoint endPoint;
    private final Scheduler scheduler;
    private final long opened = System.nanoTime();

    /** When the headers now awaited started (0: none awaited), and the request count then. */
    private long waitingSince;

    private long messagesThen;

    Watch(HttpConnection http, EndPoint endPoint, Scheduler scheduler) {
      this.http = http;
      this.endPoint = endPoint;
      this.scheduler = scheduler;
    }

    void next() {
      scheduler.schedule(this, periodMillis, TimeUnit.MILLISECONDS);
    }

    @Override
    public void run() {
      if (!endPoint.isOpen()) {
        return;
      }
      long now = System.nanoTime();
      boolean silent = http.getBytesIn() == 0;
      HttpParser parser = http.getParser();
      boolean inHeaders = !parser.isStart() && parser.inHeaderState();
      if (silent || inHeaders) {
        long messages = http.getMessagesIn();
        if (waitingSince == 0 || messages != messagesThen) {
          waitingSince = silent ? opened : now;
          messagesThen = messages;
        }
        if (now - waitingSince > timeoutNanos) {
          LOG.warn(
              "REST: closing the connection from {}: {} within {} ms",
              endPoint.getRemoteSocketAddress(),
              silent ? "it sent nothing" : "its request headers did not arrive",
              timeoutNanos / 1_000_000);
          endPoint.close();
          return;
        }
      } else {
        waitingSince = 0;
      }
      next();
    }
  }
}
