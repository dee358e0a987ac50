package io.kvscheduler.agent.internal.northbound;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The input the northbound sources rejected or ignored, as state: what is wrong now, not a log line
 * that scrolled away. Each source ({@code file}, {@code etcd}, {@code rest}, {@code grpc}) reports
 * its problems (a file or a key, the line and column when known, a message) and clears them when
 * they are fixed; a problem keeps the time it was first reported ({@code since}) while it stays.
 *
 * <p>Served at {@code GET /northbound/problems}, shown by {@code kvsctl status} and the web page,
 * counted by source in the {@code kvs_northbound_problems} gauge and, with status publishing,
 * written to etcd. Listeners are told after every change (on the reporting source's thread: they
 * must be quick).
 */
public final class NorthboundProblems {
  private static final Logger LOG = LoggerFactory.getLogger(NorthboundProblems.class);

  /**
   * One problem.
   *
   * @param source the source: {@code file}, {@code etcd}, {@code rest} or {@code grpc}
   * @param file the file (path inside the config directory) for the file source, else null
   * @param key the key (relative to the agent prefix for etcd), else null
   * @param line the line (1-based), 0 when unknown
   * @param column the column (1-based), 0 when unknown
   * @param message what is wrong, and what stays applied
   * @param since when it was first reported
   * @param keptKeys the keys whose value from before the rejected input stays applied
   */
  public record Problem(
      String source,
      String file,
      String key,
      int line,
      int column,
      String message,
      Instant since,
      Set<String> keptKeys) {
    public Problem {
      Objects.requireNonNull(source, "source");
      Objects.requireNonNull(message, "message");
      keptKeys = Set.copyOf(keptKeys);
    }

    /** The file or the key: what the problem is about. */
    public String subject() {
      return file != null ? file : key != null ? key : "";
    }

    /** A problem to report: {@code since} is set by the registry. */
    public static Problem of(
        String source, String file, String key, int line, int column, String message) {
      return new Problem(source, file, key, line, column, message, Instant.EPOCH, Set.of());
    }

    /** This problem with the keys whose earlier value stays applied. */
    public Problem keeping(Collection<String> keys) {
      return new Problem(source, file, key, line, column, message, since, Set.copyOf(keys));
    }

    Problem since(Instant t) {
      return new Problem(source, file, key, line, column, message, t, keptKeys);
    }

    /** Whether {@code other} says the same (its time aside). */
    boolean sameAs(Problem other) {
      return other != null
          && line == other.line
          && column == other.column
          && message.equals(other.message)
          && keptKeys.equals(other.keptKeys);
    }
  }

  /**
   * The JSON object of a problem, keys in this order: {@code source}, {@code file} or {@code key},
   * {@code line} and {@code column} (left out when unknown), {@code message}, {@code since} (RFC
   * 3339, UTC) and {@code kept_values} (how many values from before the rejected input stay
   * applied; left out when none).
   */
  public static Map<String, Object> json(Problem p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("source", p.source());
    if (p.file() != null) {
      m.put("file", p.file());
    }
    if (p.key() != null) {
      m.put("key", p.key());
    }
    if (p.line() > 0) {
      m.put("line", p.line());
    }
    if (p.column() > 0) {
      m.put("column", p.column());
    }
    m.put("message", p.message());
    m.put("since", p.since().toString());
    if (!p.keptKeys().isEmpty()) {
      m.put("kept_values", p.keptKeys().size());
    }
    return m;
  }

  /** The JSON objects of every current problem ({@link #json(Problem)}), in {@link #list} order. */
  public List<Map<String, Object>> json() {
    return list().stream().map(NorthboundProblems::json).toList();
  }

  private final Clock clock;

  /** Per source, per subject. */
  private final Map<String, Map<String, Problem>> bySource = new TreeMap<>();

  /** Key → the problem whose rejected input left the key's earlier value applied. */
  private final Map<String, Problem> keptBy = new HashMap<>();

  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

  public NorthboundProblems() {
    this(Clock.systemUTC());
  }

