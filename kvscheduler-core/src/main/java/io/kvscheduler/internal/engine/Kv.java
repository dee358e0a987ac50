package io.kvscheduler.internal.engine;

import io.kvscheduler.api.ValueOrigin;

/**
 * One value to apply: key, value (null = delete), origin, revert marker and, for SB values, the
 * metadata supplied by the southbound.
 */
record Kv(String key, Object value, ValueOrigin origin, boolean revert, Object metadata) {
  static Kv nb(String key, Object value) {
    return new Kv(key, value, ValueOrigin.FROM_NB, false, null);
  }

  boolean fromSB() {
    return origin == ValueOrigin.FROM_SB;
  }
}
