package io.kvscheduler.api;

/** A predicate over keys. Must be pure and fast; it is called on the engine thread. */
@FunctionalInterface
public interface KeySelector {
  /** Returns true when {@code key} is selected. */
  boolean test(String key);

  /** A selector that accepts every key. */
  static KeySelector any() {
    return AnyKey.INSTANCE;
  }

  /** A selector accepting keys that start with {@code prefix}. */
  static KeySelector prefix(String prefix) {
    return key -> key.startsWith(prefix);
  }

  /** A selector accepting exactly {@code key}. */
  static KeySelector exact(String key) {
    return key::equals;
  }
}

/** Singleton behind {@link KeySelector#any()}, recognisable by the engine. */
enum AnyKey implements KeySelector {
  INSTANCE;

  @Override
  public boolean test(String key) {
    return true;
  }
}
