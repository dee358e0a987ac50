package io.kvscheduler.plugins.mock.ifplugin.model;

/** Keys of the interface model: {@code config/mock/v1/interfaces/<name>}. */
public final class InterfaceModel {
  /** Model name as the reference registers it. */
  public static final String MODEL_NAME = "mock.interfaces";

  /** Proto message name of the values. */
  public static final String PROTO_NAME = "mock.interfaces.Interface";

  /** Prefix of every interface key. */
  public static final String KEY_PREFIX = "config/mock/v1/interfaces/";

  private InterfaceModel() {}

  /** Key of the interface named {@code name}. */
  public static String key(String name) {
    return KEY_PREFIX + name;
  }

  /** Key of {@code iface} (computed from its name). */
  public static String key(Interface iface) {
    return key(iface.name());
  }

  /** Whether {@code key} is an interface key: the prefix followed by a non-empty name. */
  public static boolean isKey(String key) {
    return key.length() > KEY_PREFIX.length() && key.startsWith(KEY_PREFIX);
  }

  /** The interface name of an interface key, the key itself when it is not one. */
  public static String name(String key) {
    return isKey(key) ? key.substring(KEY_PREFIX.length()) : key;
  }
}
