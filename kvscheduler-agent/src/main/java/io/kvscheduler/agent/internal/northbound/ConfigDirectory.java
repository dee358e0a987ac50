package io.kvscheduler.agent.internal.northbound;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.WatchService;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The config files of the file northbound's directory: the {@code *.yaml}, {@code *.yml} and {@code
 * *.json} files of the directory and its subdirectories (names starting with {@code .} are ignored,
 * symbolic links to directories are not followed but reported, as are dangling links and loops of
 * links whatever their name), each read within bounds and following the link rules of {@link
 * ConfigFiles}. Every directory listed is registered with the watch service, once. Used by the
 * watcher thread only.
 */
final class ConfigDirectory {
  /** Reads one file's content; replaced by tests of reads that fail. */
  interface ContentReader {
    String read(Path file) throws IOException;
  }

  /** What a reading needs of its caller: where a file that cannot be read goes. */
  interface Problems {
    /** Whether the northbound is stopping (a failed read is then no problem of the file). */
    boolean stopping();

    /** {@code file} cannot be read: {@code message}, counted under {@code reason}. */
    void unreadable(Path file, String message, String reason);

    /** The content read from {@code file} before, or null: kept while it cannot be read. */
    String previous(Path file);
  }

  private final Path dir;
  private ContentReader reader = ConfigFiles::readBounded;
  private volatile boolean followExternalLinks;
  private WatchService watcher;

  /** The directory's real path, resolved at each reading. */
  private Path realDir;

  /** The files found unreadable by the last reading. */
  private final Set<Path> unreadable = new HashSet<>();

  /** Directories registered with the watch service. */
  private final Set<Path> watched = new HashSet<>();

  ConfigDirectory(Path dir) {
    this.dir = dir;
  }

  /** Whether symbolic links leading out of the directory are read (see {@link ConfigFiles}). */
  void followExternalLinks(boolean follow) {
    this.followExternalLinks = follow;
  }

  void readWith(ContentReader reader) {
    this.reader = Objects.requireNonNull(reader, "reader");
  }

  /** Registers the directories read from now on with {@code watcher}. */
  void watchWith(WatchService watcher) {
    this.watcher = watcher;
  }

  /** The files found unreadable by the last {@link #readAll}. */
  Set<Path> unreadable() {
    return unreadable;
  }

  /**
   * Reads every config file: path → content, sorted by path. Registers the subdirectories not
   * watched yet with the watch service.
   *
   * @throws IOException when the directory cannot be listed
   */
  Map<Path, String> readAll(Problems report) throws IOException {
    Map<Path, String> out = new TreeMap<>();
    unreadable.clear();
    readDir(dir, out, report);
    watched.removeIf(d -> !Files.isDirectory(d, LinkOption.NOFOLLOW_LINKS));
    return out;
  }

  private void readDir(Path d, Map<Path, String> out, Problems report) throws IOException {
    if (watcher != null && !watched.contains(d)) {
      d.register(watcher, ENTRY_CREATE, ENTRY_MODIFY, ENTRY_DELETE);
      watched.add(d);
    }
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(d)) {
      for (Path p : ds) {
        String n = p.getFileName().toString();
        if (n.startsWith(".")) {
          continue;
        }
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
          try {
            readDir(p, out, report);
          } catch (NoSuchFileException e) {
            // removed meanwhile
          }
          continue;
        }
        boolean config = n.endsWith(".yaml") || n.endsWith(".yml") || n.endsWith(".json");
        if (Files.isSymbolicLink(p) && (!config || Files.isDirectory(p))) {
          // not read, but not quietly: a broken link, or one to a directory, is a problem
          String why = ConfigFiles.ignoredLink(p);
          if (why != null) {
            unreadable.add(p);
            report.unreadable(p, why, "unreadable");
          }
          continue;
        }
        if (!config) {
          continue;
        }
        readFile(p, out, report);
      }
    }
  }

  /**
   * Reads one config file into {@code out}. A file that cannot be read — too large, a link leaving
   * the directory, a dangling link or a link loop, an I/O error, or anything thrown while reading
   * it — is a problem of that file alone: reported (once per distinct message, counted in the
   * rejected-values metric) and skipped, keeping the content read before.
   */
  private void readFile(Path p, Map<Path, String> out, Problems report) {
    try {
      Path source = ConfigFiles.source(p, realDir(), followExternalLinks);
      if (source != null) {
        out.put(p, reader.read(source));
      }
    } catch (NoSuchFileException e) {
      // removed meanwhile
    } catch (Throwable e) { // one file's failure, whatever it is, must not stop the watcher
      if (report.stopping()) {
        return; // the read was interrupted by close(): the scan is abandoned anyway
      }
      unreadable.add(p);
      String msg;
      String reason;
      if (e instanceof ConfigFiles.FileProblem f) {
        msg = f.getMessage();
        reason = f.reason;
      } else {
        msg = "cannot read: " + e; // the exception's class says what went wrong
        reason = "unreadable";
      }
      report.unreadable(p, msg, reason);
      String before = report.previous(p);
      if (before != null) {
        out.put(p, before);
      }
    }
  }

  /** The directory's real path (its links resolved), as of the last time it could be resolved. */
  private Path realDir() {
    try {
      realDir = dir.toRealPath();
    } catch (IOException e) {
      // keep the last one known
    }
    return realDir == null ? dir : realDir;
  }
}
