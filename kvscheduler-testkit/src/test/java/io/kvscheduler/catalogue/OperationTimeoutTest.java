package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.A4;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.fail;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.OperationTimeoutException;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A southbound that hangs: with an operation timeout, a Create, Update, Delete or Retrieve that
 * does not return in time fails its value (or, for Retrieve, leaves the descriptor's values as they
 * are), and the engine goes on. The time limit is real time (the engine waits on a call thread), so
 * these tests wait for it — 100 ms per overrun, 20 ms in the randomized test — and for late calls
 * to finish; they assert outcomes, never durations.
 */
@Timeout(30) // a regression would hang the engine: fail instead
class OperationTimeoutTest {
  private static final Duration LIMIT = Duration.ofMillis(100);

  private final MockSouthbound sb = new MockSouthbound();

  /** Lets hanging calls return. */
  private final CountDownLatch release = new CountDownLatch(1);

  /** Hanging calls that returned after all (their result must be ignored). */
  private final AtomicInteger lateReturns = new AtomicInteger();

  private SchedulerFixture env;
  private KVScheduler kvs;

  @AfterEach
  void tearDown() {
    release.countDown();
    if (env != null) {
      env.close();
    }
    assertThat(sb.inconsistencies()).isEmpty();
  }

  private void start(Duration schedulerTimeout) {
    env =
        SchedulerFixture.create(
            b ->
                schedulerTimeout == null
                    ? b.printTxnSummary(true)
                    : b.printTxnSummary(true).operationTimeout(schedulerTimeout));
    kvs = env.kvs();
    kvs.registerDescriptors(
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withoutRetrieve()
            .build());
  }

