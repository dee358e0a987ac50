package io.kvscheduler.agent.internal.northbound;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.agent.spi.ModelRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.sqlite.SQLiteErrorCode;

/**
 * The durable record of what the in-memory northbound sources (REST, gRPC) pushed: an SQLite
 * database, {@code <state dir>/<label>/pushed.db}, one row per source and key holding the value's
 * JSON and the labels given with it (a JSON object, null for none; gRPC's {@code
 * UpdateItem.labels}). The {@link Orchestrator} writes each delivery of those sources here before
 * it queues the transaction ({@link Orchestrator.Journal}); the agent reads it back at start,
 * before the first resync.
 *
 * <p>Every write is one SQLite transaction in write-ahead-log mode with {@code synchronous=FULL}:
 * it is on disk (fsync) when the call returns, and a write cut short by a crash is rolled back by
 * SQLite when the store is opened again, never half applied. The database is opened in exclusive
 * locking mode: a second agent with the same state directory and label cannot open it.
 *
 * <p>A store that cannot be opened or read, fails SQLite's integrity check or holds a value that
 * cannot be decoded is a {@link StateStoreException} naming the file: the agent does not start
 * (starting without it would delete from the southbound what REST and gRPC had configured). Values
 * of a model that is not registered now (its plugin off) stay in the store, are not applied, and
 * are logged.
 */
