package io.kvscheduler.api;

import java.util.Objects;

/**
 * A value with its metadata and origin, as exchanged with Retrieve and SB notifications.
 *
 * @param key the key
 * @param value the value; null only in SB notifications, where it means "removed"
 * @param metadata run-time data of the value; may be null (no metadata)
 * @param origin who owns the value; {@link ValueOrigin#UNKNOWN} lets the scheduler decide
 */
public record KVWithMetadata<V, M>(String key, V value, M metadata, ValueOrigin origin) {
  public KVWithMetadata {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(origin, "origin");
  }

  /**
   * A value owned by the northbound, without metadata: what a Retrieve returns for a value the
   * northbound asked for (the scheduler then need not decide its origin).
   */
  public static <V, M> KVWithMetadata<V, M> fromNb(String key, V value) {
    return new KVWithMetadata<>(key, value, null, ValueOrigin.FROM_NB);
  }

  /** A value of unknown origin without metadata. */
  public static <V, M> KVWithMetadata<V, M> of(String key, V value) {
    return new KVWithMetadata<>(key, value, null, ValueOrigin.UNKNOWN);
  }
}
