package io.kvscheduler.plugins.linux.descriptor;

import com.google.protobuf.Empty;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.plugins.linux.linuxcalls.Link;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCalls;
import io.kvscheduler.plugins.linux.model.LinuxKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code linux-interface-watcher}: the host links of the agent's namespace as the scheduler sees
 * them. While a link is up, {@code linux/interface/host-name/<name>} exists, and {@code
 * .../address/<ip/prefix>} for each of its addresses; values are OBTAINED (owned by the kernel).
 * Retrieve reads them at a resync; between resyncs {@link #start} follows the kernel's link and
 * address events (and reads the links every second in case events were missed) and pushes the
 * differences as SB notifications, so an EXISTING interface, or
 * a route waiting for an address, reacts when someone runs {@code ip link add} or {@code ip addr
 * add} by hand.
 */
public final class InterfaceWatcherDescriptor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(InterfaceWatcherDescriptor.class);

  /** Descriptor name. */
  public static final String NAME = "linux-interface-watcher";

  /** How long events are gathered before the links are read again, at least. */
  private static final long SETTLE_MS = 10;

  /**
   * Events are gathered for this many times as long as the last reading took, so that reading
   * many links (each reading is a dump of them all) takes a bounded share of the time.
   */
  private static final long SETTLE_FACTOR = 4;

  /**
   * The links are also read this often without an event: a change made while the monitor was
   * starting, or events the kernel dropped (a full netlink buffer), are not missed for long.
   */
  private static final long REREAD_MS = 1000;

  private final LinuxCalls calls;
  private final ScheduledExecutorService executor;
  private Set<String> reported = new TreeSet<>();
  private ScheduledFuture<?> pending;
  private volatile long lastReadMs;
  private AutoCloseable monitor;
  private KVScheduler scheduler;
  private final List<Consumer<List<Link>>> linkListeners =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  /** A watcher over {@code calls}; nothing runs until {@link #start}. */
  public InterfaceWatcherDescriptor(LinuxCalls calls) {
    this.calls = calls;
    this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
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
        .retrieve(c -> {
          List<KVWithMetadata<Empty, Void>> out = new ArrayList<>();
          for (String k : readState()) {
            out.add(new KVWithMetadata<>(k, Empty.getDefaultInstance(), null,
                ValueOrigin.FROM_SB));
          }
          return out;
        })
        .build();
  }

  /**
   * Calls {@code listener} with the links of the agent's namespace each time kernel events made
   * the watcher read them (on the watcher's thread; keep it short). Closing the returned handle
   * stops the calls.
   */
  public AutoCloseable onLinks(Consumer<List<Link>> listener) {
    linkListeners.add(listener);
    return () -> linkListeners.remove(listener);
  }

  /** The keys that describe the up links of the agent's namespace and their addresses now. */
  Set<String> readState() throws LinuxCallException {
    return keysOf(calls.links(""));
  }

  private static Set<String> keysOf(List<Link> links) {
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
    // process is tied to the thread that starts it
    try {
      monitor = executor.submit(() -> calls.watchLinks(this::changed)).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LinuxCallException("ip monitor", -1, "interrupted while starting the monitor");
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof LinuxCallException l) {
        throw l;
      }
      throw new IllegalStateException(e.getCause());
    }
    changed(); // whatever happened before the monitor started
    executor.scheduleWithFixedDelay(this::changed, REREAD_MS, REREAD_MS, TimeUnit.MILLISECONDS);
  }

  private synchronized void changed() {
    if (pending == null || pending.isDone()) {
      pending = executor.schedule(this::refresh, Math.max(SETTLE_MS, SETTLE_FACTOR * lastReadMs),
          TimeUnit.MILLISECONDS);
    }
  }

  private void refresh() {
    try {
      long t0 = System.nanoTime();
      List<Link> links = calls.links("");
      for (Consumer<List<Link>> l : linkListeners) {
        try {
          l.accept(links);
        } catch (RuntimeException e) {
          LOG.warn("a link listener failed: {}", e.toString());
        }
      }
      Set<String> now = keysOf(links);
      lastReadMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      List<KVWithMetadata<?, ?>> changes = new ArrayList<>();
      for (String k : now) {
        if (!reported.contains(k)) {
          changes.add(new KVWithMetadata<>(k, Empty.getDefaultInstance(), null,
              ValueOrigin.FROM_SB));
        }
      }
      for (String k : reported) {
        if (!now.contains(k)) {
          changes.add(new KVWithMetadata<>(k, null, null, ValueOrigin.FROM_SB));
        }
      }
      reported = now;
      if (!changes.isEmpty()) {
        LOG.debug("host links changed: {}", changes.stream().map(KVWithMetadata::key).toList());
        scheduler.pushSBNotification(changes);
      }
    } catch (LinuxCallException | RuntimeException e) {
      LOG.warn("cannot read the host links after a kernel event: {}", e.getMessage());
    }
  }

  /** Stops following kernel events. */
  @Override
  public synchronized void close() {
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
