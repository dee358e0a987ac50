package io.kvscheduler.agent.internal.format;

import java.util.Arrays;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.reader.ReaderException;
import org.yaml.snakeyaml.reader.StreamReader;
import org.yaml.snakeyaml.scanner.Constant;

/**
 * The character source of SnakeYAML's scanner, reading a whole document held in memory, in time
 * linear in its length.
 *
 * <p>SnakeYAML's own reader keeps a window of the code points ahead of the scanner and, whenever
 * the scanner looks further ahead than the window reaches, adds the next 1,024 characters by
 * copying the whole window. The scanner measures a token by looking ahead one character at a time
 * until the token ends, so a token of n characters costs n²/2,048 copied code points: a 16 MB
 * scalar some 10<sup>11</sup>, most of a minute. This reader grows the window to at least twice
 * what it holds whenever it needs more, so every code point is copied a bounded number of times.
 *
 * <p>It also bounds the look-ahead: the scanner looks ahead within one token at most (a scalar's
 * line, a comment, a run of spaces), so looking further than {@code maxLookahead} code points means
 * a token longer than that, refused with {@link TokenTooLong} before it is read whole.
 *
 * <p>Like SnakeYAML's reader it refuses characters YAML does not allow (controls other than tab,
 * line feed and carriage return) with a {@link ReaderException}, whose position is the code point
 * index in the document.
 */
final class LinearYamlReader extends StreamReader {
  private static final int MIN_READ = 1024;
  private static final String NAME = "'document'";

  /** A token (scalar line, comment, run of spaces) longer than the look-ahead limit. */
  static final class TokenTooLong extends YAMLException {
    private static final long serialVersionUID = 1L;
    private final int line;

    TokenTooLong(String message, int line) {
      super(message);
      this.line = line;
    }

    /** 1-based line where the token starts. */
    int line() {
      return line;
    }
  }

  private final String text;
  private final int maxLookahead;

  /** Chars of {@link #text} already decoded into the window. */
  private int textPos;

  private int[] window = new int[0];
  private int pointer;
  private int length;
  private int index;
  private int documentIndex;
  private int line;
  private int column;

  /** Code points moved from one window to the next, in all (the cost the window design bounds). */
  private long moved;

  LinearYamlReader(String text, int maxLookahead) {
    super("");
    this.text = text;
    this.maxLookahead = maxLookahead;
  }

  @Override
  public Mark getMark() {
    return new Mark(NAME, index, line, column, window, pointer);
  }

  @Override
  public void forward() {
    forward(1);
  }

  @Override
  public void forward(int n) {
    for (int i = 0; i < n && ensure(0); i++) {
      int c = window[pointer++];
      index++;
      documentIndex++;
      if (Constant.LINEBR.has(c) || (c == '\r' && ensure(0) && window[pointer] != '\n')) {
        line++;
        column = 0;
      } else if (c != 0xFEFF) {
        column++;
      }
    }
  }

  @Override
  public int peek() {
    return ensure(0) ? window[pointer] : 0;
  }

  @Override
  public int peek(int ahead) {
    return ensure(ahead) ? window[pointer + ahead] : 0;
  }

  @Override
  public String prefix(int n) {
    if (n == 0) {
      return "";
    }
    return ensure(n)
        ? new String(window, pointer, n)
        : new String(window, pointer, Math.min(n, length - pointer));
  }

  @Override
  public String prefixForward(int n) {
    String prefix = prefix(n);
    pointer += n;
    index += n;
    documentIndex += n;
    column += n;
    return prefix;
  }

  @Override
  public int getColumn() {
    return column;
  }

  @Override
  public int getDocumentIndex() {
    return documentIndex;
  }

  @Override
  public void resetDocumentIndex() {
    documentIndex = 0;
  }

  @Override
  public int getIndex() {
    return index;
  }

  @Override
  public int getLine() {
    return line;
  }

  /** Code points moved from one window to the next so far. */
  long moved() {
    return moved;
  }

  /** Whether the code point {@code ahead} positions after the pointer exists (reading on). */
  private boolean ensure(int ahead) {
    if (pointer + ahead >= length && textPos < text.length()) {
      fill(ahead);
    }
    return pointer + ahead < length;
  }

  /**
   * Moves the unread code points to the start of a new window and decodes more after them: at least
   * enough to reach {@code ahead}, and at least as many as are kept, so that the copying costs a
   * bounded amount per code point.
   */
  private void fill(int ahead) {
    if (ahead > maxLookahead) {
      throw new TokenTooLong(
          "more than "
              + maxLookahead
              + " characters without a break (a"
              + " scalar's line, a comment or a run of spaces) from line "
              + (line + 1)
              + ", column "
              + (column + 1)
              + " (limit "
              + maxLookahead
              + ")",
          line + 1);
    }
    int kept = length - pointer;
    int wanted = Math.max(Math.max(ahead + 1 - kept, kept), MIN_READ);
    int[] next = Arrays.copyOfRange(window, pointer, pointer + kept + wanted);
    moved += kept;
    int n = kept;
    while (n < next.length && textPos < text.length()) {
      int c = text.codePointAt(textPos);
      if (!StreamReader.isPrintable(c)) {
        throw new ReaderException(NAME, index + n, c, "special characters are not allowed");
      }
      next[n++] = c;
      textPos += Character.charCount(c);
    }
    window = n == next.length ? next : Arrays.copyOf(next, n);
    pointer = 0;
    length = n;
  }
}
