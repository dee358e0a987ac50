package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.Tuple;

/**
 * Random scenarios against the scheduler's core promises (catalogue §6-§8: ordering by
 * dependencies, AnyOf, cycles, derived values, update vs re-creation; B164 simulation).
 *
 * <p>Key space: 12 base keys over three mock descriptors ({@code /a/} with derived values under its
 * own descriptor and derived properties, {@code /b/} whose derived values belong to {@code /c/}'s
 * descriptor and to itself, {@code /c/} without Update, so every change re-creates). Every value
 * with a descriptor gets 0-2 random dependencies per value variant: static keys (possibly itself,
 * derived keys, properties), AnyOf prefixes, selector-only AnyOf, prefix + selector; cycles happen.
 * Then 5-15 NB transactions set, change or delete 1-4 base values (some with revert).
 *
 * <p>Invariants after every transaction: (1) the southbound never saw a Create/Update before every
 * dependency had a target in the SB (or in the value's own dependency cycle), nor a Delete while an
 * SB value's dependency had no other target; (2) the mock SB saw no inconsistent call; (3)
 * CONFIGURED ⇒ every dependency has an available target; PENDING ⇒ one has none; no group of
 * PENDING values could support itself (a ready cycle left pending); (4) the SB holds exactly the
 * CONFIGURED values with a descriptor, with the expected values; plus (5) the simulated plan equals
 * the execution (B164) and the statuses agree with the NB model. Exempt, as in the reference:
 * ordering inside a dependency cycle, and values in a cycle through one of their own derived
 * values, which the walk's recursion guard (B78) cuts.
 *
 * <p>A second property injects failures ({@code planError}) with and without revert and checks the
 * weaker invariants that hold then. The {@code @Example}s are the minimal cases the properties
 * found. Seeds are fixed; jqwik prints the seed and the shrunk sample on failure. The class is long
 * because generators, checks and the minimal cases belong together. (jqwik skips methods that carry
 * JUnit annotations, so the B-numbers are in {@code @Label}s.)
 */
class SchedulerPropertyTest {

  // ------------------------------------------------------------------ key space and values

  /** A base value: version (content), variant (selects the dependency set), items (derived). */
  record Val(int version, int variant, List<String> items, Map<String, Der> held) {
    Val(int version, int variant, List<String> items) {
      this(version, variant, items, Map.of());
    }

    /**
     * {@code held}: in a value a Retrieve reported, the derived objects the southbound holds with
     * another content than this value derives (a failed call of theirs); empty otherwise.
     */
    Val {
      items = List.copyOf(items);
      held = Map.copyOf(held);
    }

    @Override
    public String toString() {
      return "Val[version="
          + version
          + ", variant="
          + variant
          + ", items="
          + items
          + (held.isEmpty() ? "" : ", held=" + new TreeMap<>(held))
          + "]";
    }
  }

  /** A derived value: inherits version and variant from its base. */
  record Der(String item, int version, int variant) {}

  static final List<String> BASE =
      List.of(
          "/a/k0", "/a/k1", "/a/k2", "/a/k3", "/b/k0", "/b/k1", "/b/k2", "/b/k3", "/c/k0", "/c/k1",
          "/c/k2", "/c/k3");

  /**
   * Derived keys of {@code base} for {@code item}: /a/kN/x (descriptor a), /p/a-kN-y (property),
   * /c/from-b/kN/x (descriptor c), /b/kN/y (descriptor b).
   */
  static String derivedKey(String base, String item) {
    String name = base.substring(3);
    if (base.startsWith("/a/")) {
      return item.equals("x") ? base + "/x" : "/p/a-" + name + "-y";
    }
    if (base.startsWith("/b/")) {
      return item.equals("x") ? "/c/from-b/" + name + "/x" : base + "/y";
    }
    return null;
  }

  static final List<String> UNIVERSE;

  /** Keys with a descriptor (base and derived): they get dependencies. */
  static final List<String> WITH_DEPS;

  static {
    List<String> u = new ArrayList<>(BASE);
    List<String> w = new ArrayList<>(BASE);
    for (String b : BASE) {
      for (String item : List.of("x", "y")) {
        String dk = derivedKey(b, item);
        if (dk != null) {
          u.add(dk);
          if (!dk.startsWith("/p/")) {
            w.add(dk);
          }
        }
      }
    }
    UNIVERSE = List.copyOf(u);
    WITH_DEPS = List.copyOf(w);
  }

  /** The base of a derived key (null for a base key). */
  static String baseOf(String derived) {
    for (String b : BASE) {
      for (String item : List.of("x", "y")) {
        if (derived.equals(derivedKey(b, item))) {
          return b;
        }
      }
    }
    return null;
  }

  static boolean isProperty(String key) {
    return key.startsWith("/p/");
  }

