package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.PlannedOperation;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.catalogue.SchedulerPropertyTest.Change;
import io.kvscheduler.catalogue.SchedulerPropertyTest.Scenario;
import io.kvscheduler.catalogue.SchedulerPropertyTest.TxnSpec;
import io.kvscheduler.catalogue.SchedulerPropertyTest.Val;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;

/**
 * A plan ({@code Txn.plan}) against what the commit then does, for the random dependencies, derived
 * values and transactions of {@link SchedulerPropertyTest} (no injected failure; values of {@code
 * /b/} at version 2 are INVALID): before every commit the transaction is planned, the plan must
 * have changed nothing (statuses, southbound content and calls, metadata maps, history), and the
 * commit must execute exactly the planned operations, with the predicted states, errors and flags,
 * and leave each PENDING or INVALID value with the details the plan named. Between transactions the
 * southbound drifts (a base value removed or changed behind the scheduler's back): the plan of a
 * downstream resync (the drift) must equal what the resync then executes, and hold no change when
 * nothing drifted.
 */
class PlanPropertyTest {

  /** What happens to the southbound behind the scheduler's back after a transaction. */
  record Drift(int action, int key) {
    @Override
    public String toString() {
      return switch (action) {
        case 1 -> "remove " + SchedulerPropertyTest.BASE.get(key);
        case 2 -> "change " + SchedulerPropertyTest.BASE.get(key);
        default -> "none";
      };
    }
  }

  @Provide
  Arbitrary<Scenario> scenarios() {
    return new SchedulerPropertyTest().scenarios(false);
  }

  @Provide
  Arbitrary<List<Drift>> drifts() {
    Arbitrary<Drift> drift =
        net.jqwik.api.Combinators.combine(
                Arbitraries.integers().between(0, 4).map(i -> i > 2 ? 0 : i),
                Arbitraries.integers().between(0, SchedulerPropertyTest.BASE.size() - 1))
            .as(Drift::new);
    return drift.list().ofSize(15);
  }

  @Property(tries = 200, seed = "20261129", shrinking = ShrinkingMode.BOUNDED)
  @Label(
      "(property) the plan of a transaction changes nothing and equals the operations its commit"
          + " then executes; the plan of a downstream resync equals what the resync executes; a"
          + " run with plans records what the same run without plans records")
  void planEqualsExecution(
      @ForAll("scenarios") Scenario scenario,
      @ForAll("drifts") List<Drift> drifts,
      @ForAll boolean simulation) {
    String at = "scenario:" + scenario + " drifts " + drifts;
    List<String> planned = run(scenario, drifts, simulation, true, at);
    List<String> unplanned = run(scenario, drifts, simulation, false, at);
    assertThat(planned)
        .as("records and outcome with and without plans, %s", at)
        .isEqualTo(unplanned);
  }

  /**
   * Runs the scenario, each transaction followed by a drift and a downstream resync; with {@code
   * plans}, each commit planned first and checked against its plan. Returns, per commit, its
   * executed operations, then the statuses, the southbound and its inconsistencies at the end: what
   * the plans must not change (the southbound may be left inconsistent by a resync of values the
   * southbound derives differently, with or without plans alike).
   */
  private List<String> run(
      Scenario scenario, List<Drift> drifts, boolean simulation, boolean plans, String what) {
    MockSouthbound sb = new MockSouthbound();
    List<String> out = new ArrayList<>();
    try (SchedulerFixture env = CatalogueFixtures.env(simulation)) {
      KVScheduler kvs = env.kvs();
      register(kvs, sb, scenario);
      kvs.transactionBarrier();
      for (int i = 0; i < scenario.txns().size(); i++) {
        TxnSpec t = scenario.txns().get(i);
        String at = "transaction #" + i + ", " + what;
        Txn txn = kvs.startNBTransaction();
        for (Change c : t.changes()) {
          txn.setValue(c.key(), c.value());
        }
        TxnOptions options = TxnOptions.defaults();
        Plan plan = plans ? planUnchanged(kvs, sb, txn, options, at) : null;
        long seq = commit(txn, options);
        out.add(executed(kvs, seq));
        if (plan != null) {
          assertThat(plan.operations()).as("planned, %s", at).isEqualTo(planOf(kvs, seq, plan));
          assertDetails(kvs, plan, at);
        }

        Drift d = drifts.get(i);
        drift(sb, d);
        Txn resync = kvs.startNBTransaction();
        TxnOptions downstream = TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build();
        Plan drift = plans ? planUnchanged(kvs, sb, resync, downstream, at) : null;
        seq = commit(resync, downstream);
        out.add(executed(kvs, seq));
        if (drift != null) {
          assertThat(drift.operations())
              .as("drift %s after %s", d, at)
              .isEqualTo(planOf(kvs, seq, drift));
          if (d.action() == 0) {
            // the southbound holds every CONFIGURED value; the resync may still settle a value a
            // dependency cycle left PENDING (the walk's recursion guard cuts some cycles)
            assertThat(drift.changes())
                .as("no drift after %s", at)
                .noneMatch(op -> op.prevState() == ValueState.CONFIGURED);
          }
        }
      }
      out.add(kvs.valueStatuses().toString());
    }
    out.add(sb.values().toString());
    out.add(sb.inconsistencies().toString());
    return out;
  }

