package io.kvscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The mock southbound under calls from several threads: latency, and the inconsistencies it records
 * when calls overlap that must not.
 */
class MockSouthboundConcurrencyTest {

  /** Long enough that a call started once another one is running overlaps it. */
  private static final Duration SLOW = Duration.ofMillis(700);

  private final MockSouthbound sb = new MockSouthbound().checkDependencies(true);
  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopPool() throws InterruptedException {
    pool.shutdownNow();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  private static <V> KVDescriptor.Creator<V, Object> creator(KVDescriptor<V, Object> d) {
    return d.create().orElseThrow();
  }

  /** Starts {@code call} on another thread and returns once the southbound counts it running. */
  private Future<?> startAndAwaitRunning(int runningAfter, ThrowingCall call) throws Exception {
    Future<?> f =
        pool.submit(
            () -> {
              call.run();
              return null;
            });
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (sb.running() < runningAfter) {
      assertThat(System.nanoTime()).as("call started in time").isLessThan(deadline);
      Thread.sleep(1);
    }
    return f;
  }

  interface ThrowingCall {
    void run() throws Exception;
  }

  @Test
  void latencyDelaysTheCallAndTheValueIsStoredWhenItEnds() throws Exception {
    var d = sb.descriptor("a", String.class).nbKeyPrefix("a/").latency(SLOW).build();
    long t0 = System.nanoTime();
    Future<?> f = startAndAwaitRunning(1, () -> creator(d).create("a/x", "1"));
    assertThat(sb.get("a/x")).as("not stored while the call runs").isEmpty();
    f.get(10, TimeUnit.SECONDS);
    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(SLOW.toNanos());
    assertThat(sb.get("a/x")).isPresent();
    assertThat(sb.callLog()).containsExactly("CREATE a/x");
    assertThat(sb.running()).isZero();
  }

  @Test
  void southboundLatencyAppliesToEveryDescriptorWithoutItsOwn() throws Exception {
    sb.latency(Duration.ofMillis(50));
    var d = sb.descriptor("a", String.class).nbKeyPrefix("a/").build();
    long t0 = System.nanoTime();
    creator(d).create("a/x", "1");
    d.retrieve().orElseThrow().retrieve(List.of());
    assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(Duration.ofMillis(100).toNanos());
  }

  @Test
  void twoCallsForTheSameKeyOverlapping() throws Exception {
    var d =
        sb.descriptor("a", String.class).nbKeyPrefix("a/").maxConcurrency(4).latency(SLOW).build();
    Future<?> first = startAndAwaitRunning(1, () -> creator(d).create("a/x", "1"));
    creator(d).create("a/x", "2");
    first.get(10, TimeUnit.SECONDS);
    assertThat(sb.inconsistencies())
        .contains("CREATE of a/x overlaps CREATE of a/x (same key)")
        .noneMatch(s -> s.contains("maxConcurrency"));
  }

  @Test
  void valuesDerivedFromTheSameBaseMayOverlapButNotWithTheirBase() throws Exception {
    var base =
        sb.descriptor("a", String.class)
            .nbKeyPrefix("a/")
            .derivedValues(
                (key, v) ->
                    List.of(KeyValuePair.of(key + "/d1", "x"), KeyValuePair.of(key + "/d2", "y")))
            .build();
    var derived =
        sb.descriptor("d", String.class)
            .keySelector(k -> k.startsWith("a/") && k.indexOf('/', 2) > 0)
            .baseKeys(k -> false)
            .maxConcurrency(4)
            .latency(SLOW)
            .build();
    base.derivedValues().orElseThrow().derive("a/b", "v");
    Future<?> first = startAndAwaitRunning(1, () -> creator(derived).create("a/b/d1", "x"));
    creator(base).create("a/b", "v"); // while d1's call runs
    creator(derived).create("a/b/d2", "y"); // a sibling: no overlap to report
    first.get(10, TimeUnit.SECONDS);
    assertThat(sb.inconsistencies())
        .containsExactly("CREATE of a/b overlaps CREATE of a/b/d1 (a base and its derived value)");
  }

  @Test
  void valuesOfDifferentBasesMayOverlap() throws Exception {
    var d =
        sb.descriptor("a", String.class).nbKeyPrefix("a/").maxConcurrency(2).latency(SLOW).build();
    Future<?> first = startAndAwaitRunning(1, () -> creator(d).create("a/x", "1"));
    creator(d).create("a/y", "2");
    first.get(10, TimeUnit.SECONDS);
    assertThat(sb.inconsistencies()).isEmpty();
    assertThat(sb.peakConcurrency()).isEqualTo(2);
    assertThat(sb.peakConcurrency("a")).isEqualTo(2);
  }

  @Test
  void descriptorWithMaxConcurrencyOneCalledWhileAnotherCallOfItRuns() throws Exception {
    var d = sb.descriptor("a", String.class).nbKeyPrefix("a/").latency(SLOW).build();
    Future<?> first = startAndAwaitRunning(1, () -> creator(d).create("a/x", "1"));
    creator(d).create("a/y", "2");
    first.get(10, TimeUnit.SECONDS);
    assertThat(sb.inconsistencies())
        .containsExactly(
            "CREATE of a/y while 1 other call(s) of descriptor a run (maxConcurrency 1)");
  }

  @Test
  void retrieveCountsAsACallOfItsDescriptor() throws Exception {
    var d = sb.descriptor("a", String.class).nbKeyPrefix("a/").latency(SLOW).build();
    Future<?> first = startAndAwaitRunning(1, () -> creator(d).create("a/x", "1"));
    d.retrieve().orElseThrow().retrieve(List.of());
    first.get(10, TimeUnit.SECONDS);
    assertThat(sb.inconsistencies())
        .containsExactly(
            "RETRIEVE of descriptor a while 1 other call(s) of descriptor a run (maxConcurrency 1)");
  }

  @Test
  void createWhileADependencyIsStillBeingCreated() throws Exception {
    var a = sb.descriptor("a", String.class).nbKeyPrefix("a/").latency(SLOW).build();
    var b =
        sb.descriptor("b", String.class)
            .nbKeyPrefix("b/")
            .dependencies((key, v) -> List.of(Dependency.onKey("on-x", "a/x")))
            .build();
    Future<?> first = startAndAwaitRunning(1, () -> creator(a).create("a/x", "1"));
    creator(b).create("b/1", "v");
    first.get(10, TimeUnit.SECONDS);
    creator(b).create("b/2", "v"); // a/x is stored now
    assertThat(sb.inconsistencies())
        .containsExactly(
            "CREATE of b/1 while its dependency 'on-x' (a/x) is absent from the southbound");
  }

  @Test
  void updateWithAnAnyOfDependencyWithoutTarget() throws Exception {
    var b =
        sb.descriptor("b", String.class)
            .nbKeyPrefix("b/")
            .dependencies((key, v) -> List.of(Dependency.anyOfPrefixes("any-a", "a/")))
            .build();
    sb.setValue("b/1", "old", null, io.kvscheduler.api.ValueOrigin.FROM_NB, false);
    b.update().orElseThrow().update("b/1", "old", "new", null);
    sb.setValue("a/z", "1", null, io.kvscheduler.api.ValueOrigin.FROM_NB, false);
    b.update().orElseThrow().update("b/1", "new", "newer", null);
    assertThat(sb.inconsistencies())
        .containsExactly(
            "UPDATE of b/1 while its dependency 'any-a' (any of [a/]) is absent from the southbound");
  }

  @Test
  void dependencyOnAKeyNoDescriptorOfTheSouthboundSelectsIsNotJudged() throws Exception {
    sb.descriptor("a", String.class).nbKeyPrefix("a/").build();
    var b =
        sb.descriptor("b", String.class)
            .nbKeyPrefix("b/")
            .dependencies((key, v) -> List.of(Dependency.onKey("elsewhere", "other/x")))
            .build();
    creator(b).create("b/1", "v");
    assertThat(sb.inconsistencies()).isEmpty();
  }

  @Test
  void dependenciesAreNotCheckedUnlessAsked() throws Exception {
    sb.checkDependencies(false);
    sb.descriptor("a", String.class).nbKeyPrefix("a/").build();
    var b =
        sb.descriptor("b", String.class)
            .nbKeyPrefix("b/")
            .dependencies((key, v) -> List.of(Dependency.onKey("on-x", "a/x")))
            .build();
    creator(b).create("b/1", "v");
    assertThat(sb.inconsistencies()).isEmpty();
  }

  @Test
  void peakConcurrencyTotalAndPerDescriptor() throws Exception {
    var a =
        sb.descriptor("a", String.class).nbKeyPrefix("a/").maxConcurrency(3).latency(SLOW).build();
    var c = sb.descriptor("c", String.class).nbKeyPrefix("c/").latency(SLOW).build();
    List<Future<?>> running = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String key = "a/" + i;
      running.add(startAndAwaitRunning(i + 1, () -> creator(a).create(key, "v")));
    }
    running.add(startAndAwaitRunning(4, () -> creator(c).create("c/0", "v")));
    for (Future<?> f : running) {
      f.get(10, TimeUnit.SECONDS);
    }
    assertThat(sb.inconsistencies()).isEmpty();
    assertThat(sb.peakConcurrency()).isEqualTo(4);
    assertThat(sb.peakConcurrency("a")).isEqualTo(3);
    assertThat(sb.peakConcurrency("c")).isEqualTo(1);
    assertThat(sb.peakConcurrency("unknown")).isZero();
    sb.reset();
    assertThat(sb.peakConcurrency()).isZero();
  }

