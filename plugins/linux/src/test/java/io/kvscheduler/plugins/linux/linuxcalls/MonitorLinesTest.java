package io.kvscheduler.plugins.linux.linuxcalls;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Lines of {@code ip -o monitor link address} (iproute2 6.1) as link events. */
class MonitorLinesTest {
  @Test
  void linkLinesNameTheLinkByIndexWithTheNamesItMayHave() {
    assertThat(
            MonitorLines.parse(
                "3: xa@xb: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500"
                    + " qdisc noqueue state LOWERLAYERDOWN group default \\    link/ether 3a:81:0e:5d:6a:3c"
                    + " brd ff:ff:ff:ff:ff:ff"))
        .contains(new LinkEvent.Changed(3, List.of("xa", "xa@xb")));
    assertThat(
            MonitorLines.parse(
                "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state"
                    + " UNKNOWN group default \\    link/loopback 00:00:00:00:00:00 brd 00:00:00:00:00:00"))
        .contains(new LinkEvent.Changed(1, List.of("lo")));
    assertThat(
            MonitorLines.parse(
                "Deleted 3: xc@NONE: <BROADCAST,MULTICAST> mtu 1500 qdisc noop"
                    + " state DOWN group default \\    link/ether 3a:81:0e:5d:6a:3c brd ff:ff:ff:ff:ff:ff"))
        .contains(new LinkEvent.Removed(3));
  }

  @Test
  void addressLinesGiveTheAddressWithItsPrefixAndLeaveTheKernelsOwnOut() {
    assertThat(
            MonitorLines.parse(
                "3: xa    inet 10.0.0.1/24 scope global xc\\       valid_lft"
                    + " forever preferred_lft forever"))
        .contains(new LinkEvent.AddressAdded(3, "10.0.0.1/24"));
    assertThat(
            MonitorLines.parse(
                "Deleted 3: xa    inet 10.0.0.5 peer 10.0.0.6/32 scope global"
                    + " xc:2\\       valid_lft forever preferred_lft forever"))
        .contains(new LinkEvent.AddressRemoved(3, "10.0.0.5/32"));
    assertThat(
            MonitorLines.parse(
                "3: xa    inet6 fd00::1/64 scope global nodad \\       valid_lft"
                    + " forever preferred_lft forever"))
        .contains(new LinkEvent.AddressAdded(3, "fd00::1/64"));
    assertThat(
            MonitorLines.parse(
                "3: xa    inet6 fe80::38:81ff:fe0e:5d6a/64 scope link \\"
                    + "       valid_lft forever preferred_lft forever"))
        .isEmpty();
    assertThat(
            MonitorLines.parse(
                "1: lo    inet6 ::1/128 scope host \\       valid_lft forever"
                    + " preferred_lft forever"))
        .isEmpty();
  }

  @Test
  void anyOtherLineSaysEventsMayHaveBeenLost() {
    Optional<LinkEvent> e =
        MonitorLines.parse("netlink receive error No buffer space available (105)");
    assertThat(e).get().isInstanceOf(LinkEvent.Lost.class);
    assertThat(((LinkEvent.Lost) e.get()).ended()).isFalse();
    assertThat(MonitorLines.parse("3: xa    mpls 16 ...")).get().isInstanceOf(LinkEvent.Lost.class);
  }
}