  /** Plans {@code txn}, checking that the plan changed nothing. */
  private static Plan planUnchanged(
      KVScheduler kvs, MockSouthbound sb, Txn txn, TxnOptions options, String at) {
    String before = observed(kvs, sb);
    Plan plan = txn.plan(options);
    assertThat(observed(kvs, sb)).as("the plan changed nothing, %s", at).isEqualTo(before);
    return plan;
  }

  /** The executed operations of transaction {@code seq}, as text (without call times). */
  private static String executed(KVScheduler kvs, long seq) {
    StringBuilder b = new StringBuilder();
    for (RecordedTxnOp op : kvs.recordedTransaction(seq).orElseThrow().executed()) {
      b.append(op.operation())
          .append(' ')
          .append(op.key())
          .append(' ')
          .append(op.prevState())
          .append("->")
          .append(op.newState())
          .append(' ')
          .append(op.newValue())
          .append(' ')
          .append(op.newError())
          .append(' ')
          .append(op.flags())
          .append('\n');
    }
    return b.toString();
  }

  /** The state a plan must leave as it is (a resync's plan reads the southbound: Retrieve). */
  private static String observed(KVScheduler kvs, MockSouthbound sb) {
    return kvs.valueStatuses()
        + "\nSB "
        + sb.values()
        + "\ncalls "
        + sb.calls().stream().filter(c -> c.kind() != MockSouthbound.CallKind.RETRIEVE).count()
        + "\nhistory "
        + kvs.transactionHistory().size()
        + "\nmetadata "
        + labels(kvs, "da")
        + labels(kvs, "db")
        + labels(kvs, "dc");
  }

  private static String labels(KVScheduler kvs, String descriptor) {
    Map<String, Object> out = new java.util.TreeMap<>();
    var map = kvs.metadataMap(descriptor, Object.class);
    for (String label : map.labels()) {
      out.put(label, map.lookup(label).orElse(null));
    }
    return out.toString();
  }

  /** Commits; returns the sequence number (also of a transaction with failed values). */
  private static long commit(Txn txn, TxnOptions options) {
    try {
      return txn.commit(options);
    } catch (TransactionException e) {
      return e.seqNum(); // INVALID values
    }
  }

  /**
   * The executed operations of transaction {@code seq} as planned operations, the details taken
   * from {@code plan} (compared separately with the statuses: {@link #assertDetails}).
   */
  private static List<PlannedOperation> planOf(KVScheduler kvs, long seq, Plan plan) {
    List<PlannedOperation> out = new ArrayList<>();
    List<RecordedTxnOp> executed = kvs.recordedTransaction(seq).orElseThrow().executed();
    for (int i = 0; i < executed.size(); i++) {
      RecordedTxnOp op = executed.get(i);
      out.add(
          new PlannedOperation(
              op.operation(),
              op.key(),
              op.prevValue(),
              op.newValue(),
              op.prevState(),
              op.newState(),
              op.newError(),
              i < plan.size() ? plan.operations().get(i).details() : List.of(),
              op.flags()));
    }
    return out;
  }

