package io.kvscheduler.agent.spi;

import com.google.protobuf.Message;

/**
 * Where a plugin publishes its notifications: events of its southbound that clients may follow,
 * such as the Linux plugin's interface state changes. Each notification is a protobuf message of
 * the plugin's domain (for example {@code ligato.linux.Notification}); the transports that stream
 * notifications (gRPC's {@code ConfiguratorService.Notify}) place it by its message type, so a
 * transport needs to know no plugin.
 */
@FunctionalInterface
public interface NotificationSink {

  /** Hands {@code notification} to the current subscribers (none: it is dropped). */
  void publish(Message notification);
}
