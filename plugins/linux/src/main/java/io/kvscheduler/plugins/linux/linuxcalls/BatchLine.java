package io.kvscheduler.plugins.linux.linuxcalls;

import java.util.List;
import java.util.Optional;

/**
 * One command line of {@code ip -batch}, written so that {@code ip} reads back exactly its
 * arguments, or refused.
 *
 * <p>How {@code ip} (iproute2's {@code getcmdline} and {@code makeargs}) reads a line: it cuts the
 * line at the first {@code #} (even between quotes), joins a line ending in a backslash with the
 * next one, and splits it into words at spaces, tabs, CRs and line breaks. A word that begins with
 * {@code "} or {@code '} runs to the next such quote (no escapes; {@code ip} exits when there is
 * none); a quote elsewhere in a word is an ordinary character. C strings end at a NUL. So a word is
 * written bare unless it is empty, holds a space, tab or CR, begins with a quote or ends with a
 * backslash; then it is put between the quote character it does not hold. A word holding {@code #},
 * NUL or a line break, or needing quotes while holding both quote characters, cannot be written at
 * all, nor can a string that is not valid Unicode (the line is sent as UTF-8).
 */
public final class BatchLine {
  /** The most words {@code ip} takes in one line (it exits at more). */
  static final int MAX_WORDS = 511;

  private BatchLine() {}

  /**
   * Why {@code arg} cannot be one word of a line, or empty when it can.
   *
   * @param arg the word
   * @return the reason, in words that follow "cannot be written in an ip -batch line: "
   */
  public static Optional<String> problem(String arg) {
    if (arg.indexOf('\0') >= 0) {
      return Optional.of("it holds a NUL character, where ip's line ends");
    }
    if (arg.indexOf('\n') >= 0) {
      return Optional.of("it holds a line break");
    }
    if (arg.indexOf('#') >= 0) {
      return Optional.of("it holds '#', where ip cuts the line (a comment)");
    }
    for (int i = 0; i < arg.length(); i++) {
      char c = arg.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < arg.length()
          && Character.isLowSurrogate(arg.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return Optional.of("it is not valid Unicode (a lone surrogate)");
      }
    }
    if (needsQuotes(arg) && arg.indexOf('"') >= 0 && arg.indexOf('\'') >= 0) {
      return Optional.of(
          "it needs quotes (empty, with a space, tab or CR, beginning with a quote or ending with"
              + " a backslash) and holds both ' and \", so no quote can enclose it");
    }
    return Optional.empty();
  }

  private static boolean needsQuotes(String arg) {
    return arg.isEmpty()
        || arg.indexOf(' ') >= 0
        || arg.indexOf('\t') >= 0
        || arg.indexOf('\r') >= 0
        || arg.charAt(0) == '"'
        || arg.charAt(0) == '\''
        || arg.charAt(arg.length() - 1) == '\\';
  }

  /**
   * The line of {@code args}.
   *
   * @param args the words of the command, after {@code ip} and its options
   * @return the line, without its line break
   * @throws IllegalArgumentException when there is no word or too many, or a word cannot be written
   *     ({@link #problem}); the message names the word by its position and shows it escaped
   */
  public static String of(String... args) {
    return of(List.of(args));
  }

  /**
   * The line of {@code args}.
   *
   * @param args the words of the command, after {@code ip} and its options
   * @return the line, without its line break
   * @throws IllegalArgumentException when there is no word or too many, or a word cannot be written
   *     ({@link #problem}); the message names the word by its position and shows it escaped
   */
  public static String of(List<String> args) {
    if (args.isEmpty() || args.size() > MAX_WORDS) {
      throw new IllegalArgumentException(
          "an ip -batch line takes 1 to " + MAX_WORDS + " words, not " + args.size());
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      Optional<String> problem = problem(a);
      if (problem.isPresent()) {
        throw new IllegalArgumentException(
            "argument "
                + (i + 1)
                + " of 'ip "
                + shown(args.get(0))
                + " ...', "
                + shown(a)
                + ", cannot be written in an ip -batch line: "
                + problem.get());
      }
      if (i > 0) {
        sb.append(' ');
      }
      if (needsQuotes(a)) {
        char quote = a.indexOf('"') >= 0 ? '\'' : '"';
        sb.append(quote).append(a).append(quote);
      } else {
        sb.append(a);
      }
    }
    return sb.toString();
  }

  /** The most characters {@link #shown} gives a value (before its quotes). */
  private static final int SHOWN = 60;

  /**
   * {@code value} fit to be shown in a message: between double quotes, control, format and line
   * separator characters and lone surrogates escaped ({@code \t}, {@code \r}, {@code \n}, else
   * {@code \}{@code uXXXX}), {@code "} and {@code \} escaped, cut to about 60 characters ({@code
   * ...} marks the cut).
   *
   * @param value any string
   * @return the value as it may appear in a message or log line
   */
  public static String shown(String value) {
    return shown(value, '"');
  }

  /**
   * {@code value} fit to be shown in a message, as {@link #shown(String)} but between {@code quote}
   * characters (which are escaped inside).
   *
   * @param value any string
   * @param quote the quote character around the value
   * @return the value as it may appear in a message or log line
   */
  public static String shown(String value, char quote) {
    StringBuilder sb = new StringBuilder();
    int cut = -1; // where the shown text is cut when it is too long
    int i = 0;
    while (i < value.length() && sb.length() <= SHOWN) {
      int c = value.codePointAt(i);
      String piece =
          switch (c) {
            case '\t' -> "\\t";
            case '\r' -> "\\r";
            case '\n' -> "\\n";
            case '\\' -> "\\\\";
            default ->
                c == quote
                    ? "\\" + quote
                    : plain(c) ? Character.toString(c) : String.format("\\u%04x", c);
          };
      if (cut < 0 && sb.length() + piece.length() > SHOWN - 3) {
        cut = sb.length();
      }
      sb.append(piece);
      i += Character.charCount(c);
    }
    if (i < value.length() || sb.length() > SHOWN) {
      return quote + sb.substring(0, cut) + "..." + quote;
    }
    return quote + sb.toString() + quote;
  }

  private static boolean plain(int c) {
    int type = Character.getType(c);
    return type != Character.CONTROL
        && type != Character.FORMAT
        && type != Character.LINE_SEPARATOR
        && type != Character.PARAGRAPH_SEPARATOR
        && type != Character.SURROGATE
        && type != Character.UNASSIGNED
        && type != Character.PRIVATE_USE;
  }
}
