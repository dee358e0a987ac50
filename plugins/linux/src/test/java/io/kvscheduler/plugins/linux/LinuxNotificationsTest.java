package io.kvscheduler.plugins.linux;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.grpc.proto.linux.Notification;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceNotification;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceState;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.model.interfaces.Interface;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The watcher's link reads as the Linux domain's interface notifications. */
class LinuxNotificationsTest {
  final List<Notification> sent = new ArrayList<>();
  final LinuxNotifications notifications =
      new LinuxNotifications(
          sent::add, Clock.fixed(Instant.ofEpochSecond(1_700_000_000), ZoneOffset.UTC));

  static Link veth(String name, boolean up, int mtu) {
    return new Link(
        "", 7, name, "veth", "/vnf-agent/vpp1/" + name, up, mtu, "02:00:00:00:00:01", List.of());
  }

  InterfaceState state(int i) {
    InterfaceNotification n = sent.get(i).getInterface();
    assertThat(n.getType()).isEqualTo(InterfaceNotification.NotifType.UPDOWN);
    return n.getState();
  }

  @Test
  void oneNotificationPerNewChangedOrRemovedLink() {
    notifications.accept(List.of(veth("v1", true, 1500)));
    assertThat(sent).hasSize(1);
    assertThat(state(0))
        .isEqualTo(
            InterfaceState.newBuilder()
                .setName("/vnf-agent/vpp1/v1")
                .setInternalName("v1")
                .setType(Interface.Type.VETH)
                .setIfIndex(7)
                .setAdminStatus(InterfaceState.Status.UP)
                .setOperStatus(InterfaceState.Status.UP)
                .setLastChange(1_700_000_000)
                .setPhysAddress("02:00:00:00:00:01")
                .setMtu(1500)
                .build());

    notifications.accept(List.of(veth("v1", true, 1500))); // nothing changed
    assertThat(sent).hasSize(1);

    notifications.accept(List.of(veth("v1", false, 1500)));
    assertThat(state(1).getOperStatus()).isEqualTo(InterfaceState.Status.DOWN);

    notifications.accept(List.of(veth("v1", false, 9000)));
    assertThat(state(2).getMtu()).isEqualTo(9000);

    notifications.accept(List.of());
    assertThat(state(3).getOperStatus()).isEqualTo(InterfaceState.Status.DELETED);
    assertThat(state(3).getInternalName()).isEqualTo("v1");
    assertThat(sent).hasSize(4);
  }

  @Test
  void linkKindsAsInterfaceTypes() {
    assertThat(LinuxNotifications.type("dummy")).isEqualTo(Interface.Type.DUMMY);
    assertThat(LinuxNotifications.type("loopback")).isEqualTo(Interface.Type.LOOPBACK);
    assertThat(LinuxNotifications.type("vrf")).isEqualTo(Interface.Type.VRF_DEVICE);
    assertThat(LinuxNotifications.type("bridge")).isEqualTo(Interface.Type.UNDEFINED);
  }
}
