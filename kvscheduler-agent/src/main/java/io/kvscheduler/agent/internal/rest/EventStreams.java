package io.kvscheduler.agent.internal.rest;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.sse.SseClient;
import io.javalin.http.sse.SseHandler;
import io.kvscheduler.agent.internal.rest.RestServer.EventStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Locale;
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
 *
 * <p>A client that sends no {@code Accept} header, or one accepting any type ({@code *}{@code /*},
 * {@code text/*}), gets the stream as one asking for {@code text/event-stream} does; one that
 * accepts only other types gets 406 naming the header to send.
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
    String accept = ctx.header("Accept");
    if (!acceptsEvents(accept)) {
      RestServer.send(
          ctx,
          Response.error(
              406,
              "GET "
                  + ctx.path()
                  + " sends server-sent events (text/event-stream), which 'Accept: "
                  + accept.strip()
                  + "' refuses: send 'Accept: text/event-stream' (or no Accept header)"));
      return;
    }
    if (accept == null || !accept.toLowerCase(Locale.ROOT).contains(EVENT_STREAM)) {
      // Javalin streams only to a request whose Accept header names the type
      ctx = askingForEvents(ctx);
    }
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

  private static final String EVENT_STREAM = "text/event-stream";

  /** Whether an {@code Accept} header (null: none) lets the answer be an event stream. */
  static boolean acceptsEvents(String accept) {
    if (accept == null || accept.isBlank()) {
      return true;
    }
    for (String range : accept.split(",")) {
      int semi = range.indexOf(';');
      String media = (semi < 0 ? range : range.substring(0, semi)).strip().toLowerCase(Locale.ROOT);
      if (media.equals(EVENT_STREAM) || media.equals("text/*") || media.equals("*/*")) {
        return true;
      }
    }
    return false;
  }

  /** {@code ctx} as if its request said {@code Accept: text/event-stream}. */
  private static Context askingForEvents(Context ctx) {
    InvocationHandler h =
        (proxy, method, args) -> {
          if (method.getName().equals("header")
              && args != null
              && args.length == 1
              && "Accept".equalsIgnoreCase(String.valueOf(args[0]))) {
            return EVENT_STREAM;
          }
          try {
            return method.invoke(ctx, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        };
    return (Context)
        Proxy.newProxyInstance(Context.class.getClassLoader(), new Class<?>[] {Context.class}, h);
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