  static Map<String, Object> derive(String base, Val v) {
    Map<String, Object> out = new TreeMap<>();
    for (String item : v.items()) {
      String dk = derivedKey(base, item);
      if (dk != null) {
        out.put(dk, v.held().getOrDefault(item, new Der(item, v.version(), v.variant())));
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ dependency specs

  static final List<String> PREFIXES =
      List.of("/a/", "/a/k1", "/b/", "/c/", "/c/from-b/", "/p/", "/b/k2/", "/a/k0/");

  /** Fixed instances so that equal specs give equal Dependency records. */
  static final List<KeySelector> SELECTORS =
      List.of(
          k -> k.endsWith("/x"),
          k -> k.contains("k1"),
          k -> k.equals("/b/k2") || k.equals("/c/k3"));

  static final List<String> SELECTOR_NAMES =
      List.of("endsWith(/x)", "contains(k1)", "{/b/k2,/c/k3}");

  /** One generated dependency: static key, AnyOf prefixes, selector-only, or prefix+selector. */
  record DepSpec(String key, List<String> prefixes, int selector) {
    Dependency toDependency(String label) {
      if (key != null) {
        return Dependency.onKey(label, key);
      }
      return Dependency.anyOf(
          label, prefixes, selector < 0 ? KeySelector.any() : SELECTORS.get(selector));
    }

    @Override
    public String toString() {
      if (key != null) {
        return key;
      }
      return "anyOf" + prefixes + (selector < 0 ? "" : "+" + SELECTOR_NAMES.get(selector));
    }
  }

  record Change(String key, Val value) {
    @Override
    public String toString() {
      return key + "=" + (value == null ? "DELETE" : value);
    }
  }

  /** {@code failKey}: the next descriptor call for that key fails (null: none). */
  record TxnSpec(List<Change> changes, boolean revert, String failKey) {
    @Override
    public String toString() {
      return (revert ? "revert " : "")
          + (failKey == null ? "" : "fail(" + failKey + ") ")
          + changes;
    }
  }

  /** deps: for WITH_DEPS.get(i) and variant v, the specs at index 2 * i + v. */
  record Scenario(List<List<DepSpec>> deps, List<TxnSpec> txns) {
    List<Dependency> depsOf(String key, Object value) {
      int i = WITH_DEPS.indexOf(key);
      if (i < 0) {
        return List.of();
      }
      int variant = value instanceof Val v ? v.variant() : value instanceof Der d ? d.variant() : 0;
      List<DepSpec> specs = deps.get(2 * i + variant);
      List<Dependency> out = new ArrayList<>();
      for (int j = 0; j < specs.size(); j++) {
        out.add(specs.get(j).toDependency("d" + j));
      }
      return out;
    }

    @Override
    public String toString() {
      StringBuilder sb = new StringBuilder("\n  dependencies:");
      for (int i = 0; i < WITH_DEPS.size(); i++) {
        for (int v = 0; v < 2; v++) {
          if (!deps.get(2 * i + v).isEmpty()) {
            sb.append("\n    ")
                .append(WITH_DEPS.get(i))
                .append(" (variant ")
                .append(v)
                .append(") -> ")
                .append(deps.get(2 * i + v));
          }
        }
      }
      sb.append("\n  transactions:");
      for (int i = 0; i < txns.size(); i++) {
        sb.append("\n    #").append(i).append(' ').append(txns.get(i));
      }
      return sb.append('\n').toString();
    }
  }

  // ------------------------------------------------------------------ generators

  @Provide
  Arbitrary<Scenario> scenarios() {
    return scenarios(false);
  }

  @Provide
  Arbitrary<Scenario> scenariosWithFailures() {
    return scenarios(true);
  }

  Arbitrary<Scenario> scenarios(boolean failures) {
    Arbitrary<DepSpec> staticKey = Arbitraries.of(UNIVERSE).map(k -> new DepSpec(k, null, -1));
    Arbitrary<DepSpec> prefixes =
        Arbitraries.of(PREFIXES)
            .list()
            .ofMinSize(1)
            .ofMaxSize(2)
            .map(p -> new DepSpec(null, p, -1));
    Arbitrary<DepSpec> selector =
        Arbitraries.integers()
            .between(0, SELECTORS.size() - 1)
            .map(s -> new DepSpec(null, List.of(), s));
    Arbitrary<DepSpec> prefixSelector =
        Combinators.combine(
                Arbitraries.of(PREFIXES), Arbitraries.integers().between(0, SELECTORS.size() - 1))
            .as((p, s) -> new DepSpec(null, List.of(p), s));
    @SuppressWarnings("unchecked")
    Arbitrary<DepSpec> dep =
        Arbitraries.frequencyOf(
            Tuple.of(5, staticKey),
            Tuple.of(3, prefixes),
            Tuple.of(1, selector),
            Tuple.of(1, prefixSelector));
    Arbitrary<List<DepSpec>> depList =
        Arbitraries.frequencyOf(
            Tuple.of(4, Arbitraries.just(List.<DepSpec>of())),
            Tuple.of(5, dep.list().ofMinSize(1).ofMaxSize(2)));
    Arbitrary<List<List<DepSpec>>> deps = depList.list().ofSize(2 * WITH_DEPS.size());

    Arbitrary<Val> value =
        Combinators.combine(
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 1),
                Arbitraries.of(List.<String>of(), List.of("x"), List.of("y"), List.of("x", "y")))
            .as(Val::new);
    Arbitrary<Change> change =
        Combinators.combine(
                Arbitraries.of(BASE),
                Arbitraries.frequencyOf(
                    Tuple.of(3, value.map(Optional::of)),
                    Tuple.of(1, Arbitraries.just(Optional.<Val>empty()))))
            .as((k, v) -> new Change(k, v.orElse(null)));
    Arbitrary<String> failKey =
        failures
            ? Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.just((String) null)), Tuple.of(1, Arbitraries.of(UNIVERSE)))
            : Arbitraries.just(null);
    Arbitrary<TxnSpec> txn =
        Combinators.combine(
                change.list().ofMinSize(1).ofMaxSize(4),
                Arbitraries.integers().between(0, failures ? 1 : 3).map(i -> i == 0),
                failKey)
            .as(TxnSpec::new);
    return Combinators.combine(deps, txn.list().ofMinSize(5).ofMaxSize(15)).as(Scenario::new);
  }

