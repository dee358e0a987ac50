package io.kvscheduler.api;

/** Lenient parsing shared by the JSON-named enums. */
final class EnumNames {
  private EnumNames() {}

  static <E extends Enum<E>> E parse(Class<E> type, String token, E fallback) {
    if (token == null) {
      return fallback;
    }
    String t = token.strip();
    if (t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"")) {
      t = t.substring(1, t.length() - 1);
    }
    for (E e : type.getEnumConstants()) {
      if (e.toString().equals(t) || e.name().equals(t)) {
        return e;
      }
    }
    try {
      int code = Integer.parseInt(t);
      for (E e : type.getEnumConstants()) {
        if (codeOf(e) == code) {
          return e;
        }
      }
    } catch (NumberFormatException ignored) {
      // not a number: fall through
    }
    return fallback;
  }

  private static int codeOf(Enum<?> e) {
    if (e instanceof TxnType t) {
      return t.code();
    }
    if (e instanceof ResyncType r) {
      return r.code();
    }
    return e.ordinal();
  }
}
