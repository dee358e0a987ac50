package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.DISCOVERED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.testkit.KVSchedulerAssertions.assertThat;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A southbound answer that comes after the operation timeout (D51): the call failed its value when
 * it overran, and when it returns at last its key is read again and settled in a transaction of its
 * own, recorded as a retry of the key. Time and retries run on a manual clock; only the time limit
 * is real (the engine waits for a call thread), and each hanging call is released by the test, so
 * every step happens in a fixed order.
 */
@Timeout(30)
class LateAnswerTest {
  /**
   * The time limit: long enough that a call that does not hang never overruns it on a busy machine;
   * each test waits for it once.
   */
  private static final Duration LIMIT = Duration.ofMillis(500);

  private static final String X = "/d/x";
  private static final String W = "/w/w";
  private static final String Z = "/d/z";
  private static final String Q = "/q/q";
  private static final RetryOptions RETRY = new RetryOptions(Duration.ofSeconds(1), 3, false);
  private static final String LATE_PREFIX = "a southbound call for /d/";

  /**
   * The device: what it holds for the keys of /d/ (read by Retrieve) and /w/ (no Retrieve), and
   * every call in order ({@code OP key value}; a call that hangs is listed when it starts).
   */
  private final Map<String, String> device = new ConcurrentHashMap<>();

  private final List<String> calls = new CopyOnWriteArrayList<>();

  /** The key whose next Create, Update or Delete hangs until {@link #release}, or null. */
  private volatile String hangOn;

  /** Whether the hanging call, once released, does what it was asked (else it gives up). */
  private volatile boolean lands = true;

  /** Whether Retrieve fails. */
  private volatile boolean retrieveFails;

  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger lateReturns = new AtomicInteger();

  private SchedulerFixture env;
  private ManualClock clock;
  private ManualDelayScheduler timers;
  private KVScheduler kvs;

  @BeforeEach
  void setUp() {
    env = SchedulerFixture.create(b -> b.operationTimeout(LIMIT));
    clock = env.clock();
    timers = env.timers();
    kvs = env.kvs();
    kvs.registerDescriptors(
        KVDescriptor.builder("device", String.class)
            .nbKeyPrefix("/d/")
            .dependencies((k, v) -> k.equals(Z) ? List.of(Dependency.onKey("q", Q)) : List.of())
            .create(
                (key, value) -> {
                  call("CREATE", key, value, () -> device.put(key, value));
                  return null;
                })
            .update(
                (key, before, after, meta) -> {
                  call("UPDATE", key, after, () -> device.put(key, after));
                  return null;
                })
            .delete((key, value, meta) -> call("DELETE", key, value, () -> device.remove(key)))
            .retrieve(
                correlate -> {
                  if (retrieveFails) {
                    throw new IllegalStateException("device busy");
                  }
                  List<KVWithMetadata<String, Void>> out = new ArrayList<>();
                  device.forEach(
                      (k, v) -> {
                        if (k.startsWith("/d/")) {
                          out.add(KVWithMetadata.of(k, v));
                        }
                      });
                  return out;
                })
            .build(),
        KVDescriptor.builder("waiting", String.class)
            .nbKeyPrefix("/w/")
            .dependencies((k, v) -> List.of(Dependency.onKey("x", X)))
            .create(
                (key, value) -> {
                  call("CREATE", key, value, () -> device.put(key, value));
                  return null;
                })
            .delete((key, value, meta) -> call("DELETE", key, value, () -> device.remove(key)))
            .build(),
        KVDescriptor.builder("plain", String.class)
            .nbKeyPrefix("/q/")
            .create(
                (key, value) -> {
                  call("CREATE", key, value, () -> device.put(key, value));
                  return null;
                })
            .delete((key, value, meta) -> call("DELETE", key, value, () -> device.remove(key)))
            .build());
  }

  @AfterEach
  void tearDown() {
    release.countDown();
    env.close();
  }

  /**
   * One device call: listed, then hanging when planned, then {@code change} (unless it gives up).
   */
  private void call(String op, String key, String value, Runnable change) {
    calls.add(op + " " + key + (value == null ? "" : " " + value));
    if (key.equals(hangOn)) {
      hangOn = null;
      awaitRelease();
      lateReturns.incrementAndGet();
      if (!lands) {
        throw new IllegalStateException("gave up");
      }
    }
    change.run();
  }

