package io.kvscheduler.plugins.linux.model;

import io.kvscheduler.plugins.linux.model.l3.ARPEntry;
import io.kvscheduler.plugins.linux.model.l3.Route;
import java.util.Locale;
import java.util.Optional;

/**
 * Keys of the Linux values, as vpp-agent spells them: NB keys of interfaces, routes and ARP
 * entries; derived keys of interface state, addresses and link-local routes; keys of the host state
 * the interface watcher reports.
 */
public final class LinuxKeys {
  private LinuxKeys() {}

  /** NB prefix of interfaces. */
  public static final String INTERFACE_PREFIX = "config/linux/interfaces/v2/interface/";

  /** NB prefix of routes. */
  public static final String ROUTE_PREFIX = "config/linux/l3/v2/route/";

  /** NB prefix of ARP entries. */
  public static final String ARP_PREFIX = "config/linux/l3/v2/arp/";

  /** NB prefix of the links of our extension package (bridges, VXLAN, macvlan, ...). */
  public static final String LINK_PREFIX = "config/linux/links/v1/link/";

  /** NB prefix of the ports of bridges, bonds and VRF devices (our extension package). */
  public static final String PORT_PREFIX = "config/linux/links/v1/port/";

  /** Prefix of the derived interface state properties. */
  public static final String STATE_PREFIX = "linux/interface/state/";

  /** Prefix of what the watcher reports about host interfaces. */
  public static final String HOST_NAME_PREFIX = "linux/interface/host-name/";

  /** Prefix of the derived link-local route properties. */
  public static final String LINK_LOCAL_ROUTE_PREFIX = "linux/link-local-route/";

  /** Address sources, as they appear in address keys. */
  public enum AddressSource {
    STATIC,
    ALLOC_REF,
    EXISTING;

    /** The lower-case spelling used in keys. */
    public String keyword() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Key of interface {@code name}. */
  public static String interfaceKey(String name) {
    return INTERFACE_PREFIX + name;
  }

  /** Key of link {@code name} (our extension package). */
  public static String linkKey(String name) {
    return LINK_PREFIX + name;
  }

  /** Key of the port {@code iface} (our extension package). */
  public static String portKey(String iface) {
    return PORT_PREFIX + iface;
  }

  /** Whether {@code key} is an interface key (a name without further {@code /}). */
  public static boolean isInterfaceKey(String key) {
    return key.startsWith(INTERFACE_PREFIX)
        && key.length() > INTERFACE_PREFIX.length()
        && key.indexOf('/', INTERFACE_PREFIX.length()) < 0;
  }

  /** The derived state property of interface {@code name}: {@code .../UP} or {@code .../DOWN}. */
  public static String stateKey(String name, boolean up) {
    return STATE_PREFIX + name + (up ? "/UP" : "/DOWN");
  }

  /** Prefix of the address keys of interface {@code name}. */
  public static String addressPrefix(String name) {
    return "linux/interface/" + (name.isEmpty() ? "<invalid>" : name) + "/address/";
  }

  /** Key of the derived address value {@code address} of interface {@code name}. */
  public static String addressKey(String name, AddressSource source, String address) {
    return addressPrefix(name) + source.keyword() + "/" + address;
  }

  /** The parts of an address key: interface name, source, address. */
  public record AddressKey(String iface, AddressSource source, String address) {}

  /** Parses an address key. */
  public static Optional<AddressKey> parseAddressKey(String key) {
    String p = "linux/interface/";
    if (!key.startsWith(p)) {
      return Optional.empty();
    }
    int at = key.indexOf("/address/", p.length());
    if (at < 0) {
      return Optional.empty();
    }
    String iface = key.substring(p.length(), at);
    String rest = key.substring(at + "/address/".length());
    int slash = rest.indexOf('/');
    if (iface.isEmpty() || iface.contains("/") || slash < 0 || slash == rest.length() - 1) {
      return Optional.empty();
    }
    for (AddressSource s : AddressSource.values()) {
      if (s.keyword().equals(rest.substring(0, slash))) {
        return Optional.of(new AddressKey(iface, s, rest.substring(slash + 1)));
      }
    }
    return Optional.empty();
  }

