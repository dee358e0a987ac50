package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.namespace.NetNamespace;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code linux-namespace-watcher}: the network namespaces values refer to by process ({@code PID}),
 * by file ({@code FD}) or by microservice label ({@code MICROSERVICE}), as the scheduler sees them.
 * While such a namespace exists, the property {@code linux/namespace/<type>/<reference>} exists
 * ({@link #key}, an OBTAINED value); every value placed in it depends on that key, so it waits
 * PENDING while the namespace is absent, is removed when it disappears, and is created again when
 * it comes back. Named namespaces ({@code NSID}) need no watching: the agent creates them.
 *
 * <p>A {@code PID} reference denotes {@code /proc/<pid>/ns/net}, an {@code FD} reference the file
 * it names; a {@code MICROSERVICE} reference the namespace of the process whose environment holds
 * {@code MICROSERVICE_LABEL=<label>}, found by reading {@code /proc/<pid>/environ} (the lowest such
 * process number when several carry the label), without asking a container runtime. The watcher
 * looks at the namespaces referred to every {@link #POLL_MS} milliseconds and at once when a value
 * refers to a new one; Retrieve reads them at a resync. A namespace that disappears, or whose file
 * now holds another namespace, is let go of at once ({@link LinuxCalls#closeNamespace}), so that
 * the agent's own processes do not keep it (and the links in it) alive.
 */
public final class NamespaceWatcherDescriptor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NamespaceWatcherDescriptor.class);

  /** Descriptor name. */
  public static final String NAME = "linux-namespace-watcher";

  /** Prefix of the namespace properties. */
  public static final String PREFIX = "linux/namespace/";

  /** How often the namespaces referred to are looked at. */
  static final long POLL_MS = 250;

  /** The environment variable a MICROSERVICE reference looks for. */
  static final String LABEL_VARIABLE = "MICROSERVICE_LABEL";

  private final LinuxCalls calls;
  private final Path proc;

  /** The references values made (by {@link #canonical} spelling), watched from then on. */
  private final Set<String> wanted = ConcurrentHashMap.newKeySet();

  /** The namespaces found, by canonical reference. */
  private final Map<String, Found> found = new ConcurrentHashMap<>();

  /**
   * The file each MICROSERVICE reference was last found through, kept after its process ended: what
   * was made in it is removed there (and found gone with it).
   */
  private final Map<String, String> lastPaths = new ConcurrentHashMap<>();

  /** Told the file of each namespace that disappeared, before the scheduler is. */
  private final List<Consumer<String>> goneListeners = new CopyOnWriteArrayList<>();

  private volatile ScheduledExecutorService executor;
  private KVScheduler scheduler;

  /** A namespace found: the file it is entered through and its identity (inode number). */
  record Found(String path, String identity) {}

  /** A watcher over {@code calls}, reading processes from {@code /proc}; idle until started. */
  public NamespaceWatcherDescriptor(LinuxCalls calls) {
    this(calls, Path.of("/proc"));
  }

  NamespaceWatcherDescriptor(LinuxCalls calls, Path proc) {
    this.calls = calls;
    this.proc = proc;
  }

  // ---- references

  /**
   * How a value's namespace reference is spelled for comparisons: "" for none (the agent's
   * namespace), the name for {@code NSID}, else {@code <type>/<reference>} ({@code pid/123}, {@code
   * fd/run/x}, {@code microservice/label}), which no namespace name can be (names hold no '/').
   */
  public static String canonical(NetNamespace ns) {
    if (ns == null) {
      return "";
    }
    return switch (ns.getType()) {
      case NSID -> ns.getReference();
      case PID -> "pid/" + ns.getReference().strip();
      case FD -> "fd" + ns.getReference();
      case MICROSERVICE -> "microservice/" + ns.getReference();
      default -> "undefined/" + ns.getReference();
    };
  }

  /** Whether {@code ns} is a named namespace, which the agent creates when missing (null: none). */
  static boolean named(NetNamespace ns) {
    return ns != null && ns.getType() == NetNamespace.ReferenceType.NSID;
  }

  /**
   * Whether {@code ns} refers by process, file or label: waited for, never created (null: none).
   */
  static boolean byReference(NetNamespace ns) {
    return ns != null && !named(ns);
  }

  /** The property that exists while the namespace {@code ns} refers to exists; none for a name. */
  public static Optional<String> key(NetNamespace ns) {
    if (ns == null
        || ns.getType() == NetNamespace.ReferenceType.NSID
        || ns.getType() == NetNamespace.ReferenceType.UNDEFINED) {
      return Optional.empty();
    }
    return Optional.of(PREFIX + canonical(ns));
  }

  /**
   * The dependency of a value placed in {@code ns} (none for the agent's or a named one), labelled
   * with the key it waits for, which a PENDING value's status shows.
   */
  static Optional<Dependency> dependency(NetNamespace ns) {
    return key(ns).map(k -> Dependency.onKey(k, k));
  }

  /** Records the problems of the reference {@code ns} in {@code bad}, against {@code field}. */
  static void validate(NetNamespace ns, Invalid bad, String field) {
    String ref = ns.getReference();
    if (ns.getType() == NetNamespace.ReferenceType.UNDEFINED || ref.isEmpty()) {
      bad.add("a namespace needs a type and a reference", field);
      return;
    }
    switch (ns.getType()) {
      case NSID ->
          Invalid.namespaceProblem(ref)
              .ifPresent(
                  p ->
                      bad.add(
                          "namespace name " + Invalid.quote(ref) + " is not a valid name: " + p,
                          field));
      case PID -> {
        long pid;
        try {
          pid = Long.parseLong(ref.strip());
        } catch (NumberFormatException e) {
          pid = -1;
        }
        if (pid <= 0 || pid > Integer.MAX_VALUE) {
          bad.add(
              "PID reference " + Invalid.quote(ref) + " is not a process number (above 0)", field);
        }
      }
      case FD -> {
        if (!ref.startsWith("/")) {
          bad.add(
              "FD reference " + Invalid.quote(ref) + " is not an absolute path of a namespace file",
              field);
        } else {
          Invalid.textProblem(ref)
              .ifPresent(p -> bad.add("FD reference " + Invalid.quote(ref) + ": " + p, field));
        }
      }
      case MICROSERVICE ->
          Invalid.textProblem(ref)
              .or(() -> ref.indexOf('=') >= 0 ? Optional.of("it holds '='") : Optional.empty())
              .ifPresent(
                  p -> bad.add("MICROSERVICE label " + Invalid.quote(ref) + ": " + p, field));
      default -> bad.add("namespace type " + ns.getType() + " is not known", field);
    }
  }

  /**
   * For Retrieve, which reads each namespace once: maps every file of {@code paths} to the first of
   * them holding the same namespace (a {@code PID} reference and an {@code FD} file bound to that
   * process's namespace are one namespace), itself when none before it does or when it holds none
   * now. Without a way to tell ({@link LinuxCalls#namespaceFiles} unsupported), every file maps to
   * itself.
   */
  static Map<String, String> oneFilePerNamespace(LinuxCalls calls, Collection<String> paths) {
    Map<String, String> out = new LinkedHashMap<>();
    if (paths.size() < 2) {
      paths.forEach(p -> out.put(p, p)); // nothing to share a namespace with
      return out;
    }
    Map<String, String> identities;
    try {
      identities = calls.namespaceFiles(List.copyOf(new LinkedHashSet<>(paths)));
    } catch (LinuxCallException e) {
      identities = Map.of();
    }
    Map<String, String> first = new HashMap<>();
    for (String p : paths) {
      String id = identities.get(p);
      out.put(p, id == null ? p : first.computeIfAbsent(id, x -> p));
    }
    return out;
  }

  /**
   * Watches the namespace {@code ns} refers to from now on (a named one or none needs no watching);
   * a new reference is looked at at once.
   */
  void want(NetNamespace ns) {
    if (key(ns).isPresent() && wanted.add(canonical(ns))) {
      pollSoon();
    }
  }

  /**
   * The {@code namespace} argument of {@link LinuxCalls} for {@code ns}: "" for none, the name of a
   * named one, else the file the namespace is entered through now (for a MICROSERVICE whose process
   * is gone, the file it was last found through).
   *
   * @throws LinuxCallException when no process carries a MICROSERVICE label
   */
  String handle(NetNamespace ns) throws LinuxCallException {
    if (ns == null) {
      return "";
    }
    return switch (ns.getType()) {
      case NSID -> ns.getReference();
      case PID -> procPath(ns.getReference().strip());
      case FD -> ns.getReference();
      case MICROSERVICE -> {
        Found f = found.get(canonical(ns));
        if (f != null) {
          yield f.path();
        }
        Long pid = microservices().get(ns.getReference());
        if (pid == null && lastPaths.containsKey(canonical(ns))) {
          yield lastPaths.get(canonical(ns));
        }
        if (pid == null) {
          throw new LinuxCallException(
              "find microservice",
              1,
              "no process carries " + LABEL_VARIABLE + "=" + ns.getReference());
        }
        yield procPath(Long.toString(pid));
      }
      default -> throw new IllegalArgumentException("namespace type " + ns.getType());
    };
  }

  private static String procPath(String pid) {
    return "/proc/" + pid + "/ns/net";
  }

  /**
   * The MICROSERVICE labels the processes carry now ({@code MICROSERVICE_LABEL} of their
   * environment), each with the lowest process number carrying it; processes whose environment
   * cannot be read (another user's) are passed over.
   */
  Map<String, Long> microservices() {
    Map<String, Long> out = new TreeMap<>();
    byte[] wantedBytes = (LABEL_VARIABLE + "=").getBytes(StandardCharsets.UTF_8);
    try (DirectoryStream<Path> all = Files.newDirectoryStream(proc)) {
      for (Path p : all) {
        String name = p.getFileName().toString();
        if (name.isEmpty() || !name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        byte[] env;
        try {
          env = Files.readAllBytes(p.resolve("environ"));
        } catch (IOException | SecurityException e) {
          continue; // gone since, or not ours to read
        }
        String label = variable(env, wantedBytes);
        if (label != null) {
          long pid = Long.parseLong(name);
          out.merge(label, pid, Math::min);
        }
      }
    } catch (IOException e) {
      LOG.warn("cannot read the processes of {}: {}", proc, e.toString());
    }
    return out;
  }

  /** The value of the variable {@code prefix} names in a NUL-separated environment, or null. */
  private static String variable(byte[] env, byte[] prefix) {
    int start = 0;
    while (start < env.length) {
      int end = start;
      while (end < env.length && env[end] != 0) {
        end++;
      }
      if (end - start >= prefix.length) {
        boolean match = true;
        for (int i = 0; i < prefix.length && match; i++) {
          match = env[start + i] == prefix[i];
        }
        if (match) {
          return new String(
              env, start + prefix.length, end - start - prefix.length, StandardCharsets.UTF_8);
        }
      }
      start = end + 1;
    }
    return null;
  }

  // ---- watching

  /** The descriptor (Retrieve only). */
  public KVDescriptor<Empty, Void> descriptor() {
    return KVDescriptor.builder(NAME, Empty.class)
        .valueTypeName(Empty.getDescriptor().getFullName())
        .keySelector(k -> k.startsWith(PREFIX))
        // after the values referring to namespaces: their Retrieve names the references (at a
        // resync after a restart, before any value's dependencies were asked for)
        .retrieveDependencies(
            InterfaceDescriptor.NAME, LinkDescriptor.NAME, RuleChainDescriptor.NAME)
        .retrieve(
            c -> {
              List<KVWithMetadata<Empty, Void>> out = new ArrayList<>();
              for (String ref : refresh().keySet()) {
                out.add(
                    new KVWithMetadata<>(
                        PREFIX + ref, Empty.getDefaultInstance(), null, ValueOrigin.FROM_SB));
              }
              return out;
            })
        .build();
  }

  /** The namespaces referred to that exist now, by canonical reference. */
  private Map<String, Found> look() throws LinuxCallException {
    Map<String, String> paths = new TreeMap<>();
    Map<String, Long> labels = null;
    for (String ref : wanted) {
      if (ref.startsWith("pid/")) {
        paths.put(ref, procPath(ref.substring("pid/".length())));
      } else if (ref.startsWith("fd/")) {
        paths.put(ref, ref.substring("fd".length()));
      } else if (ref.startsWith("microservice/")) {
        if (labels == null) {
          labels = microservices();
        }
        Long pid = labels.get(ref.substring("microservice/".length()));
        if (pid != null) {
          paths.put(ref, procPath(Long.toString(pid)));
        }
      }
    }
    Map<String, Found> out = new TreeMap<>();
    if (paths.isEmpty()) {
      return out;
    }
    Map<String, String> there = calls.namespaceFiles(List.copyOf(Set.copyOf(paths.values())));
    paths.forEach(
        (ref, path) -> {
          String id = there.get(path);
          if (id != null) {
            out.put(ref, new Found(path, id));
          }
        });
    return out;
  }

  /** Starts looking at the namespaces referred to, pushing what changes to {@code kvs}. */
  public synchronized void start(KVScheduler kvs) {
    if (executor != null) {
      return;
    }
    scheduler = kvs;
    executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, NAME);
              t.setDaemon(true);
              return t;
            });
    executor.scheduleWithFixedDelay(this::poll, POLL_MS, POLL_MS, TimeUnit.MILLISECONDS);
  }

  private void pollSoon() {
    ScheduledExecutorService e = executor;
    if (e != null) {
      try {
        e.execute(this::poll);
      } catch (RejectedExecutionException closed) {
        // the watcher is closed
      }
    }
  }

  /**
   * For Retrieve: the namespaces referred to that exist now, which the watcher takes as told (the
   * resync tells the scheduler); those that disappeared are let go of.
   */
  private synchronized Map<String, Found> refresh() throws LinuxCallException {
    Map<String, Found> now = look();
    for (Map.Entry<String, Found> e : Map.copyOf(found).entrySet()) {
      if (!e.getValue().equals(now.get(e.getKey()))) {
        letGo(e.getValue().path());
      }
    }
    found.clear();
    found.putAll(now);
    now.forEach((ref, f) -> lastPaths.put(ref, f.path()));
    return now;
  }

  private void letGo(String path) {
    calls.closeNamespace(path);
    goneListeners.forEach(l -> l.accept(path));
  }

  /** On the watcher's thread: tells the scheduler which namespaces appeared or disappeared. */
  private synchronized void poll() {
    if (wanted.isEmpty()) {
      return;
    }
    Map<String, Found> now;
    try {
      now = look();
    } catch (LinuxCallException | RuntimeException e) {
      if (!Thread.currentThread().isInterrupted()) { // else the watcher is closing
        LOG.warn("cannot look at the namespaces referred to: {}", e.getMessage());
      }
      return;
    }
    List<KVWithMetadata<?, ?>> gone = new ArrayList<>();
    List<KVWithMetadata<?, ?>> added = new ArrayList<>();
    for (Map.Entry<String, Found> e : Map.copyOf(found).entrySet()) {
      Found later = now.get(e.getKey());
      if (!e.getValue().equals(later)) {
        // gone, or another namespace under the reference (a process started again): the values
        // in the old one are removed before they are made in the new one
        LOG.info(
            "namespace {} ({}) {}",
            e.getKey(),
            e.getValue().path(),
            later == null ? "disappeared" : "is another namespace now");
        letGo(e.getValue().path());
        gone.add(new KVWithMetadata<>(PREFIX + e.getKey(), null, null, ValueOrigin.FROM_SB));
      }
    }
    for (Map.Entry<String, Found> e : now.entrySet()) {
      if (!e.getValue().equals(found.get(e.getKey()))) {
        LOG.info("namespace {} found: {}", e.getKey(), e.getValue().path());
        added.add(
            new KVWithMetadata<>(
                PREFIX + e.getKey(), Empty.getDefaultInstance(), null, ValueOrigin.FROM_SB));
      }
    }
    try {
      if (!gone.isEmpty()) {
        scheduler.pushSBNotification(gone);
        gone.forEach(kv -> found.remove(kv.key().substring(PREFIX.length())));
      }
      if (!added.isEmpty()) {
        added.forEach(
            kv -> {
              String ref = kv.key().substring(PREFIX.length());
              found.put(ref, now.get(ref));
              lastPaths.put(ref, now.get(ref).path());
            });
        scheduler.pushSBNotification(added);
      }
    } catch (IllegalStateException full) {
      // the queue is full (or the scheduler closing): the next look tells it again
      added.forEach(kv -> found.remove(kv.key().substring(PREFIX.length())));
    }
  }

  /**
   * Calls {@code listener} with the file of each namespace referred to that disappeared (or holds
   * another namespace now), before the values in it are removed: whatever keeps processes in it
   * ends them ({@link LinuxCalls#closeNamespace} is called already).
   */
  public void onGone(Consumer<String> listener) {
    goneListeners.add(listener);
  }

  /** Stops looking. */
  @Override
  public synchronized void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }
}
