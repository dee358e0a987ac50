package io.kvscheduler.agent.internal.northbound;

import io.kvscheduler.agent.internal.format.ConfigDocument;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How the file northbound reads one config file: which path a name leads to (symbolic links
 * resolved and kept inside the directory), and its content within the bounds of a document ({@link
 * ConfigDocument#MAX_CODE_POINTS}), never holding more.
 */
final class ConfigFiles {
  private ConfigFiles() {}

  /**
   * The path to read for the config file {@code p}, or null when it is no regular file (a link to a
   * directory, a FIFO). A symbolic link is resolved: to a file inside the directory it is read
   * there; one leading outside the directory ({@code realDir}, the directory's real path) is
   * refused unless {@code followExternalLinks}; a dangling link and a loop of links are problems.
   */
  static Path source(Path p, Path realDir, boolean followExternalLinks) throws IOException {
    if (!Files.isSymbolicLink(p)) {
      return Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? p : null;
    }
    Path real;
    try {
      real = p.toRealPath();
    } catch (NoSuchFileException e) {
      if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
        throw e; // the link itself is gone
      }
      throw new FileProblem(
          "a dangling symbolic link: its target " + linkTarget(p) + " does not exist",
          "unreadable");
    } catch (FileSystemException e) {
      String why = e.getReason() == null ? e.toString() : e.getReason();
      throw new FileProblem(
          why.contains("levels of symbolic links")
              ? "a loop of symbolic links (" + why + ")"
              : "cannot resolve the symbolic link: " + why,
          "unreadable");
    }
    if (!real.startsWith(realDir) && !followExternalLinks) {
      throw new FileProblem(
          "a symbolic link to "
              + real
              + ", which leaves the directory "
              + realDir
              + ": not followed (--follow-external-links allows it)",
          "outside-directory");
    }
    return Files.isRegularFile(real, LinkOption.NOFOLLOW_LINKS) ? real : null;
  }

  /**
   * Why the symbolic link {@code p}, which is not read as a config file, is still a problem: it
   * dangles, it is part of a loop, or it leads to a directory (not followed); null when it is none
   * of these (a link to a file of another kind, or gone meanwhile).
   */
  static String ignoredLink(Path p) {
    try {
      Path real = p.toRealPath();
      return Files.isDirectory(real)
          ? "a symbolic link to the directory "
              + linkTarget(p)
              + ": not followed, the files under it are not read"
          : null;
    } catch (NoSuchFileException e) {
      return Files.exists(p, LinkOption.NOFOLLOW_LINKS)
          ? "a dangling symbolic link: its target " + linkTarget(p) + " does not exist"
          : null;
    } catch (IOException e) {
      String why =
          e instanceof FileSystemException f && f.getReason() != null
              ? f.getReason()
              : e.toString();
      return why.contains("levels of symbolic links")
          ? "a loop of symbolic links (" + why + ")"
          : "cannot resolve the symbolic link: " + why;
    }
  }

  private static String linkTarget(Path link) {
    try {
      return Files.readSymbolicLink(link).toString();
    } catch (IOException e) {
      return "(unknown)";
    }
  }

  /** A file the northbound does not read, with the reason counted in the metric. */
  static final class FileProblem extends IOException {
    private static final long serialVersionUID = 1L;
    final String reason;

    FileProblem(String message, String reason) {
      super(message);
      this.reason = reason;
    }
  }

  /**
   * Reads {@code file} as UTF-8 text without ever holding more than a document may be: a file of
   * more bytes than {@link ConfigDocument#MAX_CODE_POINTS} characters can take (4 bytes each at
   * most) is refused unread; one of more bytes than the limit has characters is counted first (in
   * small pieces) and refused if it has more characters than the limit; only then is it read.
   *
   * @throws FileProblem when it is too large
   * @throws IOException when it cannot be read or is not UTF-8
   */
  static String readBounded(Path file) throws IOException {
    long maxChars = ConfigDocument.MAX_CODE_POINTS;
    long maxBytes = 4 * maxChars;
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      long size = ch.size();
      if (size > maxBytes) {
        throw tooLarge(
            size
                + " bytes, more than "
                + maxChars
                + " characters can take ("
                + maxBytes
                + " bytes at 4 bytes each at most)");
      }
      if (size > maxChars && codePointsOver(ch, maxChars)) {
        throw tooLarge(size + " bytes holding more than " + maxChars + " characters");
      }
      ch.position(0);
      byte[] bytes = Channels.newInputStream(ch).readNBytes((int) Math.min(size, maxBytes) + 1);
      if (bytes.length > maxBytes) {
        throw tooLarge("more than " + maxBytes + " bytes (it grew while read)");
      }
      return decodeUtf8(bytes);
    }
  }

  private static FileProblem tooLarge(String what) {
    return new FileProblem(
        "too large: "
            + what
            + " (limit "
            + ConfigDocument.MAX_CODE_POINTS
            + " characters); not read",
        "too-large");
  }

  /** Whether the channel holds more than {@code max} UTF-8 code points (counted, not kept). */
  private static boolean codePointsOver(FileChannel ch, long max) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
    long count = 0;
    ch.position(0);
    while (ch.read(buf) > 0) {
      buf.flip();
      while (buf.hasRemaining()) {
        if ((buf.get() & 0xC0) != 0x80) { // not a continuation byte: a code point starts here
          if (++count > max) {
            return true;
          }
        }
      }
      buf.clear();
    }
    return false;
  }

  private static String decodeUtf8(byte[] bytes) throws IOException {
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new IOException("not UTF-8 text", e);
    }
  }
}