  // ------------------------------------------------------------------ the property

  @Property(tries = 500, seed = "20241121", shrinking = ShrinkingMode.BOUNDED)
  @Label(
      "B53 B55 B59 B63 B64 B68 B70 B71 B74 B75 B79 B81 B85 B88 B89 B164 (property) random"
          + " dependencies, derived values and NB transactions keep the SB ordered, consistent and in"
          + " line with the value states")
  void invariantsHold(@ForAll("scenarios") Scenario scenario) {
    Run sequential = new Run(scenario);
    assertThat(sequential.execute()).as("scenario:%s", scenario).isEmpty();
    assertSameWithParallelCalls(sequential, new Run(scenario, false, 8), scenario);
  }

  /**
   * The same scenario with up to 8 southbound calls at a time (every descriptor opted in): no
   * violation, and the same recorded operations, statuses and southbound content as sequentially.
   */
  private static void assertSameWithParallelCalls(Run sequential, Run parallel, Scenario scenario) {
    assertThat(parallel.execute()).as("parallel calls, scenario:%s", scenario).isEmpty();
    assertThat(parallel.records)
        .as("records with parallel calls, scenario:%s", scenario)
        .isEqualTo(sequential.records);
    assertThat(parallel.outcome)
        .as("statuses and SB with parallel calls, scenario:%s", scenario)
        .isEqualTo(sequential.outcome);
  }

  @Property(tries = 400, seed = "20241122", shrinking = ShrinkingMode.BOUNDED)
  @Label(
      "B64 B93 B94 B95 B96 B101 (property) with injected failures and revert the SB never sees"
          + " a Create before its dependencies, nor a Delete under a dependent that never failed, nor"
          + " an inconsistent call; CONFIGURED values that never failed are in the SB")
  void invariantsHoldWithFailures(@ForAll("scenariosWithFailures") Scenario scenario) {
    Run sequential = new Run(scenario, true, 1);
    assertThat(sequential.execute()).as("scenario:%s", scenario).isEmpty();
    assertSameWithParallelCalls(sequential, new Run(scenario, true, 8), scenario);
  }

  @Property(tries = 300, seed = "20261127", shrinking = ShrinkingMode.BOUNDED)
  @Label(
      "B101 (property) transactions reverted on failure with their calls in parallel keep the"
          + " invariants; until a call beyond a failure (or its undo) fails, each records what the"
          + " sequential run records, besides the calls beyond the failure and their undos, and"
          + " leaves the same statuses and base values in the SB")
  void revertInParallelKeepsTheSequentialOutcome(
      @ForAll("scenariosWithFailures") Scenario scenario) {
    Run sequential = new Run(scenario, true, 1);
    assertThat(sequential.execute()).as("scenario:%s", scenario).isEmpty();
    Run parallel = new Run(scenario, true, 8, true);
    assertThat(parallel.execute()).as("revert in parallel, scenario:%s", scenario).isEmpty();
    assertThat(parallel.records).hasSameSizeAs(sequential.records);
    for (int i = 0; i < parallel.records.size() && !parallel.ranAheadFailed.get(i); i++) {
      // from a failed call beyond the failure on, the southbound saw what the sequential run's
      // never did: the runs part
      List<RecordedTxnOp> walked =
          parallel.records.get(i).stream()
              .filter(op -> !op.is(RecordedTxnOp.Flag.RAN_AHEAD))
              .toList();
      assertThat(walked)
          .as("transaction %d, all records %s, scenario:%s", i, parallel.records.get(i), scenario)
          .isEqualTo(sequential.records.get(i));
      assertThat(parallel.outcomes.get(i))
          .as("after transaction %d, scenario:%s", i, scenario)
          .isEqualTo(sequential.outcomes.get(i));
    }
  }

  // ------------------------------------------------------------------ minimal cases found

  /** Two mock descriptors (A: /prefixA/ with derived items, B: /prefixB/), simulation on. */
  private static final class Fixture implements AutoCloseable {
    final MockSouthbound sb = new MockSouthbound();
    final SchedulerFixture env = CatalogueFixtures.env(true);

    Fixture(
        KVDescriptor.Dependencies<Object> depsA,
        KVDescriptor.Dependencies<Object> depsB,
        boolean recreateA) {
      var a =
          sb.descriptor("descriptor1", Object.class)
              .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
              .withMetadata()
              .derivedValues(CatalogueFixtures.derivedItems())
              .dependencies(depsA);
      if (recreateA) {
        a.updateWithRecreate((key, o, n, m) -> key.equals(CatalogueFixtures.A1));
      }
      env.kvs()
          .registerDescriptors(
              a.build(),
              sb.descriptor("descriptor2", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                  .withMetadata()
                  .dependencies(depsB)
                  .build());
    }

    long commit(Object... kv) {
      var txn = env.kvs().startNBTransaction();
      for (int i = 0; i < kv.length; i += 2) {
        txn.setValue((String) kv[i], kv[i + 1]);
      }
      return txn.commit(TxnOptions.defaults());
    }

    ValueState state(String key) {
      return env.kvs().valueStatus(key).state();
    }

    @Override
    public void close() {
      env.close();
      assertThat(sb.inconsistencies()).isEmpty();
    }
  }

