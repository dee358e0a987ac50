package io.kvscheduler.agent.internal.rest;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.sse.SseClient;
import io.javalin.http.sse.SseHandler;
import io.kvscheduler.agent.internal.rest.RestServer.EventStream;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server-sent event streams of the server: at most {@link RestLimits#eventClients} open at once
 * (one more gets 503 with {@code Retry-After}); each is written from a thread of its own ({@link
 * EventSender}), so a client that does not read holds up no other, and one that lets more than
 * {@link #EVENT_BACKLOG} events pile up is disconnected; an open stream gets a comment every {@link
 * #EVENT_HEARTBEAT}, so that the idle timeout does not close it.
 */
final class EventStreams {
  // the server's logger: its refusals are the server's
  private static final Logger LOG = LoggerFactory.getLogger(RestServer.class);

  /** How often an open event stream gets a comment, so that its idle connection stays open. */
  static final Duration EVENT_HEARTBEAT = Duration.ofSeconds(15);

  /** Events waiting for one event client; a client that lets more pile up is disconnected. */
  static final int EVENT_BACKLOG = 64;

  private final RestLimits limits;
  private final Semaphore eventSlots;
  private final Set<EventSender> eventClients = ConcurrentHashMap.newKeySet();
  private ScheduledExecutorService heartbeat;

  EventStreams(RestLimits limits) {
    this.limits = limits;
    this.eventSlots = new Semaphore(limits.eventClients());
  }

  /** Serves each of {@code routes} (path to stream) as {@code GET path} of {@code config}. */
  void register(JavalinConfig config, Map<String, EventStream> routes) {
    routes.forEach(
        (path, stream) -> {
          SseHandler sse = new SseHandler(client -> serve(client, stream));
          config.routes.get(path, ctx -> serveWithinLimit(ctx, sse));
        });
  }

  /** Starts the heartbeat of the open streams. */
  synchronized void start() {
    heartbeat =
        Executors.newSingleThreadScheduledExecutor(
            rn -> {
              Thread t = new Thread(rn, "kvs-rest-events");
              t.setDaemon(true);
              return t;
            });
    heartbeat.scheduleAtFixedRate(
        () -> eventClients.removeIf(c -> !c.comment("keep-alive")),
        EVENT_HEARTBEAT.toMillis(),
        EVENT_HEARTBEAT.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Stops the heartbeat and closes every open stream. */
  void close() {
    synchronized (this) {
      if (heartbeat != null) {
        heartbeat.shutdownNow();
      }
    }
    eventClients.forEach(EventSender::close);
  }

  /**
   * Serves an event stream within {@link RestLimits#eventClients}: one more gets 503 with {@code
   * Retry-After}.
   */
  private void serveWithinLimit(Context ctx, SseHandler sse) throws Exception {
    if (!eventSlots.tryAcquire()) {
      LOG.warn(
          "REST GET {}: refused, {} event streams are open (the limit)",
          ctx.path(),
          limits.eventClients());
      ctx.header("Retry-After", "5");
      RestServer.send(
          ctx,
          Response.error(
              503,
              "too many event streams open ("
                  + limits.eventClients()
                  + ", the limit); try again later"));
      return;
    }
    boolean served = false;
    try {
      sse.handle(ctx);
      served = true;
    } finally {
      if (!served) {
        eventSlots.release();
      }
    }
  }

  private void serve(SseClient client, EventStream stream) {
    client.keepAlive();
    // sent from a thread of the client's own: one that does not read holds up no other
    EventSender sender = new EventSender(client, EVENT_BACKLOG);
    eventClients.add(sender);
    AutoCloseable subscription =
        stream.subscribe(
            data -> {
              if (!sender.event("status", data)) {
                throw new IllegalStateException("event client gone");
              }
            });
    AtomicBoolean released = new AtomicBoolean();
    // the one close callback of the client (another would replace it)
    client.onClose(
        () -> {
          if (released.compareAndSet(false, true)) {
            eventSlots.release();
          }
          eventClients.remove(sender);
          sender.close();
          try {
            subscription.close();
          } catch (Exception e) {
            LOG.debug("closing an event subscription failed", e);
          }
        });
  }
}
