package io.kvscheduler.catalogue;

import ch.qos.logback.classic.Logger;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Fixtures of the behaviour catalogue (docs/behaviors.md, "Notation"): keys A1, B2, C3, ..., values
 * {@code [i1,i2]} ({@link ArrayValue}) and {@code "s"} ({@link StringValue}), the derived-values
 * builder, and a deterministic scheduler (manual clock and timers, statuses delivered on the engine
 * thread).
 */
final class CatalogueFixtures {
  /** The engine's packages, searched in this order for a class named by its simple name. */
  private static final List<String> ENGINE_PACKAGES =
      List.of(
          "io.kvscheduler.internal.engine",
          "io.kvscheduler.internal.engine.calls",
          "io.kvscheduler.internal.engine.graph",
          "io.kvscheduler.internal.engine.history",
          "io.kvscheduler.internal.engine.publish",
          "io.kvscheduler.internal.engine.record",
          "io.kvscheduler.internal.engine.config",
          "io.kvscheduler.internal.engine.loop",
          "io.kvscheduler.internal.engine.refresh",
          "io.kvscheduler.internal.collect");

  /**
   * The logger of the engine's class {@code simpleName} (in whichever of the engine's packages it
   * lives), found through the class itself: a test that listens to it fails when the class is
   * renamed or leaves these packages, instead of listening to a logger nobody writes to any more
   * (the engine's classes are package-private: they cannot be named here).
   */
  static Logger engineLogger(String simpleName) {
    for (String pkg : ENGINE_PACKAGES) {
      Class<?> c;
      try {
        c = Class.forName(pkg + "." + simpleName);
      } catch (ClassNotFoundException e) {
        continue;
      }
      return (Logger) LoggerFactory.getLogger(c);
    }
    throw new AssertionError(
        "the engine has no class "
            + simpleName
            + " in "
            + ENGINE_PACKAGES
            + ": which class logs"
            + " this now?");
  }

  private CatalogueFixtures() {}

  static final String PREFIX_A = "/prefixA/";
  static final String PREFIX_B = "/prefixB/";
  static final String PREFIX_C = "/prefixC/";
  static final String A1 = "/prefixA/base-value1";
  static final String A2 = "/prefixA/base-value2";
  static final String A3 = "/prefixA/base-value3";
  static final String A4 = "/prefixA/base-value4";
  static final String B2 = "/prefixB/base-value2";
  static final String C3 = "/prefixC/base-value3";

  /** The derived key {@code base/itemN}, e.g. {@code d(A1, 1)} = A1/i1. */
  static String d(String base, int item) {
    return base + "/item" + item;
  }

  /** {@code [i1,i2]} = ArrayValue of items "item1", "item2". */
  record ArrayValue(List<String> items) {
    static ArrayValue of(int... items) {
      List<String> l = new ArrayList<>();
      for (int i : items) {
        l.add("item" + i);
      }
      return new ArrayValue(List.copyOf(l));
    }
  }

  /** {@code "s"} = StringValue("s"). */
  record StringValue(String value) {}

  static StringValue s(String v) {
    return new StringValue(v);
  }

  static ArrayValue arr(int... items) {
    return ArrayValue.of(items);
  }

  /** For every item x of an ArrayValue under K: K/x → StringValue(x + suffix). */
  static KVDescriptor.DerivedValues<Object> derivedItems(String suffix) {
    return (key, value) -> {
      List<KeyValuePair> out = new ArrayList<>();
      if (value instanceof ArrayValue a) {
        for (String item : a.items()) {
          out.add(KeyValuePair.of(key + "/" + item, new StringValue(item + suffix)));
        }
      }
      return out;
    };
  }

  static KVDescriptor.DerivedValues<Object> derivedItems() {
    return derivedItems("");
  }

