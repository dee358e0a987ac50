package io.kvscheduler.agent.internal.rest;

import io.javalin.http.sse.SseClient;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends to one server-sent-events client from a thread of its own. Writing to a client blocks while
 * its connection's buffers are full, up to the idle timeout when the client does not read: sent
 * from the thread that makes the events, one such client would hold up every other client and that
 * thread. Here the maker only queues the event; at most {@code backlog} events wait, and a client
 * that lets more pile up is disconnected (it may connect again and read the state anew).
 */
final class EventSender implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(EventSender.class);

  private final SseClient client;
  private final BlockingQueue<Consumer<SseClient>> waiting;
  private final Thread thread;
  private final AtomicBoolean closed = new AtomicBoolean();

  EventSender(SseClient client, int backlog) {
    this.client = client;
    this.waiting = new ArrayBlockingQueue<>(backlog);
    this.thread = new Thread(this::run, "kvs-rest-event-sender");
    thread.setDaemon(true);
    thread.start();
  }

  /** Queues the event {@code name} with {@code data}; false when the client is gone. */
  boolean event(String name, String data) {
    return queue(c -> c.sendEvent(name, data));
  }

  /** Queues a comment (a keep-alive); false when the client is gone. */
  boolean comment(String text) {
    return queue(c -> c.sendComment(text));
  }

  private boolean queue(Consumer<SseClient> send) {
    if (closed.get() || client.terminated()) {
      close();
      return false;
    }
    if (!waiting.offer(send)) {
      LOG.warn(
          "REST event client {} disconnected: it does not read ({} events waiting)",
          client.ctx().req().getRemoteAddr(),
          waiting.size());
      close();
      return false;
    }
    return true;
  }

  private void run() {
    try {
      while (!closed.get()) {
        waiting.take().accept(client);
        if (client.terminated()) {
          close();
        }
      }
    } catch (InterruptedException e) {
      // closed
    } catch (RuntimeException e) {
      LOG.debug("sending to a REST event client failed; disconnecting it", e);
      close();
    }
  }

  /** Disconnects the client; events still waiting are dropped. */
  @Override
  public void close() {
    if (closed.getAndSet(true)) {
      return;
    }
    waiting.clear();
    if (Thread.currentThread() != thread) {
      thread.interrupt();
    }
    client.close();
  }
}
