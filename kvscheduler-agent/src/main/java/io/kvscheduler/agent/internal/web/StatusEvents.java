package io.kvscheduler.agent.internal.web;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.ValueStatus;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Status changes of values as events for live clients (the web page, through server-sent events):
 * the changes of one burst of transactions are gathered for a short {@code window} and sent as one
 * JSON event {@code {"changes":[{"key","state","derived"?}...]}}, so that a resync of many values
 * is one event, not thousands. A slow client never holds the engine: events are made on the
 * scheduler's status thread and delivered on {@code executor}.
 */
public final class StatusEvents implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StatusEvents.class);

  private final ScheduledExecutorService executor;
  private final Duration window;
  private final CopyOnWriteArrayList<Consumer<String>> clients = new CopyOnWriteArrayList<>();
  private final Map<String, BaseValueStatus> pending = new LinkedHashMap<>();
  private final Subscription subscription;
  private boolean flushScheduled;

  /** Events of {@code kvs}, gathered for {@code window}, delivered on a thread of their own. */
  public StatusEvents(KVScheduler kvs, Duration window) {
    this(
        kvs,
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kvs-status-events");
              t.setDaemon(true);
              return t;
            }),
        window);
  }

  /** Events of {@code kvs}, gathered for {@code window}, delivered on {@code executor}. */
  public StatusEvents(KVScheduler kvs, ScheduledExecutorService executor, Duration window) {
    this.executor = executor;
    this.window = window;
    this.subscription = kvs.watchValueStatus(KeySelector.any(), this::onStatus);
  }

  /** Adds a client; it receives every later event until the returned handle is closed. */
  public AutoCloseable subscribe(Consumer<String> client) {
    clients.add(client);
    return () -> clients.remove(client);
  }

  /** Number of connected clients. */
  public int clients() {
    return clients.size();
  }

  private synchronized void onStatus(BaseValueStatus s) {
    if (clients.isEmpty()) {
      return;
    }
    pending.put(s.key(), s);
    if (!flushScheduled) {
      flushScheduled = true;
      executor.schedule(this::flush, window.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  private void flush() {
    Map<String, BaseValueStatus> batch;
    synchronized (this) {
      batch = new LinkedHashMap<>(pending);
      pending.clear();
      flushScheduled = false;
    }
    if (batch.isEmpty()) {
      return;
    }
    ObjectNode event = JsonNodeFactory.instance.objectNode();
    ArrayNode changes = event.putArray("changes");
    for (BaseValueStatus s : batch.values()) {
      add(changes, s.value());
      s.derived().forEach(d -> add(changes, d).put("derived", true));
    }
    String json = event.toString();
    for (Consumer<String> c : clients) {
      try {
        c.accept(json);
      } catch (RuntimeException e) {
        LOG.debug("status event client failed; removing it", e);
        clients.remove(c);
      }
    }
  }

  private static ObjectNode add(ArrayNode changes, ValueStatus v) {
    ObjectNode n = changes.addObject();
    n.put("key", v.key());
    n.put("state", v.state().name());
    return n;
  }

  @Override
  public void close() {
    subscription.close();
    clients.clear();
    executor.shutdownNow();
  }
}
