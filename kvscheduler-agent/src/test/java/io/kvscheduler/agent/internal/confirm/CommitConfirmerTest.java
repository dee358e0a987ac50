package io.kvscheduler.agent.internal.confirm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.Probe;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.spi.ConfirmationConflictException;
import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Confirmed commits over a real scheduler, with the deadline timer and the probes' executor driven
 * by the test: nothing depends on the wall clock.
 */
class CommitConfirmerTest {
  static final String A = "config/t/v1/items/a";
  static final String B = "config/t/v1/items/b";
  static final Duration WITHIN = Duration.ofSeconds(30);

  final Map<String, String> southbound = new ConcurrentHashMap<>();
  final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  final Orchestrator nb = new Orchestrator(kvs);
  final RecordingJournal journal = new RecordingJournal();

  /** Timers set: fired by the test. */
  final List<Runnable> timers = new ArrayList<>();

  final List<Boolean> timersCancelled = new ArrayList<>();

  /** Probe runs waiting for the test. */
  final Queue<Runnable> probeRuns = new ArrayDeque<>();

  final Clock clock = Clock.fixed(Instant.parse("2026-01-01T10:00:00Z"), ZoneOffset.UTC);

  CommitConfirmerTest() {
    kvs.registerDescriptors(
        KVDescriptor.builder("item", String.class)
            .nbKeyPrefix("config/t/v1/items/")
            .create(
                (key, v) -> {
                  southbound.put(key, v);
                  return null;
                })
            .update(
                (key, before, after, meta) -> {
                  southbound.put(key, after);
                  return null;
                })
            .delete((key, v, meta) -> southbound.remove(key))
            .build());
    nb.keep(journal, Map.of());
  }

  @AfterEach
  void close() {
    kvs.close();
  }

  CommitConfirmer confirmer(List<Probe> probes, ProbeRunner runner) {
    return new CommitConfirmer(
        nb,
        clock,
        (delay, task) -> {
          assertThat(delay).isEqualTo(WITHIN);
          int i = timers.size();
          timers.add(task);
          timersCancelled.add(false);
          return () -> timersCancelled.set(i, true);
        },
        probes,
        runner,
        probeRuns::add,
        List.of());
  }

  static final class RecordingJournal implements Orchestrator.Journal {
    final Map<String, Map<String, Object>> kept = new ConcurrentHashMap<>();

    @Override
    public boolean keeps(String source) {
      return source.equals("rest");
    }

    @Override
    public void resync(String source, Map<String, Object> values) {
      kept.put(source, new HashMap<>(values));
    }

    @Override
    public void change(String source, Map<String, Object> changes) {
      Map<String, Object> m = kept.computeIfAbsent(source, s -> new HashMap<>());
      changes.forEach(
          (k, v) -> {
            if (v == null) {
              m.remove(k);
            } else {
              m.put(k, v);
            }
          });
    }
  }

