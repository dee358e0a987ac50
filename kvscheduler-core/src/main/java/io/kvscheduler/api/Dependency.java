package io.kvscheduler.api;

import java.util.List;
import java.util.Objects;

/**
 * One dependency of a value: either a static key, or "any of" the keys that start with one of
 * {@link #keyPrefixes()} and are accepted by {@link #keySelector()} (the two are intersected). A
 * dependency is satisfied when at least one of its targets exists and is available. All
 * dependencies of a value must be satisfied (AND) before it is created.
 *
 * <p>Prefix dependencies are answered from an ordered key index in O(log n + matches). A dependency
 * with a selector and no prefixes is evaluated against every key (linear): prefer prefixes.
 *
 * @param label unique within the value; shown in the status details while the value is PENDING
 * @param key the static key, or {@code ""} for an any-of dependency
 * @param keyPrefixes prefixes of an any-of dependency (empty for a static key)
 * @param keySelector filter of an any-of dependency ({@link KeySelector#any()} when unused)
 */
public record Dependency(
    String label, String key, List<String> keyPrefixes, KeySelector keySelector) {

  public Dependency {
    Objects.requireNonNull(label, "label");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(keyPrefixes, "keyPrefixes (an empty list for none)");
    for (int i = 0; i < keyPrefixes.size(); i++) { // indexed: no iterator per dependency
      if (keyPrefixes.get(i) == null) {
        throw new NullPointerException("dependency '" + label + "' has a null key prefix");
      }
    }
    keyPrefixes = List.copyOf(keyPrefixes);
    Objects.requireNonNull(keySelector, "keySelector (KeySelector.any() when unused)");
    if (label.isEmpty()) {
      throw new IllegalArgumentException("dependency label must not be empty");
    }
    if (key.isEmpty() && keyPrefixes.isEmpty() && keySelector == KeySelector.any()) {
      throw new IllegalArgumentException(
          "dependency '" + label + "' names neither a key, nor key prefixes, nor a key selector");
    }
    if (!key.isEmpty() && (!keyPrefixes.isEmpty() || keySelector != KeySelector.any())) {
      throw new IllegalArgumentException(
          "dependency '" + label + "' mixes a static key with an any-of selection");
    }
  }

  /** A dependency on one exact key. */
  public static Dependency onKey(String label, String key) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("dependency '" + label + "' has an empty key");
    }
    return new Dependency(label, key, List.of(), KeySelector.any());
  }

  /** A dependency satisfied by any available key starting with one of {@code prefixes}. */
  public static Dependency anyOfPrefixes(String label, String... prefixes) {
    return new Dependency(label, "", List.of(prefixes), KeySelector.any());
  }

  /**
   * A dependency satisfied by any available key starting with one of {@code prefixes} (all keys
   * when empty) and accepted by {@code selector}.
   */
  public static Dependency anyOf(String label, List<String> prefixes, KeySelector selector) {
    return new Dependency(label, "", prefixes, selector);
  }

  /** True for an any-of dependency, false for a static key. */
  public boolean isAnyOf() {
    return key.isEmpty();
  }

  /** True when {@code candidate} is a target of this dependency. */
  public boolean matches(String candidate) {
    if (!isAnyOf()) {
      return key.equals(candidate);
    }
    if (!keyPrefixes.isEmpty()) {
      boolean any = false;
      for (String p : keyPrefixes) {
        if (candidate.startsWith(p)) {
          any = true;
          break;
        }
      }
      if (!any) {
        return false;
      }
    }
    return keySelector.test(candidate);
  }

  @Override
  public String toString() {
    if (!isAnyOf()) {
      return label + " -> " + key;
    }
    return label
        + " -> anyOf"
        + keyPrefixes
        + (keySelector == KeySelector.any() ? "" : "+selector");
  }
}
