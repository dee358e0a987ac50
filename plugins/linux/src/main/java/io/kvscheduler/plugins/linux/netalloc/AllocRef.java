package io.kvscheduler.plugins.linux.netalloc;

import java.util.Optional;

/**
 * A reference to an allocated address: {@code alloc:<network>/<interface>} (the address of that
 * interface in that network), {@code alloc:<network>} (the interface is the one the reference is
 * written for), and either with {@code /GW} appended (the interface's gateway in the network).
 *
 * @param network the network's name
 * @param iface the interface's logical name
 * @param gw whether the gateway is meant rather than the interface's address
 */
public record AllocRef(String network, String iface, boolean gw) {
  /** What a reference starts with. */
  public static final String PREFIX = "alloc:";

  /** What a reference to a gateway ends with. */
  public static final String GW_SUFFIX = "/GW";

  /** Whether {@code s} is written as a reference (well formed or not). */
  public static boolean isRef(String s) {
    return s.startsWith(PREFIX);
  }

  /**
   * The reference {@code s} written for interface {@code ownIface} ("" when the reference must name
   * its interface): empty when {@code s} is not a reference.
   *
   * @throws IllegalArgumentException when {@code s} is a malformed reference (the message says why)
   */
  public static Optional<AllocRef> parse(String s, String ownIface) {
    if (!isRef(s)) {
      return Optional.empty();
    }
    String rest = s.substring(PREFIX.length());
    boolean gw = rest.endsWith(GW_SUFFIX);
    if (gw) {
      rest = rest.substring(0, rest.length() - GW_SUFFIX.length());
    }
    int slash = rest.indexOf('/');
    String network = slash < 0 ? rest : rest.substring(0, slash);
    String iface = slash < 0 ? "" : rest.substring(slash + 1);
    if (network.isEmpty()) {
      throw new IllegalArgumentException("the reference names no network");
    }
    if (iface.contains("/")) {
      throw new IllegalArgumentException(
          "a reference is alloc:<network>[/<interface>][/GW], with no further '/'");
    }
    if (slash >= 0 && iface.isEmpty()) {
      throw new IllegalArgumentException("the reference names an empty interface");
    }
    if (iface.isEmpty()) {
      if (ownIface.isEmpty()) {
        throw new IllegalArgumentException("the reference names no interface");
      }
      iface = ownIface;
    } else if (!ownIface.isEmpty() && !iface.equals(ownIface)) {
      throw new IllegalArgumentException(
          "the reference names another interface, where only the allocation of the interface"
              + " itself can be used");
    }
    return Optional.of(new AllocRef(network, iface, gw));
  }

  /** The key of the allocation this reference reads. */
  public String allocationKey() {
    return NetallocKeys.allocationKey(network, iface);
  }

  @Override
  public String toString() {
    return PREFIX + network + "/" + iface + (gw ? GW_SUFFIX : "");
  }
}
