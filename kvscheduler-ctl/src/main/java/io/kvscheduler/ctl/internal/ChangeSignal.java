package io.kvscheduler.ctl.internal;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Tells when the agent reports a change, from its stream of server-sent events: each event wakes
 * {@link #await}. Without a stream (the agent offers none, or it ended) {@link #await} just waits
 * the polling interval, so the caller reads again at that pace.
 */
final class ChangeSignal implements AutoCloseable {
  /** Longest wait for an event before the caller reads again anyway. */
  static final long MAX_QUIET_MILLIS = 30_000;

  private final InputStream stream;
  private final Semaphore events = new Semaphore(0);
  private volatile boolean live;

  private ChangeSignal(InputStream stream) {
    this.stream = stream;
    this.live = stream != null;
    if (stream != null) {
      Thread reader = new Thread(this::read, "kvsctl-events");
      reader.setDaemon(true);
      reader.start();
    }
  }

  /** Subscribes to the events at {@code path}; without them (404, refused), a polling signal. */
  static ChangeSignal open(AgentClient client, String path) {
    try {
      return new ChangeSignal(client.stream(path));
    } catch (CtlException e) {
      if (e.exitCode() == ExitCodes.UNREACHABLE) {
        throw e;
      }
      return new ChangeSignal(null);
    }
  }

  /** True while events arrive from the agent. */
  boolean live() {
    return live;
  }

  /**
   * Waits for the next change: an event (at most {@link #MAX_QUIET_MILLIS}) while the stream is
   * live, else {@code pollMillis}. Events that arrived meanwhile count as one.
   */
  void await(long pollMillis) throws InterruptedException {
    if (live) {
      events.tryAcquire(MAX_QUIET_MILLIS, TimeUnit.MILLISECONDS);
    } else {
      Thread.sleep(pollMillis);
    }
    events.drainPermits();
  }

  private void read() {
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("data:")) {
          events.release();
        }
      }
    } catch (IOException e) {
      // the agent went away or the stream was closed: polling from now on
    } finally {
      live = false;
      events.release(); // a waiting caller reads once more, then polls
    }
  }

  @Override
  public void close() {
    if (stream != null) {
      try {
        stream.close();
      } catch (IOException e) {
        // closing anyway
      }
    }
  }
}