  /** A PENDING or INVALID value left so by the commit has the details its plan named. */
  private static void assertDetails(KVScheduler kvs, Plan plan, String at) {
    Map<String, PlannedOperation> last = new java.util.HashMap<>();
    plan.operations().forEach(op -> last.put(op.key(), op));
    for (PlannedOperation op : last.values()) {
      if (op.state() != ValueState.PENDING && op.state() != ValueState.INVALID) {
        continue;
      }
      BaseValueStatus status = kvs.valueStatus(op.key());
      var s =
          status.value().key().equals(op.key())
              ? status.value()
              : status.derived().stream()
                  .filter(dv -> dv.key().equals(op.key()))
                  .findFirst()
                  .orElseThrow();
      if (s.state() == op.state()) {
        assertThat(op.details()).as("details of %s, %s", op, at).isEqualTo(s.details());
      }
      if (op.state() == ValueState.PENDING) {
        assertThat(op.waitingFor()).as("%s waits, %s", op, at).isNotEmpty();
      }
    }
  }

  /** Changes the southbound behind the scheduler's back. */
  private static void drift(MockSouthbound sb, Drift d) {
    String key = SchedulerPropertyTest.BASE.get(d.key());
    var entry = sb.get(key);
    if (d.action() == 0 || entry.isEmpty()) {
      return;
    }
    MockSouthbound.Entry e = entry.get();
    if (d.action() == 1) {
      sb.setValue(key, null, null, ValueOrigin.FROM_NB, false);
      for (String item : List.of("x", "y")) { // with its derived values
        String dk = SchedulerPropertyTest.derivedKey(key, item);
        if (dk != null) {
          sb.setValue(dk, null, null, ValueOrigin.FROM_NB, true);
        }
      }
    } else if (e.value() instanceof Val v) {
      Val changed = new Val((v.version() + 1) % 2, v.variant(), v.items());
      sb.setValue(key, changed, e.metadata(), e.origin(), e.derived());
      // its derived values in the southbound follow it, as the southbound derives them
      SchedulerPropertyTest.derive(key, changed)
          .forEach(
              (dk, dv) ->
                  sb.get(dk)
                      .ifPresent(
                          de -> sb.setValue(dk, dv, de.metadata(), de.origin(), de.derived())));
    }
  }

  /**
   * The three descriptors of {@link SchedulerPropertyTest} (without its call checks), {@code /b/}
   * with a Validate refusing version 2.
   */
  private static void register(KVScheduler kvs, MockSouthbound sb, Scenario sc) {
    kvs.registerDescriptors(
        sb.descriptor("da", Object.class)
            .nbKeyPrefix("/a/")
            .withMetadata()
            .dependencies(sc::depsOf)
            .derivedValues(PlanPropertyTest::derived)
            .updateWithRecreate(
                (key, o, n, meta) ->
                    o instanceof Val ov && n instanceof Val nv && ov.variant() != nv.variant())
            .build(),
        sb.descriptor("db", Object.class)
            .nbKeyPrefix("/b/")
            .withMetadata()
            .validate(
                (key, value) -> {
                  if (value instanceof Val v && v.version() == 2) {
                    throw new InvalidValueException("version 2 is refused", "version");
                  }
                })
            .dependencies(sc::depsOf)
            .derivedValues(PlanPropertyTest::derived)
            .build(),
        sb.descriptor("dc", Object.class)
            .nbKeyPrefix("/c/")
            .withMetadata()
            .withoutUpdate()
            .dependencies(sc::depsOf)
            .build());
  }

  private static List<KeyValuePair> derived(String key, Object value) {
    List<KeyValuePair> out = new ArrayList<>();
    if (value instanceof Val v) {
      SchedulerPropertyTest.derive(key, v).forEach((k, dv) -> out.add(KeyValuePair.of(k, dv)));
    }
    return out;
  }
}