  @Test
  void manyThreadsCallingAtOnceLoseNothing() throws Exception {
    int threads = 8;
    int perThread = 200;
    var d =
        sb.descriptor("a", Integer.class)
            .nbKeyPrefix("a/")
            .withMetadata()
            .maxConcurrency(threads)
            .build();
    List<Future<?>> all = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int first = t * perThread;
      all.add(
          pool.submit(
              () -> {
                for (int i = first; i < first + perThread; i++) {
                  creator(d).create("a/" + i, i);
                }
                return null;
              }));
    }
    for (Future<?> f : all) {
      f.get(30, TimeUnit.SECONDS);
    }
    assertThat(sb.inconsistencies()).isEmpty();
    assertThat(sb.calls()).hasSize(threads * perThread);
    assertThat(sb.keys()).hasSize(threads * perThread);
    // metadata indexes are handed out once each
    assertThat(sb.values().values().stream().map(MockSouthbound.Entry::metadata).distinct())
        .hasSize(threads * perThread);
    assertThat(sb.peakConcurrency("a")).isBetween(1, threads);
  }

  @Test
  void anInterruptedCallIsRecordedAsFailedAndStoresNothing() throws Exception {
    var d =
        sb.descriptor("a", String.class).nbKeyPrefix("a/").latency(Duration.ofSeconds(30)).build();
    Future<?> f = startAndAwaitRunning(1, () -> creator(d).create("a/x", "1"));
    f.cancel(true);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (sb.running() > 0) {
      assertThat(System.nanoTime()).isLessThan(deadline);
      Thread.sleep(1);
    }
    assertThat(sb.callLog()).containsExactly("CREATE a/x ✗");
    assertThat(sb.calls().get(0).error()).isInstanceOf(InterruptedException.class);
    assertThat(sb.get("a/x")).isEmpty();
  }

  @Test
  void keySelectorOfDerivedDescriptorIsUsedForDependencies() {
    // a dependency on a derived key counts once a descriptor of the southbound selects it
    sb.descriptor("d", String.class).keySelector(KeySelector.prefix("a/b/")).build();
    var b =
        sb.descriptor("b", String.class)
            .nbKeyPrefix("b/")
            .dependencies((key, v) -> List.of(Dependency.onKey("on-d", "a/b/d1")))
            .build();
    try {
      creator(b).create("b/1", "v");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    assertThat(sb.inconsistencies())
        .containsExactly(
            "CREATE of b/1 while its dependency 'on-d' (a/b/d1) is absent from the southbound");
  }
}
