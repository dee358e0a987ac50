package io.kvscheduler.agent.spi;

import com.google.protobuf.Message;
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
 */
public final class NotificationHub implements NotificationSink {
  private static final Logger LOG = LoggerFactory.getLogger(NotificationHub.class);

  private final List<Consumer<? super Message>> subscribers = new CopyOnWriteArrayList<>();

  @Override
  public void publish(Message notification) {
    Objects.requireNonNull(notification, "notification");
    for (Consumer<? super Message> s : subscribers) {
      try {
        s.accept(notification);
      } catch (RuntimeException e) {
        LOG.warn(
            "a subscriber refused the notification {}: {}",
            notification.getDescriptorForType().getFullName(),
            e.toString());
      }
    }
  }

  /**
   * Calls {@code subscriber} with every notification published from now on; close the returned
   * handle to stop.
   */
  public AutoCloseable subscribe(Consumer<? super Message> subscriber) {
    Consumer<? super Message> s = Objects.requireNonNull(subscriber, "subscriber");
    subscribers.add(s);
    return () -> subscribers.remove(s);
  }

  /** The number of subscribers. */
  public int subscribers() {
    return subscribers.size();
  }
}
