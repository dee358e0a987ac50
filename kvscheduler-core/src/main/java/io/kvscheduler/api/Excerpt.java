package io.kvscheduler.api;

/**
 * Bounded excerpts of user data for error messages and logs.
 *
 * <p>A message that quotes a value or an input in full grows with it: a megabyte value quoted by a
 * validation error is a megabyte per error, kept in statuses and the transaction history, written
 * to the log and sent to clients. Every message that quotes user data quotes it through {@link
 * #quote}: the first {@value #MAX_QUOTED_CHARS} characters, then {@code … N more characters}. A
 * whole message built elsewhere (by a descriptor, say) is cut the same way at {@value
 * #MAX_MESSAGE_CHARS} characters by {@link #message}.
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
}
