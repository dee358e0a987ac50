package io.kvscheduler.plugins.linux.linuxcalls;

/**
 * Attributes to set on a link in one call; a null field is left as it is.
 *
 * @param alias the link alias
 * @param mtu the MTU
 * @param mac the hardware address
 * @param up up (true) or down (false)
 */
public record LinkSettings(String alias, Integer mtu, String mac, Boolean up) {
  /** Nothing to change. */
  public static LinkSettings none() {
    return new LinkSettings(null, null, null, null);
  }

  public LinkSettings withAlias(String a) {
    return new LinkSettings(a, mtu, mac, up);
  }

  public LinkSettings withMtu(Integer m) {
    return new LinkSettings(alias, m, mac, up);
  }

  public LinkSettings withMac(String m) {
    return new LinkSettings(alias, mtu, m, up);
  }

  public LinkSettings withUp(Boolean u) {
    return new LinkSettings(alias, mtu, mac, u);
  }

  /** Whether nothing is to be changed. */
  public boolean isEmpty() {
    return alias == null && mtu == null && mac == null && up == null;
  }
}