  @Example
  @Label(
      "B75 (minimal case of the property) a brand-new value that completes a dependency cycle"
          + " gets the whole cycle created")
  void newValueCompletesCycle() {
    try (Fixture f =
        new Fixture(
            (k, v) -> List.of(Dependency.onKey("b2", CatalogueFixtures.B2)),
            (k, v) -> List.of(Dependency.onKey("a1", CatalogueFixtures.A1)),
            false)) {
      f.commit(
          CatalogueFixtures.A1,
          CatalogueFixtures.s("a"),
          CatalogueFixtures.B2,
          CatalogueFixtures.s("b"));
      assertThat(f.sb.callLog())
          .containsExactly("CREATE " + CatalogueFixtures.B2, "CREATE " + CatalogueFixtures.A1);
      assertThat(f.state(CatalogueFixtures.A1)).isEqualTo(ValueState.CONFIGURED);
      assertThat(f.state(CatalogueFixtures.B2)).isEqualTo(ValueState.CONFIGURED);
      OpSpec[] ops = {
        OpSpec.op(TxnOperation.CREATE, CatalogueFixtures.B2)
            .states(ValueState.NONEXISTENT, ValueState.CONFIGURED),
        OpSpec.op(TxnOperation.CREATE, CatalogueFixtures.A1)
            .states(ValueState.NONEXISTENT, ValueState.CONFIGURED)
      };
      TxnAssert.assertThat(f.env.txn(0)).executed(ops).planned(ops);
    }
  }

  @Example
  @Label(
      "B75 B85 (minimal case of the property) re-creating a value that depends on itself"
          + " creates it again (the value being re-created is on the readiness path)")
  void recreateSelfDependent() {
    try (Fixture f =
        new Fixture(
            (k, v) -> List.of(Dependency.onKey("self", CatalogueFixtures.A1)),
            (k, v) -> List.of(),
            true)) {
      f.commit(CatalogueFixtures.A1, CatalogueFixtures.s("v1"));
      assertThat(f.state(CatalogueFixtures.A1)).isEqualTo(ValueState.CONFIGURED);
      f.sb.clearCalls();
      f.commit(CatalogueFixtures.A1, CatalogueFixtures.s("v2"));
      assertThat(f.sb.callLog())
          .containsExactly("DELETE " + CatalogueFixtures.A1, "CREATE " + CatalogueFixtures.A1);
      assertThat(f.state(CatalogueFixtures.A1)).isEqualTo(ValueState.CONFIGURED);
      assertThat(f.sb.get(CatalogueFixtures.A1))
          .get()
          .extracting(MockSouthbound.Entry::value)
          .isEqualTo(CatalogueFixtures.s("v2"));
    }
  }

  @Example
  @Label(
      "B59 B83 (minimal case of the property) a value whose Delete was aborted by a failed"
          + " derived Delete is still taken down before the value it depends on is deleted")
  void abortedDeleteStillTakenDown() {
    try (Fixture f =
        new Fixture(
            (k, v) ->
                k.equals(CatalogueFixtures.A1)
                    ? List.of(Dependency.onKey("b2", CatalogueFixtures.B2))
                    : List.of(),
            (k, v) -> List.of(),
            false)) {
      f.commit(
          CatalogueFixtures.B2,
          CatalogueFixtures.s("b"),
          CatalogueFixtures.A1,
          CatalogueFixtures.arr(1));
      f.sb.planError(
          CatalogueFixtures.d(CatalogueFixtures.A1, 1),
          new IllegalStateException("failed to delete value"));
      try {
        f.commit(CatalogueFixtures.A1, null);
      } catch (TransactionException expected) {
        // B83: A1/i1 FAILED, A1 stays CONFIGURED with last operation DELETE
      }
      assertThat(f.state(CatalogueFixtures.A1)).isEqualTo(ValueState.CONFIGURED);
      f.sb.clearCalls();
      f.commit(CatalogueFixtures.B2, null);
      assertThat(f.sb.callLog())
          .as(
              "A1 (and A1/i1, found again by the refresh) is still in the"
                  + " SB and depends on B2")
          .containsExactly(
              "DELETE " + CatalogueFixtures.d(CatalogueFixtures.A1, 1),
              "DELETE " + CatalogueFixtures.A1,
              "DELETE " + CatalogueFixtures.B2);
      assertThat(f.state(CatalogueFixtures.A1)).isNotEqualTo(ValueState.CONFIGURED);
    }
  }

  @Example
  @Label(
      "B56 B64 (minimal case of the property) when an obsolete derived value cannot be deleted"
          + " (its dependent's Delete failed), the base keeps the value that is in the SB")
  void failedObsoleteDerivedKeepsAppliedValue() {
    try (Fixture f =
        new Fixture(
            (k, v) -> List.of(),
            (k, v) ->
                List.of(Dependency.onKey("a1/i2", CatalogueFixtures.d(CatalogueFixtures.A1, 2))),
            false)) {
      f.commit(
          CatalogueFixtures.A1,
          CatalogueFixtures.arr(1, 2),
          CatalogueFixtures.B2,
          CatalogueFixtures.s("b"));
      f.sb.planError(CatalogueFixtures.B2, new IllegalStateException("failed to delete value"));
      try {
        f.commit(CatalogueFixtures.A1, CatalogueFixtures.arr(1));
      } catch (TransactionException expected) {
        // B2 FAILED, so A1/i2 could not be deleted (semantics 6.3)
      }
      assertThat(f.sb.callLog()).doesNotContain("UPDATE " + CatalogueFixtures.A1);
      assertThat(f.sb.get(CatalogueFixtures.A1))
          .get()
          .extracting(MockSouthbound.Entry::value)
          .isEqualTo(CatalogueFixtures.arr(1, 2));
      assertThat(f.env.kvs().dumpValues("descriptor1", View.CACHED))
          .extracting(kv -> kv.value())
          .as("the graph's value of A1 = the SB's")
          .containsExactly(CatalogueFixtures.arr(1, 2));
      f.sb.clearCalls();
      f.commit(CatalogueFixtures.A1, CatalogueFixtures.arr(3));
      assertThat(f.sb.callLog()).contains("UPDATE " + CatalogueFixtures.A1);
      assertThat(f.sb.get(CatalogueFixtures.A1))
          .get()
          .extracting(MockSouthbound.Entry::value)
          .isEqualTo(CatalogueFixtures.arr(3));
    }
  }

