package io.kvscheduler.plugins.mock.l2plugin.model;

import java.util.Optional;

/**
 * Keys of the L2 models: bridge domains {@code config/mock/v1/bridge-domain/<name>}, FIB entries
 * {@code config/mock/v1/fib/<bd>/mac/<mac>}, and the derived bindings {@code
 * mock/bd/<bd>/interface/<iface>}.
 */
public final class L2Model {
  /** Model name of bridge domains. */
  public static final String BD_MODEL_NAME = "mock.bridge-domain";

  /** Proto message name of bridge domains. */
  public static final String BD_PROTO_NAME = "mock.l2.BridgeDomain";

  /** Proto message name of a bridge-domain member (the binding value). */
  public static final String BD_INTERFACE_PROTO_NAME = "mock.l2.BridgeDomain.Interface";

  /** Model name of FIB entries. */
  public static final String FIB_MODEL_NAME = "mock.fib";

  /** Proto message name of FIB entries. */
  public static final String FIB_PROTO_NAME = "mock.l2.FIBEntry";

  /** Prefix of every bridge-domain key. */
  public static final String BD_KEY_PREFIX = "config/mock/v1/bridge-domain/";

  /** Prefix of every FIB key. */
  public static final String FIB_KEY_PREFIX = "config/mock/v1/fib/";

  private static final String BD_INTERFACE_TEMPLATE = "mock/bd/%s/interface/%s";
  private static final String INVALID = "<invalid>";

  private L2Model() {}

  /** Key of the bridge domain named {@code name}. */
  public static String bridgeDomainKey(String name) {
    return BD_KEY_PREFIX + name;
  }

  /** Key of {@code bd}. */
  public static String key(BridgeDomain bd) {
    return bridgeDomainKey(bd.name());
  }

  /** Whether {@code key} is a bridge-domain key (the prefix and a non-empty name). */
  public static boolean isBridgeDomainKey(String key) {
    return key.length() > BD_KEY_PREFIX.length() && key.startsWith(BD_KEY_PREFIX);
  }

  /** Key of the FIB entry for {@code mac} in bridge domain {@code bd}. */
  public static String fibKey(String bd, String mac) {
    return FIB_KEY_PREFIX + bd + "/mac/" + mac;
  }

  /** Key of {@code fib}. */
  public static String key(FibEntry fib) {
    return fibKey(fib.bridgeDomain(), fib.physAddress());
  }

  /** Whether {@code key} is a FIB key (the prefix and a non-empty rest). */
  public static boolean isFibKey(String key) {
    return key.length() > FIB_KEY_PREFIX.length() && key.startsWith(FIB_KEY_PREFIX);
  }

  /** Strips the model prefix from a BD or FIB key (the key itself when it has neither). */
  public static String label(String key) {
    if (isBridgeDomainKey(key)) {
      return key.substring(BD_KEY_PREFIX.length());
    }
    if (isFibKey(key)) {
      return key.substring(FIB_KEY_PREFIX.length());
    }
    return key;
  }

  /**
   * Key of the binding of interface {@code iface} to bridge domain {@code bd}; an empty part is
   * written {@code <invalid>}.
   */
  public static String bdInterfaceKey(String bd, String iface) {
    return String.format(
        BD_INTERFACE_TEMPLATE, bd.isEmpty() ? INVALID : bd, iface.isEmpty() ? INVALID : iface);
  }

  /** A parsed binding key. */
  public record BdInterfaceKey(String bridgeDomain, String iface) {}

  /**
   * Parses a binding key: at least five {@code /}-separated parts, {@code mock}, {@code bd} and
   * {@code interface} at positions 0, 1 and 3; the interface name is the rest (it may hold
   * slashes).
   */
  public static Optional<BdInterfaceKey> parseBdInterfaceKey(String key) {
    // every key of every transaction is offered to this descriptor's key selector: no split, no
    // copy for keys that are not the bindings' (W9 of BENCHMARKS.md)
    if (!key.startsWith(BD_INTERFACE_PREFIX)) {
      return Optional.empty();
    }
    int bdEnd = key.indexOf('/', BD_INTERFACE_PREFIX.length());
    if (bdEnd < 0 || !key.startsWith(BD_INTERFACE_INFIX, bdEnd)) {
      return Optional.empty();
    }
    return Optional.of(
        new BdInterfaceKey(
            key.substring(BD_INTERFACE_PREFIX.length(), bdEnd),
            key.substring(bdEnd + BD_INTERFACE_INFIX.length())));
  }

  private static final String BD_INTERFACE_PREFIX = "mock/bd/";
  private static final String BD_INTERFACE_INFIX = "/interface/";
}
