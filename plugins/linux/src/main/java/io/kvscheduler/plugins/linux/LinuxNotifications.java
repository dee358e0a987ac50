package io.kvscheduler.plugins.linux;

import io.kvscheduler.grpc.proto.linux.Notification;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceNotification;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceState;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.time.Clock;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Turns the links the Linux interface watcher reads into the Linux domain's interface notifications
 * ({@code ligato.linux.Notification}, which transports such as gRPC's {@code Notify} stream): one
 * {@code UPDOWN} notification per link that appeared or whose state (up/down, index, MTU, MAC,
 * alias) changed, and one with status {@code DELETED} per link that disappeared. The state's {@code
 * name} is the link's alias (the agent's prefix and the logical name for the links the agent
 * created), {@code internal_name} the kernel's name.
 */
final class LinuxNotifications implements Consumer<List<Link>> {
  private final Consumer<Notification> publish;
  private final Clock clock;
  private final Map<String, Link> last = new HashMap<>();

  LinuxNotifications(Consumer<Notification> publish, Clock clock) {
    this.publish = publish;
    this.clock = clock;
  }

  @Override
  public synchronized void accept(List<Link> links) {
    Set<String> seen = new HashSet<>();
    for (Link l : links) {
      seen.add(l.name());
      Link before = last.put(l.name(), l);
      if (before == null
          || before.up() != l.up()
          || before.index() != l.index()
          || before.mtu() != l.mtu()
          || !before.mac().equals(l.mac())
          || !before.alias().equals(l.alias())) {
        publish.accept(
            notification(l, l.up() ? InterfaceState.Status.UP : InterfaceState.Status.DOWN));
      }
    }
    for (String gone : Set.copyOf(last.keySet())) {
      if (!seen.contains(gone)) {
        publish.accept(notification(last.remove(gone), InterfaceState.Status.DELETED));
      }
    }
  }

  private Notification notification(Link l, InterfaceState.Status status) {
    InterfaceState state =
        InterfaceState.newBuilder()
            .setName(l.alias())
            .setInternalName(l.name())
            .setType(type(l.kind()))
            .setIfIndex(l.index())
            .setAdminStatus(status)
            .setOperStatus(status)
            .setLastChange(clock.instant().getEpochSecond())
            .setPhysAddress(l.mac())
            .setMtu(Math.max(0, l.mtu()))
            .build();
    return Notification.newBuilder()
        .setInterface(
            InterfaceNotification.newBuilder()
                .setType(InterfaceNotification.NotifType.UPDOWN)
                .setState(state))
        .build();
  }

  /** The interface type of a link kind. */
  static Interface.Type type(String kind) {
    return switch (kind) {
      case "veth" -> Interface.Type.VETH;
      case "tun", "tap" -> Interface.Type.TAP_TO_VPP;
      case "loopback" -> Interface.Type.LOOPBACK;
      case "vrf" -> Interface.Type.VRF_DEVICE;
      case "dummy" -> Interface.Type.DUMMY;
      default -> Interface.Type.UNDEFINED;
    };
  }
}
