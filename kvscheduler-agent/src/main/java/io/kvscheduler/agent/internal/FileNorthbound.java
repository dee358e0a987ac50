package io.kvscheduler.agent.internal;

import static java.nio.file.StandardWatchEventKinds.ENTRY_CREATE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_DELETE;
import static java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY;

import io.kvscheduler.agent.internal.ConfigFormat.ConfigException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file northbound: a directory of {@code *.yaml}, {@code *.yml} and {@code *.json} files
 * (not its subdirectories; names starting with {@code .} are ignored), each either a mapping of
 * keys to values or vpp-agent's YAML configuration format (see {@link ConfigFormat}).
 *
 * <p>At start every file is read and their union is delivered as one resync of data source
 * {@code file}. Then the directory is watched (a {@link WatchService}, events debounced, plus a
 * periodic rescan because watch events can be late or lost): each file whose content changed (or
 * that appeared or vanished) is read again and the difference to the values it held before is
 * delivered as one change (a deleted file deletes its values).
 *
 * <p>A bad file — malformed YAML/JSON, an unknown field, a key of no model, a value that does not
 * match its key, a key another file already gives, a file too large ({@link
 * ConfigDocument#MAX_CODE_POINTS}) — is reported at ERROR level with file and line, and skipped
 * as a whole: the values it held before stay applied (a file bad from the start applies none),
 * other files are not touched. When it is fixed, it applies. Of two files giving the same key,
 * the one read first (by name at start) keeps it; the other applies once the key is free.
 *
 * <p>{@link #close} stops the watching: once it returned, nothing more is read or delivered.
 */
public final class FileNorthbound implements NorthboundSource {
  /** The data source label of the values of this northbound. */
  public static final String SOURCE = "file";

  private static final Logger LOG = LoggerFactory.getLogger(FileNorthbound.class);
  private static final Duration START_RESYNC_WAIT = Duration.ofSeconds(30);

  private final Path dir;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final Duration debounce;
  private final Duration rescan;

  /** Per file: the content last read and the values applied from it (watcher thread only). */
  private final Map<Path, FileState> files = new TreeMap<>();
  private final Map<Path, String> errors = new ConcurrentHashMap<>();
  private WatchService watcher;
  private Thread thread;
  private volatile boolean closed;
  /** Held while a change is delivered; {@link #close} waits for it. */
  private final Object delivering = new Object();
  private String listError;

  private static final class FileState {
    String content;
    boolean blocked; // rejected only because another file gives one of its keys
    Map<String, Object> applied = Map.of();
    /** The content {@link #applied} was read from (to name the line of a key). */
    String appliedContent = "";
  }

  /** A file northbound with a 100 ms debounce and a 1 s rescan. */
  public FileNorthbound(Path dir, ModelRegistry models, Northbound northbound) {
    this(dir, models, northbound, Duration.ofMillis(100), Duration.ofSeconds(1));
  }

  public FileNorthbound(Path dir, ModelRegistry models, Northbound northbound, Duration debounce,
      Duration rescan) {
    this.dir = dir.toAbsolutePath().normalize();
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    this.debounce = debounce;
    this.rescan = rescan;
  }

  @Override
  public String name() {
    return SOURCE;
  }

  /** The watched directory. */
  public Path directory() {
    return dir;
  }

  /** The files currently rejected, with the error reported for each. */
  public Map<Path, String> errors() {
    return Collections.unmodifiableMap(new TreeMap<>(errors));
  }

  @Override
  public void start() throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IOException("file northbound: " + dir + " is not a directory");
    }
    watcher = dir.getFileSystem().newWatchService();
    dir.register(watcher, ENTRY_CREATE, ENTRY_MODIFY, ENTRY_DELETE);

    Map<String, Object> all = new TreeMap<>();
    for (Map.Entry<Path, String> f : readAll().entrySet()) {
      FileState st = new FileState();
      files.put(f.getKey(), st);
      update(f.getKey(), st, f.getValue());
    }
    files.values().forEach(st -> all.putAll(st.applied));
    LOG.info("file northbound: {} values from {} files in {}", all.size(), files.size(), dir);
    CompletableFuture<Long> resync = northbound.resync(SOURCE, all);
    try {
      resync.get(START_RESYNC_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      LOG.warn("file northbound: the resync failed: {}", e.getCause().getMessage());
    } catch (TimeoutException e) {
      LOG.warn("file northbound: the resync is still running after {}", START_RESYNC_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }

    thread = new Thread(this::watch, "kvs-file-nb");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Stops watching: a change being delivered is queued before this returns, and no change is
   * read or delivered after (a scan under way is abandoned). Waits up to 5 s for the watcher
   * thread to end.
   */
  @Override
  public void close() {
    closed = true;
    synchronized (delivering) {
      // a delivery under way has queued its transaction; the next ones see closed
    }
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing the watch service failed", e);
      }
    }
    if (thread != null && thread != Thread.currentThread()) {
      thread.interrupt();
      try {
        thread.join(5000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void watch() {
    try {
      boolean settling = false;
      while (!closed) {
        WatchKey key = watcher.poll((settling ? debounce : rescan).toMillis(),
            TimeUnit.MILLISECONDS);
        if (key != null) {
          // debounce: wait until the directory is quiet, then look at every file once
          do {
            key.pollEvents();
            key.reset();
          } while ((key = watcher.poll(debounce.toMillis(), TimeUnit.MILLISECONDS)) != null);
        }
        if (!closed) {
          settling = scan();
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // closing
    } catch (RuntimeException | Error e) {
      LOG.error("file northbound: the watcher of {} stopped", dir, e);
    }
  }

  /**
   * Compares every file with what was read before and delivers the differences. A file modified
   * less than the debounce time ago is left for the next scan (it may be half written: an editor
   * truncating and rewriting it would otherwise delete its values for a moment).
   *
   * @return whether a file was left for the next scan
   */
  private boolean scan() {
    Map<Path, String> now;
    try {
      now = readAll();
    } catch (IOException e) {
      if (!e.toString().equals(listError)) {
        listError = e.toString();
        LOG.error("file northbound: cannot list {}: {}", dir, listError);
      }
      return false;
    }
    listError = null;
    boolean changed = false;
    boolean settling = false;
    for (Path gone : new ArrayList<>(files.keySet())) {
      if (!now.containsKey(gone)) {
        FileState st = files.remove(gone);
        errors.remove(gone);
        LOG.info("file northbound: {} removed", gone.getFileName());
        changed |= deliver(gone, st.applied, Map.of());
      }
    }
    for (Map.Entry<Path, String> f : now.entrySet()) {
      if (closed) {
        return false;
      }
      FileState st = files.get(f.getKey());
      if (st != null && f.getValue().equals(st.content)) {
        continue;
      }
      if (recentlyModified(f.getKey())) {
        settling = true;
        continue;
      }
      if (st == null) {
        st = new FileState();
        files.put(f.getKey(), st);
      }
      Map<String, Object> before = st.applied;
      if (update(f.getKey(), st, f.getValue())) {
        changed |= deliver(f.getKey(), before, st.applied);
      }
    }
    // keys freed by changed files may unblock files rejected for a duplicate key
    while (changed && !closed) {
      changed = false;
      for (Map.Entry<Path, FileState> f : files.entrySet()) {
        FileState st = f.getValue();
        if (st.blocked) {
          Map<String, Object> before = st.applied;
          if (update(f.getKey(), st, st.content)) {
            changed |= deliver(f.getKey(), before, st.applied);
          }
        }
      }
    }
    return settling;
  }

  private boolean recentlyModified(Path file) {
    try {
      Duration age = Duration.between(Files.getLastModifiedTime(file).toInstant(), Instant.now());
      return !age.isNegative() && age.compareTo(debounce) < 0;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * Parses {@code content} as the new content of {@code file}; on success sets its applied values
   * (not yet delivered) and returns true; on error reports it and keeps the previous values.
   */
  private boolean update(Path file, FileState st, String content) {
    boolean wasBlocked = st.blocked;
    st.content = content;
    st.blocked = false;
    Map<String, Object> values;
    try {
      values = parse(file, content, null);
    } catch (ConfigException e) {
      reject(file, e.line(), e.getMessage());
      return false;
    }
    for (Map.Entry<Path, FileState> other : files.entrySet()) {
      if (other.getKey().equals(file)) {
        continue;
      }
      for (String k : values.keySet()) {
        if (other.getValue().applied.containsKey(k)) {
          st.blocked = true;
          int otherLine = lineOf(other.getKey(), other.getValue().appliedContent, k);
          String msg = "key " + k + " is already given by file " + other.getKey().getFileName()
              + (otherLine > 0 ? " on line " + otherLine : "");
          int line = lineOf(file, content, k);
          if (!wasBlocked || !(file + (line > 0 ? ":" + line : "") + ": " + msg)
              .equals(errors.get(file))) {
            reject(file, line, msg);
          }
          return false;
        }
      }
    }
    if (errors.remove(file) != null) {
      LOG.info("file northbound: {} is valid again", file.getFileName());
    }
    st.applied = values;
    st.appliedContent = content;
    return true;
  }

  /**
   * The line of {@code key} in {@code content} of {@code file}, 0 when unknown. Parses the
   * content again: lines are only wanted for an error, and keeping them for every key would cost
   * memory for nothing.
   */
  private int lineOf(Path file, String content, String key) {
    Map<String, Integer> lines = new HashMap<>();
    try {
      parse(file, content, lines);
    } catch (ConfigException e) {
      return 0;
    }
    return lines.getOrDefault(key, 0);
  }

  private String errorMessage(Path file) {
    String e = errors.get(file);
    return e == null ? null : e.substring(e.indexOf(": ") + 2);
  }

  /**
   * Records and logs that {@code file} is skipped. The log says what stays applied: the values
   * the file held before, or none when it held none (a file bad from the start, or new).
   */
  private void reject(Path file, int line, String message) {
    String where = file + (line > 0 ? ":" + line : "");
    errors.put(file, where + ": " + message);
    FileState st = files.get(file);
    boolean held = st != null && !st.applied.isEmpty();
    LOG.error("file northbound: {}: {} (file skipped, {})", where, message,
        held ? "the values it held before stay applied" : "none of its values are applied");
  }

  /** Parses a file's content; puts the line of each key into {@code lines} when not null. */
  private Map<String, Object> parse(Path file, String content, Map<String, Integer> lines)
      throws ConfigException {
    ConfigDocument doc;
    try {
      doc = file.getFileName().toString().endsWith(".json")
          ? ConfigDocument.parseJson(content) : ConfigDocument.parseYaml(content);
    } catch (ConfigDocument.SyntaxException e) {
      throw new ConfigException(e.getMessage(), e.line(), e);
    }
    return ConfigFormat.decodeAny(models, doc, lines);
  }

  /** Delivers the difference between two versions of a file's values; true if there was one. */
  private boolean deliver(Path file, Map<String, Object> before, Map<String, Object> after) {
    Map<String, Object> diff = new LinkedHashMap<>();
    before.keySet().stream().filter(k -> !after.containsKey(k)).sorted()
        .forEach(k -> diff.put(k, null));
    new TreeMap<>(after).forEach((k, v) -> {
      if (!v.equals(before.get(k))) {
        diff.put(k, v);
      }
    });
    if (diff.isEmpty()) {
      return false;
    }
    Map<String, Object> changes = new HashMap<>(diff);
    synchronized (delivering) {
      if (closed) {
        return false; // read before close(), not delivered: nothing is applied after the stop
      }
      LOG.info("file northbound: {} changed {} values", file.getFileName(), diff.size());
      northbound.change(SOURCE, changes).whenComplete((seq, err) -> {
        if (err != null) {
          LOG.warn("file northbound: the change from {} failed: {}", file.getFileName(),
              err.getMessage());
        }
      });
    }
    return true;
  }

  /** Reads every config file of the directory: path → content, sorted by path. */
  private Map<Path, String> readAll() throws IOException {
    Map<Path, String> out = new TreeMap<>();
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
      for (Path p : ds) {
        String n = p.getFileName().toString();
        if (n.startsWith(".") || !(n.endsWith(".yaml") || n.endsWith(".yml")
            || n.endsWith(".json")) || !Files.isRegularFile(p)) {
          continue;
        }
        try {
          out.put(p, decodeUtf8(Files.readAllBytes(p)));
        } catch (NoSuchFileException e) {
          // removed meanwhile
        } catch (IOException e) {
          // unreadable: keep what it held before; reported once per distinct error
          FileState st = files.get(p);
          String msg = "cannot read: " + e.getMessage();
          if (!msg.equals(errorMessage(p))) {
            reject(p, 0, msg);
          }
          out.put(p, st != null && st.content != null ? st.content : "");
          if (st == null) {
            out.remove(p);
          }
        }
      }
    }
    return out;
  }

  private static String decodeUtf8(byte[] bytes) throws IOException {
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      throw new IOException("not UTF-8 text", e);
    }
  }
}
