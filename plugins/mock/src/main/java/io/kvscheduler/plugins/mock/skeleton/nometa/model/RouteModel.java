package io.kvscheduler.plugins.mock.skeleton.nometa.model;

/**
 * Keys of the route model: {@code config/skeleton/v1/route/<destination>}, e.g. {@code
 * config/skeleton/v1/route/10.1.0.0/16}. A key identifies a value: two routes to the same
 * destination are two revisions of one value.
 */
public final class RouteModel {
  /** Name of the value type: the descriptor's valueTypeName (a proto message name in vpp-agent). */
  public static final String TYPE_NAME = "skeleton.Route";

  /** Prefix of every route key: the descriptor's NB key prefix. */
  public static final String KEY_PREFIX = "config/skeleton/v1/route/";

  private RouteModel() {}

  /** Key of the route to {@code destination}. */
  public static String key(String destination) {
    return KEY_PREFIX + destination;
  }

  /** Key of {@code route}. */
  public static String key(Route route) {
    return key(route.destination());
  }

  /** Whether {@code key} is a route key: the prefix followed by a non-empty destination. */
  public static boolean isKey(String key) {
    return key.length() > KEY_PREFIX.length() && key.startsWith(KEY_PREFIX);
  }

  /** The destination of a route key (its label), the key itself when it is not one. */
  public static String destination(String key) {
    return isKey(key) ? key.substring(KEY_PREFIX.length()) : key;
  }
}