  private static Map<String, Object> values(String... kv) {
    Map<String, Object> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private RecordedTxn last() {
    List<RecordedTxn> h = kvs.transactionHistory();
    return h.get(h.size() - 1);
  }

  @Test
  void notConfirmedWithinTheDeadlineTheSourcesPreviousValuesComeBackInOneTransaction()
      throws Exception {
    CommitConfirmer c = confirmer(List.of(), p -> new ProbeRunner.Outcome(true, ""));
    nb.change("rest", values(A, "a1")).get();
    nb.change("file", values(B, "b-file")).get();

    c.commit("rest", values(A, "a2", B, "b-rest"), false, WITHIN).get();
    assertThat(southbound).containsEntry(A, "a2").containsEntry(B, "b-rest");
    assertThat(journal.kept.get("rest"))
        .as("the store keeps what came before")
        .isEqualTo(values(A, "a1"));
    ConfirmedCommits.Pending p = c.pending().orElseThrow();
    assertThat(p.deadline()).isEqualTo(Instant.parse("2026-01-01T10:00:30Z"));
    assertThat(p.seqNum()).isGreaterThanOrEqualTo(0);

    timers.get(0).run(); // the deadline
    assertThat(c.pending()).isEmpty();
    await(() -> southbound.equals(Map.of(A, "a1", B, "b-file")));
    RecordedTxn rollback = last();
    assertThat(rollback.description()).isEqualTo("rollback: not confirmed within 30s");
    assertThat(nb.desired()).isEqualTo(values(A, "a1", B, "b-file"));
    assertThat(journal.kept.get("rest")).isEqualTo(values(A, "a1"));
  }

  @Test
  void confirmedItStaysAndTheStoreTakesItAndTheDeadlineDoesNothing() throws Exception {
    CommitConfirmer c = confirmer(List.of(), p -> new ProbeRunner.Outcome(true, ""));
    c.commit("rest", values(A, "a2"), true, WITHIN).get();
    assertThat(journal.kept).doesNotContainKey("rest");
    ConfirmedCommits.Pending confirmed = c.confirm();
    assertThat(confirmed.id()).isEqualTo(1);
    assertThat(journal.kept.get("rest")).isEqualTo(values(A, "a2"));
    assertThat(timersCancelled.get(0)).isTrue();
    int txns = kvs.transactionHistory().size();
    timers.get(0).run(); // fires late anyway
    assertThat(kvs.transactionHistory()).hasSize(txns);
    assertThat(southbound).isEqualTo(Map.of(A, "a2"));
    assertThatThrownBy(c::confirm)
        .isInstanceOf(ConfirmationConflictException.class)
        .hasMessageContaining("nothing to confirm");
    assertThatThrownBy(c::rollback)
        .isInstanceOf(ConfirmationConflictException.class)
        .hasMessageContaining("nothing to roll back");
  }

  @Test
  void aSecondCommitOrAPlainDeliveryOfTheSourceIsRefusedNamingThePendingOne() throws Exception {
    CommitConfirmer c = confirmer(List.of(), p -> new ProbeRunner.Outcome(true, ""));
    c.commit("rest", values(A, "a2"), false, WITHIN).get();
    assertThatThrownBy(() -> c.commit("grpc", values(B, "b"), false, WITHIN).get())
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(ConfirmationConflictException.class)
        .hasMessageContaining("confirmed commit #1 from rest");
    assertThatThrownBy(() -> nb.change("rest", values(B, "b")).get())
        .cause()
        .isInstanceOf(ConfirmationConflictException.class)
        .hasMessageContaining("confirmed commit #1 from rest");
    assertThat(southbound).doesNotContainKey(B);
    nb.change("file", values(B, "b-file")).get(); // another source goes on
    assertThat(southbound).containsEntry(B, "b-file");

    long seq = c.rollback().get();
    assertThat(last().seqNum()).isEqualTo(seq);
    assertThat(last().description()).isEqualTo("rollback: requested");
    assertThat(southbound).isEqualTo(Map.of(B, "b-file"));
    assertThat(timersCancelled.get(0)).isTrue();
    nb.change("rest", values(B, "b-rest")).get(); // accepted again
    assertThat(southbound).containsEntry(B, "b-rest");
  }

  @Test
  void theFirstFailingProbeRollsBackAtOnceNamingItAndItsOutput() throws Exception {
    List<String> ran = new ArrayList<>();
    CommitConfirmer c =
        confirmer(
            List.of(
                Probe.tcp("api", "127.0.0.1:1", null),
                Probe.command("ping-gw", List.of("ping", "10.0.2.1"), "ns1", null),
                Probe.http("never", "http://127.0.0.1:1/", null)),
            p -> {
              ran.add(p.name());
              return p.name().equals("api")
                  ? new ProbeRunner.Outcome(true, "connected")
                  : new ProbeRunner.Outcome(false, "exit 1: 100% packet loss");
            });
    nb.change("rest", values(A, "a1")).get();
    c.commit("rest", values(A, "a2"), false, WITHIN).get();
    assertThat(probeRuns).hasSize(1);
    probeRuns.poll().run();
    assertThat(ran).containsExactly("api", "ping-gw");
    assertThat(c.pending()).isEmpty();
    await(() -> southbound.equals(Map.of(A, "a1")));
    assertThat(last().description())
        .isEqualTo("rollback: probe 'ping-gw' failed: exit 1: 100% packet loss");
  }

  @Test
  void everyProbePassingConfirms() throws Exception {
    CommitConfirmer c =
        confirmer(
            List.of(Probe.tcp("api", "127.0.0.1:1", null)),
            p -> new ProbeRunner.Outcome(true, "connected"));
    c.commit("rest", values(A, "a2"), false, WITHIN).get();
    probeRuns.poll().run();
    assertThat(c.pending()).isEmpty();
    assertThat(journal.kept.get("rest")).isEqualTo(values(A, "a2"));
    assertThat(southbound).isEqualTo(Map.of(A, "a2"));
  }

  @Test
  void confirmWithinIsADurationOverZeroAndAtMostAnHour() {
    assertThat(ConfirmedCommits.parseWithin("30s")).isEqualTo(WITHIN);
    assertThat(ConfirmedCommits.parseWithin("PT1M")).isEqualTo(Duration.ofMinutes(1));
    assertThat(ConfirmedCommits.parseWithin("1h")).isEqualTo(Duration.ofHours(1));
    assertThatThrownBy(() -> ConfirmedCommits.parseWithin("soon"))
        .hasMessageContaining("confirm-within 'soon' is not a duration");
    assertThatThrownBy(() -> ConfirmedCommits.parseWithin("0s"))
        .hasMessageContaining("confirm-within must be more than zero");
    assertThatThrownBy(() -> ConfirmedCommits.parseWithin("61m"))
        .hasMessageContaining("confirm-within must be at most 1h");
  }

  private static void await(java.util.function.BooleanSupplier done) throws InterruptedException {
    long end = System.nanoTime() + 10_000_000_000L;
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("not reached within 10 s");
      }
      Thread.sleep(5);
    }
  }
}
