package io.kvscheduler.agent.internal.confirm;

import io.kvscheduler.agent.Probe;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.spi.ConfirmationConflictException;
import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.api.TransactionException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's {@link ConfirmedCommits}, over the {@link Orchestrator}'s unconfirmed deliveries.
 *
 * <p>States: <b>idle</b> → {@link #commit} → <b>pending</b> (the deadline timer set; when the
 * transaction has finished, the probes run one after the other) → back to idle by one of:
 *
 * <ul>
 *   <li>{@link #confirm}, or every probe passing (confirmed: the source's new values are written to
 *       the state store);
 *   <li>the deadline ({@code rollback: not confirmed within 30s}), the first probe failing ({@code
 *       rollback: probe 'name' failed: output}) or {@link #rollback} ({@code rollback: requested}):
 *       the orchestrator puts the source's values before the commit back in one transaction with
 *       that description.
 * </ul>
 *
 * Whatever ends a pending commit first wins; what comes later finds it idle (or another commit
 * pending) and does nothing. The clock, the timer and the probes' executor are injected.
 */
public final class CommitConfirmer implements ConfirmedCommits {
  private static final Logger LOG = LoggerFactory.getLogger(CommitConfirmer.class);

  /** Sets the deadline timer. */
  @FunctionalInterface
  public interface Timer {
    /** Runs {@code task} once after {@code delay}; the returned handle cancels it. */
    Runnable schedule(Duration delay, Runnable task);
  }

  /** Told of each step (the log, metrics, the state store's note, the web page). */
  public interface Listener {
    /** {@code pending} was committed and waits for its confirmation. */
    default void pending(Pending pending) {}

    /** {@code pending} was confirmed; {@code how}: {@code by request} or {@code probes passed}. */
    default void confirmed(Pending pending, String how) {}

    /**
     * {@code pending} is rolled back by the transaction {@code rollback}, described {@code
     * description}.
     */
    default void rolledBack(
        Pending pending, String description, CompletableFuture<Long> rollback) {}
  }

  /** The commit pending now: its values, the transaction's number once known, the timer. */
  private final class Current {
    final Pending pending;
    volatile long seqNum = -1;
    Runnable cancelTimer = () -> {};

    Current(Pending pending) {
      this.pending = pending;
    }

    Pending now() {
      Pending p = pending;
      return new Pending(p.id(), p.source(), seqNum, p.committed(), p.within(), p.deadline());
    }
  }

  private final Orchestrator orchestrator;
  private final Clock clock;
  private final Timer timer;
  private final List<Probe> probes;
  private final ProbeRunner runner;
  private final Executor probeExecutor;
  private final List<Listener> listeners;
  private long ids;
  private Current current;

  /**
   * @param probes run after each commit applies, in order (none: confirmation is by hand only)
   * @param runner runs one probe
   * @param probeExecutor where the probes run
   */
  public CommitConfirmer(
      Orchestrator orchestrator,
      Clock clock,
      Timer timer,
      List<Probe> probes,
      ProbeRunner runner,
      Executor probeExecutor,
      List<Listener> listeners) {
    this.orchestrator = Objects.requireNonNull(orchestrator, "orchestrator");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.probes = List.copyOf(probes);
    this.runner = Objects.requireNonNull(runner, "runner");
    this.probeExecutor = Objects.requireNonNull(probeExecutor, "probeExecutor");
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public CompletableFuture<Long> commit(
      String source, Map<String, Object> values, boolean replace, Duration within) {
    return commit(source, values, Map.of(), replace, within);
  }

  @Override
  public synchronized CompletableFuture<Long> commit(
      String source,
      Map<String, Object> values,
      Map<String, Map<String, String>> labels,
      boolean replace,
      Duration within) {
    ConfirmedCommits.checkWithin(within);
    if (current != null) {
      return CompletableFuture.failedFuture(
          new ConfirmationConflictException(
              "not applied: "
                  + current.now().describe()
                  + " is pending; confirm it (POST /configuration/confirm) or roll it back"
                  + " (POST /configuration/rollback) first"));
    }
    Instant now = clock.instant();
    Current c = new Current(new Pending(++ids, source, -1, now, within, now.plus(within)));
    CompletableFuture<Long> f =
        orchestrator.deliverUnconfirmed(
            source,
            values,
            labels,
            replace,
            () -> c.now().describe(),
            (replace ? "resync" : "change")
                + " from "
                + source
                + ", to be confirmed within "
                + text(within));
    if (f.isCompletedExceptionally()) {
      return f; // refused: nothing applied, nothing pending
    }
    current = c;
    c.cancelTimer = timer.schedule(within, () -> expire(c));
    LOG.info("{}: applied; confirm with POST /configuration/confirm", c.pending.describe());
    tell(l -> l.pending(c.pending));
    f.whenComplete(
        (seq, error) -> {
          if (seq != null) {
            c.seqNum = seq;
          } else if (cause(error) instanceof TransactionException te) {
            c.seqNum = te.seqNum();
          }
          if (!probes.isEmpty()) {
            probeExecutor.execute(() -> runProbes(c));
          }
        });
    return f;
  }

  @Override
  public synchronized Pending confirm() {
    Current c = current;
    if (c == null) {
      throw new ConfirmationConflictException("nothing to confirm: no confirmed commit is pending");
    }
    confirm(c, "by request");
    return c.now();
  }

  private void confirm(Current c, String how) {
    orchestrator.confirm(c.pending.source());
    c.cancelTimer.run();
    current = null;
    LOG.info("{}: confirmed ({})", c.now().name(), how);
    tell(l -> l.confirmed(c.now(), how));
  }

  @Override
  public synchronized CompletableFuture<Long> rollback() {
    Current c = current;
    if (c == null) {
      throw new ConfirmationConflictException(
          "nothing to roll back: no confirmed commit is pending");
    }
    return rollBack(c, "rollback: requested");
  }

  @Override
  public synchronized Optional<Pending> pending() {
    return current == null ? Optional.empty() : Optional.of(current.now());
  }

  /** The deadline passed. */
  private synchronized void expire(Current c) {
    if (current == c) {
      rollBack(c, "rollback: not confirmed within " + text(c.pending.within()));
    }
  }

  private CompletableFuture<Long> rollBack(Current c, String description) {
    current = null;
    c.cancelTimer.run();
    LOG.warn(
        "{}: {} is rolled back; the {} configuration before it is restored",
        description,
        c.now().name(),
        c.pending.source());
    CompletableFuture<Long> f = orchestrator.rollBack(c.pending.source(), description);
    tell(l -> l.rolledBack(c.now(), description, f));
    return f;
  }

  /** Runs the probes of {@code c} in order: the first failure rolls back, all passing confirms. */
  private void runProbes(Current c) {
    for (Probe p : probes) {
      synchronized (this) {
        if (current != c) {
          return; // confirmed or rolled back meanwhile
        }
      }
      ProbeRunner.Outcome outcome;
      try {
        outcome = runner.run(p);
      } catch (RuntimeException e) {
        outcome = new ProbeRunner.Outcome(false, ProbeRunner.oneLine(String.valueOf(e)));
      }
      if (!outcome.passed()) {
        synchronized (this) {
          if (current == c) {
            rollBack(c, "rollback: probe '" + p.name() + "' failed: " + outcome.output());
          }
        }
        return;
      }
      LOG.info("{}: probe '{}' ({}) passed", c.now().name(), p.name(), p.describe());
    }
    synchronized (this) {
      if (current == c) {
        try {
          confirm(c, "every probe passed");
        } catch (RuntimeException e) {
          LOG.error("{}: the probes passed, but it could not be confirmed", c.now().name(), e);
        }
      }
    }
  }

  private void tell(java.util.function.Consumer<Listener> event) {
    for (Listener l : listeners) {
      try {
        event.accept(l);
      } catch (RuntimeException e) {
        LOG.error("a listener of confirmed commits failed", e);
      }
    }
  }

  private static Throwable cause(Throwable t) {
    return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
  }

  /** {@code 30s}, {@code 1500ms}, {@code 5m}, {@code 1h}: as it would be written. */
  public static String text(Duration d) {
    long ms = d.toMillis();
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