  /** Blocks until {@link #release}, ignoring interrupts (the worst case: a call that overruns). */
  private void hang() {
    boolean interrupted = false;
    while (true) {
      try {
        release.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    lateReturns.incrementAndGet();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Descriptor for /prefixC/ whose Create hangs for the value "hang". */
  private KVDescriptor.Builder<Object, Void> hangingOnCreate() {
    return KVDescriptor.builder("hanging", Object.class)
        .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
        .create(
            (key, value) -> {
              if (s("hang").equals(value)) {
                hang();
              }
              return null;
            })
        .delete((key, value, meta) -> {});
  }

  private static String overran(String descriptor, String op, String key) {
    return "descriptor "
        + descriptor
        + ": "
        + op
        + (key == null ? "" : " of key " + key)
        + " did not return within 100ms (the call was interrupted and is no longer awaited)";
  }

  private void awaitLateReturns(int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (lateReturns.get() < n && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(lateReturns.get()).isEqualTo(n);
  }

  @Test
  @DisplayName(
      "(ours) a Create that does not return within the operation timeout fails its value; the other values and later transactions are applied")
  void hangingCreateFailsItsValueOnly() throws Exception {
    start(LIMIT);
    kvs.registerDescriptors(hangingOnCreate().build());

    TransactionException e =
        assertThrows(
            TransactionException.class, () -> env.commit(A1, s("a1"), C3, s("hang"), A2, s("a2")));
    String msg = overran("hanging", "Create", C3);
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::operation, KeyError::message)
        .containsExactly(tuple(C3, CREATE, msg));
    OperationTimeoutException cause = (OperationTimeoutException) e.keyErrors().get(0).cause();
    assertThat(List.of(cause.descriptor(), cause.operation(), cause.key(), cause.timeout()))
        .containsExactly("hanging", "Create", C3, LIMIT);
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + A2);
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
            op(CREATE, A2).states(NONEXISTENT, CONFIGURED),
            op(CREATE, C3).states(NONEXISTENT, FAILED).error(msg));
    assertThat(kvs.valueStatus(C3).value())
        .isEqualTo(new ValueStatus(C3, FAILED, msg, CREATE, List.of()));

    // the abandoned call returns later: nothing changes
    release.countDown();
    awaitLateReturns(1);
    kvs.transactionBarrier();
    assertThat(kvs.valueStatus(C3).value())
        .isEqualTo(new ValueStatus(C3, FAILED, msg, CREATE, List.of()));
    long seq = env.commit(A3, s("a3"));
    TxnAssert.assertThat(env.txn(seq)).executed(op(CREATE, A3).states(NONEXISTENT, CONFIGURED));
  }

  /**
   * The abandoned Create completes late. Its key is read again and settled in a transaction of its
   * own (D51): the southbound holds what was asked, so the value is CONFIGURED at once, without a
   * call. (It used to be read outside any transaction and to stay FAILED until a retry or a new
   * value: a status telling less than the southbound holds, and values waiting for it stuck.) A
   * later removal deletes what the call created. {@link LateAnswerTest} covers the other late
   * answers.
   */
  @Test
  @DisplayName(
      "(ours) a Create that timed out but completes later: when the abandoned call"
          + " returns, its key is read again and the value CONFIGURED; a later removal deletes"
          + " what the call created")
  void lateCreateIsReadAgainAndRemovedByTheNorthbound() throws Exception {
    start(LIMIT);
    Map<String, Object> device = new ConcurrentHashMap<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("late", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .create(
                (key, value) -> {
                  if (s("late").equals(value)) {
                    hang();
                  }
                  device.put(key, value); // done, however late
                  return null;
                })
            .delete((key, value, meta) -> device.remove(key))
            .retrieve(
                correlate -> {
                  List<KVWithMetadata<Object, Void>> out = new ArrayList<>();
                  device.forEach((k, v) -> out.add(KVWithMetadata.of(k, v)));
                  return out;
                })
            .build());

    assertThrows(TransactionException.class, () -> env.commit(C3, s("late")));
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(FAILED);
    assertThat(device).isEmpty(); // the refresh after the failure found nothing yet

    release.countDown();
    awaitLateReturns(1);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (kvs.dumpValues("late", View.CACHED).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(5);
      kvs.transactionBarrier();
    }
    // read again: the value the call created is known to be there, and settled by a transaction
    // recorded as a retry of the failed one
    assertThat(kvs.dumpValues("late", View.CACHED))
        .extracting(KVWithMetadata::key)
        .containsExactly(C3);
    assertThat(device).containsOnlyKeys(C3);
    kvs.transactionBarrier();
    assertThat(kvs.valueStatus(C3).value())
        .isEqualTo(new ValueStatus(C3, CONFIGURED, "", UPDATE, List.of()));
    RecordedTxn settled = env.txn(1);
    assertThat(settled.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(settled.retryForTxn()).isZero();
    TxnAssert.assertThat(settled)
        .executed(op(UPDATE, C3).states(FAILED, CONFIGURED).flags("NOOP", "RETRY"));

    env.commit(C3, null);
    assertThat(device).isEmpty();
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  @DisplayName(
      "(ours) with retry, a Create that timed out is RETRYING and retried on a fresh call thread while the first call still hangs")
  void hangingCreateIsRetried() {
    start(LIMIT);
    AtomicInteger creates = new AtomicInteger();
    kvs.registerDescriptors(
        KVDescriptor.builder("hanging", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .create(
                (key, value) -> {
                  if (creates.incrementAndGet() == 1) {
                    hang(); // the first attempt hangs until the end of the test
                  }
                  return null;
                })
            .delete((key, value, meta) -> {})
            .build());

    assertThrows(
        TransactionException.class,
        () ->
            env.commit(
                TxnOptions.builder()
                    .retry(new RetryOptions(Duration.ofSeconds(1), 3, false))
                    .build(),
                C3,
                s("c3")));
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(RETRYING);
    env.timers().advance(Duration.ofSeconds(1));
    kvs.transactionBarrier();
    assertThat(creates.get()).isEqualTo(2);
    assertThat(lateReturns.get()).isZero();
    assertThat(kvs.valueStatus(C3).value())
        .isEqualTo(new ValueStatus(C3, CONFIGURED, "", CREATE, List.of()));
  }

  @Test
  @DisplayName(
      "(ours) a Retrieve that does not return within the operation timeout leaves the descriptor's values as they are")
  void hangingRetrieveLeavesValues() {
    start(LIMIT);
    AtomicInteger retrieves = new AtomicInteger();
    kvs.registerDescriptors(
        hangingOnCreate()
            .retrieve(
                correlate -> {
                  retrieves.incrementAndGet();
                  hang();
                  return List.of(); // were it awaited, C3 would be MISSING and re-created
                })
            .build());
    env.commit(C3, s("c3"));
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(CONFIGURED);

    long seq = env.commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(retrieves.get()).isEqualTo(1);
    TxnAssert.assertThat(env.txn(seq)).executed();
    // re-applied as an equivalent update (B155): nothing executed, the value and its last
    // operation kept (D56)
    assertThat(kvs.valueStatus(C3).value())
        .isEqualTo(new ValueStatus(C3, CONFIGURED, "", CREATE, List.of()));
    assertThat(kvs.dumpValues("hanging", View.CACHED))
        .extracting(KVWithMetadata::key, KVWithMetadata::origin)
        .containsExactly(tuple(C3, ValueOrigin.FROM_NB));
  }

  @Test
  @DisplayName(
      "(ours) a descriptor's own operation timeout bounds its calls when the scheduler sets none")
  void descriptorTimeoutWithoutSchedulerTimeout() {
    start(null);
    kvs.registerDescriptors(hangingOnCreate().operationTimeout(LIMIT).build());
    TransactionException e =
        assertThrows(TransactionException.class, () -> env.commit(C3, s("hang"), A1, s("a1")));
    assertThat(e.keyErrors())
        .extracting(KeyError::key, KeyError::message)
        .containsExactly(tuple(C3, overran("hanging", "Create", C3)));
    assertThat(kvs.valueStatus(A1).value().state()).isEqualTo(CONFIGURED);
  }

  @Test
  @DisplayName(
      "(ours) a transaction committed (commitAsync) from a Create running on a call thread is queued and applied after the current one, then its future completes")
  void commitFromCallThreadIsQueued() {
    start(LIMIT);
    List<CompletableFuture<Long>> inner = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("committing", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .create(
                (key, value) -> {
                  threads.add(Thread.currentThread().getName());
                  var txn = kvs.startNBTransaction();
                  txn.setValue(A4, s("from callback"));
                  inner.add(txn.commitAsync(TxnOptions.defaults()));
                  return null;
                })
            .delete((key, value, meta) -> {})
            .build());
    long seq = env.commit(C3, s("c3"));
    kvs.transactionBarrier();
    assertThat(inner).singleElement().satisfies(f -> assertThat(f.join()).isEqualTo(seq + 1));
    assertThat(threads).singleElement().asString().startsWith("kvscheduler-sb-call-");
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(CONFIGURED);
    TxnAssert.assertThat(env.txn(seq + 1)).executed(op(CREATE, A4).states(NONEXISTENT, CONFIGURED));
    assertThat(sb.callLog()).containsExactly("CREATE " + A4);
  }

  @Test
  @DisplayName(
      "(ours) an SB dump or an explanation asked for from a Create running on a call thread fails at once, naming the cause, instead of waiting for the engine that waits for the call")
  void engineQueriesFromCallThreadFailAtOnce() {
    start(LIMIT);
    List<String> errors = new CopyOnWriteArrayList<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("querying", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .create(
                (key, value) -> {
                  for (Runnable query :
                      List.<Runnable>of(
                          () -> kvs.dumpValues("querying", View.SB), () -> kvs.explain(A1))) {
                    try {
                      query.run();
                      errors.add("no error");
                    } catch (IllegalStateException e) {
                      errors.add(e.getMessage());
                    }
                  }
                  return null;
                })
            .delete((key, value, meta) -> {})
            .retrieve(correlate -> List.of())
            .build());
    env.commit(C3, s("c3"));
    assertThat(kvs.valueStatus(C3).value().state()).isEqualTo(CONFIGURED);
    assertThat(errors).hasSize(2);
    assertThat(errors.get(0))
        .startsWith(
            "a dump of the SB view (descriptor querying) cannot be"
                + " called from a southbound call that runs with a time limit");
    assertThat(errors.get(1)).startsWith("explain cannot be called from a southbound call");
  }

  /**
   * A device whose calls sometimes overrun the time limit: some finish late (the change lands in
   * the device after the engine gave up), some give up when interrupted (the change never lands).
   * Thread-safe: late calls run concurrently with later ones.
   */
  private static final class SlowDevice {
    final Map<String, String> state = new ConcurrentHashMap<>();
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger overruns = new AtomicInteger();
    volatile boolean slow = true;
    private final SplittableRandom rnd;

    SlowDevice(long seed) {
      this.rnd = new SplittableRandom(seed);
    }

    private synchronized SplittableRandom split() {
      return rnd.split();
    }

    /** Runs {@code change}, first overrunning the limit now and then. */
    void call(Runnable change) throws InterruptedException {
      SplittableRandom r = split();
      inFlight.incrementAndGet();
      try {
        if (slow && r.nextInt(100) < 15) {
          overruns.incrementAndGet();
          long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(40 + r.nextInt(40));
          boolean stubborn = r.nextBoolean();
          while (System.nanoTime() < until) {
            try {
              Thread.sleep(5);
            } catch (InterruptedException e) {
              if (!stubborn) {
                throw e; // gives up: the change never lands
              }
            }
          }
        }
        change.run();
      } finally {
        inFlight.decrementAndGet();
      }
    }

    KVDescriptor<String, Void> descriptor() {
      return KVDescriptor.builder("device", String.class)
          .nbKeyPrefix("/d/")
          .create(
              (key, value) -> {
                call(() -> state.put(key, value));
                return null;
              })
          .update(
              (key, before, after, meta) -> {
                call(() -> state.put(key, after));
                return null;
              })
          .delete((key, value, meta) -> call(() -> state.remove(key)))
          .retrieve(
              correlate -> {
                List<KVWithMetadata<String, Void>> out = new ArrayList<>();
                call(() -> state.forEach((k, v) -> out.add(KVWithMetadata.of(k, v))));
                return out;
              })
          .build();
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {7, 2024, 1, 3})
  @DisplayName(
      "(ours) random transactions against a device whose calls overrun the timeout now and then: once it is prompt again, a downstream resync makes it equal the desired state")
  void convergesAfterOverruns(long seed) throws Exception {
    SlowDevice device = new SlowDevice(seed);
    env = SchedulerFixture.create(b -> b.operationTimeout(Duration.ofMillis(20)));
    kvs = env.kvs();
    kvs.registerDescriptors(device.descriptor());
    SplittableRandom rnd = new SplittableRandom(seed);
    Map<String, String> desired = new TreeMap<>();
    int failedTxns = 0;
    try {
      for (int step = 0; step < 120; step++) {
        var txn = kvs.startNBTransaction();
        int changes = 1 + rnd.nextInt(3);
        for (int c = 0; c < changes; c++) {
          String key = "/d/k" + rnd.nextInt(12);
          String value = rnd.nextInt(4) == 0 ? null : "v" + rnd.nextInt(3);
          txn.setValue(key, value);
          if (value == null) {
            desired.remove(key);
          } else {
            desired.put(key, value);
          }
        }
        TxnOptions options =
            rnd.nextBoolean()
                ? TxnOptions.defaults()
                : TxnOptions.builder()
                    .retry(new RetryOptions(Duration.ofSeconds(1), 2, false))
                    .build();
        try {
          txn.commit(options);
        } catch (TransactionException e) {
          failedTxns++;
          assertThat(e.keyErrors()).allSatisfy(k -> assertThat(k.message()).isNotEmpty());
        }
        if (rnd.nextInt(5) == 0) {
          env.timers().advance(Duration.ofSeconds(1 + rnd.nextInt(4))); // retries run
          kvs.transactionBarrier();
        }
      }
      // the device becomes prompt; late calls finish; pending retries run out
      device.slow = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (device.inFlight.get() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(device.inFlight.get()).isZero();
      for (int i = 0; i < 6; i++) {
        env.timers().advance(Duration.ofSeconds(10));
        kvs.transactionBarrier();
      }
      try {
        env.commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
      } catch (TransactionException e) {
        fail("seed " + seed + ": the final downstream resync failed: " + e.getMessage());
      }
      assertThat(device.overruns.get()).as("seed %d: overruns", seed).isPositive();
      assertThat(failedTxns).as("seed %d: failed transactions", seed).isPositive();
      assertThat(new TreeMap<>(device.state)).as("seed %d: device", seed).isEqualTo(desired);
      for (String key : desired.keySet()) {
        assertThat(kvs.valueStatus(key).value().state())
            .as("seed %d: %s", seed, key)
            .isEqualTo(CONFIGURED);
      }
    } catch (AssertionError e) {
      throw new AssertionError("seed " + seed + ": " + e.getMessage(), e);
    }
  }

  @Test
  @DisplayName("(ours) an operation timeout must be positive")
  void timeoutMustBePositive() {
    assertThatThrownBy(() -> KVScheduler.builder().operationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("operationTimeout must be positive, got PT0S");
    assertThatThrownBy(
            () -> KVDescriptor.builder("d", Object.class).operationTimeout(Duration.ofMillis(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("operationTimeout must be positive, got PT-0.005S");
  }
}