  /**
   * Registers the three descriptors of TestDataChangeTransactions on {@code kvs}: D1, D2, D3 over
   * /prefixA/, /prefixB/, /prefixC/, all with metadata and the derived-values builder; B2/i1
   * depends on A1 and B2/i2 on A1/i1; D3 re-creates C3 on change; D2 is retrieved after D1, D3
   * after D2.
   */
  static void registerDataChangeDescriptors(KVScheduler kvs, MockSouthbound sb) {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withMetadata()
            .derivedValues(derivedItems())
            .build(),
        sb.descriptor("descriptor2", Object.class)
            .nbKeyPrefix(PREFIX_B)
            .withMetadata()
            .derivedValues(derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(d(B2, 1))) return List.of(Dependency.onKey(A1, A1));
                  if (key.equals(d(B2, 2))) return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                  return List.of();
                })
            .retrieveDependencies("descriptor1")
            .build(),
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(PREFIX_C)
            .withMetadata()
            .derivedValues(derivedItems())
            .updateWithRecreate((key, o, n, m) -> key.equals(C3))
            .retrieveDependencies("descriptor2")
            .build());
  }

  /**
   * Registers the descriptors of TestNotifications: D1 (/prefixA/, base keys only, so A1/iN are
   * properties; metadata; no Retrieve) and D2 (/prefixB/, metadata, B2 depends on A1 and B2/i2 on
   * A1/i2, retrieved after D1).
   */
  static void registerNotificationDescriptors(KVScheduler kvs, MockSouthbound sb) {
    KeySelector onlyBase = k -> k.startsWith(PREFIX_A) && k.indexOf('/', PREFIX_A.length()) < 0;
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .keySelector(onlyBase)
            .withMetadata()
            .withoutRetrieve()
            .derivedValues(derivedItems())
            .build(),
        sb.descriptor("descriptor2", Object.class)
            .nbKeyPrefix(PREFIX_B)
            .withMetadata()
            .derivedValues(derivedItems())
            .dependencies(
                (key, value) -> {
                  if (key.equals(B2)) return List.of(Dependency.onKey(A1, A1));
                  if (key.equals(d(B2, 2))) return List.of(Dependency.onKey(d(A1, 2), d(A1, 2)));
                  return List.of();
                })
            .retrieveDependencies("descriptor1")
            .build());
  }

  /**
   * Registers the descriptor of TestDependencyCycles: D1 (/prefixA/, metadata, no Retrieve) with A1
   * → A2, A2 → A3, A3 → {A1, A4}.
   */
  static void registerCycleDescriptors(KVScheduler kvs, MockSouthbound sb) {
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withMetadata()
            .withoutRetrieve()
            .dependencies(
                (key, value) -> {
                  if (key.equals(A1)) return List.of(Dependency.onKey(A2, A2));
                  if (key.equals(A2)) return List.of(Dependency.onKey(A3, A3));
                  if (key.equals(A3)) {
                    return List.of(Dependency.onKey(A1, A1), Dependency.onKey(A4, A4));
                  }
                  return List.of();
                })
            .build());
  }

  /** The status {@code key} is expected to have: {@code error} is {@code ""} for none. */
  static ValueStatus status(
      String key, ValueState state, TxnOperation lastOp, String error, String... details) {
    return new ValueStatus(key, state, error, lastOp, List.of(details));
  }

  static SchedulerFixture env(boolean simulation) {
    return env(simulation, 1);
  }

  /** {@link #env(boolean)} with {@code parallelism} southbound calls at a time, at most. */
  static SchedulerFixture env(boolean simulation, int parallelism) {
    return env(simulation, parallelism, false);
  }

  /**
   * {@link #env(boolean, int)}; {@code revertInParallel}: transactions reverted on failure run
   * their calls in parallel too.
   */
  static SchedulerFixture env(boolean simulation, int parallelism, boolean revertInParallel) {
    SchedulerFixture fx =
        SchedulerFixture.create(
            b ->
                b.enableTxnSimulation(simulation)
                    .parallelism(parallelism)
                    .revertInParallel(revertInParallel)
                    .printTxnSummary(true));
    // the catalogue checks times within a transaction (a record's start before its stop, a
    // revision between them), as the reference's real clock gives them: each reading moves 1 ms
    fx.clock().tickOnEveryRead(Duration.ofMillis(1));
    return fx;
  }
}
