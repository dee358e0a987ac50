package io.kvscheduler.catalogue;

import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Graph revisions, key timelines, snapshots and flag statistics (catalogue §4, B19 and B33-B39)
 * through the public API. Our history keeps one revision per changed node per write batch (a
 * transaction's execution, a revert phase, the removal of deleted values); dependency targets are
 * not stored, so there are no "target update only" revisions.
 */
class GraphHistoryTest {
  private static final String B3 = "/prefixB/base-value3";

  private final MockSouthbound sb = new MockSouthbound();
  private SchedulerFixture env;

  @AfterEach
  void tearDown() {
    if (env != null) {
      env.close();
    }
    assertThat(sb.inconsistencies()).isEmpty();
  }

  /**
   * descriptor1 (/prefixA/, derived items, A1 depends on {@code a1Deps}), descriptor2 (/prefixB/).
   */
  private void setUp(boolean simulation, List<Dependency> a1Deps) {
    env = CatalogueFixtures.env(simulation);
    register(env.kvs(), a1Deps);
  }

  private void register(KVScheduler kvs, List<Dependency> a1Deps) {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .derivedValues(CatalogueFixtures.derivedItems())
            .dependencies((key, value) -> key.equals(A1) ? a1Deps : List.of())
            .build(),
        sb.descriptor("descriptor2", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
            .withMetadata()
            .build());
  }

  private static List<ValueState> states(List<NodeRevision> revs) {
    return revs.stream().map(NodeRevision::state).toList();
  }

  private static List<String> keys(List<NodeRevision> revs) {
    return revs.stream().map(NodeRevision::key).toList();
  }

  // ------------------------------------------------------------------ B19

  @Test
  @DisplayName(
      "B19 (ours) a new scheduler has no timelines, an empty snapshot, zero flag"
          + " statistics and no records")
  void emptyHistory() {
    setUp(true, List.of());
    KVScheduler kvs = env.kvs();
    assertThat(kvs.keyTimeline(A1)).isEmpty();
    assertThat(kvs.keyTimeline("")).isEmpty();
    assertThat(kvs.graphSnapshot(env.clock().peek())).isEmpty();
    assertThat(kvs.graphSnapshot(Instant.MAX)).isEmpty();
    for (String flag :
        List.of("value-state", "unavailable", "error", "last-update", "descriptor", "derived")) {
      assertThat(kvs.flagStats(flag, KeySelector.any()))
          .as(flag)
          .isEqualTo(new FlagStats(0, Map.of()));
    }
    assertThat(kvs.transactionHistory()).isEmpty();
    assertThat(kvs.valueStatuses()).isEmpty();
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(ValueState.NONEXISTENT);
  }

  // ------------------------------------------------------------------ B33

  @Test
  @DisplayName(
      "B33 (ours) one revision per changed node per transaction (not per write), with"
          + " every field; the previous revision is closed; simulation leaves no revision")
  void oneRevisionPerTransaction() {
    setUp(true, List.of(Dependency.onKey("b2", B2)));
    // A1 is written twice: created PENDING (sorted before B2), then CONFIGURED once B2 exists
    env.commit(A1, arr(1), B2, s("b"));
    RecordedTxn t0 = env.txn(0);
    assertThat(t0.planned()).hasSize(t0.executed().size()).isNotEmpty();

    List<NodeRevision> a1 = env.kvs().keyTimeline(A1);
    assertThat(a1).hasSize(1);
    NodeRevision r = a1.get(0);
    assertThat(r.key()).isEqualTo(A1);
    assertThat(r.label()).isEqualTo("base-value1");
    assertThat(r.value()).contains(arr(1));
    assertThat(r.metadata()).contains(0);
    assertThat(r.state()).isEqualTo(CONFIGURED);
    assertThat(r.descriptor()).isEqualTo("descriptor1");
    assertThat(r.derivedFrom()).isEmpty();
    assertThat(r.unavailable()).isFalse();
    assertThat(r.error()).isEmpty();
    assertThat(r.lastOperation()).isEqualTo(TxnOperation.CREATE);
    assertThat(r.lastUpdateSeq()).isZero();
    assertThat(r.dependencies()).containsExactly(Map.entry("b2", B2));
    assertThat(r.derivedKeys()).containsExactly(d(A1, 1));
    assertThat(r.seqNum()).isZero();
    assertThat(r.since()).isAfter(t0.start()).isBefore(t0.stop());
    assertThat(r.until()).isEmpty();

    List<NodeRevision> item = env.kvs().keyTimeline(d(A1, 1));
    assertThat(item).hasSize(1);
    assertThat(item.get(0).derivedFrom()).isEqualTo(A1);
    assertThat(item.get(0).descriptor()).isEqualTo("descriptor1");
    assertThat(item.get(0).value()).contains(s("item1"));
    assertThat(item.get(0).metadata()).isEmpty();
    assertThat(item.get(0).since()).isEqualTo(r.since());
    assertThat(env.kvs().keyTimeline(B2)).hasSize(1);

    // second transaction: A1 changes (and its derived values), B2 does not
    env.commit(A1, arr(2));
    RecordedTxn t1 = env.txn(1);
    a1 = env.kvs().keyTimeline(A1);
    assertThat(a1).hasSize(2);
    assertThat(a1.get(0).until()).contains(a1.get(1).since());
    assertThat(a1.get(0).value()).contains(arr(1));
    assertThat(a1.get(1).value()).contains(arr(2));
    assertThat(a1.get(1).lastOperation()).isEqualTo(TxnOperation.UPDATE);
    assertThat(a1.get(1).lastUpdateSeq()).isEqualTo(1);
    assertThat(a1.get(1).seqNum()).isEqualTo(1);
    assertThat(a1.get(1).derivedKeys()).containsExactly(d(A1, 2));
    assertThat(a1.get(1).since()).isAfter(t1.start()).isBefore(t1.stop());
    assertThat(a1.get(1).until()).isEmpty();
    item = env.kvs().keyTimeline(d(A1, 1));
    assertThat(item).as("a removed derived value: its one revision is closed").hasSize(1);
    assertThat(item.get(0).until()).contains(a1.get(1).since());
    assertThat(env.kvs().keyTimeline(d(A1, 2))).hasSize(1);
    assertThat(env.kvs().keyTimeline(B2)).as("unchanged: no new revision").hasSize(1);
    assertThat(env.kvs().keyTimeline(B2).get(0).until()).isEmpty();
  }

  // ------------------------------------------------------------------ B34

  @Test
  @DisplayName(
      "B34 (ours: no target-only revisions) a new target of an AnyOf dependency adds no"
          + " revision to the dependent; deletions close the timeline")
  void noTargetOnlyRevisionsAndDeletions() {
    setUp(false, List.of(Dependency.anyOfPrefixes("any B", CatalogueFixtures.PREFIX_B)));
    env.commit(A1, arr(1), B2, s("b"));
    assertThat(env.kvs().keyTimeline(A1)).hasSize(1);
    env.commit(B3, s("b3"));
    assertThat(env.kvs().keyTimeline(A1)).as("only the targets of A1 changed").hasSize(1);
    assertThat(env.kvs().keyTimeline(B3)).hasSize(1);

    env.commit(A1, null);
    RecordedTxn t2 = env.txn(2);
    List<NodeRevision> a1 = env.kvs().keyTimeline(A1);
    assertThat(states(a1)).containsExactly(CONFIGURED, REMOVED);
    assertThat(a1.get(1).lastOperation()).isEqualTo(TxnOperation.DELETE);
    assertThat(a1.get(1).value()).as("REMOVED keeps the last value").contains(arr(1));
    assertThat(a1.get(0).until()).contains(a1.get(1).since());
    assertThat(a1.get(1).until())
        .as("closed when the node is dropped after the transaction")
        .hasValueSatisfying(u -> assertThat(u).isAfter(a1.get(1).since()).isAfter(t2.stop()));
    List<NodeRevision> item = env.kvs().keyTimeline(d(A1, 1));
    assertThat(states(item))
        .as("a deleted derived value gets no REMOVED revision")
        .containsExactly(CONFIGURED);
    assertThat(item.get(0).until()).isPresent();
    assertThat(env.kvs().keyTimeline(B2)).hasSize(1);
    assertThat(env.kvs().graphSnapshot(env.clock().peek()))
        .extracting(NodeRevision::key)
        .containsExactly(B2, B3);
  }

  // ------------------------------------------------------------------ B35

  @Test
  @DisplayName(
      "B35 (ours) the refresh before a resync is not recorded: a DISCOVERED value taken"
          + " over by the NB has one CONFIGURED revision only")
  void refreshIsNotRecorded() {
    setUp(false, List.of());
    sb.setValue(A1, s("a"), 7, ValueOrigin.FROM_NB, false);
    env.kvs()
        .startNBTransaction()
        .setValue(A1, s("a"))
        .commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    assertThat(sb.callLog()).doesNotContain("CREATE " + A1, "UPDATE " + A1);
    List<NodeRevision> a1 = env.kvs().keyTimeline(A1);
    assertThat(states(a1)).containsExactly(CONFIGURED);
    assertThat(a1.get(0).metadata()).as("metadata found by the refresh").contains(7);
    assertThat(env.kvs().flagStats("value-state", KeySelector.any()))
        .isEqualTo(new FlagStats(1, Map.of("CONFIGURED", 1L)));
  }

  /**
   * B2 created (b1) and removed again, then held by the southbound (b2, origin unknown) behind the
   * scheduler's back; the call log is cleared.
   */
  private void b2RemovedThenBackInTheSouthbound() {
    setUp(false, List.of());
    env.commit(B2, s("b1"));
    env.commit(B2, null);
    sb.setValue(B2, s("b2"), null, ValueOrigin.UNKNOWN, false);
    sb.clearCalls();
  }

  @Test
  @DisplayName(
      "B35 (ours) a removed key that a full resync finds again and the NB takes over"
          + " keeps its timeline: the earlier revisions, then one CONFIGURED revision")
  void keyFoundAgainByAResyncKeepsItsTimeline() {
    b2RemovedThenBackInTheSouthbound();
    long seq =
        env.kvs()
            .startNBTransaction()
            .setValue(B2, s("b2"))
            .commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    assertThat(sb.callLog())
        .as("taken over without a call")
        .noneMatch(c -> c.startsWith("CREATE") || c.startsWith("UPDATE"));
    List<NodeRevision> b2 = env.kvs().keyTimeline(B2);
    assertThat(b2)
        .extracting(NodeRevision::value)
        .containsExactly(Optional.of(s("b1")), Optional.of(s("b1")), Optional.of(s("b2")));
    assertThat(states(b2)).containsExactly(CONFIGURED, REMOVED, CONFIGURED);
    assertThat(b2.get(1).until().orElseThrow()).isBefore(b2.get(2).since());
    assertThat(b2.get(2).seqNum()).isEqualTo(seq);
    assertThat(b2.get(2).until()).isEmpty();
  }

  @Test
  @DisplayName(
      "B35 (ours) a value a full resync finds and removes (the NB no longer lists it)"
          + " gets one REMOVED revision after its earlier ones, then its timeline is closed")
  void keyFoundAndRemovedByAResync() {
    b2RemovedThenBackInTheSouthbound(); // NB origin, from the key's history
    long seq =
        env.kvs()
            .startNBTransaction()
            .setValue(C3, s("c"))
            .commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    assertThat(sb.keys()).doesNotContain(B2);
    List<NodeRevision> b2 = env.kvs().keyTimeline(B2);
    assertThat(b2)
        .extracting(NodeRevision::value)
        .containsExactly(Optional.of(s("b1")), Optional.of(s("b1")), Optional.of(s("b2")));
    assertThat(states(b2)).containsExactly(CONFIGURED, REMOVED, REMOVED);
    assertThat(b2.get(2).seqNum()).isEqualTo(seq);
    assertThat(b2.get(2).until()).as("closed once the value is dropped").isPresent();
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  @DisplayName(
      "B35 (ours) with recordHistory(false) nothing is recorded: no revisions, no"
          + " records, zero flag statistics; statuses still work")
  void historyDisabled() {
    try (SchedulerFixture fx =
        SchedulerFixture.create(b -> b.printTxnSummary(true).recordHistory(false))) {
      KVScheduler kvs = fx.kvs();
      ManualClock clock = fx.clock();
      register(kvs, List.of());
      fx.commit(A1, arr(1), B2, s("b"));
      fx.commit(A1, null);
      assertThat(kvs.keyTimeline(A1)).isEmpty();
      assertThat(kvs.keyTimeline(B2)).isEmpty();
      assertThat(kvs.graphSnapshot(clock.peek())).isEmpty();
      assertThat(kvs.flagStats("value-state", KeySelector.any()).total()).isZero();
      assertThat(kvs.transactionHistory()).isEmpty();
      assertThat(kvs.valueStatus(B2).state()).isEqualTo(CONFIGURED);
      assertThat(sb.keys()).containsExactly(B2);
    }
  }

  // ------------------------------------------------------------------ B36

  @Test
  @DisplayName(
      "B36 (ours) flag statistics count revisions per flag value, restricted by a key"
          + " selector; dropping deleted nodes adds nothing")
  void flagStatistics() {
    setUp(false, List.of(Dependency.onKey("b2", B2)));
    env.commit(A1, arr(1)); // #0: A1 PENDING
    env.commit(B2, s("b")); // #1: B2, A1, A1/item1 CONFIGURED
    env.commit(B2, null); // #2: B2 REMOVED, A1 PENDING (item1 dropped)
    sb.planError(A1, new IllegalStateException("no"));
    assertThatThrownBy(() -> env.commit(B2, s("b2"))) // #3: B2 CONFIGURED, A1 FAILED
        .isInstanceOf(TransactionException.class);
    KVScheduler kvs = env.kvs();
    assertThat(states(kvs.keyTimeline(A1))).containsExactly(PENDING, CONFIGURED, PENDING, FAILED);
    assertThat(states(kvs.keyTimeline(B2))).containsExactly(CONFIGURED, REMOVED, CONFIGURED);
    assertThat(states(kvs.keyTimeline(d(A1, 1)))).containsExactly(CONFIGURED);

    KeySelector any = KeySelector.any();
    assertThat(kvs.flagStats("value-state", any))
        .isEqualTo(
            new FlagStats(8, Map.of("PENDING", 2L, "CONFIGURED", 4L, "REMOVED", 1L, "FAILED", 1L)));
    assertThat(kvs.flagStats("unavailable", any)).isEqualTo(new FlagStats(4, Map.of("", 4L)));
    assertThat(kvs.flagStats("error", any)).isEqualTo(new FlagStats(1, Map.of("", 1L)));
    assertThat(kvs.flagStats("last-update", any))
        .isEqualTo(new FlagStats(8, Map.of("CREATE", 6L, "DELETE", 2L)));
    assertThat(kvs.flagStats("descriptor", any))
        .isEqualTo(new FlagStats(8, Map.of("descriptor1", 5L, "descriptor2", 3L)));
    assertThat(kvs.flagStats("derived", any)).isEqualTo(new FlagStats(1, Map.of(A1, 1L)));
    assertThat(kvs.flagStats("value-state", KeySelector.prefix(CatalogueFixtures.PREFIX_A)))
        .isEqualTo(new FlagStats(5, Map.of("PENDING", 2L, "CONFIGURED", 2L, "FAILED", 1L)));
    assertThat(kvs.flagStats("value-state", KeySelector.exact(B2)))
        .isEqualTo(new FlagStats(3, Map.of("CONFIGURED", 2L, "REMOVED", 1L)));
    assertThatThrownBy(() -> kvs.flagStats("color", any))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("color")
        .hasMessageContaining("value-state");
  }

  // ------------------------------------------------------------------ B37

  @Test
  @DisplayName(
      "B37 (ours: [since, until) intervals) graphSnapshot(t) returns the revision of every"
          + " key valid at t, sorted by key")
  void snapshots() {
    setUp(false, List.of(Dependency.onKey("b2", B2)));
    Instant t0 = env.clock().peek();
    env.commit(A1, arr(1));
    Instant t1 = env.clock().peek();
    env.commit(B2, s("b"), C3, s("unimplemented"));
    Instant t2 = env.clock().peek();
    env.commit(B2, null);
    Instant t3 = env.clock().peek();
    KVScheduler kvs = env.kvs();
    assertThat(kvs.graphSnapshot(t0)).isEmpty();
    assertThat(kvs.graphSnapshot(t1))
        .extracting(NodeRevision::key, NodeRevision::state)
        .containsExactly(Tuple.tuple(A1, PENDING));
    assertThat(kvs.graphSnapshot(t2))
        .extracting(NodeRevision::key, NodeRevision::state)
        .containsExactly(
            Tuple.tuple(A1, CONFIGURED),
            Tuple.tuple(d(A1, 1), CONFIGURED),
            Tuple.tuple(B2, CONFIGURED),
            Tuple.tuple(C3, ValueState.UNIMPLEMENTED));
    assertThat(keys(kvs.graphSnapshot(t3))).containsExactly(A1, C3);
    assertThat(kvs.graphSnapshot(t3).get(0).state()).isEqualTo(PENDING);

    // at the very instant of a change the new revision is valid, the old one is not
    List<NodeRevision> a1 = kvs.keyTimeline(A1);
    Instant change = a1.get(1).since();
    assertThat(a1.get(0).until()).contains(change);
    assertThat(kvs.graphSnapshot(change))
        .filteredOn(r -> r.key().equals(A1))
        .extracting(NodeRevision::state)
        .containsExactly(CONFIGURED);
    assertThat(kvs.graphSnapshot(change.minusNanos(1)))
        .filteredOn(r -> r.key().equals(A1))
        .extracting(NodeRevision::state)
        .containsExactly(PENDING);
    // B2's timeline is closed: absent after its removal
    Instant b2End = kvs.keyTimeline(B2).get(kvs.keyTimeline(B2).size() - 1).until().orElseThrow();
    assertThat(keys(kvs.graphSnapshot(b2End))).doesNotContain(B2);
    assertThat(keys(kvs.graphSnapshot(b2End.minusNanos(1)))).contains(B2);
  }

  @Test
  @DisplayName(
      "B37 (ours) a key removed and created again keeps one timeline: the time it was"
          + " gone is a gap between its closed revision and the new one")
  void timelineOfARecreatedKey() {
    setUp(false, List.of());
    env.commit(B2, s("b1"));
    env.commit(B2, null);
    Instant gone = env.clock().peek();
    env.commit(A1, arr(1));
    env.commit(B2, s("b2"));
    KVScheduler kvs = env.kvs();
    List<NodeRevision> b2 = kvs.keyTimeline(B2);
    assertThat(b2)
        .extracting(NodeRevision::value)
        .containsExactly(Optional.of(s("b1")), Optional.of(s("b1")), Optional.of(s("b2")));
    assertThat(b2).extracting(NodeRevision::state).containsExactly(CONFIGURED, REMOVED, CONFIGURED);
    Instant closed = b2.get(1).until().orElseThrow();
    assertThat(closed).isBefore(b2.get(2).since());
    assertThat(b2.get(2).until()).isEmpty();
    assertThat(keys(kvs.graphSnapshot(gone))).as("B2 is gone, A1 not there yet").isEmpty();
    assertThat(keys(kvs.graphSnapshot(b2.get(2).since()))).contains(B2);
  }

  // ------------------------------------------------------------------ B39

  @Test
  @DisplayName(
      "B39 (ours) trimming: at most once a minute, closed revisions older than the age"
          + " limit are dropped except those started in the permanent period; open ones are kept;"
          + " records likewise, and at most historyMaxRecords records are kept")
  void trimming() {
    try (SchedulerFixture fx =
        SchedulerFixture.create(
            b ->
                b.printTxnSummary(true)
                    .historyAgeLimit(Duration.ofHours(1))
                    .permanentHistoryPeriod(Duration.ofMinutes(10)))) {
      KVScheduler kvs = fx.kvs();
      ManualClock clock = fx.clock();
      register(kvs, List.of());
      fx.commit(A1, s("v1")); // #0: in the permanent period
      clock.advance(Duration.ofMinutes(20));
      fx.commit(A1, s("v2")); // #1
      clock.advance(Duration.ofMinutes(20));
      fx.commit(A1, s("v3")); // #2
      clock.advance(Duration.ofMinutes(20));
      fx.commit(B2, s("b")); // #3
      List<NodeRevision> a1 = kvs.keyTimeline(A1);
      assertThat(a1)
          .extracting(NodeRevision::value)
          .containsExactly(Optional.of(s("v1")), Optional.of(s("v2")), Optional.of(s("v3")));
      Instant v2closed = a1.get(1).until().orElseThrow();

      // just before v2's revision gets old: trimmed, nothing dropped
      advanceTo(clock, v2closed.plus(Duration.ofHours(1)).minusSeconds(10));
      fx.commit(A2, s("x")); // #4 (trims: last trim > 1 min ago)
      assertThat(kvs.keyTimeline(A1)).hasSize(3);
      // now v2 is old, but the last trim was 30 s ago
      clock.advance(Duration.ofSeconds(30));
      fx.commit(A2, s("y")); // #5 (no trim)
      assertThat(kvs.keyTimeline(A1)).hasSize(3);
      clock.advance(Duration.ofSeconds(40));
      fx.commit(A2, s("z")); // #6 (trims)
      assertThat(kvs.keyTimeline(A1))
          .extracting(NodeRevision::value)
          .as("v1 is permanent, v2 is old, v3 is open")
          .containsExactly(Optional.of(s("v1")), Optional.of(s("v3")));
      List<Long> seqs = new ArrayList<>();
      kvs.transactionHistory().forEach(r -> seqs.add(r.seqNum()));
      assertThat(seqs)
          .as("#1 and #2 started after the permanent period and are old")
          .containsExactly(0L, 3L, 4L, 5L, 6L);

      // much later: everything closed and old goes, open revisions stay
      clock.advance(Duration.ofHours(5));
      fx.commit(A2, null); // #7
      clock.advance(Duration.ofHours(5));
      fx.commit(B2, s("b2")); // #8
      assertThat(kvs.keyTimeline(A1))
          .extracting(NodeRevision::value)
          .containsExactly(Optional.of(s("v1")), Optional.of(s("v3")));
      assertThat(kvs.keyTimeline(A2)).as("all closed and old").isEmpty();
      assertThat(kvs.keyTimeline(B2))
          .as("closed just now: not old yet")
          .extracting(NodeRevision::value)
          .containsExactly(Optional.of(s("b")), Optional.of(s("b2")));
      seqs.clear();
      kvs.transactionHistory().forEach(r -> seqs.add(r.seqNum()));
      assertThat(seqs).containsExactly(0L, 8L);
    }
  }

  private static void advanceTo(ManualClock clock, Instant t) {
    clock.advance(Duration.between(clock.peek(), t));
  }

  @Test
  @DisplayName("B39 (ours) historyMaxRecords bounds the number of transaction records")
  void maxRecords() {
    try (SchedulerFixture fx =
        SchedulerFixture.create(b -> b.printTxnSummary(true).historyMaxRecords(2))) {
      KVScheduler kvs = fx.kvs();
      ManualClock clock = fx.clock();
      register(kvs, List.of());
      fx.commit(A1, s("1"));
      fx.commit(A1, s("2"));
      fx.commit(A1, s("3"));
      assertThat(kvs.transactionHistory()).extracting(RecordedTxn::seqNum).containsExactly(1L, 2L);
      assertThat(kvs.recordedTransaction(0)).isEmpty();
      assertThat(kvs.keyTimeline(A1)).as("revisions are bounded by age only").hasSize(3);
    }
  }

  // ------------------------------------------------------------------ B25 B26

  @Test
  @DisplayName(
      "B25 B26 (ours: maintained by the engine) metadata maps follow the values: entry"
          + " under the label, kept on update, removed on delete, per descriptor")
  void metadataMapsFollowValues() {
    setUp(false, List.of());
    var map1 = env.kvs().metadataMap("descriptor1", Object.class);
    var map2 = env.kvs().metadataMap("descriptor2", Object.class);
    env.commit(A1, s("a1"), A2, s("a2"));
    assertThat(map1.labels()).containsExactlyInAnyOrder("base-value1", "base-value2");
    assertThat(map1.lookup("base-value1")).contains(0);
    assertThat(map1.lookup("base-value2")).contains(1);
    env.commit(A1, s("a1 changed"), B2, s("b"));
    assertThat(map1.lookup("base-value1")).as("Update keeps the metadata").contains(0);
    assertThat(map2.labels()).containsExactly("base-value2");
    assertThat(map2.lookup("base-value2")).contains(0);
    env.commit(A1, null);
    assertThat(map1.labels()).containsExactly("base-value2");
    assertThat(map1.lookup("base-value1")).isEmpty();
    assertThat(map2.labels()).containsExactly("base-value2");
  }

  // ------------------------------------------------------------------ B10

  @Test
  @DisplayName("B10 (ours: sorted sets) the statuses of one transaction are delivered in key order")
  void statusesInKeyOrder() {
    setUp(false, List.of());
    List<String> seen = new ArrayList<>();
    env.kvs().watchValueStatus(KeySelector.any(), st -> seen.add(st.key()));
    env.commit(B2, s("b"), A2, s("a2"), A1, arr(2, 1));
    assertThat(seen).containsExactly(A1, A2, B2);
    BaseValueStatus a1 = env.kvs().valueStatus(A1);
    assertThat(a1.derived()).extracting(st -> st.key()).containsExactly(d(A1, 1), d(A1, 2));
  }
}