  /** Blocks until {@link #release}, ignoring the interrupt of the abandoned call. */
  private void awaitRelease() {
    boolean interrupted = false;
    while (true) {
      try {
        release.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Commits {@code key = value} with its call hanging: the transaction fails. */
  private void commitHanging(TxnOptions o, String key, String value) {
    hangOn = key;
    assertThrows(TransactionException.class, () -> env.commit(o, key, value));
  }

  /**
   * Lets the hanging call return and waits for the transaction that settles its late answer (the
   * last of the history then).
   */
  private RecordedTxn releaseAndSettle() throws InterruptedException {
    int recorded = kvs.transactionHistory().size();
    release.countDown();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      kvs.transactionBarrier();
      List<RecordedTxn> h = kvs.transactionHistory();
      if (lateReturns.get() == 1 && h.size() > recorded) {
        assertThat(h).hasSize(recorded + 1);
        RecordedTxn late = h.get(h.size() - 1);
        assertThat(late.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
        assertThat(late.description()).startsWith(LATE_PREFIX);
        return late;
      }
      Thread.sleep(5);
    }
    throw new AssertionError("the late answer was not settled within 10 s");
  }

  private Map<String, String> deviceNow() {
    return new TreeMap<>(device);
  }

  @Test
  @DisplayName(
      "a Create that returns after its time limit, having created the object: CONFIGURED at once,"
          + " no further call")
  void lateCreateSettles() throws Exception {
    commitHanging(TxnOptions.defaults(), X, "v1");
    assertThat(kvs).value(X).hasState(FAILED);
    assertThat(device).isEmpty();

    RecordedTxn late = releaseAndSettle();
    assertThat(calls).containsExactly("CREATE " + X + " v1");
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v1"));
    assertThat(kvs).value(X).hasState(CONFIGURED);
    assertThat(kvs).value(X).hasNoError();
    assertThat(late.retryForTxn()).isEqualTo(0);
    assertThat(late.values()).singleElement().satisfies(v -> assertThat(v.key()).isEqualTo(X));
    TxnAssert.assertThat(late)
        .executed(op(UPDATE, X).states(FAILED, CONFIGURED).flags("NOOP", "RETRY"));
    assertThat(timers.pending()).isEmpty();
  }

  @Test
  @DisplayName(
      "a RETRYING Create settled by its late answer: its retry, when it fires, calls nothing")
  void lateCreateMakesTheRetryObsolete() throws Exception {
    commitHanging(TxnOptions.builder().retry(RETRY).build(), X, "v1");
    assertThat(kvs).value(X).hasState(RETRYING);
    assertThat(timers.pending()).hasSize(1);

    RecordedTxn late = releaseAndSettle();
    TxnAssert.assertThat(late)
        .executed(op(UPDATE, X).states(RETRYING, CONFIGURED).flags("NOOP", "RETRY"));
    assertThat(kvs).value(X).hasState(CONFIGURED);

    timers.advance(Duration.ofSeconds(1));
    kvs.transactionBarrier();
    List<RecordedTxn> h = kvs.transactionHistory();
    TxnAssert.assertThat(h.get(h.size() - 1)).executedNothing();
    assertThat(h.get(h.size() - 1).seqNum()).isEqualTo(late.seqNum() + 1);
    assertThat(calls).containsExactly("CREATE " + X + " v1");
    assertThat(kvs).value(X).hasState(CONFIGURED);
    assertThat(timers.pending()).isEmpty();
  }

  @Test
  @DisplayName("an Update that returns after its time limit, having updated the object: CONFIGURED")
  void lateUpdateSettles() throws Exception {
    env.commit(X, "v1");
    commitHanging(TxnOptions.defaults(), X, "v2");
    assertThat(kvs).value(X).hasState(FAILED);
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v1"));

    RecordedTxn late = releaseAndSettle();
    assertThat(calls).containsExactly("CREATE " + X + " v1", "UPDATE " + X + " v2");
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v2"));
    TxnAssert.assertThat(late)
        .executed(op(UPDATE, X).states(FAILED, CONFIGURED).flags("NOOP", "RETRY"));
    assertThat(kvs).value(X).isExactly(CONFIGURED, UPDATE, "");
  }

  @Test
  @DisplayName(
      "a Delete that returns after its time limit, having deleted the object: the value is"
          + " removed and its dependent, let go ahead when the object was still found, is taken"
          + " down again")
  void lateDeleteSettlesAndTakesTheDependentDown() throws Exception {
    env.commit(X, "v1");
    env.commit(W, "w1");
    assertThat(kvs).value(W).hasState(CONFIGURED);
    commitHanging(TxnOptions.defaults(), X, null);
    // the refresh after the failure still found X: its dependent went ahead again (D49)
    assertThat(kvs).value(X).hasState(FAILED);
    assertThat(kvs).value(W).hasState(CONFIGURED);
    assertThat(calls).endsWith("DELETE " + W + " w1", "DELETE " + X + " v1", "CREATE " + W + " w1");

    RecordedTxn late = releaseAndSettle();
    assertThat(calls)
        .containsExactly(
            "CREATE " + X + " v1",
            "CREATE " + W + " w1",
            "DELETE " + W + " w1",
            "DELETE " + X + " v1",
            "CREATE " + W + " w1",
            "DELETE " + W + " w1");
    assertThat(device).isEmpty();
    TxnAssert.assertThat(late)
        .executed(
            op(DELETE, W).states(CONFIGURED, PENDING).flags("RETRY"),
            op(DELETE, X).states(FAILED, REMOVED).flags("NOOP", "RETRY"));
    assertThat(kvs).value(X).hasState(NONEXISTENT);
    assertThat(kvs).value(W).isExactly(PENDING, DELETE, "", "x");
  }

  @Test
  @DisplayName(
      "a value waiting for a Create that returns after its time limit is created in the"
          + " transaction that settles it")
  void dependentGoesAheadWhenTheLateCreateSettles() throws Exception {
    env.commit(W, "w1");
    assertThat(kvs).value(W).hasState(PENDING);
    commitHanging(TxnOptions.defaults(), X, "v1");
    assertThat(kvs).value(W).isExactly(PENDING, CREATE, "", "x");

    RecordedTxn late = releaseAndSettle();
    assertThat(calls).containsExactly("CREATE " + X + " v1", "CREATE " + W + " w1");
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v1"), Map.entry(W, "w1"));
    TxnAssert.assertThat(late)
        .planned(
            op(UPDATE, X).states(FAILED, CONFIGURED).flags("NOOP", "RETRY"),
            op(CREATE, W).states(PENDING, CONFIGURED).flags("RETRY"))
        .executed(
            op(UPDATE, X).states(FAILED, CONFIGURED).flags("NOOP", "RETRY"),
            op(CREATE, W).states(PENDING, CONFIGURED).flags("RETRY"));
    assertThat(kvs).value(X).hasState(CONFIGURED);
    assertThat(kvs).value(W).hasState(CONFIGURED);
  }

  @Test
  @DisplayName(
      "a Create that returns after its time limit without creating anything: the value keeps"
          + " its status, RETRYING with its retry scheduled, which creates it")
  void lateCreateThatDidNothingLeavesTheRetry() throws Exception {
    lands = false;
    commitHanging(TxnOptions.builder().retry(RETRY).build(), X, "v1");
    assertThat(kvs).value(X).hasState(RETRYING);

    RecordedTxn late = releaseAndSettle();
    assertThat(late.values()).isEmpty();
    TxnAssert.assertThat(late).executedNothing();
    assertThat(kvs).value(X).hasState(RETRYING);
    assertThat(timers.pending()).hasSize(1);
    assertThat(device).isEmpty();

    timers.advance(Duration.ofSeconds(1));
    kvs.transactionBarrier();
    assertThat(calls).containsExactly("CREATE " + X + " v1", "CREATE " + X + " v1");
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v1"));
    assertThat(kvs).value(X).hasState(CONFIGURED);
  }

  @Test
  @DisplayName(
      "a Create that returns after its time limit without creating anything, no retry: FAILED"
          + " it stays, with its error, nothing scheduled")
  void lateCreateThatDidNothingStaysFailed() throws Exception {
    lands = false;
    commitHanging(TxnOptions.defaults(), X, "v1");
    String error = kvs.valueStatus(X).value().error();

    RecordedTxn late = releaseAndSettle();
    TxnAssert.assertThat(late).executedNothing();
    assertThat(kvs).value(X).isExactly(FAILED, CREATE, error);
    assertThat(timers.pending()).isEmpty();
    assertThat(calls).containsExactly("CREATE " + X + " v1");
  }

  @Test
  @DisplayName("an Update that lands after a newer one succeeded: the newer value is applied again")
  void olderUpdateLandingLateIsUndone() throws Exception {
    env.commit(X, "v1");
    commitHanging(TxnOptions.defaults(), X, "v2");
    env.commit(X, "v3"); // on another call thread while the first still hangs
    assertThat(kvs).value(X).hasState(CONFIGURED);
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v3"));

    RecordedTxn late = releaseAndSettle(); // v2 lands over v3
    assertThat(calls)
        .containsExactly(
            "CREATE " + X + " v1",
            "UPDATE " + X + " v2",
            "UPDATE " + X + " v3",
            "UPDATE " + X + " v3");
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v3"));
    TxnAssert.assertThat(late)
        .executed(
            op(UPDATE, X)
                .states(CONFIGURED, CONFIGURED)
                .prevValue("v2")
                .newValue("v3")
                .flags("RETRY"));
    assertThat(kvs).value(X).hasState(CONFIGURED);
  }

  @Test
  @DisplayName(
      "a Create that lands after its value was removed: the object nobody asks for is deleted")
  void createLandingAfterTheRemovalIsDeleted() throws Exception {
    commitHanging(TxnOptions.defaults(), X, "v1");
    env.commit(X, null); // nothing to delete, as far as the scheduler can tell
    assertThat(kvs).value(X).hasState(NONEXISTENT);

    RecordedTxn late = releaseAndSettle();
    assertThat(calls).containsExactly("CREATE " + X + " v1", "DELETE " + X + " v1");
    assertThat(device).isEmpty();
    TxnAssert.assertThat(late).executed(op(DELETE, X).states(DISCOVERED, REMOVED).flags("RETRY"));
    assertThat(kvs).value(X).hasState(NONEXISTENT);
  }

  @Test
  @DisplayName(
      "a Create that lands after what the value depends on was removed: the object is taken down"
          + " again, the value PENDING naming its dependency")
  void lateCreateWithoutItsDependencyIsTakenDown() throws Exception {
    env.commit(Q, "q1");
    commitHanging(TxnOptions.defaults(), Z, "z1");
    env.commit(Q, null); // Z, FAILED and not found, is not visited
    assertThat(kvs).value(Z).hasState(FAILED);

    RecordedTxn late = releaseAndSettle();
    assertThat(late.description())
        .isEqualTo("a southbound call for " + Z + " returned after its time limit: read again");
    assertThat(calls)
        .containsExactly(
            "CREATE " + Q + " q1",
            "CREATE " + Z + " z1",
            "DELETE " + Q + " q1",
            "DELETE " + Z + " z1");
    assertThat(device).isEmpty();
    TxnAssert.assertThat(late).executed(op(UPDATE, Z).states(FAILED, PENDING).flags("RETRY"));
    assertThat(kvs).value(Z).isExactly(PENDING, UPDATE, "", "q");
  }

  @Test
  @DisplayName(
      "a late answer whose key cannot be read again (Retrieve fails) settles nothing: the"
          + " value keeps its status")
  void lateAnswerUnreadSettlesNothing() throws Exception {
    commitHanging(TxnOptions.defaults(), X, "v1");
    String error = kvs.valueStatus(X).value().error();
    retrieveFails = true;

    RecordedTxn late = releaseAndSettle();
    assertThat(late.values()).isEmpty();
    TxnAssert.assertThat(late).executedNothing();
    assertThat(deviceNow()).containsExactly(Map.entry(X, "v1"));
    assertThat(kvs).value(X).isExactly(FAILED, CREATE, error);
    assertThat(calls).containsExactly("CREATE " + X + " v1");
  }
}
