package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.api.InvalidValueException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** Collects every problem of a value, then rejects it once naming all fields. */
final class Invalid {
  private final List<String> reasons = new ArrayList<>();
  private final Set<String> fields = new LinkedHashSet<>();

  /** Records a problem with {@code fields}. */
  Invalid add(String reason, String... fieldNames) {
    reasons.add(reason);
    fields.addAll(List.of(fieldNames));
    return this;
  }

  /** Throws if a problem was recorded. */
  void throwIfAny() {
    if (!reasons.isEmpty()) {
      throw new InvalidValueException(String.join("; ", reasons), List.copyOf(fields));
    }
  }

  private static final Pattern MAC = Pattern.compile("[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}");

  /** Whether {@code s} is a MAC address ({@code 02:00:00:00:00:01}). */
  static boolean isMac(String s) {
    return MAC.matcher(s).matches();
  }
}
