package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.Map;

/**
 * A link with what {@code ip -d} tells of its kind: its master and the attributes of its kind.
 *
 * @param link the link (without its addresses)
 * @param master the host name of its master (a bridge, bond or VRF device), "" when none
 * @param parent the host name of the link it sits on (a macvlan's or VLAN's parent, a VXLAN's
 *     underlay device), "" when none or when it is in another namespace
 * @param info the attributes of its kind ({@code info_data}: {@code id}, {@code mode}, {@code
 *     stp_state}, ...), as text
 */
public record LinkDetails(Link link, String master, String parent, Map<String, String> info) {
  public LinkDetails {
    info = Map.copyOf(info);
  }
}