  /**
   * Key of the derived value binding interface {@code iface} to the VRF device interface {@code
   * vrf} ({@code vrf_master_interface}).
   */
  public static String vrfKey(String iface, String vrf) {
    return "linux/interface/" + iface + "/vrf/" + vrf;
  }

  /** The interface and VRF of a {@link #vrfKey}. */
  public record VrfKey(String iface, String vrf) {}

  /** Parses a {@link #vrfKey}. */
  public static Optional<VrfKey> parseVrfKey(String key) {
    String p = "linux/interface/";
    if (!key.startsWith(p)) {
      return Optional.empty();
    }
    int at = key.indexOf("/vrf/", p.length());
    if (at < 0) {
      return Optional.empty();
    }
    String iface = key.substring(p.length(), at);
    String vrf = key.substring(at + "/vrf/".length());
    if (iface.isEmpty() || iface.contains("/") || vrf.isEmpty() || vrf.contains("/")) {
      return Optional.empty();
    }
    return Optional.of(new VrfKey(iface, vrf));
  }

  /** Key the watcher reports while host link {@code hostName} exists and is up. */
  public static String hostNameKey(String hostName) {
    return HOST_NAME_PREFIX + hostName;
  }

  /** Key the watcher reports while {@code address} is on the up host link {@code hostName}. */
  public static String hostAddressKey(String hostName, String address) {
    return HOST_NAME_PREFIX + hostName + "/address/" + address;
  }

  /** Key of the link-local route property of {@code iface} to {@code dstNetwork}. */
  public static String linkLocalRouteKey(String iface, String dstNetwork) {
    return LINK_LOCAL_ROUTE_PREFIX + iface + "/dest-address/" + dstNetwork;
  }

  /**
   * The instance name of a route: the destination normalised to its network address, then the
   * outgoing interface ({@code 10.0.2.0/24/veth1}), then, for a route of a table other than main
   * (the {@code table} extension), {@code /table/<number>} ({@code 10.0.2.0/24/veth1/table/100}).
   */
  public static String routeName(Route r) {
    String dst = r.getDstNetwork();
    String net;
    if (dst.startsWith("alloc:")) {
      net = dst;
    } else {
      net = IpNet.parse(dst).map(n -> n.network().toString()).orElse("<invalid>/0");
    }
    String name = net + "/" + r.getOutgoingInterface();
    return r.getTable() == 0 ? name : name + "/table/" + Integer.toUnsignedString(r.getTable());
  }

  /** Key of a route. */
  public static String routeKey(Route r) {
    return ROUTE_PREFIX + routeName(r);
  }

  /** The instance name of an ARP entry: {@code <interface>/<ip>}. */
  public static String arpName(ARPEntry a) {
    return a.getInterface() + "/" + a.getIpAddress();
  }

  /** Key of an ARP entry. */
  public static String arpKey(ARPEntry a) {
    return ARP_PREFIX + arpName(a);
  }

  /** NB prefix of iptables rule chains. */
  public static final String RULE_CHAIN_PREFIX = "config/linux/iptables/v2/rulechain/";

  /** Key of the rule chain {@code name}. */
  public static String ruleChainKey(String name) {
    return RULE_CHAIN_PREFIX + name;
  }

  /**
   * The property a configured CUSTOM chain derives: {@code
   * linux/iptables/chain/<namespace>/<ipv4|ipv6>/<table>/<chain>} ({@code <default>} for the
   * agent's namespace).
   */
  public static String ruleChainExistsKey(
      String namespace, String family, String table, String chain) {
    return "linux/iptables/chain/" + namespace + "/" + family + "/" + table + "/" + chain;
  }
}