  /** One execution of a scenario with its checks. */
  static final class Run {
    final Scenario sc;
    final boolean failures;
    final MockSouthbound sb = new MockSouthbound();

    /** Keys for which a descriptor call failed so far. */
    final Set<String> failed = new TreeSet<>();

    /** Added to by descriptor callbacks, which may run on several threads at once. */
    final List<String> violations = Collections.synchronizedList(new ArrayList<>());

    final boolean[][] reach;
    volatile String phase = "registration";

    /** Southbound calls at a time, at most (descriptors opted in up to as many). */
    final int parallelism;

    /** The executed operations of each transaction, in order. */
    final List<List<RecordedTxnOp>> records = new ArrayList<>();

    /** After the last transaction: every status and the SB's content. */
    String outcome = "";

    /** Transactions reverted on failure run their calls in parallel too. */
    final boolean revertInParallel;

    /** After each transaction: every status and the SB's base values. */
    final List<String> outcomes = new ArrayList<>();

    /** For each transaction: a call that ran ahead beyond a failure, or its undo, failed. */
    final List<Boolean> ranAheadFailed = new ArrayList<>();

    Run(Scenario sc) {
      this(sc, false, 1);
    }

    Run(Scenario sc, boolean failures, int parallelism) {
      this(sc, failures, parallelism, false);
    }

    Run(Scenario sc, boolean failures, int parallelism, boolean revertInParallel) {
      this.sc = sc;
      this.failures = failures;
      this.parallelism = parallelism;
      this.revertInParallel = revertInParallel;
      this.reach = reachability(sc);
    }

    /**
     * Static over-approximation of "may need", transitively (for the cycle exemption): the
     * dependencies of every variant, and derived value → base.
     */
    static boolean[][] reachability(Scenario sc) {
      int n = UNIVERSE.size();
      boolean[][] r = new boolean[n][n];
      for (int i = 0; i < n; i++) {
        String k = UNIVERSE.get(i);
        for (int variant = 0; variant < 2; variant++) {
          for (Dependency d : sc.depsOf(k, new Val(0, variant, List.of()))) {
            for (int j = 0; j < n; j++) {
              if (d.matches(UNIVERSE.get(j))) {
                r[i][j] = true;
              }
            }
          }
        }
      }
      // a derived value needs its base: a dependency chain through one's own derived value is
      // a cycle too (the recursion guard of B78 cuts it)
      for (String b : BASE) {
        for (String item : List.of("x", "y")) {
          String dk = derivedKey(b, item);
          if (dk != null) {
            r[UNIVERSE.indexOf(dk)][UNIVERSE.indexOf(b)] = true;
          }
        }
      }
      for (int m = 0; m < n; m++) {
        for (int i = 0; i < n; i++) {
          if (r[i][m]) {
            for (int j = 0; j < n; j++) {
              r[i][j] |= r[m][j];
            }
          }
        }
      }
      return r;
    }

    boolean sameCycle(String a, String b) {
      return sameCycle(reach, a, b);
    }

    static boolean sameCycle(boolean[][] r, String a, String b) {
      int i = UNIVERSE.indexOf(a);
      int j = UNIVERSE.indexOf(b);
      return i >= 0 && j >= 0 && r[i][j] && r[j][i];
    }

    /** {@code key} or its base is in one cycle with one of the base's own derived values. */
    boolean ownDerivedCycle(String key) {
      String base = BASE.contains(key) ? key : baseOf(key);
      for (String item : List.of("x", "y")) {
        String dk = derivedKey(base, item);
        if (dk != null && sameCycle(base, dk)) {
          return true;
        }
      }
      return false;
    }

    /**
     * In one cycle that contains a value and its own derived value: the walk's recursion guard
     * (B78) may cut such a cycle in the middle (see the report of this test).
     */
    boolean derivationCycle(String a, String b) {
      if (!sameCycle(a, b)) {
        return false;
      }
      for (String base : BASE) {
        for (String item : List.of("x", "y")) {
          String dk = derivedKey(base, item);
          if (dk != null && sameCycle(a, base) && sameCycle(a, dk)) {
            return true;
          }
        }
      }
      return false;
    }

    /** Present in the SB (a property: its base is in the SB with the item), unless excluded. */
    boolean present(String key, String excluded) {
      if (key.equals(excluded)) {
        return false;
      }
      if (isProperty(key)) {
        String base = "/a/" + key.substring("/p/a-".length(), key.length() - 2);
        if (base.equals(excluded)) {
          return false;
        }
        return sb.get(base)
            .map(e -> e.value() instanceof Val v && v.items().contains("y"))
            .orElse(false);
      }
      return sb.get(key).isPresent();
    }

