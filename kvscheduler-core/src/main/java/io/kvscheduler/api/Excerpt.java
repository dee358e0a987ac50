package io.kvscheduler.api;

/**
 * Bounded excerpts of user data for error messages and logs, and user data made safe to print.
 *
 * <p>A message that quotes a value or an input in full grows with it: a megabyte value quoted by a
 * validation error is a megabyte per error, kept in statuses and the transaction history, written
 * to the log and sent to clients. Every message that quotes user data quotes it through {@link
 * #quote}: the first {@value #MAX_QUOTED_CHARS} characters, then {@code … N more characters}. A
 * whole message built elsewhere (by a descriptor, say) is cut the same way at {@value
 * #MAX_MESSAGE_CHARS} characters by {@link #message}.
 *
 * <p>User data printed to a log or a terminal is {@link #escaped}: a key holding a line feed would
 * forge a log line of its own, an escape sequence would drive the terminal.
 */
public final class Excerpt {
  private Excerpt() {}

  /** Characters of a value or an input that a message quotes, at most: {@value}. */
  public static final int MAX_QUOTED_CHARS = 256;

  /**
   * Characters of an error message kept, at most (before the count of those left out): {@value}.
   */
  public static final int MAX_MESSAGE_CHARS = 1024;

  /**
   * {@code text} when it has at most {@link #MAX_QUOTED_CHARS} characters, else its beginning
   * followed by {@code … N more characters} (see {@link #cut}). {@code "null"} for null.
   */
  public static String quote(CharSequence text) {
    return cut(text, MAX_QUOTED_CHARS);
  }

  /** {@link #quote} of {@code String.valueOf(value)}. */
  public static String quote(Object value) {
    return quote(String.valueOf(value));
  }

  /**
   * {@code message} when it has at most {@link #MAX_MESSAGE_CHARS} characters, else its beginning
   * followed by {@code … N more characters} (see {@link #cut}). {@code "null"} for null.
   */
  public static String message(CharSequence message) {
    return cut(message, MAX_MESSAGE_CHARS);
  }

  /**
   * Characters beyond a limit that are kept rather than cut: cutting would save little, and a text
   * cut once is not cut again (its count of characters left out is shorter than this).
   */
  static final int SLACK = 64;

  /**
   * {@code text} when it has at most {@code max} characters (or a few more, up to {@code max + 64}:
   * cutting them would save little, and a text cut once stays as it is), else its first {@code max}
   * characters (one less when that would split a surrogate pair) followed by {@code … N more
   * characters}.
   *
   * @throws IllegalArgumentException if {@code max} is negative
   */
  public static String cut(CharSequence text, int max) {
    if (max < 0) {
      throw new IllegalArgumentException("max must not be negative, got " + max);
    }
    if (text == null) {
      return "null";
    }
    int len = text.length();
    if (len <= max + SLACK) {
      return text.toString();
    }
    int end = max;
    if (end > 0 && Character.isHighSurrogate(text.charAt(end - 1))) {
      end--;
    }
    return text.subSequence(0, end) + "… " + (len - end) + " more characters";
  }

  /**
   * {@code text} with its control characters escaped: the C0 controls (U+0000 to U+001F), DEL and
   * the C1 controls (U+0080 to U+009F) become {@code \n}, {@code \r}, {@code \t} or {@code \}{@code
   * uXXXX} (ESC is {@code \}{@code u001b}); every other character is kept as it is. The same string
   * when there is nothing to escape; {@code "null"} for null.
   */
  public static String escaped(CharSequence text) {
    return escaped(text, false);
  }

  /**
   * {@link #escaped(CharSequence)}, keeping line feeds when {@code keepLineFeeds}: for text whose
   * lines are laid out by the program (a transaction log), whose user data was escaped already.
   */
  public static String escaped(CharSequence text, boolean keepLineFeeds) {
    if (text == null) {
      return "null";
    }
    int len = text.length();
    int i = 0;
    while (i < len && !mustEscape(text.charAt(i), keepLineFeeds)) {
      i++;
    }
    if (i == len) {
      return text.toString();
    }
    StringBuilder sb = new StringBuilder(len + 16).append(text, 0, i);
    for (; i < len; i++) {
      char c = text.charAt(i);
      if (!mustEscape(c, keepLineFeeds)) {
        sb.append(c);
      } else if (c == '\n') {
        sb.append("\\n");
      } else if (c == '\r') {
        sb.append("\\r");
      } else if (c == '\t') {
        sb.append("\\t");
      } else {
        sb.append(String.format("\\u%04x", (int) c));
      }
    }
    return sb.toString();
  }

  private static boolean mustEscape(char c, boolean keepLineFeeds) {
    return (c < 0x20 && !(keepLineFeeds && c == '\n')) || (c >= 0x7f && c <= 0x9f);
  }
}
