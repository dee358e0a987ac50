package io.kvscheduler.api;

import java.util.Objects;

/**
 * A key with a value. In derived-value lists the value must not be null; elsewhere a null value
 * means "delete".
 */
public record KeyValuePair(String key, Object value) {
  public KeyValuePair {
    Objects.requireNonNull(key, "key");
  }

  /** Shorthand constructor. */
  public static KeyValuePair of(String key, Object value) {
    return new KeyValuePair(key, value);
  }
}