    void checkDepsMet(String op, String key, Object value) {
      for (Dependency d : sc.depsOf(key, value)) {
        boolean ok = false;
        for (String t : UNIVERSE) {
          if (d.matches(t) && (present(t, null) || sameCycle(key, t))) {
            ok = true;
            break;
          }
        }
        if (!ok) {
          violations.add(
              phase
                  + ": (1) "
                  + op
                  + " "
                  + key
                  + " while dependency "
                  + d
                  + " has no target in the SB "
                  + sb.keys());
        }
      }
    }

    void checkNoDependents(String key) {
      Set<String> failedNow = new HashSet<>();
      sb.calls()
          .forEach(
              c -> {
                if (c.error() != null) {
                  failedNow.add(c.key());
                }
              });
      // one snapshot of the SB: with parallel calls, other calls change it meanwhile
      for (Map.Entry<String, MockSouthbound.Entry> held : sb.values().entrySet()) {
        String y = held.getKey();
        if (y.equals(key) || sameCycle(y, key) || failedNow.contains(y)) {
          continue; // a value whose Delete failed stays in the SB, unavailable (B96)
        }
        Object vy = held.getValue().value();
        for (Dependency d : sc.depsOf(y, vy)) {
          if (!d.matches(key)) {
            continue;
          }
          boolean other = false;
          for (String t : UNIVERSE) {
            if (d.matches(t) && present(t, key)) {
              other = true;
              break;
            }
          }
          if (!other) {
            violations.add(
                phase
                    + ": (1) DELETE "
                    + key
                    + " while "
                    + y
                    + " (in the SB) depends on it only, dependency "
                    + d);
          }
        }
      }
    }

    /**
     * What a device reports for a base value it holds: the items whose derived objects it really
     * holds (a property always comes with its base). The scheduler takes a derived value as present
     * exactly when the retrieved base derives it (as the reference does), so a southbound whose
     * Retrieve reported items never created would contradict itself.
     */
    Object view(String key, Object value) {
      if (!(value instanceof Val v) || v.items().isEmpty()) {
        return value;
      }
      List<String> items = new ArrayList<>();
      Map<String, Der> held = new TreeMap<>();
      for (String item : v.items()) {
        String dk = derivedKey(key, item);
        if (dk == null || isProperty(dk)) {
          items.add(item);
          continue;
        }
        Optional<MockSouthbound.Entry> e = sb.get(dk);
        if (e.isPresent()) {
          items.add(item);
          if (!e.get().value().equals(new Der(item, v.version(), v.variant()))) {
            held.put(item, (Der) e.get().value());
          }
        }
      }
      return items.size() == v.items().size() && held.isEmpty()
          ? value
          : new Val(v.version(), v.variant(), items, held);
    }

    /**
     * The value the southbound stores for {@code key} when {@code reported} is the view of it that
     * a Retrieve reported (an operation's old value after a refresh), else {@code reported}.
     */
    Object stored(String key, Object reported) {
      Set<Object> seen = views.get(key);
      if (seen == null || !seen.contains(reported)) {
        return reported;
      }
      return sb.get(key).map(MockSouthbound.Entry::value).orElse(reported);
    }

    /** The views of each key that a Retrieve reported since the key was last written. */
    final Map<String, Set<Object>> views = new ConcurrentHashMap<>();

    /** Wraps a mock descriptor: checks (1) at every Create/Update/Delete call. */
    KVDescriptor<Object, Object> instrument(KVDescriptor<Object, Object> m) {
      KVDescriptor.Builder<Object, Object> b =
          KVDescriptor.builder(m.name(), Object.class)
              .withMetadata(Object.class)
              .maxConcurrency(parallelism);
      b.nbKeyPrefix(m.nbKeyPrefix()).keySelector(m.keySelector());
      m.keyLabel().ifPresent(b::keyLabel);
      m.equivalence().ifPresent(b::equivalence);
      m.updateWithRecreate().ifPresent(b::updateWithRecreate);
      m.retrieve()
          .ifPresent(
              retrieve ->
                  b.retrieve(
                      correlate -> {
                        List<KVWithMetadata<Object, Object>> found = new ArrayList<>();
                        for (KVWithMetadata<Object, Object> kv : retrieve.retrieve(correlate)) {
                          Object v = view(kv.key(), kv.value());
                          if (v != kv.value()) {
                            views
                                .computeIfAbsent(kv.key(), k -> ConcurrentHashMap.newKeySet())
                                .add(v);
                          }
                          found.add(new KVWithMetadata<>(kv.key(), v, kv.metadata(), kv.origin()));
                        }
                        return found;
                      }));
      m.derivedValues().ifPresent(b::derivedValues);
      m.dependencies().ifPresent(b::dependencies);
      var create = m.create().orElseThrow();
      var delete = m.delete().orElseThrow();
      b.create(
          (key, value) -> {
            checkDepsMet("CREATE", key, value);
            views.remove(key);
            return create.create(key, value);
          });
      b.delete(
          (key, value, meta) -> {
            checkNoDependents(key);
            Object held = stored(key, value);
            views.remove(key);
            delete.delete(key, held, meta);
          });
      m.update()
          .ifPresent(
              update ->
                  b.update(
                      (key, oldValue, newValue, meta) -> {
                        checkDepsMet("UPDATE", key, newValue);
                        Object held = stored(key, oldValue);
                        views.remove(key);
                        return update.update(key, held, newValue, meta);
                      }));
      return b.build();
    }

