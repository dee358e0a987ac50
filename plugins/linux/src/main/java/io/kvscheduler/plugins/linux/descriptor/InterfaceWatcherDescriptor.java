package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.LinkEvent;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code linux-interface-watcher}: the host links of the agent's namespace as the scheduler sees
 * them. While a link is up, {@code linux/interface/host-name/<name>} exists, and {@code
 * .../address/<ip/prefix>} for each of its addresses; values are OBTAINED (owned by the kernel).
 * Retrieve reads them at a resync; between resyncs {@link #start} follows the kernel's link and
 * address events and pushes the differences as SB notifications, so an EXISTING interface, or a
 * route waiting for an address, reacts when someone runs {@code ip link add} or {@code ip addr add}
 * by hand.
 *
 * <p>The watcher reads all links once when it starts; after that it keeps its own copy up to date
 * from the events alone: an address event changes the copy directly, a link event makes it read
 * that one link again ({@link LinuxCalls#findLinks}, which costs the same whatever the number of
 * links). Events are gathered for a few milliseconds and applied together; while the agent itself
 * is changing the kernel (a transaction under way) they wait until it stops, up to ten seconds, so
 * that the links of a burst of the agent's own changes are read once, after it. It reads all links
 * again when events may have been lost (the kernel dropped some, or the monitoring ended and is
 * started again), and, as a last resort, every second or 50 times as long as the last such reading
 * took, whichever is longer, so that reading thousands of links takes a bounded share of the time.
 */
public final class InterfaceWatcherDescriptor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(InterfaceWatcherDescriptor.class);

  /** Descriptor name. */
  public static final String NAME = "linux-interface-watcher";

  /** How long events are gathered before they are applied. */
  private static final long SETTLE_MS = 10;

  /** All links are read again at least this often, in case events were missed. */
  private static final long REREAD_MS = 1000;

  /** ... and no more often than this many times as long as the last reading of them took. */
  private static final long REREAD_FACTOR = 50;

  /**
   * While the scheduler has transactions waiting, kernel events are held back this long at a time,
   * so that the events of a long transaction are applied together (each link they name read once)
   * and become one notification, not one per burst; ...
   */
  private static final long DEFER_MS = 50;

  /** ... but never longer than this. */
  private static final long MAX_DEFER_NANOS = TimeUnit.SECONDS.toNanos(1);

  /**
   * While the agent itself is changing the kernel (a change asked for within {@link #DEFER_MS}),
   * kernel events are held back, and all links are not read again, up to this long: the scheduler
   * is in a transaction and would take a notification only after it, and reading each link the
   * agent is creating while it creates them would slow the transaction down.
   */
  private static final long MAX_OWN_DEFER_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final LinuxCalls calls;
  private final ScheduledExecutorService executor;
  private final List<Consumer<List<Link>>> linkListeners = new CopyOnWriteArrayList<>();
  private final Queue<LinkEvent> events = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean applyScheduled = new AtomicBoolean();

  // touched on the watcher's thread only
  /** The links of the namespace by index (their addresses are in {@link #addresses}). */
  private final Map<Integer, Link> links = new HashMap<>();

  private final Map<Integer, Set<String>> addresses = new HashMap<>();

  /** The keys the scheduler was told about. */
  private Set<String> reported = new TreeSet<>();

  /** When changes were first held back for a busy scheduler (0 when none are). */
  private long firstDeferredNanos;

  private boolean publishScheduled;
  private long lastReadNanos;
  private long lastReadMs;
  private long lastRestartNanos = System.nanoTime() - TimeUnit.HOURS.toNanos(1);

  private AutoCloseable monitor;
  private KVScheduler scheduler;
  private boolean closed;

  /** A watcher over {@code calls}; nothing runs until {@link #start}. */
  public InterfaceWatcherDescriptor(LinuxCalls calls) {
    this.calls = calls;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "linux-interface-watcher");
              t.setDaemon(true);
              return t;
            });
  }

  /** The descriptor (Retrieve only). */
  public KVDescriptor<Empty, Void> descriptor() {
    return KVDescriptor.builder(NAME, Empty.class)
        .valueTypeName(Empty.getDescriptor().getFullName())
        .keySelector(k -> k.startsWith(LinuxKeys.HOST_NAME_PREFIX))
        .retrieve(
            c -> {
              List<KVWithMetadata<Empty, Void>> out = new ArrayList<>();
              for (String k : readState()) {
                out.add(
                    new KVWithMetadata<>(k, Empty.getDefaultInstance(), null, ValueOrigin.FROM_SB));
              }
              return out;
            })
        .build();
  }

  /**
   * Calls {@code listener} with the links of the agent's namespace (with their addresses) each time
   * kernel events changed them, and each time the watcher read them all (on the watcher's thread;
   * keep it short). Closing the returned handle stops the calls.
   */
  public AutoCloseable onLinks(Consumer<List<Link>> listener) {
    linkListeners.add(listener);
    return () -> linkListeners.remove(listener);
  }

  /** The keys that describe the up links of the agent's namespace and their addresses now. */
  Set<String> readState() throws LinuxCallException {
    return keysOf(calls.links(""));
  }

  private static Set<String> keysOf(Collection<Link> links) {
    Set<String> keys = new TreeSet<>();
    for (Link l : links) {
      if (!l.up()) {
        continue;
      }
      keys.add(LinuxKeys.hostNameKey(l.name()));
      for (String a : l.addresses()) {
        keys.add(LinuxKeys.hostAddressKey(l.name(), a));
      }
    }
    return keys;
  }

  /** Starts following kernel events, pushing what changes to {@code kvs}. */
  public synchronized void start(KVScheduler kvs) throws LinuxCallException {
    if (monitor != null) {
      return;
    }
    this.scheduler = kvs;
    // started from the watcher's own thread, which lives as long as the watcher: the monitor
    // process is tied to the thread that starts it; then all links are read once, after the
    // monitor started so that no change falls between the reading and the first event
    try {
      monitor =
          executor
              .submit(
                  () -> {
                    AutoCloseable m = calls.watchLinks(this::received);
                    readAll();
                    return m;
                  })
              .get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LinuxCallException("ip monitor", -1, "interrupted while starting the monitor");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof LinuxCallException l) {
        throw l;
      }
      throw new IllegalStateException(e.getCause());
    }
    executor.scheduleWithFixedDelay(
        this::rereadWhenDue, REREAD_MS, REREAD_MS, TimeUnit.MILLISECONDS);
  }

  /** On the monitor's thread: queues the event; the watcher applies a burst of them together. */
  private void received(LinkEvent e) {
    events.add(e);
    if (applyScheduled.compareAndSet(false, true)) {
      try {
        executor.schedule(this::applyEvents, SETTLE_MS, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closing) {
        // the watcher is closed
      }
    }
  }

  private void applyEvents() {
    applyScheduled.set(false);
    if (events.isEmpty()) {
      return;
    }
    if (holdBack()) {
      // the scheduler is busy: the events wait, so that the links they name are read once
      if (applyScheduled.compareAndSet(false, true)) {
        executor.schedule(this::applyEvents, DEFER_MS, TimeUnit.MILLISECONDS);
      }
      return;
    }
    List<LinkEvent> burst = new ArrayList<>();
    for (LinkEvent e; (e = events.poll()) != null; ) {
      burst.add(e);
    }
    try {
      if (burst.stream().anyMatch(e -> e instanceof LinkEvent.Lost)) {
        for (LinkEvent e : burst) {
          if (e instanceof LinkEvent.Lost lost) {
            LOG.info("reading all host links again: {}", lost.reason());
            if (lost.ended()) {
              long since = System.nanoTime() - lastRestartNanos;
              if (since < TimeUnit.MILLISECONDS.toNanos(REREAD_MS)) {
                // a monitor that ends at once (ip cannot listen): try again a second later
                executor.schedule(
                    () -> received(lost),
                    REREAD_MS - TimeUnit.NANOSECONDS.toMillis(since),
                    TimeUnit.MILLISECONDS);
                continue;
              }
              restartMonitor();
            }
          }
        }
        readAll();
        return;
      }
      Map<Integer, List<String>> changed = new LinkedHashMap<>();
      for (LinkEvent e : burst) {
        if (e instanceof LinkEvent.Changed c) {
          changed.put(c.index(), c.names());
        } else if (e instanceof LinkEvent.Removed r) {
          links.remove(r.index());
          addresses.remove(r.index());
          changed.remove(r.index());
        } else if (e instanceof LinkEvent.AddressAdded a) {
          addresses.computeIfAbsent(a.index(), i -> new LinkedHashSet<>()).add(a.address());
        } else if (e instanceof LinkEvent.AddressRemoved a) {
          Set<String> of = addresses.get(a.index());
          if (of != null) {
            of.remove(a.address());
          }
        }
      }
      if (!changed.isEmpty()) {
        // the links as they are now; one whose name changed again since is read at its next
        // event, one gone since is removed at its next event
        List<String> names = changed.values().stream().flatMap(List::stream).distinct().toList();
        for (Link l : calls.findLinks("", names).values()) {
          links.put(l.index(), l);
        }
      }
      publish();
    } catch (LinuxCallException | RuntimeException e) {
      LOG.warn(
          "cannot follow a change of the host links ({}); reading them all again", e.getMessage());
      try {
        readAll();
      } catch (RuntimeException again) {
        LOG.warn("cannot read the host links: {}", again.toString());
      }
    }
  }

  private void restartMonitor() {
    lastRestartNanos = System.nanoTime();
    synchronized (this) {
      if (closed) {
        return;
      }
      try {
        if (monitor != null) {
          monitor.close();
        }
        monitor = calls.watchLinks(this::received);
      } catch (Exception e) {
        LOG.warn("cannot restart the link monitor: {}", e.toString());
        monitor = null;
      }
    }
  }

  private void rereadWhenDue() {
    long since = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastReadNanos);
    long due = Math.max(REREAD_MS, REREAD_FACTOR * lastReadMs);
    if (since < due
        || ownChanges() && since < due + TimeUnit.NANOSECONDS.toMillis(MAX_OWN_DEFER_NANOS)) {
      return;
    }
    readAll();
  }

  /** Whether the agent itself has been changing the kernel just now. */
  private boolean ownChanges() {
    return calls.changedWithin(Duration.ofMillis(DEFER_MS));
  }

  /** Reads all links and their addresses, and publishes what changed (on the watcher's thread). */
  private void readAll() {
    events.clear(); // what happened before is in the reading
    long t0 = System.nanoTime();
    try {
      List<Link> all = calls.links("");
      links.clear();
      addresses.clear();
      for (Link l : all) {
        links.put(l.index(), l);
        addresses.put(l.index(), new LinkedHashSet<>(l.addresses()));
      }
      publish();
    } catch (LinuxCallException | RuntimeException e) {
      LOG.warn("cannot read the host links: {}", e.getMessage());
    } finally {
      lastReadNanos = System.nanoTime();
      lastReadMs = TimeUnit.NANOSECONDS.toMillis(lastReadNanos - t0);
    }
  }

  /** Tells the listeners and the scheduler what the links are now. */
  private void publish() {
    List<Link> current = new ArrayList<>(links.size());
    for (Link l : new TreeMap<>(links).values()) {
      current.add(
          new Link(
              l.namespace(),
              l.index(),
              l.name(),
              l.kind(),
              l.alias(),
              l.up(),
              l.mtu(),
              l.mac(),
              List.copyOf(addresses.getOrDefault(l.index(), Set.of())),
              l.group()));
    }
    for (Consumer<List<Link>> l : linkListeners) {
      try {
        l.accept(current);
      } catch (RuntimeException e) {
        LOG.warn("a link listener failed: {}", e.toString());
      }
    }
    Set<String> keys = keysOf(current);
    List<KVWithMetadata<?, ?>> changes = new ArrayList<>();
    for (String k : keys) {
      if (!reported.contains(k)) {
        changes.add(new KVWithMetadata<>(k, Empty.getDefaultInstance(), null, ValueOrigin.FROM_SB));
      }
    }
    for (String k : reported) {
      if (!keys.contains(k)) {
        changes.add(new KVWithMetadata<>(k, null, null, ValueOrigin.FROM_SB));
      }
    }
    if (changes.isEmpty()) {
      firstDeferredNanos = 0;
      return;
    }
    if (holdBack()) {
      publishLater(); // the scheduler is busy: one notification later says as much as many now
      return;
    }
    try {
      scheduler.pushSBNotification(changes);
    } catch (IllegalStateException full) {
      publishLater(); // the queue is full (or the scheduler closing): the changes wait
      return;
    }
    LOG.debug("host links changed: {}", changes.stream().map(KVWithMetadata::key).toList());
    reported = keys;
    firstDeferredNanos = 0;
  }

  /**
   * Whether changes should wait: the agent is changing the kernel itself, and changes have not
   * waited for {@link #MAX_OWN_DEFER_NANOS} yet; or the scheduler has transactions queued, and
   * changes have not waited for {@link #MAX_DEFER_NANOS} yet.
   */
  private boolean holdBack() {
    long t = System.nanoTime();
    if (firstDeferredNanos == 0) {
      firstDeferredNanos = t;
    }
    long waited = t - firstDeferredNanos;
    return ownChanges() && waited < MAX_OWN_DEFER_NANOS
        || scheduler.queueLength() > 0 && waited < MAX_DEFER_NANOS;
  }

  private void publishLater() {
    if (!publishScheduled) {
      publishScheduled = true;
      executor.schedule(
          () -> {
            publishScheduled = false;
            publish();
          },
          DEFER_MS,
          TimeUnit.MILLISECONDS);
    }
  }

  /** Stops following kernel events. */
  @Override
  public synchronized void close() {
    closed = true;
    if (monitor != null) {
      try {
        monitor.close();
      } catch (Exception e) {
        LOG.warn("stopping the link monitor failed: {}", e.toString());
      }
      monitor = null;
    }
    executor.shutdownNow();
  }
}
