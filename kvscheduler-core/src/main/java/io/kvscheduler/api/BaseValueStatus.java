package io.kvscheduler.api;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The status of a base value together with the statuses of its current derived values (sorted by
 * key).
 */
public record BaseValueStatus(ValueStatus value, List<ValueStatus> derived) {
  public BaseValueStatus {
    Objects.requireNonNull(value, "value");
    derived = List.copyOf(derived);
  }

  /** Shorthand for {@code value().key()}. */
  public String key() {
    return value.key();
  }

  /** Shorthand for {@code value().state()}. */
  public ValueState state() {
    return value.state();
  }

  /** The status of derived key {@code key}, if it is one of this value's derived values. */
  public Optional<ValueStatus> derivedStatus(String key) {
    return derived.stream().filter(s -> s.key().equals(key)).findFirst();
  }
}