    KVDescriptor.Dependencies<Object> deps() {
      return sc::depsOf;
    }

    KVDescriptor.DerivedValues<Object> derived() {
      return (key, value) -> {
        List<KeyValuePair> out = new ArrayList<>();
        if (value instanceof Val v) {
          derive(key, v).forEach((k, dv) -> out.add(KeyValuePair.of(k, dv)));
        }
        return out;
      };
    }

    List<String> execute() {
      SchedulerFixture env = CatalogueFixtures.env(true, parallelism, revertInParallel);
      try {
        KVScheduler kvs = env.kvs();
        kvs.registerDescriptors(
            instrument(
                sb.descriptor("da", Object.class)
                    .maxConcurrency(parallelism)
                    .nbKeyPrefix("/a/")
                    .withMetadata()
                    .dependencies(deps())
                    .derivedValues(derived())
                    .updateWithRecreate(
                        (key, o, n, meta) ->
                            o instanceof Val ov
                                && n instanceof Val nv
                                && ov.variant() != nv.variant())
                    .build()),
            instrument(
                sb.descriptor("db", Object.class)
                    .maxConcurrency(parallelism)
                    .nbKeyPrefix("/b/")
                    .withMetadata()
                    .dependencies(deps())
                    .derivedValues(derived())
                    .build()),
            instrument(
                sb.descriptor("dc", Object.class)
                    .maxConcurrency(parallelism)
                    .nbKeyPrefix("/c/")
                    .withMetadata()
                    .withoutUpdate()
                    .dependencies(deps())
                    .build()));
        kvs.transactionBarrier();
        Map<String, Val> model = new TreeMap<>();
        for (int i = 0; i < sc.txns().size(); i++) {
          TxnSpec t = sc.txns().get(i);
          phase = "txn #" + i;
          if (t.failKey() != null) {
            sb.planError(t.failKey(), new IllegalStateException("injected failure"));
          }
          var txn = kvs.startNBTransaction();
          for (Change c : t.changes()) {
            txn.setValue(c.key(), c.value());
            if (c.value() == null) {
              model.remove(c.key());
            } else {
              model.put(c.key(), c.value());
            }
          }
          long seq;
          try {
            seq = txn.commit(TxnOptions.builder().revert(t.revert()).build());
          } catch (TransactionException e) {
            if (!failures) {
              violations.add(phase + ": unexpected transaction error " + e.getMessage());
              return violations;
            }
            seq = e.seqNum();
          }
          for (MockSouthbound.Call call : sb.calls()) {
            if (call.error() != null) {
              failed.add(call.key());
            }
          }
          List<RecordedTxnOp> executed = env.txn(seq).executed();
          records.add(executed);
          ranAheadFailed.add(
              executed.stream()
                  .anyMatch(op -> op.is(RecordedTxnOp.Flag.RAN_AHEAD) && !op.newError().isEmpty()));
          outcomes.add(outcome(kvs, false));
          if (failures) {
            checkAfterFailures(kvs);
          } else {
            checkAfter(kvs, env.txn(seq), model);
          }
          if (!violations.isEmpty()) {
            return violations;
          }
        }
        outcome = outcome(kvs, true);
        return violations;
      } finally {
        env.close();
      }
    }

    /**
     * Every status and the SB's content ({@code derived}: derived values included) without
     * metadata: an index the mock hands out in call order differs when calls of one descriptor run
     * side by side, as on a real southbound.
     */
    String outcome(KVScheduler kvs, boolean derived) {
      Map<String, Object> content = new TreeMap<>();
      sb.values()
          .forEach(
              (k, e) -> {
                if (derived || !e.derived()) {
                  content.put(k, e.value());
                }
              });
      return kvs.valueStatuses() + "\n" + content;
    }

    /**
     * Weaker checks when calls fail: (1) as far as failures allow (a dependent whose Delete failed
     * stays in the SB, B96), (2) with B64's exception, (4) one way, for base and derived values
     * alike: CONFIGURED ⇒ in the SB. Derived values are read through their base's Retrieve, which
     * reports what the southbound holds of them ({@link #view}): the refresh after a failure sees
     * them as they are.
     */
    void checkAfterFailures(KVScheduler kvs) {
      for (String inc : sb.inconsistencies()) {
        String key =
            inc.replaceFirst(
                "^(CREATE of existing key|DELETE of missing key|UPDATE of"
                    + " missing key|DELETE of|UPDATE of) (\\S+).*$",
                "$2");
        // B64: re-creating a value whose Delete failed
        boolean tolerated = failed.contains(key) && inc.startsWith("CREATE of existing key ");
        if (!tolerated) {
          violations.add(phase + ": (2) " + inc);
        }
      }
      for (String b : BASE) {
        BaseValueStatus st = kvs.valueStatus(b);
        List<ValueStatus> all = new ArrayList<>(st.derived());
        all.add(st.value());
        for (ValueStatus vs : all) {
          String k = vs.key();
          if (vs.state() == ValueState.CONFIGURED && !present(k, null)) {
            violations.add(phase + ": (4) CONFIGURED " + k + " is not in the SB");
          }
        }
      }
    }

