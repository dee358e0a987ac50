package io.kvscheduler.plugins.mock.skeleton.withmeta.model;

import java.util.Optional;

/**
 * Keys of the tunnel model: tunnels {@code config/skeleton/v1/tunnel/<name>} (NB values) and their
 * derived addresses {@code skeleton/tunnel/<name>/address/<prefix>}. Derived keys live outside the
 * NB prefix: the northbound never writes them.
 */
public final class TunnelModel {
  /** Name of the tunnel value type. */
  public static final String TYPE_NAME = "skeleton.Tunnel";

  /** Name of the tunnel-address value type. */
  public static final String ADDRESS_TYPE_NAME = "skeleton.Tunnel.Address";

  /** Prefix of every tunnel key: the descriptor's NB key prefix. */
  public static final String KEY_PREFIX = "config/skeleton/v1/tunnel/";

  /** Prefix of every tunnel-address key. */
  public static final String ADDRESS_KEY_PREFIX = "skeleton/tunnel/";

  private static final String ADDRESS_INFIX = "/address/";

  private TunnelModel() {}

  /** Key of the tunnel named {@code name}. */
  public static String key(String name) {
    return KEY_PREFIX + name;
  }

  /** Key of {@code tunnel}. */
  public static String key(Tunnel tunnel) {
    return key(tunnel.name());
  }

  /** Whether {@code key} is a tunnel key: the prefix followed by a name without {@code /}. */
  public static boolean isKey(String key) {
    return key.length() > KEY_PREFIX.length()
        && key.startsWith(KEY_PREFIX)
        && key.indexOf('/', KEY_PREFIX.length()) < 0;
  }

  /** The tunnel name of a tunnel key (its label), the key itself when it is not one. */
  public static String name(String key) {
    return isKey(key) ? key.substring(KEY_PREFIX.length()) : key;
  }

  /** Key of address {@code address} of tunnel {@code tunnel}. */
  public static String addressKey(String tunnel, String address) {
    return ADDRESS_KEY_PREFIX + tunnel + ADDRESS_INFIX + address;
  }

  /** Parses a tunnel-address key. */
  public static Optional<TunnelAddress> parseAddressKey(String key) {
    if (!key.startsWith(ADDRESS_KEY_PREFIX)) {
      return Optional.empty();
    }
    int infix = key.indexOf(ADDRESS_INFIX, ADDRESS_KEY_PREFIX.length());
    if (infix <= ADDRESS_KEY_PREFIX.length() || infix + ADDRESS_INFIX.length() == key.length()) {
      return Optional.empty();
    }
    return Optional.of(
        new TunnelAddress(
            key.substring(ADDRESS_KEY_PREFIX.length(), infix),
            key.substring(infix + ADDRESS_INFIX.length())));
  }

  /** Whether {@code key} is a tunnel-address key. */
  public static boolean isAddressKey(String key) {
    return parseAddressKey(key).isPresent();
  }
}