public final class StateStore implements Orchestrator.Journal, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StateStore.class);

  /** The sources whose deliveries are kept: REST and gRPC (the gRPC server's data source). */
  public static final Set<String> SOURCES = Set.of(RestNorthbound.SOURCE, "grpc");

  /** The database file's name in the label's directory. */
  public static final String FILE_NAME = "pushed.db";

  /** Written into the store, checked when it is opened. */
  private static final int FORMAT = 1;

  /** How the message of a store that cannot be used ends: the ways past it. */
  private static final String WAYS_ON =
      ". The agent does not start without it: starting empty would delete from the southbound"
          + " what REST and gRPC had configured. To start anew, move the file (and its -wal"
          + " file) aside, or run with --state-dir off to keep nothing.";

  /** The store cannot be used: the agent must not start. Its message names the file. */
  public static final class StateStoreException extends IOException {
    private static final long serialVersionUID = 1L;

    StateStoreException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * What the store held at start: values by source then key, the labels of the keys that have some
   * (by source then key), and how many values are of no model registered now.
   */
  public record Restored(
      Map<String, Map<String, Object>> bySource,
      Map<String, Map<String, Map<String, String>>> labels,
      int notApplied) {
    /** Number of values restored, over every source. */
    public int values() {
      return bySource.values().stream().mapToInt(Map::size).sum();
    }
  }

  private final Path file;
  private final ModelRegistry models;
  private final Connection db;

  private StateStore(Path file, ModelRegistry models, Connection db) {
    this.file = file;
    this.models = models;
    this.db = db;
  }

  /** The store's file for {@code label} in {@code stateDir}. */
  public static Path file(Path stateDir, String label) {
    return stateDir.resolve(label).resolve(FILE_NAME);
  }

  /**
   * Opens (or creates) the store of {@code label} in {@code stateDir}, checks it and takes its
   * lock.
   *
   * @throws StateStoreException naming the file, when it cannot be created, opened or read, is
   *     damaged, is of another format or is in use by another agent
   */
  public static StateStore open(Path stateDir, String label, ModelRegistry models)
      throws StateStoreException {
    Path file = file(stateDir, label);
    try {
      createPrivate(stateDir);
      createPrivate(file.getParent());
    } catch (IOException e) {
      throw new StateStoreException(
          "cannot create the state directory " + file.getParent() + ": " + e + WAYS_ON, e);
    }
    Connection db = null;
    try {
      db = DriverManager.getConnection("jdbc:sqlite:" + file);
      try (Statement s = db.createStatement()) {
        s.execute("PRAGMA busy_timeout=0");
        s.execute("PRAGMA locking_mode=EXCLUSIVE");
        try (ResultSet r = s.executeQuery("PRAGMA journal_mode=WAL")) {
          r.next(); // the first read: a damaged or foreign file fails here
        }
        s.execute("PRAGMA synchronous=FULL");
        try (ResultSet r = s.executeQuery("PRAGMA quick_check")) {
          List<String> problems = new ArrayList<>();
          while (r.next()) {
            problems.add(r.getString(1));
          }
          if (!problems.equals(List.of("ok"))) {
            throw new StateStoreException(
                "the state store " + file + " is damaged: " + String.join("; ", problems) + WAYS_ON,
                null);
          }
        }
        s.execute("CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)");
        s.execute(
            "CREATE TABLE IF NOT EXISTS source (name TEXT PRIMARY KEY)"); // delivered at least once
        s.execute(
            "CREATE TABLE IF NOT EXISTS pushed (source TEXT NOT NULL, key TEXT NOT NULL,"
                + " value TEXT NOT NULL, labels TEXT, PRIMARY KEY (source, key)) WITHOUT ROWID");
        boolean hasLabels = false;
        try (ResultSet r = s.executeQuery("PRAGMA table_info(pushed)")) {
          while (r.next()) {
            hasLabels |= "labels".equals(r.getString("name"));
          }
        }
        if (!hasLabels) {
          // a store written before labels were kept: the same format, one more column
          s.execute("ALTER TABLE pushed ADD COLUMN labels TEXT");
        }
        // a write: takes the exclusive lock, held until the store is closed
        s.execute("INSERT OR IGNORE INTO meta VALUES ('format', '" + FORMAT + "')");
        try (ResultSet r = s.executeQuery("SELECT value FROM meta WHERE name = 'format'")) {
          String format = r.next() ? r.getString(1) : null;
          if (!String.valueOf(FORMAT).equals(format)) {
            throw new StateStoreException(
                "the state store " + file + " has format " + format + ", not " + FORMAT + WAYS_ON,
                null);
          }
        }
      }
      return new StateStore(file, models, db);
    } catch (SQLException e) {
      close(db);
      throw new StateStoreException(describe(file, e), e);
    } catch (StateStoreException e) {
      close(db);
      throw e;
    }
  }

  private static String describe(Path file, SQLException e) {
    int code = e.getErrorCode() & 0xff; // the primary result code
    if (code == SQLiteErrorCode.SQLITE_BUSY.code || code == SQLiteErrorCode.SQLITE_LOCKED.code) {
      return "the state store "
          + file
          + " is in use by another agent process (the same state directory and label)";
    }
    String what =
        code == SQLiteErrorCode.SQLITE_NOTADB.code || code == SQLiteErrorCode.SQLITE_CORRUPT.code
            ? " is damaged or not a state store"
            : " cannot be read";
    return "the state store " + file + what + ": " + e.getMessage() + WAYS_ON;
  }

  private static void createPrivate(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectories(dir);
      try {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
      } catch (UnsupportedOperationException e) {
        // not a POSIX file system: its own defaults
      }
    }
  }

  private static void close(Connection db) {
    if (db != null) {
      try {
        db.close();
      } catch (SQLException e) {
        // already failing
      }
    }
  }

  /** The database file. */
  public Path file() {
    return file;
  }

  /**
   * Reads the store: for each source that delivered at least once (even if it gives no value now),
   * its values, decoded with the models.
   *
   * @throws StateStoreException naming the file and the key of a value that cannot be decoded
   */
  public Restored read() throws StateStoreException {
    Map<String, Map<String, Object>> out = new TreeMap<>();
    Map<String, Map<String, Map<String, String>>> labels = new TreeMap<>();
    int notApplied = 0;
    List<String> unknown = new ArrayList<>();
    try (Statement s = db.createStatement()) {
      try (ResultSet r = s.executeQuery("SELECT name FROM source")) {
        while (r.next()) {
          out.put(r.getString(1), new LinkedHashMap<>());
        }
      }
      try (ResultSet r = s.executeQuery("SELECT source, key, value, labels FROM pushed")) {
        while (r.next()) {
          String source = r.getString(1);
          String key = r.getString(2);
          if (models.forKey(key).isEmpty()) {
            notApplied++;
            if (unknown.size() < 5) {
              unknown.add(key);
            }
            continue;
          }
          try {
            out.computeIfAbsent(source, x -> new LinkedHashMap<>())
                .put(key, models.decode(key, r.getString(3)));
            String l = r.getString(4);
            if (l != null) {
              labels.computeIfAbsent(source, x -> new LinkedHashMap<>()).put(key, readLabels(l));
            }
          } catch (ModelException | IOException e) {
            throw new StateStoreException(
                "the state store "
                    + file
                    + " holds a value of "
                    + key
                    + " (from "
                    + source
                    + ") that cannot be read: "
                    + e.getMessage()
                    + WAYS_ON,
                e);
          }
        }
      }
    } catch (SQLException e) {
      throw new StateStoreException(describe(file, e), e);
    }
    if (notApplied > 0) {
      LOG.warn(
          "the state store {} keeps {} value(s) of no model registered now (their plugin is"
              + " off?); they are not applied and stay in the store until their source replaces"
              + " its values: {}{}",
          file,
          notApplied,
          String.join(", ", unknown),
          notApplied > unknown.size() ? ", ..." : "");
    }
    return new Restored(out, labels, notApplied);
  }

  private static final ObjectMapper JSON = new ObjectMapper();

  private static Map<String, String> readLabels(String json) throws IOException {
    Map<String, String> m =
        JSON.readValue(json, new TypeReference<LinkedHashMap<String, String>>() {});
    if (m == null) {
      throw new IOException("its labels are not a JSON object of strings: " + json);
    }
    return m;
  }

  private static String writeLabels(Map<String, String> labels) {
    if (labels == null || labels.isEmpty()) {
      return null;
    }
    try {
      return JSON.writeValueAsString(new TreeMap<>(labels));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("not applied: labels cannot be written as JSON", e);
    }
  }

  @Override
  public boolean keeps(String source) {
    return SOURCES.contains(source);
  }

  @Override
  public void resync(String source, Map<String, Object> values) {
    resync(source, values, Map.of());
  }

  @Override
  public void change(String source, Map<String, Object> changes) {
    change(source, changes, Map.of());
  }

  @Override
  public synchronized void resync(
      String source, Map<String, Object> values, Map<String, Map<String, String>> labels) {
    write(source, values, labels, true);
  }

  @Override
  public synchronized void change(
      String source, Map<String, Object> changes, Map<String, Map<String, String>> labels) {
    write(source, changes, labels, false);
  }

  /** One SQLite transaction: on disk when it returns; all of it or nothing after a crash. */
  private void write(
      String source,
      Map<String, Object> values,
      Map<String, Map<String, String>> labels,
      boolean replace) {
    Map<String, String> encoded = new HashMap<>();
    values.forEach((k, v) -> encoded.put(k, v == null ? null : models.encode(v)));
    try {
      db.setAutoCommit(false);
      try {
        try (PreparedStatement p = db.prepareStatement("INSERT OR IGNORE INTO source VALUES (?)")) {
          p.setString(1, source);
          p.executeUpdate();
        }
        if (replace) {
          try (PreparedStatement p = db.prepareStatement("DELETE FROM pushed WHERE source = ?")) {
            p.setString(1, source);
            p.executeUpdate();
          }
        }
        try (PreparedStatement put =
                db.prepareStatement(
                    "INSERT OR REPLACE INTO pushed (source, key, value, labels) VALUES (?, ?, ?, ?)");
            PreparedStatement remove =
                db.prepareStatement("DELETE FROM pushed WHERE source = ? AND key = ?")) {
          for (Map.Entry<String, String> e : encoded.entrySet()) {
            if (e.getValue() == null) {
              remove.setString(1, source);
              remove.setString(2, e.getKey());
              remove.addBatch();
            } else {
              put.setString(1, source);
              put.setString(2, e.getKey());
              put.setString(3, e.getValue());
              put.setString(4, writeLabels(labels.get(e.getKey())));
              put.addBatch();
            }
          }
          put.executeBatch();
          remove.executeBatch();
        }
        db.commit();
      } catch (SQLException | RuntimeException e) {
        db.rollback();
        throw e;
      } finally {
        db.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "not applied: the state store " + file + " cannot be written: " + e.getMessage(), e);
    }
  }

  /**
   * Notes that a confirmed commit described {@code what} is pending (its source's values before it
   * stay in the store): at the next start, {@link #unconfirmed} tells it was never confirmed.
   * Written to disk before it returns.
   */
  public synchronized void markUnconfirmed(String what) {
    setMeta("unconfirmed", what);
  }

  /** The pending confirmed commit ended (confirmed or rolled back). */
  public synchronized void clearUnconfirmed() {
    setMeta("unconfirmed", null);
  }

  /**
   * The confirmed commit that was pending when the agent stopped, if any ({@link
   * #markUnconfirmed}).
   */
  public synchronized Optional<String> unconfirmed() throws StateStoreException {
    try (PreparedStatement p = db.prepareStatement("SELECT value FROM meta WHERE name = ?")) {
      p.setString(1, "unconfirmed");
      try (ResultSet r = p.executeQuery()) {
        return r.next() ? Optional.of(r.getString(1)) : Optional.empty();
      }
    } catch (SQLException e) {
      throw new StateStoreException(describe(file, e), e);
    }
  }

  private void setMeta(String name, String value) {
    try (PreparedStatement p =
        db.prepareStatement(
            value == null
                ? "DELETE FROM meta WHERE name = ?"
                : "INSERT OR REPLACE INTO meta VALUES (?, ?)")) {
      p.setString(1, name);
      if (value != null) {
        p.setString(2, value);
      }
      p.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException(
          "the state store " + file + " cannot be written: " + e.getMessage(), e);
    }
  }

  @Override
  public synchronized void close() {
    close(db);
  }
}