    void checkAfter(KVScheduler kvs, RecordedTxn rec, Map<String, Val> model) {
      // (2)
      for (String inc : sb.inconsistencies()) {
        violations.add(phase + ": (2) " + inc);
      }
      // (5) simulation = execution
      if (!rec.planned().equals(rec.executed())) {
        violations.add(phase + ": (5) planned " + rec.planned() + " != executed " + rec.executed());
      }
      // statuses vs the NB model
      Map<String, ValueState> state = new TreeMap<>();
      Map<String, Object> values = new TreeMap<>();
      for (String b : BASE) {
        BaseValueStatus st = kvs.valueStatus(b);
        Val v = model.get(b);
        if (v == null) {
          if (st.state() != ValueState.NONEXISTENT || !st.derived().isEmpty()) {
            violations.add(phase + ": deleted " + b + " has status " + st);
          }
          continue;
        }
        state.put(b, st.state());
        values.put(b, v);
        Map<String, Object> der = derive(b, v);
        List<String> derKeys = new ArrayList<>();
        for (ValueStatus ds : st.derived()) {
          derKeys.add(ds.key());
          state.put(ds.key(), ds.state());
          values.put(ds.key(), der.get(ds.key()));
        }
        if (st.state() == ValueState.CONFIGURED) {
          if (!derKeys.equals(new ArrayList<>(der.keySet()))) {
            violations.add(
                phase
                    + ": derived values of "
                    + b
                    + " are "
                    + derKeys
                    + ", expected "
                    + der.keySet());
          }
        } else if (st.state() == ValueState.PENDING) {
          // a derived value the base itself (transitively) needs may linger as PENDING: taking
          // the base down from inside the derived value's own deletion cannot revisit it (B78)
          derKeys.removeIf(dk -> derivationCycle(b, dk));
          if (!derKeys.isEmpty()) {
            violations.add(phase + ": PENDING " + b + " has derived values " + derKeys);
          }
        } else {
          violations.add(phase + ": unexpected state of " + b + ": " + st);
        }
      }
      for (Map.Entry<String, ValueState> e : state.entrySet()) {
        if (e.getValue() != ValueState.CONFIGURED && e.getValue() != ValueState.PENDING) {
          violations.add(phase + ": unexpected state of " + e.getKey() + ": " + e.getValue());
        }
      }
      Set<String> available = new TreeSet<>();
      state.forEach(
          (k, s) -> {
            if (s == ValueState.CONFIGURED) {
              available.add(k);
            }
          });
      // (3)
      Set<String> pending = new TreeSet<>();
      for (Map.Entry<String, ValueState> e : state.entrySet()) {
        String k = e.getKey();
        List<String> unmet = new ArrayList<>();
        for (Dependency d : sc.depsOf(k, values.get(k))) {
          if (available.stream().noneMatch(d::matches)) {
            unmet.add(d.toString());
          }
        }
        // B78: a value that (transitively) needs its own derived value cannot be revisited while
        // that derived value is re-created or removed under it: exempt such dependencies
        if (e.getValue() == ValueState.CONFIGURED) {
          unmet.clear();
          for (Dependency d : sc.depsOf(k, values.get(k))) {
            if (available.stream().noneMatch(d::matches)
                && UNIVERSE.stream().noneMatch(t -> d.matches(t) && derivationCycle(k, t))) {
              unmet.add(d.toString());
            }
          }
        }
        if (e.getValue() == ValueState.CONFIGURED && !unmet.isEmpty()) {
          violations.add(phase + ": (3) CONFIGURED " + k + " with unmet dependencies " + unmet);
        }
        if (e.getValue() == ValueState.PENDING) {
          pending.add(k);
          if (unmet.isEmpty()) {
            violations.add(phase + ": (3) PENDING " + k + " with every dependency met");
          }
        }
      }
      Set<String> stuck = new TreeSet<>(pending);
      boolean changed = true;
      while (changed) {
        changed = false;
        for (String k : new ArrayList<>(stuck)) {
          for (Dependency d : sc.depsOf(k, values.get(k))) {
            if (available.stream().noneMatch(d::matches) && stuck.stream().noneMatch(d::matches)) {
              stuck.remove(k);
              changed = true;
              break;
            }
          }
        }
      }
      if (!stuck.isEmpty()) {
        violations.add(
            phase
                + ": (3) PENDING values that satisfy each other's dependencies"
                + " (a ready cycle left pending): "
                + stuck);
      }
      // (4)
      Map<String, Object> expectedSb = new TreeMap<>();
      for (String k : available) {
        if (!isProperty(k)) {
          expectedSb.put(k, values.get(k));
        }
      }
      Map<String, Object> actualSb = new TreeMap<>();
      sb.values().forEach((k, e) -> actualSb.put(k, e.value()));
      // B78: a base that needs its own derived value can be left out of step (see the report)
      expectedSb.keySet().removeIf(this::ownDerivedCycle);
      actualSb.keySet().removeIf(this::ownDerivedCycle);
      if (!actualSb.equals(expectedSb)) {
        Set<String> extra = new TreeSet<>(actualSb.keySet());
        extra.removeAll(expectedSb.keySet());
        Set<String> missing = new TreeSet<>(expectedSb.keySet());
        missing.removeAll(actualSb.keySet());
        Set<String> differ = new HashSet<>();
        expectedSb.forEach(
            (k, v) -> {
              if (actualSb.containsKey(k) && !actualSb.get(k).equals(v)) {
                differ.add(k);
              }
            });
        violations.add(
            phase
                + ": (4) SB differs from the CONFIGURED values: extra "
                + extra
                + ", missing "
                + missing
                + ", different values "
                + differ
                + "; states "
                + state);
      }
    }
  }
}
