package io.kvscheduler.plugins.mock.util;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A file that makes the mock southbound outlive the agent's process, as a real data plane does:
 * every operation the mock southbound carries out is appended to it as one line before the call
 * returns, and a southbound opened on the file replays them. A process killed while appending
 * leaves at most one incomplete last line: that operation did not happen (its call never returned),
 * and opening the journal drops the line.
 *
 * <p>A line is its fields separated by tabs, the first naming the operation ({@code iface-create},
 * {@code bd-add}, ...); tabs, line feeds and backslashes inside fields are escaped. Thread-safe.
 */
public final class SouthboundJournal implements AutoCloseable {
  private final Path file;
  private final List<List<String>> replayed;
  private final OutputStream out;

  private SouthboundJournal(Path file, List<List<String>> replayed, OutputStream out) {
    this.file = file;
    this.replayed = replayed;
    this.out = out;
  }

  /**
   * Opens {@code file} (created when absent) for replay and appending; an incomplete last line is
   * cut off.
   *
   * @throws IOException when the file cannot be read or written
   */
  public static SouthboundJournal open(Path file) throws IOException {
    if (file.getParent() != null) {
      Files.createDirectories(file.getParent());
    }
    byte[] bytes = Files.exists(file) ? Files.readAllBytes(file) : new byte[0];
    int complete = bytes.length;
    while (complete > 0 && bytes[complete - 1] != '\n') {
      complete--;
    }
    List<List<String>> lines = lines(new String(bytes, 0, complete, StandardCharsets.UTF_8));
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      ch.truncate(complete);
    }
    OutputStream out = Files.newOutputStream(file, StandardOpenOption.APPEND);
    return new SouthboundJournal(file, lines, out);
  }

  /**
   * The complete lines of {@code file} (none when it does not exist), without opening it for
   * writing: to look at what a southbound holds from outside.
   *
   * @throws IOException when the file cannot be read
   */
  public static List<List<String>> read(Path file) throws IOException {
    if (!Files.exists(file)) {
      return new ArrayList<>();
    }
    return lines(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
  }

  /** The complete lines of {@code text}, split into fields. */
  private static List<List<String>> lines(String text) {
    List<List<String>> out = new ArrayList<>();
    int start = 0;
    for (int nl; (nl = text.indexOf('\n', start)) >= 0; start = nl + 1) {
      out.add(split(text.substring(start, nl)));
    }
    return out;
  }

  /** The file. */
  public Path file() {
    return file;
  }

  /** The operations found in the file when it was opened, in order. */
  public List<List<String>> replayed() {
    return replayed;
  }

  /**
   * Appends one operation, unbuffered: once this returns, the line is in the file (the kernel's
   * page cache), however the process ends.
   *
   * @throws UncheckedIOException when the file cannot be written
   */
  public synchronized void append(Object... fields) {
    StringBuilder b = new StringBuilder();
    for (Object f : fields) {
      if (b.length() > 0) {
        b.append('\t');
      }
      String s = String.valueOf(f);
      for (int i = 0; i < s.length(); i++) {
        char c = s.charAt(i);
        switch (c) {
          case '\t' -> b.append("\\t");
          case '\n' -> b.append("\\n");
          case '\\' -> b.append("\\\\");
          default -> b.append(c);
        }
      }
    }
    try {
      out.write(b.append('\n').toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the southbound journal " + file, e);
    }
  }

  private static List<String> split(String line) {
    List<String> fields = new ArrayList<>();
    StringBuilder f = new StringBuilder();
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == '\t') {
        fields.add(f.toString());
        f.setLength(0);
      } else if (c == '\\' && i + 1 < line.length()) {
        char n = line.charAt(++i);
        f.append(n == 't' ? '\t' : n == 'n' ? '\n' : n);
      } else {
        f.append(c);
      }
    }
    fields.add(f.toString());
    return fields;
  }

  @Override
  public synchronized void close() throws IOException {
    out.close();
  }
}
