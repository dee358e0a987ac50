package io.kvscheduler.agent.internal.northbound;

import io.kvscheduler.agent.spi.ConfirmationConflictException;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each NB source's values and turns deliveries into scheduler transactions (with the default
 * retry). A resync of one source replaces that source's values; the transaction holds the desired
 * values of all sources. Deliveries are queued in the order they arrive (one lock around store
 * update and enqueue).
 *
 * <p>A key given by several sources takes the value delivered last. When that source removes it,
 * the value of the source that delivered it most recently before applies again (the key is not
 * deleted while a source still gives it). A delivery that repeats a source's value of a key (in a
 * resync or a change) is no new delivery of that key. {@link #desired()} lists the value chosen for
 * each key. The order of deliveries is kept in memory only: after a restart it starts anew with
 * what the journal kept ({@link #keep}), then the sources' first resyncs, in the order the sources
 * start.
 *
 * <p>While the scheduler's queue is full, a delivery waits for room (the source is slowed down to
 * the engine's pace), except from the sources named {@code refusedWhenFull}, whose callers can tell
 * someone (a REST client): their delivery is refused at once, its future has already failed with a
 * {@link QueueFullException} ("transaction queue is full"), and the source's values stay as they
 * were before it. A delivery waits for room outside the lock: meanwhile the others are served at
 * once (a refusal, {@link #desired()}), and the values of the waiting delivery are not listed until
 * it is queued. Waiting deliveries get room in the order they came; while one waits, the deliveries
 * of {@code refusedWhenFull} are refused, so they cannot take the room it waits for. A thread
 * interrupted while it waits gets an {@link IllegalStateException}, nothing of its delivery kept.
 *
 * <p>With a {@link Journal} ({@link #keep}), each delivery of the sources it keeps is written to it
 * before its transaction is queued (write-ahead), under the same lock, so the journal holds the
 * deliveries in the order the sources' values change here. A delivery the full queue refuses is
 * written back out; a delivery the journal cannot write is not applied (its future has failed with
 * the journal's error) and the source's values stay as they were.
 *
 * <p>An unconfirmed delivery ({@link #deliverUnconfirmed}) is applied as any other, but the journal
 * keeps the source's values before it until {@link #confirm}; {@link #rollBack} puts those values
 * back and commits them. While a delivery is unconfirmed, the other deliveries of its source and
 * every other unconfirmed delivery are refused with a {@link ConfirmationConflictException}.
 */
public final class Orchestrator implements Northbound {
  private static final Logger LOG = LoggerFactory.getLogger(Orchestrator.class);

  /** The longest pause of a delivery waiting for room before it tries again. */
  private static final long MAX_PAUSE_MS = 16;

  /**
   * Where the deliveries of some sources are kept durably. Its calls return once the delivery is on
   * disk, or throw a {@link RuntimeException} whose message says it was not applied.
   */
  public interface Journal {
    /** Whether the deliveries of {@code source} are kept. */
    boolean keeps(String source);

    /** {@code source} now gives exactly {@code values}. */
    void resync(String source, Map<String, Object> values);

    /** {@code source}'s changes; a null value means it no longer gives the key. */
    void change(String source, Map<String, Object> changes);

    /**
     * {@code source} now gives exactly {@code values}, with {@code labels} (by key; a key without
     * labels may be left out). The default keeps no labels.
     */
    default void resync(
        String source, Map<String, Object> values, Map<String, Map<String, String>> labels) {
      resync(source, values);
    }

    /**
     * {@code source}'s changes, each key's labels replaced by {@code labels}'s (none when left
     * out); a null value means it no longer gives the key. The default keeps no labels.
     */
    default void change(
        String source, Map<String, Object> changes, Map<String, Map<String, String>> labels) {
      change(source, changes);
    }
  }

  /**
   * One source's value of a key, when it was delivered (a counter: later is larger), and the labels
   * given with it (the generic API's {@code UpdateItem.labels}; empty for most sources).
   */
  private record Given(Object value, long delivered, Map<String, String> labels) {}

  private static Map<String, String> labelsOf(Map<String, Map<String, String>> labels, String key) {
    Map<String, String> l = labels.get(key);
    return l == null || l.isEmpty() ? Map.of() : Map.copyOf(l);
  }

  /**
   * The source's values before its unconfirmed delivery (null when it had delivered nothing), and
   * how that delivery is named in refusals.
   */
  private record Unconfirmed(Map<String, Given> before, Supplier<String> name) {}

  /** The unconfirmed delivery by source: at most one. */
  private final Map<String, Unconfirmed> unconfirmed = new HashMap<>();

  private final KVScheduler kvs;
  private final Set<String> refusedWhenFull;
  private final Map<String, Map<String, Given>> bySource = new HashMap<>();
  private long deliveries;
  private Journal journal;

  /** Taken by a delivery that may wait for room: they wait one at a time, in order. */
  private final ReentrantLock roomTurn = new ReentrantLock(true);

  /** Whether a delivery waits for room in the queue. */
  private volatile boolean roomWanted;

  /** Every source waits for room in a full queue. */
  public Orchestrator(KVScheduler kvs) {
    this(kvs, Set.of());
  }

  /** The deliveries of {@code refusedWhenFull} are refused, not delayed, by a full queue. */
  public Orchestrator(KVScheduler kvs, Set<String> refusedWhenFull) {
    this.kvs = kvs;
    this.refusedWhenFull = Set.copyOf(refusedWhenFull);
  }

  /**
   * Keeps the deliveries of {@code journal}'s sources in it from now on, and takes {@code restored}
   * (what it held: values by source) as those sources' values, delivered now and committed with the
   * next resync of any source (or {@link #resyncAll}). Called once, before the sources start.
   */
  public synchronized void keep(Journal journal, Map<String, Map<String, Object>> restored) {
    keep(journal, restored, Map.of());
  }

  /** Like {@link #keep(Journal, Map)}, with the labels the journal held (by source, then key). */
  public synchronized void keep(
      Journal journal,
      Map<String, Map<String, Object>> restored,
      Map<String, Map<String, Map<String, String>>> restoredLabels) {
    this.journal = Objects.requireNonNull(journal, "journal");
    restored.forEach(
        (source, values) -> {
          Map<String, Map<String, String>> labels = restoredLabels.getOrDefault(source, Map.of());
          Map<String, Given> mine = new HashMap<>();
          values.forEach(
              (key, value) -> mine.put(key, new Given(value, ++deliveries, labelsOf(labels, key))));
          bySource.put(source, mine);
        });
  }

  /**
   * Commits a full resync of the desired values of every source, changing none (after {@link
   * #keep}, when no source gives a first resync of its own). Waits for room in a full queue.
   */
  public CompletableFuture<Long> resyncAll(String description) {
    synchronized (this) {
      Txn txn = kvs.startNBTransaction();
      desiredLocked().forEach(txn::setValue);
      return txn.commitAsync(
          TxnOptions.builder()
              .description(description)
              .resync(ResyncType.FULL, true)
              .retryWithDefaults()
              .build());
    }
  }

  @Override
  public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
    return resync(source, values, Map.of());
  }

  @Override
  public CompletableFuture<Long> resync(
      String source, Map<String, Object> values, Map<String, Map<String, String>> labels) {
    return deliver(
        source,
        () -> {
          CompletableFuture<Long> refusal = refusal(source);
          return refusal != null
              ? refusal
              : resyncLocked(source, values, labels, "resync from " + source);
        });
  }

  @Override
  public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
    return change(source, changes, Map.of());
  }

  @Override
  public CompletableFuture<Long> change(
      String source, Map<String, Object> changes, Map<String, Map<String, String>> labels) {
    return deliver(
        source,
        () -> {
          CompletableFuture<Long> refusal = refusal(source);
          return refusal != null
              ? refusal
              : changeLocked(source, changes, labels, "change from " + source);
        });
  }

  /**
   * The labels given with the value chosen for {@code key} (that of the source that delivered it
   * last), empty when none or when no source gives the key.
   */
  @Override
  public synchronized Map<String, String> labels(String key) {
    Given g = chosen(bySource, key);
    return g == null ? Map.of() : g.labels();
  }

  /**
   * Delivers like {@link #resync} ({@code replace}) or {@link #change}, but unconfirmed: the
   * journal keeps {@code source}'s values before it until {@link #confirm}, and {@link #rollBack}
   * puts them back. Refused (a failed future, nothing applied) while a delivery is unconfirmed.
   *
   * @param name how the delivery is named in the refusals of other deliveries while unconfirmed
   * @param description the description of its transaction
   */
  public CompletableFuture<Long> deliverUnconfirmed(
      String source,
      Map<String, Object> values,
      boolean replace,
      Supplier<String> name,
      String description) {
    return deliverUnconfirmed(source, values, Map.of(), replace, name, description);
  }

  /** Like {@link #deliverUnconfirmed(String, Map, boolean, Supplier, String)}, with labels. */
  public CompletableFuture<Long> deliverUnconfirmed(
      String source,
      Map<String, Object> values,
      Map<String, Map<String, String>> labels,
      boolean replace,
      Supplier<String> name,
      String description) {
    return deliver(
        source,
        () -> {
          if (!unconfirmed.isEmpty()) {
            return CompletableFuture.failedFuture(conflict(unconfirmed.values().iterator().next()));
          }
          Map<String, Given> before = bySource.get(source);
          unconfirmed.put(
              source, new Unconfirmed(before == null ? null : new HashMap<>(before), name));
          CompletableFuture<Long> f =
              replace
                  ? resyncLocked(source, values, labels, description)
                  : changeLocked(source, values, labels, description);
          if (f.isCompletedExceptionally()) {
            unconfirmed.remove(source); // refused at once: nothing applied
          }
          return f;
        });
  }

  /**
   * Confirms the unconfirmed delivery of {@code source}: the journal takes the source's values.
   *
   * @throws ConfirmationConflictException when {@code source} has none
   * @throws RuntimeException when the journal cannot be written (the delivery stays unconfirmed)
   */
  public synchronized void confirm(String source) {
    if (!unconfirmed.containsKey(source)) {
      throw new ConfirmationConflictException(
          "nothing to confirm: no unconfirmed delivery from " + source);
    }
    if (journal != null && journal.keeps(source)) {
      Map<String, Given> mine = bySource.getOrDefault(source, Map.of());
      journal.resync(source, values(mine), labels(mine));
    }
    unconfirmed.remove(source);
  }

  /**
   * Puts back the values {@code source} had before its unconfirmed delivery and commits them (one
   * change transaction of every key the source gives now or gave before, described {@code
   * description}), waiting for room in a full queue. The journal already holds those values.
   *
   * @return the transaction's sequence number; a {@link ConfirmationConflictException} when {@code
   *     source} has no unconfirmed delivery
   */
  public CompletableFuture<Long> rollBack(String source, String description) {
    Set<String> keys = new TreeSet<>();
    synchronized (this) {
      Unconfirmed u = unconfirmed.remove(source);
      if (u == null) {
        return CompletableFuture.failedFuture(
            new ConfirmationConflictException(
                "nothing to roll back: no unconfirmed delivery from " + source));
      }
      keys.addAll(bySource.getOrDefault(source, Map.of()).keySet());
      if (u.before() == null) {
        bySource.remove(source);
      } else {
        keys.addAll(u.before().keySet());
        bySource.put(source, u.before());
      }
    }
    TxnOptions options = TxnOptions.builder().description(description).retryWithDefaults().build();
    try {
      long pauseMs = 1;
      while (true) {
        synchronized (this) {
          Txn txn = kvs.startNBTransaction();
          keys.forEach(key -> txn.setValue(key, effective(key)));
          CompletableFuture<Long> f = tryCommit(txn, options);
          if (!refused(f)) {
            return f;
          }
        }
        Thread.sleep(pauseMs);
        pauseMs = Math.min(2 * pauseMs, MAX_PAUSE_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return CompletableFuture.failedFuture(
          new IllegalStateException(
              "interrupted while waiting for room in the transaction queue; the rollback of the "
                  + source
                  + " configuration is not committed (a restart applies it)",
              e));
    }
  }

  /** The refusal of a delivery from {@code source} while it has an unconfirmed one, or null. */
  private CompletableFuture<Long> refusal(String source) {
    Unconfirmed u = unconfirmed.get(source);
    return u == null ? null : CompletableFuture.failedFuture(conflict(u));
  }

  private static ConfirmationConflictException conflict(Unconfirmed pending) {
    return new ConfirmationConflictException(
        "not applied: "
            + pending.name().get()
            + " is pending; confirm it (POST /configuration/confirm) or roll it back"
            + " (POST /configuration/rollback) first");
  }

  /**
   * The plan of the full resync {@link #resync} would commit: the desired values of every source,
   * {@code source}'s replaced by {@code values} in a copy (nothing here changes, nothing is
   * journaled). Planned outside the lock, after every delivery queued before.
   */
  @Override
  public Plan planResync(String source, Map<String, Object> values) {
    Txn txn = kvs.startNBTransaction();
    synchronized (this) {
      Map<String, Map<String, Given>> copy = new HashMap<>(bySource);
      Map<String, Given> before = bySource.getOrDefault(source, Map.of());
      Map<String, Given> mine = new HashMap<>();
      long next = deliveries;
      for (Map.Entry<String, Object> e : values.entrySet()) {
        if (e.getValue() == null) {
          continue;
        }
        Given old = before.get(e.getKey());
        boolean same = old != null && Objects.equals(old.value(), e.getValue());
        mine.put(e.getKey(), same ? old : new Given(e.getValue(), ++next, Map.of()));
      }
      copy.put(source, mine);
      desired(copy).forEach(txn::setValue);
    }
    return txn.plan(TxnOptions.builder().resync(ResyncType.FULL).build());
  }

  /**
   * The plan of the change transaction {@link #change} would commit, worked out on a copy of {@code
   * source}'s values (nothing here changes, nothing is journaled).
   */
  @Override
  public Plan planChange(String source, Map<String, Object> changes) {
    Txn txn = kvs.startNBTransaction();
    synchronized (this) {
      Map<String, Map<String, Given>> copy = new HashMap<>(bySource);
      Map<String, Given> mine = new HashMap<>(bySource.getOrDefault(source, Map.of()));
      copy.put(source, mine);
      long next = deliveries;
      for (Map.Entry<String, Object> e : changes.entrySet()) {
        Given old = mine.get(e.getKey());
        if (e.getValue() == null) {
          mine.remove(e.getKey());
        } else if (old == null || !Objects.equals(old.value(), e.getValue())) {
          mine.put(e.getKey(), new Given(e.getValue(), ++next, Map.of()));
        }
        txn.setValue(e.getKey(), effective(copy, e.getKey()));
      }
    }
    return txn.plan(TxnOptions.defaults());
  }

  /**
   * Runs {@code attempt} (a non-blocking commit, whose refusal puts the source's values back) under
   * the lock; for a source that waits for room, again and again until it is not refused, pausing
   * outside the lock.
   */
  private CompletableFuture<Long> deliver(
      String source, Supplier<CompletableFuture<Long>> attempt) {
    if (refusedWhenFull.contains(source)) {
      synchronized (this) {
        if (roomWanted) {
          LOG.debug(
              "delivery from the {} northbound refused: another delivery waits for room"
                  + " in the transaction queue",
              source);
          return CompletableFuture.failedFuture(new QueueFullException());
        }
        return attempt.get();
      }
    }
    try {
      roomTurn.lockInterruptibly();
      try {
        long pauseMs = 1;
        while (true) {
          synchronized (this) {
            CompletableFuture<Long> f = attempt.get();
            if (!refused(f)) {
              return f;
            }
            roomWanted = true;
          }
          Thread.sleep(pauseMs);
          pauseMs = Math.min(2 * pauseMs, MAX_PAUSE_MS);
        }
      } finally {
        roomWanted = false;
        roomTurn.unlock();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while waiting for room in the transaction"
              + " queue; the delivery from the "
              + source
              + " northbound was not applied",
          e);
    }
  }

  private CompletableFuture<Long> resyncLocked(
      String source,
      Map<String, Object> values,
      Map<String, Map<String, String>> labels,
      String description) {
    Map<String, Given> before = bySource.getOrDefault(source, Map.of());
    Map<String, Given> previous = bySource.get(source);
    long deliveriesBefore = deliveries;
    Map<String, Given> mine = new HashMap<>();
    Conflicts conflicts = new Conflicts(source);
    values.forEach(
        (key, value) -> {
          if (value == null) {
            return;
          }
          Given old = before.get(key);
          Map<String, String> l = labelsOf(labels, key);
          if (old != null && Objects.equals(old.value(), value)) {
            // the same value: no new delivery of the key, its labels as given now
            mine.put(key, old.labels().equals(l) ? old : new Given(value, old.delivered(), l));
          } else {
            conflicts.check(key, value);
            mine.put(key, new Given(value, ++deliveries, l));
          }
        });
    bySource.put(source, mine);
    boolean kept = journal != null && journal.keeps(source) && !unconfirmed.containsKey(source);
    if (kept) {
      try {
        journal.resync(source, values(mine), labels(mine));
      } catch (RuntimeException e) {
        restore(source, previous, deliveriesBefore);
        return CompletableFuture.failedFuture(e);
      }
    }
    Txn txn = kvs.startNBTransaction();
    desiredLocked().forEach(txn::setValue);
    CompletableFuture<Long> f =
        tryCommit(
            txn,
            TxnOptions.builder()
                .description(description)
                .resync(ResyncType.FULL, true)
                .retryWithDefaults()
                .build());
    if (refused(f)) {
      restore(source, previous, deliveriesBefore);
      if (kept) {
        Map<String, Given> back = previous == null ? Map.of() : previous;
        unjournal(() -> journal.resync(source, values(back), labels(back)));
      }
    } else {
      conflicts.log();
    }
    return f;
  }

  private CompletableFuture<Long> changeLocked(
      String source,
      Map<String, Object> changes,
      Map<String, Map<String, String>> labels,
      String description) {
    boolean known = bySource.containsKey(source);
    long deliveriesBefore = deliveries;
    Map<String, Given> mine = bySource.computeIfAbsent(source, s -> new HashMap<>());
    Map<String, Given> undo = new HashMap<>(); // the source's entries before, null when none
    Conflicts conflicts = new Conflicts(source);
    Txn txn = kvs.startNBTransaction();
    changes.forEach(
        (key, value) -> {
          Given old = mine.get(key);
          if (!undo.containsKey(key)) {
            undo.put(key, old);
          }
          Map<String, String> l = labelsOf(labels, key);
          if (value == null) {
            mine.remove(key);
          } else if (old == null || !Objects.equals(old.value(), value)) {
            conflicts.check(key, value);
            mine.put(key, new Given(value, ++deliveries, l));
          } else if (!old.labels().equals(l)) {
            mine.put(key, new Given(value, old.delivered(), l)); // new labels, no new delivery
          }
          txn.setValue(key, effective(key)); // null when no source gives the key any more
        });
    boolean kept = journal != null && journal.keeps(source) && !unconfirmed.containsKey(source);
    RuntimeException unwritten = null;
    if (kept) {
      try {
        journal.change(source, changes, labels);
      } catch (RuntimeException e) {
        unwritten = e; // nothing written: nothing applied
        kept = false;
      }
    }
    CompletableFuture<Long> f =
        unwritten != null
            ? CompletableFuture.failedFuture(unwritten)
            : tryCommit(
                txn, TxnOptions.builder().description(description).retryWithDefaults().build());
    if (unwritten != null || refused(f)) {
      undo.forEach(
          (key, old) -> {
            if (old == null) {
              mine.remove(key);
            } else {
              mine.put(key, old);
            }
          });
      restore(source, known ? mine : null, deliveriesBefore);
      if (kept) {
        Map<String, Object> back = new HashMap<>();
        Map<String, Map<String, String>> backLabels = new HashMap<>();
        undo.forEach(
            (key, old) -> {
              back.put(key, old == null ? null : old.value());
              if (old != null && !old.labels().isEmpty()) {
                backLabels.put(key, old.labels());
              }
            });
        unjournal(() -> journal.change(source, back, backLabels));
      }
    } else {
      conflicts.log();
    }
    return f;
  }

  /**
   * Queues {@code txn} without waiting for room: a full queue refuses it at once (the future has
   * failed with a {@link QueueFullException}; a source that waits tries again).
   */
  private static CompletableFuture<Long> tryCommit(Txn txn, TxnOptions options) {
    try {
      return txn.tryCommitAsync(options);
    } catch (QueueFullException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The values of one source's entries. */
  private static Map<String, Object> values(Map<String, Given> entries) {
    Map<String, Object> out = new HashMap<>();
    entries.forEach((key, given) -> out.put(key, given.value()));
    return out;
  }

  /** The labels of one source's entries, for the keys that have some. */
  private static Map<String, Map<String, String>> labels(Map<String, Given> entries) {
    Map<String, Map<String, String>> out = new HashMap<>();
    entries.forEach(
        (key, given) -> {
          if (!given.labels().isEmpty()) {
            out.put(key, given.labels());
          }
        });
    return out;
  }

  /** Writes a refused delivery back out of the journal. */
  private static void unjournal(Runnable writeBack) {
    try {
      writeBack.run();
    } catch (RuntimeException e) {
      // the journal keeps a delivery that was refused: a restart would apply it
      LOG.error("a refused delivery could not be taken back out of the state store", e);
    }
  }

  /** Whether the commit was refused at once because the queue was full. */
  private static boolean refused(CompletableFuture<Long> f) {
    if (!f.isCompletedExceptionally()) {
      return false;
    }
    try {
      f.getNow(null);
      return false;
    } catch (CompletionException e) {
      return e.getCause() instanceof QueueFullException;
    } catch (CancellationException e) {
      return false;
    }
  }

  /** Puts back the values {@code source} had before a refused delivery. */
  private void restore(String source, Map<String, Given> previous, long deliveriesBefore) {
    if (previous == null) {
      bySource.remove(source);
    } else {
      bySource.put(source, previous);
    }
    deliveries = deliveriesBefore;
    LOG.trace("delivery from the {} northbound refused: the transaction queue is full", source);
  }

  @Override
  public synchronized Map<String, Object> desired() {
    return desiredLocked();
  }

  private Map<String, Object> desiredLocked() {
    return desired(bySource);
  }

  /** The value chosen for each key the sources {@code sources} give. */
  private static Map<String, Object> desired(Map<String, Map<String, Given>> sources) {
    Map<String, Object> all = new TreeMap<>();
    for (Map<String, Given> values : sources.values()) {
      for (String key : values.keySet()) {
        all.computeIfAbsent(key, k -> effective(sources, k));
      }
    }
    return all;
  }

  /** The value of {@code key} delivered last among the sources that give it, or null. */
  private Object effective(String key) {
    return effective(bySource, key);
  }

  /** The value of {@code key} delivered last among {@code sources}, or null. */
  private static Object effective(Map<String, Map<String, Given>> sources, String key) {
    Given best = chosen(sources, key);
    return best == null ? null : best.value();
  }

  /** The entry of {@code key} delivered last among {@code sources}, or null. */
  private static Given chosen(Map<String, Map<String, Given>> sources, String key) {
    Given best = null;
    for (Map<String, Given> values : sources.values()) {
      Given g = values.get(key);
      if (g != null && (best == null || g.delivered() > best.delivered())) {
        best = g;
      }
    }
    return best;
  }

  /**
   * The keys of one delivery that other sources give with another value: logged as one warning per
   * delivery (a count and the first few keys), not one line per key.
   */
  private final class Conflicts {
    private static final int SHOWN = 5;
    private final String source;
    private int count;
    private final StringBuilder shown = new StringBuilder();

    Conflicts(String source) {
      this.source = source;
    }

    /** Before {@code source}'s new value of {@code key} is stored. */
    void check(String key, Object value) {
      String replaced = null; // the other source whose value applied until now
      long latest = -1;
      for (Map.Entry<String, Map<String, Given>> e : bySource.entrySet()) {
        Given other = e.getValue().get(key);
        if (!e.getKey().equals(source)
            && other != null
            && other.delivered() > latest
            && !Objects.equals(other.value(), value)) {
          replaced = e.getKey();
          latest = other.delivered();
        }
      }
      if (replaced != null && count++ < SHOWN) {
        shown
            .append(shown.length() > 0 ? ", " : "")
            .append(key)
            .append(" (also from ")
            .append(replaced)
            .append(')');
      }
    }

    void log() {
      if (count > 0) {
        LOG.warn(
            "{} key(s) delivered by the {} northbound are also given, with another value,"
                + " by another source; the values delivered last apply: {}{}",
            count,
            source,
            shown,
            count > SHOWN ? ", ..." : "");
      }
    }
  }
}
