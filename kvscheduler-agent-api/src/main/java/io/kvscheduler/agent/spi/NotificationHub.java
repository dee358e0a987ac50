package io.kvscheduler.agent.spi;

import com.google.protobuf.Message;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's notification sink: plugins publish into it, transports subscribe to it. A
 * notification goes to every subscriber on the publisher's thread, in subscription order; one that
 * throws is logged and does not keep the notification from the others.
 *
 * <p>Plugins start before the transports: what they publish while nobody subscribes yet (the states
 * they find at start) is kept, the latest {@value #KEPT_UNTIL_SUBSCRIBED} notifications, and handed
 * to the first subscriber before anything newer.
 */
public final class NotificationHub implements NotificationSink {
  private static final Logger LOG = LoggerFactory.getLogger(NotificationHub.class);

  /** Notifications kept while nobody subscribes, at most: {@value}. */
  public static final int KEPT_UNTIL_SUBSCRIBED = 1024;

  private final List<Consumer<? super Message>> subscribers = new CopyOnWriteArrayList<>();

  /** What was published before the first subscriber came; null once one came. */
  private ArrayDeque<Message> early = new ArrayDeque<>();

  @Override
  public void publish(Message notification) {
    Objects.requireNonNull(notification, "notification");
    synchronized (this) {
      if (early != null) {
        if (early.size() == KEPT_UNTIL_SUBSCRIBED) {
          early.removeFirst();
        }
        early.addLast(notification);
        return;
      }
    }
    for (Consumer<? super Message> s : subscribers) {
      deliver(s, notification);
    }
  }

  private static void deliver(Consumer<? super Message> s, Message notification) {
    try {
      s.accept(notification);
    } catch (RuntimeException e) {
      LOG.warn(
          "a subscriber refused the notification {}: {}",
          notification.getDescriptorForType().getFullName(),
          e.toString());
    }
  }

  /**
   * Calls {@code subscriber} with every notification published from now on (the first subscriber
   * first gets those kept from before it came); close the returned handle to stop.
   */
  public AutoCloseable subscribe(Consumer<? super Message> subscriber) {
    Consumer<? super Message> s = Objects.requireNonNull(subscriber, "subscriber");
    synchronized (this) {
      if (early != null) {
        early.forEach(n -> deliver(s, n));
        early = null;
      }
      subscribers.add(s);
    }
    return () -> subscribers.remove(s);
  }

  /** The number of subscribers. */
  public int subscribers() {
    return subscribers.size();
  }
}
