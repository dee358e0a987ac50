package io.kvscheduler.agent.internal.northbound;

import io.kvscheduler.agent.internal.format.ConfigDocument;
import io.kvscheduler.agent.internal.format.ConfigFormat;
import io.kvscheduler.agent.internal.format.ConfigFormat.ConfigException;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file northbound: a directory of {@code *.yaml}, {@code *.yml} and {@code *.json} files, its
 * subdirectories included (names starting with {@code .} are ignored, files and directories alike;
 * symbolic links to directories are not followed), each either a mapping of keys to values or
 * vpp-agent's YAML configuration format (see {@link ConfigFormat}).
 *
 * <p>At start every file is read and their union is delivered as one resync of data source {@code
 * file}. Then the directory is watched (a {@link WatchService}, events debounced, plus a periodic
 * rescan because watch events can be late or lost): the files whose content changed (or that
 * appeared or vanished) are read again, and the difference of all of them to the values they held
 * before is delivered as one change (a deleted file deletes its values). A key that leaves one file
 * and appears in another in the same scan (a renamed file, a block moved to another file) is thus
 * no change when its value is the same, and an update otherwise.
 *
 * <p>Files are often written in place, slowly ({@code cp}, {@code cat >}, an editor saving without
 * a rename): a scan may read one half-written. Half a file usually gives fewer values than the
 * whole, so its reading would remove values to create them again a moment later. A scan whose
 * change only adds values (every changed file still gives every value it gave, equal) is therefore
 * delivered at once, but a scan that would remove or replace a value, or finds a file removed or
 * not parsing, is delivered only once each of the files it touches has read the same (or stayed
 * absent) for the <em>settle time</em> (default {@link #DEFAULT_SETTLE}, measured on the injected
 * clock from the scan that first saw the content).
 *
 * <p>A bad file — malformed YAML/JSON, an unknown field, a key of no model, a value that does not
 * match its key, a key another file already gives, a file too large ({@link
 * ConfigDocument#MAX_CODE_POINTS} characters), a file that cannot be read — is reported at ERROR
 * level with file and line (counted in {@code
 * kvs_northbound_rejected_values_total{source="file"}}), and skipped as a whole: the values it held
 * before stay applied (a file bad from the start applies none), other files are not touched. When
 * it is fixed, it applies. Whatever goes wrong with one file (an I/O error, an exception, an error
 * such as running out of memory) is that file's problem: the watcher goes on with the others. Of
 * two files giving the same key, the one read first (by name at start) keeps it; the other applies
 * once the key is free — within the same change when the file holding it lets it go in the same
 * scan (no delete and create of the key). A key moved from one file to another belongs to the file
 * it moved to.
 *
 * <p>Files are read within bounds: a file larger than {@code 4 * MAX_CODE_POINTS} bytes (more than
 * a document's characters can take in UTF-8) is refused without being read; one larger than {@code
 * MAX_CODE_POINTS} bytes has its characters counted in small pieces first, and is refused when they
 * are too many. A symbolic link is followed only when its target (its real path) lies inside the
 * directory's real path, unless {@link #followExternalLinks} allows links leading out: a link
 * leaving the directory, a dangling link and a loop of links are reported as problems of the link.
 * So that a file not meant for the agent cannot be shown in the log, errors quote at most a short
 * piece of a file's content (see {@link ConfigDocument#quotable}).
 *
 * <p>{@link #close} stops the watching: once it returned, nothing more is read or delivered.
 *
 * <p>Why one class of this size: the files' state, the keys they hold and the changes waiting to
 * settle are one state machine of the watcher thread, decided together in each scan. Listing and
 * reading the files is {@link ConfigDirectory}'s job, reading one file within bounds and resolving
 * its links {@link ConfigFiles}'.
 */
public final class FileNorthbound implements NorthboundSource {
  /** The data source label of the values of this northbound. */
  public static final String SOURCE = "file";

  private static final Logger LOG = LoggerFactory.getLogger(FileNorthbound.class);
  private static final Duration START_RESYNC_WAIT = Duration.ofSeconds(30);

  /** How long a file must read the same before a change removing or replacing values applies. */
  public static final Duration DEFAULT_SETTLE = Duration.ofSeconds(2);

  private final Path dir;
  private final ModelRegistry models;
  private final Northbound northbound;
  private final Duration debounce;
  private final Duration rescan;
  private final Duration settle;

  /** Per file: the content last read and the values applied from it (watcher thread only). */
  private final Map<Path, FileState> files = new TreeMap<>();

  private final Map<Path, String> errors = new ConcurrentHashMap<>();

  /** Line, column and message of each file in {@link #errors}, for the problems registry. */
  private final Map<Path, Rejection> rejections = new ConcurrentHashMap<>();

  private record Rejection(int line, int column, String message) {}

  private volatile NorthboundProblems problems;
  private WatchService watcher;
  private Thread thread;
  private volatile boolean closed;

  /** The directory's files, read at each scan. */
  private final ConfigDirectory directory;

  /** Held while a change is delivered; {@link #close} waits for it. */
  private final Object delivering = new Object();

  private volatile SourceEvents events = SourceEvents.NONE;

  /** The files parsed while the agent started, until the first reading has taken them. */
  private volatile DocumentsAhead ahead;

  private String listError;

  /** The files whose change waits for the settle time (watcher thread only). */
  private final SettleTimes waiting;

  private static final class FileState {
    String content;
    boolean blocked; // rejected only because another file gives one of its keys
    Map<String, Object> applied = Map.of();

    /** The content {@link #applied} was read from (to name the line of a key). */
    String appliedContent = "";
  }

  /** A file northbound with a 100 ms debounce, a 1 s rescan and the default settle time. */
  public FileNorthbound(Path dir, ModelRegistry models, Northbound northbound) {
    this(dir, models, northbound, Duration.ofMillis(100), Duration.ofSeconds(1));
  }

  /** A file northbound with the default settle time, on the system clock. */
  public FileNorthbound(
      Path dir, ModelRegistry models, Northbound northbound, Duration debounce, Duration rescan) {
    this(dir, models, northbound, debounce, rescan, DEFAULT_SETTLE, Clock.systemUTC());
  }

  /**
   * @param debounce how long the directory must be quiet (no watch event) before a scan, and how
   *     long ago a file must have been modified to be read
   * @param rescan the period of scans without watch events
   * @param settle how long every file a change touches must read the same before a change that
   *     removes or replaces values is delivered (zero: at once)
   * @param clock the time of the settle time
   */
  public FileNorthbound(
      Path dir,
      ModelRegistry models,
      Northbound northbound,
      Duration debounce,
      Duration rescan,
      Duration settle,
      Clock clock) {
    this.dir = dir.toAbsolutePath().normalize();
    this.models = Objects.requireNonNull(models, "models");
    this.northbound = Objects.requireNonNull(northbound, "northbound");
    this.debounce = debounce;
    this.rescan = rescan;
    this.settle = Objects.requireNonNull(settle, "settle");
    this.directory = new ConfigDirectory(this.dir);
    this.waiting = new SettleTimes(settle, Objects.requireNonNull(clock, "clock"));
  }

  /**
   * Where the files currently rejected are listed (cleared when fixed or removed); call before
   * start.
   */
  public FileNorthbound problems(NorthboundProblems problems) {
    this.problems = Objects.requireNonNull(problems, "problems");
    return this;
  }

  /** Where rejected files are reported (one per rejection, with its reason); call before start. */
  public FileNorthbound events(SourceEvents events) {
    this.events = Objects.requireNonNull(events, "events");
    return this;
  }

  /**
   * Whether a symbolic link to a file outside the directory (its real path not under the
   * directory's real path) is read; by default it is refused as a problem of that file, so that a
   * link cannot show the content of another file (in a parse error) to whoever reads the log. Call
   * before start.
   */
  public FileNorthbound followExternalLinks(boolean follow) {
    directory.followExternalLinks(follow);
    return this;
  }

  /**
   * Where the first reading may find its files already parsed (see {@link DocumentsAhead}): {@code
   * ahead} must read this directory. Dropped once the first reading is done. Call before start.
   */
  public FileNorthbound parsedAhead(DocumentsAhead ahead) {
    if (!ahead.directory().equals(dir)) {
      throw new IllegalArgumentException(
          "documents parsed ahead from " + ahead.directory() + ", not from " + dir);
    }
    this.ahead = ahead;
    return this;
  }

  /** Reads the files with {@code reader} (for tests); call before start. */
  FileNorthbound readWith(ConfigDirectory.ContentReader reader) {
    directory.readWith(reader);
    return this;
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
    resyncAtStart();
    thread = new Thread(this::watch, "kvs-file-nb");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Reads every file and delivers them as one resync, and starts watching the directory; scans are
   * left to the caller ({@link #scanNow}). For tests driving the scans themselves.
   */
  void resyncAtStart() throws IOException {
    if (!Files.isDirectory(dir)) {
      throw new IOException("file northbound: " + dir + " is not a directory");
    }
    long reading = System.nanoTime();
    watcher = dir.getFileSystem().newWatchService();
    directory.watchWith(watcher);

    Map<String, Object> all = new TreeMap<>();
    Map<Path, Duplicate> duplicates = new HashMap<>();
    Map<Path, Map<String, Object>> wanted = new TreeMap<>();
    for (Map.Entry<Path, String> f : readAll().entrySet()) {
      FileState st = new FileState();
      files.put(f.getKey(), st);
      read(f.getKey(), st, f.getValue(), wanted);
    }
    settle(wanted, duplicates); // every file wants its values: the first by name keeps a key
    reportDuplicates(duplicates, Set.of());
    publishProblems();
    files.values().forEach(st -> all.putAll(st.applied));
    if (ahead != null) {
      ahead.close();
      ahead = null;
    }
    LOG.info(
        "file northbound: {} values from {} files in {} (read in {} ms)",
        all.size(),
        files.size(),
        dir,
        (System.nanoTime() - reading) / 1_000_000);
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
  }

  /**
   * One scan, as the watcher thread makes them (for tests that drive the scans).
   *
   * @return whether a change waits for a later scan (a file modified just now, or a change waiting
   *     for the settle time)
   */
  boolean scanNow() {
    return scan();
  }

  /**
   * Stops watching: a change being delivered is queued before this returns, and no change is read
   * or delivered after (a scan under way is abandoned). Waits up to 5 s for the watcher thread to
   * end.
   */
  @Override
  public void close() {
    closed = true;
    DocumentsAhead parsedAhead = ahead;
    if (parsedAhead != null) {
      parsedAhead.close();
    }
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
        WatchKey key =
            watcher.poll((settling ? debounce : rescan).toMillis(), TimeUnit.MILLISECONDS);
        if (key != null) {
          // debounce: wait until the directory is quiet, then look at every file once
          do {
            key.pollEvents();
            key.reset();
          } while ((key = watcher.poll(debounce.toMillis(), TimeUnit.MILLISECONDS)) != null);
        }
        if (!closed) {
          settling = scanGuarded();
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // closing
    } catch (Error e) {
      LOG.error("file northbound: the watcher of {} stopped", dir, e);
      throw e;
    }
  }

  /**
   * One scan; a failure of it (any exception or error) is logged and the watcher goes on (the files
   * are compared again at the next scan).
   */
  private boolean scanGuarded() {
    try {
      return scan();
    } catch (ClosedWatchServiceException e) {
      throw e;
    } catch (RuntimeException | Error e) { // e.g. out of memory: the next scan may fare better
      if (!closed) {
        LOG.error(
            "file northbound: a scan of {} failed ({}); scanning again in {}", dir, e, rescan, e);
      }
      return false;
    }
  }

  /**
   * Compares every file with what was read before and delivers the differences, of all files
   * together, as one change: a key that leaves one file and appears in another in the same scan (a
   * renamed file, a block moved between files) is no change when its value is the same, and an
   * update otherwise. A file modified less than the debounce time ago is left for the next scan (it
   * may be half written: an editor truncating and rewriting it would otherwise delete its values
   * for a moment).
   *
   * @return whether a file was left for the next scan
   */
  private boolean scan() {
    try {
      return scanFiles();
    } finally {
      publishProblems();
    }
  }

  private boolean scanFiles() {
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
    List<Path> gone = new ArrayList<>();
    for (Path p : files.keySet()) {
      if (!now.containsKey(p)) {
        gone.add(p);
      }
    }
    List<Path> changedFiles = new ArrayList<>();
    boolean fresh = false;
    for (Map.Entry<Path, String> f : now.entrySet()) {
      FileState st = files.get(f.getKey());
      if (st != null && f.getValue().equals(st.content)) {
        continue;
      }
      if (recentlyModified(f.getKey())) {
        fresh = true;
      } else {
        changedFiles.add(f.getKey());
      }
    }
    Set<Path> touchedNow = new HashSet<>(changedFiles);
    touchedNow.addAll(gone);
    waiting.retainOnly(touchedNow);
    if (gone.isEmpty() && changedFiles.isEmpty()) {
      return fresh;
    }
    if (!settled(gone, changedFiles, now)) {
      return true; // scanned again soon, and delivered once settled
    }
    waiting.forget(gone);
    waiting.forget(changedFiles);

    // the values each file touched in this scan held before it: the files' values are disjoint
    // (a key is held by one file at most), so the change is the difference of their unions
    Map<Path, Map<String, Object>> touched = new TreeMap<>();
    Set<Path> blockedBefore = new HashSet<>();
    files.forEach(
        (p, st) -> {
          if (st.blocked) {
            blockedBefore.add(p);
          }
        });
    Map<Path, Duplicate> duplicates = new HashMap<>();
    for (Path p : gone) {
      FileState st = files.remove(p);
      errors.remove(p);
      LOG.info("file northbound: {} removed", name(p));
      touched.putIfAbsent(p, st.applied);
    }
    // what each changed file now gives (a file that does not parse is reported and keeps its
    // values), and what each file blocked by a duplicate key gives (the key may be free now)
    Map<Path, Map<String, Object>> wanted = new TreeMap<>();
    for (Path p : changedFiles) {
      if (closed) {
        return false;
      }
      FileState st = files.computeIfAbsent(p, x -> new FileState());
      touched.putIfAbsent(p, st.applied);
      read(p, st, now.get(p), wanted);
    }
    for (Map.Entry<Path, FileState> f : files.entrySet()) {
      FileState st = f.getValue();
      if (st.blocked && !wanted.containsKey(f.getKey())) {
        try {
          wanted.put(f.getKey(), parse(f.getKey(), st.content, null));
          touched.putIfAbsent(f.getKey(), st.applied);
        } catch (ConfigException e) {
          // parsed when it was blocked: cannot happen for the same content; stays as it is
        }
      }
    }
    settle(wanted, duplicates);
    if (closed) {
      return false;
    }
    reportDuplicates(duplicates, blockedBefore);
    deliver(touched);
    return fresh;
  }

  /**
   * Decides which of the files that want new values ({@code wanted}: changed files that parse, and
   * files blocked by a duplicate key) take them. Every other file keeps what it holds. A wanting
   * file is blocked (keeps its previous values, put into {@code duplicates}) when one of its keys
   * is held by a file that keeps its values, or wanted by a file before it in name order; a file
   * blocked that way holds its previous values again, which may block another wanting file in turn,
   * so this repeats until no key is claimed twice. The files' previous values were disjoint, so the
   * files that keep theirs never collide with each other. Deciding on the new keys of all files at
   * once lets files exchange keys in one scan (a key moved from a.yaml to b.yaml while another
   * moves the other way), which checking one file after another against the others' previous values
   * would block for good.
   */
  private void settle(Map<Path, Map<String, Object>> wanted, Map<Path, Duplicate> duplicates) {
    Set<Path> yielded = new HashSet<>();
    boolean again = true;
    while (again) {
      again = false;
      Map<String, Path> owner = new HashMap<>();
      files.forEach(
          (p, st) -> {
            if (!wanted.containsKey(p) || yielded.contains(p)) {
              st.applied.keySet().forEach(k -> owner.put(k, p));
            }
          });
      for (Map.Entry<Path, Map<String, Object>> w : wanted.entrySet()) {
        Path p = w.getKey();
        if (yielded.contains(p)) {
          continue;
        }
        Duplicate dup = null;
        for (String k : w.getValue().keySet()) {
          Path o = owner.get(k);
          if (o != null && !o.equals(p)) {
            dup = new Duplicate(k, o);
            break;
          }
        }
        if (dup != null) {
          yielded.add(p);
          duplicates.put(p, dup);
          again = true; // its previous values are held again: decide the others anew
          continue;
        }
        for (String k : w.getValue().keySet()) {
          owner.put(k, p);
        }
      }
    }
    wanted.forEach(
        (p, values) -> {
          FileState st = files.get(p);
          if (yielded.contains(p)) {
            st.blocked = true;
            return;
          }
          duplicates.remove(p);
          if (errors.remove(p) != null) {
            LOG.info("file northbound: {} is valid again", name(p));
          }
          st.applied = values;
          st.appliedContent = st.content;
        });
  }

  /**
   * Whether this scan's change may be delivered now: it only adds values (every changed file parses
   * and still gives every value it gave, equal), or each file it touches (removed, changed) has
   * read the same for the settle time. Remembers when each touched file was first seen as it is
   * now.
   */
  private boolean settled(List<Path> gone, List<Path> changedFiles, Map<Path, String> now) {
    boolean additive = gone.stream().allMatch(p -> files.get(p).applied.isEmpty());
    for (Path p : changedFiles) {
      if (!additive) {
        break;
      }
      FileState st = files.get(p);
      Map<String, Object> held = st == null ? Map.of() : st.applied;
      try {
        Map<String, Object> given = parse(p, now.get(p), null);
        additive =
            held.entrySet().stream().allMatch(e -> e.getValue().equals(given.get(e.getKey())));
      } catch (ConfigException e) {
        additive = false; // reported once it has read the same for the settle time
      }
    }
    List<Path> touched = new ArrayList<>(gone);
    touched.addAll(changedFiles);
    boolean stable = waiting.stable(touched, now);
    if (!additive && !stable) {
      LOG.debug(
          "file northbound: a change of {} waits until the files read the same for {}",
          fileNames(touched),
          settle);
    }
    return additive || stable;
  }

  private boolean recentlyModified(Path file) {
    try {
      Duration age = Duration.between(Files.getLastModifiedTime(file).toInstant(), Instant.now());
      return !age.isNegative() && age.compareTo(debounce) < 0;
    } catch (IOException e) {
      return false;
    }
  }

  /** A file blocked because {@code other} already holds {@code key}. */
  private record Duplicate(String key, Path other) {}

  /**
   * Takes {@code content} as the content of {@code file} and parses it: the values go to {@code
   * wanted} (applied by {@link #settle}); a file that does not parse is reported and keeps the
   * values it held.
   */
  private void read(
      Path file, FileState st, String content, Map<Path, Map<String, Object>> wanted) {
    st.content = content;
    st.blocked = false;
    try {
      wanted.put(file, parse(file, content, null));
    } catch (ConfigException e) {
      reject(
          file,
          e.line(),
          column(e, e.line()),
          ConfigDocument.quotable(e.getMessage(), k -> models.forKey(k).isPresent()),
          e.getCause() instanceof ModelException m
              ? SourceEvents.reasonFor(models, m.key())
              : "malformed");
    }
  }

  /**
   * Reports the files still blocked by a key another file holds, with the key's line in both; a
   * file blocked before the scan is not reported again for the same reason.
   */
  private void reportDuplicates(Map<Path, Duplicate> duplicates, Set<Path> blockedBefore) {
    new TreeMap<>(duplicates)
        .forEach(
            (file, d) -> {
              FileState st = files.get(file);
              FileState other = files.get(d.other());
              if (st == null || !st.blocked) {
                return;
              }
              int otherLine = other == null ? 0 : lineOf(d.other(), other.appliedContent, d.key());
              String msg =
                  "key "
                      + d.key()
                      + " is already given by file "
                      + name(d.other())
                      + (otherLine > 0 ? " on line " + otherLine : "");
              int line = lineOf(file, st.content, d.key());
              if (!blockedBefore.contains(file)
                  || !(file + (line > 0 ? ":" + line : "") + ": " + msg).equals(errors.get(file))) {
                reject(file, line, 0, msg, "duplicate");
              }
            });
  }

  /**
   * The line of {@code key} in {@code content} of {@code file}, 0 when unknown. Parses the content
   * again: lines are only wanted for an error, and keeping them for every key would cost memory for
   * nothing.
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
   * Records and logs that {@code file} is skipped. The log says what stays applied: the values the
   * file held before, or none when it held none (a file bad from the start, or new).
   */
  private void reject(Path file, int line, int column, String message, String reason) {
    events.valueRejected(SOURCE, reason);
    String where = file + (line > 0 ? ":" + line : "");
    rejections.put(file, new Rejection(line, column, message));
    errors.put(file, where + ": " + message);
    FileState st = files.get(file);
    boolean held = st != null && !st.applied.isEmpty();
    LOG.error(
        "file northbound: {}: {} (file skipped, {})",
        where,
        message,
        held ? "the values it held before stay applied" : "none of its values are applied");
  }

  /** The column of a parse error on {@code line}, from the parser's location, 0 when unknown. */
  private static int column(Throwable e, int line) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof org.yaml.snakeyaml.error.MarkedYAMLException y
          && y.getProblemMark() != null
          && y.getProblemMark().getLine() + 1 == line) {
        return y.getProblemMark().getColumn() + 1;
      }
      if (t instanceof com.fasterxml.jackson.core.JsonProcessingException j
          && j.getLocation() != null
          && j.getLocation().getLineNr() == line) {
        return Math.max(0, j.getLocation().getColumnNr());
      }
    }
    return 0;
  }

  /**
   * Lists the files rejected now (and a directory that cannot be listed) in the problems registry;
   * a file whose earlier values stay applied says so, and that a restart would apply none of them.
   */
  private void publishProblems() {
    NorthboundProblems registry = problems;
    if (registry == null) {
      return;
    }
    List<NorthboundProblems.Problem> list = new ArrayList<>();
    if (listError != null) {
      list.add(
          NorthboundProblems.Problem.of(
              SOURCE, ".", null, 0, 0, "cannot list the directory " + dir + ": " + listError));
    }
    for (Path p : new TreeMap<>(errors).keySet()) {
      Rejection r = rejections.get(p);
      if (r == null) {
        continue;
      }
      FileState st = files.get(p);
      Set<String> kept = st == null ? Set.of() : st.applied.keySet();
      String message =
          r.message()
              + (kept.isEmpty()
                  ? " (none of its values are applied)"
                  : " (the "
                      + kept.size()
                      + (kept.size() == 1 ? " value" : " values")
                      + " it gave before this edit stay applied; a restart would apply none of"
                      + " this file's values until it is fixed)");
      list.add(
          NorthboundProblems.Problem.of(SOURCE, name(p), null, r.line(), r.column(), message)
              .keeping(kept));
    }
    registry.replace(SOURCE, list);
  }

  /** Parses a file's content; puts the line of each key into {@code lines} when not null. */
  private Map<String, Object> parse(Path file, String content, Map<String, Integer> lines)
      throws ConfigException {
    ConfigDocument doc;
    DocumentsAhead.Parsed parsed = ahead == null ? null : ahead.take(file, content);
    try {
      if (parsed != null && parsed.error() != null) {
        throw parsed.error();
      }
      doc =
          parsed != null
              ? parsed.document()
              : file.getFileName().toString().endsWith(".json")
                  ? ConfigDocument.parseJson(content)
                  : ConfigDocument.parseYaml(content);
    } catch (ConfigDocument.SyntaxException e) {
      throw new ConfigException(e.getMessage(), e.line(), e);
    }
    return ConfigFormat.decodeAny(models, doc, lines);
  }

  /**
   * Delivers, as one change, the difference between the values the touched files held before the
   * scan ({@code before}, by file) and the values they hold now (a removed file holds none).
   */
  private void deliver(Map<Path, Map<String, Object>> before) {
    Map<String, Object> old = new HashMap<>();
    Map<String, Object> now = new HashMap<>();
    before.forEach(
        (file, values) -> {
          old.putAll(values);
          FileState st = files.get(file);
          if (st != null) {
            now.putAll(st.applied);
          }
        });
    Map<String, Object> changes = new HashMap<>();
    old.keySet().stream().filter(k -> !now.containsKey(k)).forEach(k -> changes.put(k, null));
    now.forEach(
        (k, v) -> {
          if (!v.equals(old.get(k))) {
            changes.put(k, v);
          }
        });
    if (changes.isEmpty()) {
      return;
    }
    List<Path> changedFiles = new ArrayList<>();
    before.forEach(
        (file, values) -> {
          FileState st = files.get(file);
          if (st == null || st.applied != values) {
            changedFiles.add(file);
          }
        });
    String names = fileNames(changedFiles);
    synchronized (delivering) {
      if (closed) {
        return; // read before close(), not delivered: nothing is applied after the stop
      }
      LOG.info("file northbound: {} changed {} values", names, changes.size());
      northbound
          .change(SOURCE, changes)
          .whenComplete(
              (seq, err) -> {
                if (err != null) {
                  LOG.warn(
                      "file northbound: the change from {} failed: {}", names, err.getMessage());
                }
              });
    }
  }

  /** The names of {@code paths}, the first few of them, for a log line. */
  private String fileNames(Collection<Path> paths) {
    int shown = 5;
    StringBuilder b = new StringBuilder();
    int i = 0;
    for (Path p : paths) {
      if (i++ == shown) {
        return b.append(" and ").append(paths.size() - shown).append(" more").toString();
      }
      b.append(b.length() > 0 ? ", " : "").append(name(p));
    }
    return b.toString();
  }

  /** The name of a file for the log: its path inside the directory. */
  private String name(Path file) {
    return dir.relativize(file).toString();
  }

  /**
   * Reads every config file of the directory and its subdirectories: path → content, sorted by
   * path. A file that cannot be read is reported (once per distinct message) and keeps the content
   * read before.
   */
  private Map<Path, String> readAll() throws IOException {
    Map<Path, String> out =
        directory.readAll(
            new ConfigDirectory.Problems() {
              @Override
              public boolean stopping() {
                return closed;
              }

              @Override
              public void unreadable(Path file, String message, String reason) {
                if (!message.equals(errorMessage(file))) {
                  reject(file, 0, 0, message, reason);
                }
              }

              @Override
              public String previous(Path file) {
                FileState st = files.get(file);
                return st == null ? null : st.content;
              }
            });
    // a file reported as unreadable that is gone now is no longer reported
    errors
        .keySet()
        .removeIf(
            p ->
                !out.containsKey(p)
                    && !files.containsKey(p)
                    && !directory.unreadable().contains(p));
    return out;
  }
}