  public NorthboundProblems(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** Reports {@code p} (replacing the problem of the same source and subject). */
  public void report(Problem p) {
    boolean changed;
    synchronized (this) {
      changed = put(p);
      if (changed) {
        reindex();
      }
    }
    if (changed) {
      changed();
    }
  }

  /** Clears the problem of {@code source} about {@code subject} (a file or a key), if any. */
  public void clear(String source, String subject) {
    boolean changed;
    synchronized (this) {
      Map<String, Problem> m = bySource.get(source);
      changed = m != null && m.remove(subject) != null;
      if (changed) {
        reindex();
      }
    }
    if (changed) {
      changed();
    }
  }

  /**
   * Sets the problems of {@code source} to {@code current}: those not in it are cleared, those
   * reported before keep their {@code since}.
   */
  public void replace(String source, Collection<Problem> current) {
    boolean changed;
    synchronized (this) {
      Map<String, Problem> m = bySource.computeIfAbsent(source, s -> new TreeMap<>());
      Set<String> subjects = new HashSet<>();
      current.forEach(p -> subjects.add(p.subject()));
      changed = m.keySet().removeIf(s -> !subjects.contains(s));
      for (Problem p : current) {
        if (!p.source().equals(source)) {
          throw new IllegalArgumentException("a problem of " + p.source() + ", not " + source);
        }
        changed |= put(p);
      }
      if (changed) {
        reindex();
      }
    }
    if (changed) {
      changed();
    }
  }

  /** Puts {@code p} (under the lock); whether anything changed. */
  private boolean put(Problem p) {
    Map<String, Problem> m = bySource.computeIfAbsent(p.source(), s -> new TreeMap<>());
    Problem before = m.get(p.subject());
    if (p.sameAs(before)) {
      return false;
    }
    Instant since = before != null ? before.since() : clock.instant();
    m.put(p.subject(), p.since(since));
    return true;
  }

  private void reindex() {
    keptBy.clear();
    bySource
        .values()
        .forEach(m -> m.values().forEach(p -> p.keptKeys().forEach(k -> keptBy.put(k, p))));
  }

  /** Every current problem, by source then file or key. */
  public synchronized List<Problem> list() {
    List<Problem> out = new ArrayList<>();
    bySource.values().forEach(m -> out.addAll(m.values()));
    out.sort(Comparator.comparing(Problem::source).thenComparing(Problem::subject));
    return out;
  }

  /** How many problems {@code source} has now. */
  public synchronized int count(String source) {
    Map<String, Problem> m = bySource.get(source);
    return m == null ? 0 : m.size();
  }

  /** The problem whose rejected input left the value of {@code key} from before it applied. */
  public synchronized Optional<Problem> keptBy(String key) {
    return Optional.ofNullable(keptBy.get(key));
  }

  /** The keys whose value is kept from before a rejected edit now (each has a {@link #note}). */
  public synchronized Set<String> keptKeys() {
    return Set.copyOf(keptBy.keySet());
  }

  /**
   * The line a value's status shows when its value is kept from before a rejected edit (naming the
   * edit), or null when it is not.
   */
  public String note(String key) {
    Problem p = keptBy(key).orElse(null);
    if (p == null) {
      return null;
    }
    if (p.file() != null) {
      return "kept from before the rejected edit of file "
          + p.file()
          + (p.line() > 0 ? " (line " + p.line() + ")" : "")
          + ": a restart would apply none of this file's values until it is fixed";
    }
    return "kept from before the rejected value in "
        + p.source()
        + ": a restart would not apply it until the value there is fixed";
  }

  /** Calls {@code listener} after every change; returns the handle that stops it. */
  public AutoCloseable listen(Runnable listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return () -> listeners.remove(listener);
  }

  private void changed() {
    for (Runnable l : listeners) {
      try {
        l.run();
      } catch (RuntimeException e) {
        LOG.warn("a listener of the northbound problems failed", e);
      }
    }
  }
}
