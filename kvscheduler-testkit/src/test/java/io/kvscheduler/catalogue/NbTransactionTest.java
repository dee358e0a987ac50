package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UNDEFINED;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.api.ValueState.RETRYING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxn.RecordedValue;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.catalogue.CatalogueFixtures.StringValue;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.MockSouthbound.Entry;
import io.kvscheduler.testkit.OpSpec;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Catalogue §6 (B47–B67): NB transactions — commit and sequence numbers, option errors, the queue,
 * transaction content, ordering, create / update / delete. Unless said otherwise the tests use the
 * 3-descriptor setup of TestDataChangeTransactions (see {@link DataChangeTest}) with simulation on.
 */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
// the extension checks B64: the scheduler never made an inconsistent SB call
class NbTransactionTest {
  private MockSouthbound sb;
  private SchedulerFixture env;
  private KVScheduler kvs;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
    kvs = fx.kvs();
    CatalogueFixtures.registerDataChangeDescriptors(kvs, sb);
  }

  // ------------------------------------------------------------------ helpers

  private static final String D_PREFIX = "/prefixD/";
  private static final String D1 = "/prefixD/v1";
  private static final String D2 = "/prefixD/v2";
  private static final String D3 = "/prefixD/v3";
  private static final String D4 = "/prefixD/v4";
  private static final String D5 = "/prefixD/v5";
  private static final String D6 = "/prefixD/v6";
  private static final String MISSING = "/prefixD/zzz-missing";

  /** A value of descriptorD: payload plus the keys it depends on (label = key). */
  record DV(String v, List<String> deps) {
    static DV of(String v, String... deps) {
      return new DV(v, List.of(deps));
    }
  }

  /** descriptorD: selects /prefixD/, dependencies from the value, re-creates D2 on change. */
  private void registerDescriptorD() {
    kvs.registerDescriptors(
        sb.descriptor("descriptorD", DV.class)
            .nbKeyPrefix(D_PREFIX)
            .dependencies((key, v) -> v.deps().stream().map(k -> Dependency.onKey(k, k)).toList())
            .updateWithRecreate((key, o, n, m) -> key.equals(D2))
            .build());
  }

  private Txn txn(Object... kv) {
    Txn t = kvs.startNBTransaction();
    for (int i = 0; i < kv.length; i += 2) {
      t.setValue((String) kv[i], kv[i + 1]);
    }
    return t;
  }

  /** The two transactions of TestDataChangeTransactions. */
  private void dataChangeTxns() {
    assertThat(
            txn(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2))
                .commit(TxnOptions.builder().description("testing data change").build()))
        .isZero();
    assertThat(env.commit(C3, arr(1), A1, arr(1))).isEqualTo(1);
  }

  private static ValueStatus st(String key, ValueState state, TxnOperation op, String... details) {
    return new ValueStatus(key, state, "", op, List.of(details));
  }

  private static BaseValueStatus base(ValueStatus value, ValueStatus... derived) {
    return new BaseValueStatus(value, List.of(derived));
  }

  private static Entry nbEntry(String key, Object value, Object metadata, boolean derived) {
    return new Entry(key, value, metadata, ValueOrigin.FROM_NB, derived);
  }

  private static RecordedValue nbValue(String key, Object value) {
    return new RecordedValue(key, Optional.ofNullable(value), ValueOrigin.FROM_NB);
  }

  private Optional<Object> meta(String descriptor, String label) {
    return kvs.metadataMap(descriptor, Object.class).lookup(label);
  }

  private static void assertBoth(RecordedTxn txn, OpSpec... ops) {
    TxnAssert.assertThat(txn).executed(ops).planned(ops);
  }

  private static void awaitCondition(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.onSpinWait();
    }
  }

  // ------------------------------------------------------------------ B47 – B50

  @Test
  @DisplayName(
      "B47 every processed transaction (NB, SB notification, retry, empty) takes the next"
          + " sequence number from 0; a blocking commit returns it")
  void sequenceNumbers() {
    assertThat(env.commit(A1, arr(1))).isEqualTo(0);
    assertThat(env.commit(C3, arr(1))).isEqualTo(1);

    kvs.pushSBNotification(
        List.of(new KVWithMetadata<>(CatalogueFixtures.A4, arr(1), null, ValueOrigin.FROM_SB)));
    kvs.transactionBarrier();
    assertThat(env.txn(2).type()).isEqualTo(TxnType.SB_NOTIFICATION);

    sb.planError(CatalogueFixtures.A2, new RuntimeException("failed to create"));
    var failing = txn(CatalogueFixtures.A2, arr());
    assertThatThrownBy(
            () ->
                failing.commit(
                    TxnOptions.builder()
                        .retry(new RetryOptions(Duration.ofSeconds(1), 3, false))
                        .build()))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e -> {
              assertThat(e.seqNum()).isEqualTo(3);
            });
    assertThat(kvs.valueStatus(CatalogueFixtures.A2).state()).isEqualTo(RETRYING);
    env.timers().advance(Duration.ofSeconds(1));
    kvs.transactionBarrier();
    RecordedTxn retry = env.txn(4);
    assertThat(retry.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(retry.retryForTxn()).isEqualTo(3);
    assertThat(retry.retryAttempt()).isEqualTo(1);
    assertThat(kvs.valueStatus(CatalogueFixtures.A2).state()).isEqualTo(CONFIGURED);

    // a transaction that does nothing still consumes a number
    assertThat(env.commit()).isEqualTo(5);
    TxnAssert.assertThat(env.txn(5)).executedNothing();
    assertThat(env.commit(A1, arr(1))).isEqualTo(6); // equivalent: nothing to do
    assertThat(kvs.transactionHistory())
        .extracting(RecordedTxn::seqNum)
        .containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L);
    assertThat(kvs.transactionHistory())
        .extracting(RecordedTxn::type)
        .containsExactly(
            TxnType.NB_TRANSACTION,
            TxnType.NB_TRANSACTION,
            TxnType.SB_NOTIFICATION,
            TxnType.NB_TRANSACTION,
            TxnType.RETRY_FAILED_OPS,
            TxnType.NB_TRANSACTION,
            TxnType.NB_TRANSACTION);
  }

  @Test
  @DisplayName(
      "B48 invalid option combinations fail before queuing with an"
          + " IllegalArgumentException: no sequence number consumed, nothing recorded or called")
  void optionErrorsBeforeQueuing() {
    assertThatThrownBy(
            () ->
                txn(A1, arr(1)).commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("downstream resync combined with data changes in one transaction");
    for (ResyncType resync : List.of(ResyncType.FULL, ResyncType.UPSTREAM, ResyncType.DOWNSTREAM)) {
      assertThatThrownBy(
              () ->
                  kvs.startNBTransaction()
                      .commit(TxnOptions.builder().revert(true).resync(resync).build()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("it is not supported to combine resync with revert");
    }
    kvs.transactionBarrier();
    assertThat(kvs.transactionHistory()).isEmpty();
    assertThat(sb.callLog()).isEmpty();
    assertThat(env.commit(A1, arr(1))).isZero();
  }

  @Test
  @DisplayName(
      "B49 commitAsync returns at once with a future of the sequence number; the result"
          + " is seen through the future, watchers and the history")
  void commitAsyncReturnsAtOnce() throws Exception {
    List<BaseValueStatus> seen = Collections.synchronizedList(new ArrayList<>());
    kvs.watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_A), seen::add);
    CompletableFuture<Long> f = txn(A1, arr(1)).commitAsync(TxnOptions.defaults());
    assertThat(f.get(10, TimeUnit.SECONDS)).isZero();
    kvs.transactionBarrier();
    assertBoth(
        env.txn(0),
        op(CREATE, A1).states(NONEXISTENT, CONFIGURED),
        op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + d(A1, 1));
    assertThat(seen)
        .containsExactly(base(st(A1, CONFIGURED, CREATE), st(d(A1, 1), CONFIGURED, CREATE)));
  }

  @Test
  @DisplayName(
      "removing a key that never had a value changes no status: watchers get nothing for"
          + " it, only for the value the same transaction creates")
  void removalOfUnknownKeyNotifiesNoWatcher() {
    List<BaseValueStatus> seen = Collections.synchronizedList(new ArrayList<>());
    kvs.watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_A), seen::add);
    txn(A1, arr(), A2, null).commit();
    kvs.transactionBarrier();
    assertThat(seen).containsExactly(base(st(A1, CONFIGURED, CREATE)));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1);
  }

  @Test
  @DisplayName(
      "B49 FIFO queue: a full queue refuses tryCommitAsync and notifications with a"
          + " QueueFullException 'transaction queue is full'; commit and commitAsync wait for room")
  void queueFull() throws Exception {
    ManualClock clock = new ManualClock();
    KVScheduler small =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .queueCapacity(1)
            .build();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> created = Collections.synchronizedList(new ArrayList<>());
    try {
      small.registerDescriptors(blockingDescriptor(entered, release, created));
      small.transactionBarrier();
      TxnOptions none = TxnOptions.defaults();

      CompletableFuture<Long> first =
          small.startNBTransaction().setValue("/block/x1", s("1")).tryCommitAsync(none);
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue(); // the engine is busy with #0
      CompletableFuture<Long> second =
          small.startNBTransaction().setValue("/block/x2", s("2")).tryCommitAsync(none);
      assertThat(second).isNotDone(); // fills the queue
      Txn refused = small.startNBTransaction().setValue("/block/x3", s("3"));
      assertThatThrownBy(() -> refused.tryCommitAsync(none))
          .isInstanceOf(QueueFullException.class)
          .hasMessage("transaction queue is full");
      assertThatThrownBy(
              () ->
                  small.pushSBNotification(
                      List.of(
                          new KVWithMetadata<>("/block/sb", s("sb"), null, ValueOrigin.FROM_SB))))
          .isInstanceOf(QueueFullException.class)
          .hasMessage("transaction queue is full");

      AtomicLong blockingSeq = new AtomicLong(-2);
      AtomicReference<Throwable> blockingErr = new AtomicReference<>();
      Thread blocking =
          capturing(
              () ->
                  blockingSeq.set(
                      small.startNBTransaction().setValue("/block/x4", s("4")).commit()),
              blockingErr);
      blocking.start();
      awaitCondition(
          () -> blocking.getState() == Thread.State.WAITING,
          "the blocking commit waits for room in the queue");
      assertThat(created).containsExactly("/block/x1");

      release.countDown();
      blocking.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(blocking.isAlive()).isFalse();
      assertThat(blockingErr.get()).isNull();
      assertThat(blockingSeq.get()).isEqualTo(2);
      assertThat(first.get(10, TimeUnit.SECONDS)).isZero();
      assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(1);
      small.transactionBarrier();
      assertThat(created).containsExactly("/block/x1", "/block/x2", "/block/x4");
      assertThat(small.transactionHistory())
          .extracting(RecordedTxn::seqNum)
          .containsExactly(0L, 1L, 2L);
      assertThat(small.transactionHistory())
          .extracting(t -> t.values().get(0).key())
          .containsExactly("/block/x1", "/block/x2", "/block/x4");
    } finally {
      release.countDown();
      small.close();
    }
  }

  /**
   * Descriptor "blocking" over /block/: every Create is listed in {@code created}; the Create of
   * /block/x1 counts {@code entered} down, then waits for {@code release}.
   */
  private static KVDescriptor<StringValue, Void> blockingDescriptor(
      CountDownLatch entered, CountDownLatch release, List<String> created) {
    return KVDescriptor.builder("blocking", StringValue.class)
        .nbKeyPrefix("/block/")
        .create(
            (key, v) -> {
              created.add(key);
              if (key.equals("/block/x1")) {
                entered.countDown();
                release.await();
              }
              return null;
            })
        .delete((key, v, m) -> {})
        .build();
  }

  /** A scheduler with only {@link #blockingDescriptor}, registered. */
  private static KVScheduler blockingScheduler(
      int capacity,
      String threadName,
      CountDownLatch entered,
      CountDownLatch release,
      List<String> created) {
    KVScheduler k =
        KVScheduler.builder()
            .queueCapacity(capacity)
            .threadName(threadName)
            .printTxnSummary(false)
            .build();
    k.registerDescriptors(blockingDescriptor(entered, release, created));
    k.transactionBarrier();
    return k;
  }

  /** A thread (not started) running {@code body}; what it throws goes to {@code err}. */
  private static Thread capturing(Runnable body, AtomicReference<Throwable> err) {
    return new Thread(
        () -> {
          try {
            body.run();
          } catch (Throwable t) {
            err.set(t);
          }
        });
  }

  private static boolean threadAlive(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(name) && t.isAlive());
  }

  @Test
  @Timeout(60) // a regression blocks a caller for good: fail instead
  @DisplayName(
      "B49 (ours) commitAsync does not wait for the transaction, only, while the queue"
          + " is full, for room in it: nothing committed that way is lost")
  void commitAsyncWaitsOnlyForRoom() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> created = Collections.synchronizedList(new ArrayList<>());
    KVScheduler small = blockingScheduler(1, "kvs-async-full", entered, release, created);
    try {
      var first =
          small
              .startNBTransaction()
              .setValue("/block/x1", s("1"))
              .commitAsync(TxnOptions.defaults());
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue(); // the engine is busy with #0
      var second =
          small
              .startNBTransaction()
              .setValue("/block/x2", s("2"))
              .commitAsync(TxnOptions.defaults()); // fills the queue, returns at once
      assertThat(second).isNotDone();
      AtomicReference<CompletableFuture<Long>> third = new AtomicReference<>();
      Thread committer =
          new Thread(
              () ->
                  third.set(
                      small
                          .startNBTransaction()
                          .setValue("/block/x3", s("3"))
                          .commitAsync(TxnOptions.defaults())));
      committer.start();
      awaitCondition(
          () -> committer.getState() == Thread.State.WAITING,
          "the asynchronous commit waits for room in the queue");
      assertThat(third.get()).isNull();
      release.countDown();
      committer.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(0);
      assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(1);
      assertThat(third.get().get(10, TimeUnit.SECONDS)).isEqualTo(2);
      assertThat(created).containsExactly("/block/x1", "/block/x2", "/block/x3");
    } finally {
      release.countDown();
      small.close();
    }
  }

  @Test
  @Timeout(60) // a regression blocks a caller for good: fail instead
  @DisplayName(
      "B49 (ours) close finishes the transaction being processed without interrupting"
          + " its southbound call, fails every queued transaction and request and every caller"
          + " waiting for room with 'scheduler was closed', applies none of them, and stops the"
          + " engine thread")
  void closeFailsWhatIsQueued() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> created = Collections.synchronizedList(new ArrayList<>());
    String name = "kvs-close-queued";
    KVScheduler small = blockingScheduler(2, name, entered, release, created);
    try {
      closeFailsWhatIsQueued(small, name, entered, release, created);
    } finally {
      release.countDown();
      small.close();
    }
  }

  private static void closeFailsWhatIsQueued(
      KVScheduler small,
      String name,
      CountDownLatch entered,
      CountDownLatch release,
      List<String> created)
      throws Exception {
    var running =
        small.startNBTransaction().setValue("/block/x1", s("1")).commitAsync(TxnOptions.defaults());
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    var queued =
        small.startNBTransaction().setValue("/block/x2", s("2")).commitAsync(TxnOptions.defaults());
    AtomicReference<Throwable> barrierErr = new AtomicReference<>();
    // a request queued behind x2: the queue is then full
    Thread barrier = capturing(small::transactionBarrier, barrierErr);
    barrier.start();
    AtomicReference<Throwable> waitingErr = new AtomicReference<>();
    Thread waiting =
        capturing(
            () -> small.startNBTransaction().setValue("/block/x3", s("3")).commit(), waitingErr);
    awaitCondition(
        () ->
            barrier.getState() == Thread.State.WAITING
                || barrier.getState() == Thread.State.TIMED_WAITING,
        "the barrier is queued");
    waiting.start();
    awaitCondition(
        () -> waiting.getState() == Thread.State.WAITING,
        "the blocking commit waits for room in the queue");

    Thread closer = new Thread(small::close);
    closer.start();
    awaitCondition(() -> queued.isDone(), "close fails the queued transaction at once");
    assertThatThrownBy(queued::join)
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("scheduler was closed");
    barrier.join(TimeUnit.SECONDS.toMillis(10));
    waiting.join(TimeUnit.SECONDS.toMillis(10));
    assertThat(barrierErr.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler was closed");
    assertThat(waitingErr.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler was closed");
    assertThat(running).isNotDone(); // close waits for it, and does not interrupt it

    release.countDown();
    assertThat(running.get(10, TimeUnit.SECONDS)).isEqualTo(0);
    closer.join(TimeUnit.SECONDS.toMillis(5)); // well before close's 10 s limit
    assertThat(closer.isAlive()).isFalse();
    assertThat(created).containsExactly("/block/x1");
    assertThat(small.valueStatus("/block/x1").state()).isEqualTo(CONFIGURED);
    assertThat(threadAlive(name)).as("engine thread").isFalse();
  }

  @Test
  @Timeout(60) // a regression blocks a caller for good: fail instead
  @DisplayName(
      "B49 (ours) close called from a descriptor callback returns at once; the engine"
          + " finishes that transaction, fails what is queued and stops")
  void closeFromACallback() throws Exception {
    String name = "kvs-close-inside";
    KVScheduler k = KVScheduler.builder().threadName(name).printTxnSummary(false).build();
    List<String> created = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch closing = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    AtomicLong closeMillis = new AtomicLong(-1);
    k.registerDescriptors(
        KVDescriptor.builder("closing", StringValue.class)
            .nbKeyPrefix("/c/")
            .create(
                (key, v) -> {
                  created.add(key);
                  if (key.equals("/c/a")) {
                    closing.countDown();
                    proceed.await();
                    long t0 = System.nanoTime();
                    k.close();
                    closeMillis.set(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                  }
                  return null;
                })
            .delete((key, v, m) -> {})
            .build());
    var first =
        k.startNBTransaction()
            .setValue("/c/a", s("a"))
            .setValue("/c/b", s("b"))
            .commitAsync(TxnOptions.defaults());
    assertThat(closing.await(10, TimeUnit.SECONDS)).isTrue();
    var queued = k.startNBTransaction().setValue("/c/q", s("q")).commitAsync(TxnOptions.defaults());
    proceed.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(0);
    assertThatThrownBy(() -> queued.get(10, TimeUnit.SECONDS))
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasMessageContaining("scheduler was closed");
    assertThat(closeMillis.get()).isBetween(0L, 5_000L); // no join of the engine by itself
    assertThat(created).containsExactly("/c/a", "/c/b");
    awaitCondition(() -> !threadAlive(name), "the engine thread stops");
  }

  @Test
  @DisplayName(
      "B49 (ours: interrupting the waiting caller) a cancelled wait fails with 'waiting"
          + " for result of blocking transaction was canceled' but the transaction still runs")
  void cancelledWait() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    kvs.registerDescriptors(
        blockingDescriptor(entered, release, Collections.synchronizedList(new ArrayList<>())));
    try {
      kvs.startNBTransaction().setValue("/block/x1", s("1")).commitAsync(TxnOptions.defaults());
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      AtomicReference<Throwable> err = new AtomicReference<>();
      Thread waiter =
          capturing(() -> kvs.startNBTransaction().setValue("/block/x2", s("2")).commit(), err);
      waiter.start();
      awaitCondition(
          () -> waiter.getState() == Thread.State.WAITING, "the caller waits for the result");
      waiter.interrupt();
      waiter.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(err.get())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("waiting for result of blocking transaction was canceled");
    } finally {
      release.countDown();
    }
    kvs.transactionBarrier();
    assertThat(env.txn(1).values())
        .containsExactly(new RecordedValue("/block/x2", Optional.of(s("2")), ValueOrigin.FROM_NB));
    assertThat(kvs.valueStatus("/block/x2").state()).isEqualTo(CONFIGURED);
  }

  @Test
  @DisplayName("B49 after close a commit or a notification fails with 'scheduler was closed'")
  void commitAfterClose() {
    Txn pending = txn(A1, arr(1));
    env.close();
    assertThatThrownBy(pending::commit)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler was closed");
    assertThatThrownBy(() -> txn(B2, arr(1)).commitAsync(TxnOptions.defaults()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler was closed");
    assertThatThrownBy(() -> txn(B2, arr(1)).tryCommitAsync(TxnOptions.defaults()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler was closed");
    assertThatThrownBy(
            () ->
                kvs.pushSBNotification(
                    List.of(new KVWithMetadata<>(A1, arr(1), null, ValueOrigin.FROM_SB))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("scheduler was closed");
    assertThat(sb.callLog()).isEmpty();
  }

  @Test
  @DisplayName(
      "B49 a commitAsync issued inside a descriptor callback is queued (no deadlock),"
          + " runs right after the current transaction, and its future then completes; a waiting"
          + " commit there fails at once")
  void commitFromCallback() throws Exception {
    String f1 = "/prefixF/f1";
    String f2 = "/prefixF/f2";
    List<String> calls = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<CompletableFuture<Long>> nested = new AtomicReference<>();
    AtomicReference<Throwable> waiting = new AtomicReference<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("descriptorF", StringValue.class)
            .nbKeyPrefix("/prefixF/")
            .create(
                (key, v) -> {
                  calls.add("CREATE " + key);
                  if (key.equals(f1)) {
                    Txn txn = kvs.startNBTransaction().setValue(f2, s("from-callback"));
                    try {
                      txn.commit();
                    } catch (IllegalStateException e) {
                      waiting.set(e);
                    }
                    nested.set(txn.commitAsync(TxnOptions.defaults()));
                    assertThat(nested.get()).isNotDone();
                  }
                  return null;
                })
            .delete((key, v, m) -> calls.add("DELETE " + key))
            .build());
    assertThat(env.commit(f1, s("x"))).isZero();
    assertThat(nested.get().get(10, TimeUnit.SECONDS)).isEqualTo(1);
    assertThat(waiting.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("use commitAsync()");
    kvs.transactionBarrier();
    assertThat(calls).containsExactly("CREATE " + f1, "CREATE " + f2);
    assertBoth(env.txn(0), op(CREATE, f1).states(NONEXISTENT, CONFIGURED));
    assertBoth(
        env.txn(1), op(CREATE, f2).states(NONEXISTENT, CONFIGURED).newValue(s("from-callback")));
    assertThat(env.txn(1).type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(kvs.valueStatus(f2).value()).isEqualTo(st(f2, CONFIGURED, CREATE));
  }

  @Test
  @DisplayName(
      "B50 setting a key twice keeps the last value; a null value requests deletion;"
          + " a committed transaction cannot be reused")
  void transactionContent() {
    Txn t = kvs.startNBTransaction().setValue(A1, arr(1)).setValue(A1, arr(2));
    assertThat(t.commit()).isZero();
    assertThat(env.txn(0).values()).containsExactly(nbValue(A1, arr(2)));
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + d(A1, 2));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(arr(2));
    assertThatThrownBy(() -> t.setValue(B2, arr(1))).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(t::commit).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> kvs.startNBTransaction().setValue("", arr(1)))
        .isInstanceOf(IllegalArgumentException.class);

    sb.clearCalls();
    assertThat(kvs.startNBTransaction().setValue(A1, arr(1)).setValue(A1, null).commit())
        .isEqualTo(1);
    assertThat(env.txn(1).values()).containsExactly(nbValue(A1, null));
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 2), "DELETE " + A1);
    assertThat(sb.keys()).isEmpty();
  }

  // ------------------------------------------------------------------ B51 – B56

  @Test
  @DisplayName(
      "B51 processing order: deletions, re-creations, creations (incl. pending values),"
          + " in-place updates; by key within each class")
  void planningOrderAllFourClasses() {
    registerDescriptorD();
    env.commit(D1, DV.of("a"), D2, DV.of("a"), D3, DV.of("a"), D4, DV.of("a", MISSING));
    assertThat(kvs.valueStatus(D4).value()).isEqualTo(st(D4, PENDING, CREATE, MISSING));
    sb.clearCalls();

    long seq = env.commit(D1, DV.of("b"), D2, DV.of("b"), D3, null, D4, DV.of("b"), D5, DV.of("a"));
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + D3,
            "DELETE " + D2,
            "CREATE " + D2,
            "CREATE " + D4,
            "CREATE " + D5,
            "UPDATE " + D1);
    assertBoth(
        env.txn(seq),
        op(DELETE, D3).states(CONFIGURED, REMOVED).prevValue(DV.of("a")).newValue(null),
        op(DELETE, D2)
            .states(CONFIGURED, REMOVED)
            .flags("RECREATE")
            .prevValue(DV.of("a"))
            .newValue(null),
        op(CREATE, D2)
            .states(REMOVED, CONFIGURED)
            .flags("RECREATE")
            .prevValue(null)
            .newValue(DV.of("b")),
        op(CREATE, D4)
            .states(PENDING, CONFIGURED)
            .prevValue(DV.of("a", MISSING))
            .newValue(DV.of("b")),
        op(CREATE, D5).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(DV.of("a")),
        op(UPDATE, D1).states(CONFIGURED, CONFIGURED).prevValue(DV.of("a")).newValue(DV.of("b")));
    // the recorded input values are sorted by key, not by processing order
    assertThat(env.txn(seq).values())
        .extracting(RecordedValue::key)
        .containsExactly(D1, D2, D3, D4, D5);
  }

  @Test
  @DisplayName(
      "B47 B52 B53 B54 B55 B56 full TestDataChangeTransactions sequence: SB content,"
          + " statuses, metadata maps and records after each of the two transactions")
  void dataChangeSequenceFull() {
    // the records' times are checked within each transaction (start before stop): the clock
    // moves 1 ms per reading, as asked here
    env.clock().tickOnEveryRead(Duration.ofMillis(1));
    // ---- 1st transaction
    Instant before0 = env.clock().peek();
    assertThat(
            txn(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2))
                .commit(TxnOptions.builder().description("testing data change").build()))
        .isZero();
    assertThat(sb.values().values())
        .containsExactly(
            nbEntry(A1, arr(2), 0, false),
            nbEntry(d(A1, 2), s("item2"), null, true),
            nbEntry(B2, arr(1, 2), 0, false),
            nbEntry(d(B2, 1), s("item1"), null, true),
            nbEntry(C3, arr(1, 2), 0, false),
            nbEntry(d(C3, 1), s("item1"), null, true),
            nbEntry(d(C3, 2), s("item2"), null, true));
    assertThat(kvs.valueStatuses())
        .containsExactly(
            base(st(A1, CONFIGURED, CREATE), st(d(A1, 2), CONFIGURED, CREATE)),
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), PENDING, CREATE, d(A1, 1))),
            base(
                st(C3, CONFIGURED, CREATE),
                st(d(C3, 1), CONFIGURED, CREATE),
                st(d(C3, 2), CONFIGURED, CREATE)));
    assertThat(meta("descriptor1", "base-value1")).contains(0);
    assertThat(meta("descriptor2", "base-value2")).contains(0);
    assertThat(meta("descriptor3", "base-value3")).contains(0);
    assertThat(kvs.metadataMap("descriptor1", Object.class).labels())
        .containsExactly("base-value1");
    RecordedTxn t0 = env.txn(0);
    assertThat(t0.type()).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(t0.resyncType()).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(t0.description()).isEqualTo("testing data change");
    assertThat(t0.withSimulation()).isTrue();
    assertThat(t0.retryForTxn()).isZero();
    assertThat(t0.retryAttempt()).isZero();
    assertThat(t0.start()).isAfterOrEqualTo(before0).isBefore(t0.stop());
    assertThat(t0.values())
        .containsExactly(nbValue(A1, arr(2)), nbValue(B2, arr(1, 2)), nbValue(C3, arr(1, 2)));
    assertBoth(
        t0,
        op(CREATE, A1).states(NONEXISTENT, CONFIGURED).prevValue(null).newValue(arr(2)),
        op(CREATE, d(A1, 2))
            .states(NONEXISTENT, CONFIGURED)
            .flags("DERIVED")
            .prevValue(null)
            .newValue(s("item2")),
        op(CREATE, B2).states(NONEXISTENT, CONFIGURED).newValue(arr(1, 2)),
        op(CREATE, d(B2, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED").newValue(s("item1")),
        op(CREATE, d(B2, 2))
            .states(NONEXISTENT, PENDING)
            .flags("DERIVED", "NOOP")
            .prevValue(null)
            .newValue(s("item2"))
            .error(""),
        op(CREATE, C3).states(NONEXISTENT, CONFIGURED).newValue(arr(1, 2)),
        op(CREATE, d(C3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
        op(CREATE, d(C3, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"));

    // ---- 2nd transaction
    sb.clearCalls();
    Instant before1 = env.clock().peek();
    assertThat(env.commit(C3, arr(1), A1, arr(1))).isEqualTo(1);
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(C3, 1),
            "DELETE " + d(C3, 2),
            "DELETE " + C3,
            "CREATE " + C3,
            "CREATE " + d(C3, 1),
            "DELETE " + d(A1, 2),
            "UPDATE " + A1,
            "CREATE " + d(A1, 1),
            "CREATE " + d(B2, 2));
    assertThat(sb.values().values())
        .containsExactly(
            nbEntry(A1, arr(1), 0, false),
            nbEntry(d(A1, 1), s("item1"), null, true),
            nbEntry(B2, arr(1, 2), 0, false),
            nbEntry(d(B2, 1), s("item1"), null, true),
            nbEntry(d(B2, 2), s("item2"), null, true),
            nbEntry(C3, arr(1), 1, false),
            nbEntry(d(C3, 1), s("item1"), null, true));
    assertThat(kvs.valueStatuses())
        .containsExactly(
            base(st(A1, CONFIGURED, UPDATE), st(d(A1, 1), CONFIGURED, CREATE)),
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), CONFIGURED, CREATE)),
            base(st(C3, CONFIGURED, UPDATE), st(d(C3, 1), CONFIGURED, CREATE)));
    assertThat(meta("descriptor1", "base-value1")).contains(0);
    assertThat(meta("descriptor2", "base-value2")).contains(0);
    assertThat(meta("descriptor3", "base-value3")).contains(1);
    RecordedTxn t1 = env.txn(1);
    assertThat(t1.description()).isEmpty();
    assertThat(t1.values()).containsExactly(nbValue(A1, arr(1)), nbValue(C3, arr(1)));
    assertBoth(
        t1,
        op(DELETE, d(C3, 1))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED", "RECREATE")
            .prevValue(s("item1"))
            .newValue(null),
        op(DELETE, d(C3, 2))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED", "RECREATE")
            .prevValue(s("item2"))
            .newValue(null),
        op(DELETE, C3)
            .states(CONFIGURED, REMOVED)
            .flags("RECREATE")
            .prevValue(arr(1, 2))
            .newValue(null),
        op(CREATE, C3)
            .states(REMOVED, CONFIGURED)
            .flags("RECREATE")
            .prevValue(null)
            .newValue(arr(1)),
        op(CREATE, d(C3, 1))
            .states(NONEXISTENT, CONFIGURED)
            .flags("DERIVED", "RECREATE")
            .prevValue(null)
            .newValue(s("item1")),
        op(DELETE, d(A1, 2))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED")
            .prevValue(s("item2"))
            .newValue(null),
        op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(2)).newValue(arr(1)),
        op(CREATE, d(A1, 1))
            .states(NONEXISTENT, CONFIGURED)
            .flags("DERIVED")
            .prevValue(null)
            .newValue(s("item1")),
        op(CREATE, d(B2, 2))
            .states(PENDING, CONFIGURED)
            .flags("DERIVED")
            .prevValue(s("item2"))
            .newValue(s("item2")));
    // the history window starting before the 2nd transaction holds only that one
    assertThat(kvs.transactionHistory(before1, Instant.MAX))
        .extracting(RecordedTxn::seqNum)
        .containsExactly(1L);
    assertThat(kvs.transactionHistory()).hasSize(2);
  }

  @Test
  @DisplayName(
      "B55 B87 re-adding a deleted dependency: each newly enabled pending value is"
          + " created right after what satisfied it, before the derived values; fresh metadata")
  void pendingCreatedWhenDependencyReappears() {
    dataChangeTxns();
    env.commit(A1, null);
    sb.clearCalls();
    long seq = env.commit(A1, arr(1));
    assertThat(sb.callLog())
        .containsExactly(
            "CREATE " + A1, "CREATE " + d(B2, 1), "CREATE " + d(A1, 1), "CREATE " + d(B2, 2));
    assertBoth(
        env.txn(seq),
        op(CREATE, A1).states(NONEXISTENT, CONFIGURED).newValue(arr(1)),
        op(CREATE, d(B2, 1))
            .states(PENDING, CONFIGURED)
            .flags("DERIVED")
            .prevValue(s("item1"))
            .newValue(s("item1")),
        op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
        op(CREATE, d(B2, 2))
            .states(PENDING, CONFIGURED)
            .flags("DERIVED")
            .prevValue(s("item2"))
            .newValue(s("item2")));
    assertThat(kvs.valueStatus(B2))
        .isEqualTo(
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), CONFIGURED, CREATE)));
    assertThat(meta("descriptor1", "base-value1")).contains(1);
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(1);
  }

  // ------------------------------------------------------------------ B57

  @Test
  @DisplayName(
      "B57 an equivalent value calls and records nothing and keeps the last operation; a"
          + " pending derived value that stays pending records nothing either (D63)")
  void noOpUpdate() {
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    sb.clearCalls();
    int pendingRevisions = kvs.keyTimeline(d(B2, 2)).size();
    long seq = env.commit(A1, arr(2), B2, arr(1, 2));
    assertThat(seq).isEqualTo(1);
    assertThat(sb.callLog()).isEmpty();
    // nothing is recorded (D63): the equivalent A1, A1/i2, B2, B2/i1 are untouched, and the
    // pending derived value B2/i2, re-attempted, stays pending with the same value: no call, no
    // change of value or state, so no operation (the reference records a CREATE [DERIVED NOOP]
    // PENDING -> PENDING, shown as STILL-PENDING)
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(env.txn(seq).planned()).isEmpty();
    assertThat(kvs.valueStatus(A1))
        .isEqualTo(base(st(A1, CONFIGURED, CREATE), st(d(A1, 2), CONFIGURED, CREATE)));
    // a pending derived value stays pending (no dependency appeared)
    assertThat(kvs.valueStatus(B2))
        .isEqualTo(
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), CONFIGURED, CREATE),
                st(d(B2, 2), PENDING, CREATE, d(A1, 1))));
    assertThat(kvs.valueStatus(C3))
        .isEqualTo(
            base(
                st(C3, CONFIGURED, CREATE),
                st(d(C3, 1), CONFIGURED, CREATE),
                st(d(C3, 2), CONFIGURED, CREATE)));
    assertThat(meta("descriptor1", "base-value1")).contains(0);
    // no operation, so no revision for the pending value either
    assertThat(kvs.keyTimeline(d(B2, 2))).hasSize(pendingRevisions);

    // an equivalent value alone: nothing planned, executed or called at all
    seq = env.commit(C3, arr(1, 2));
    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(env.txn(seq).planned()).isEmpty();
    assertThat(kvs.valueStatus(C3))
        .isEqualTo(
            base(
                st(C3, CONFIGURED, CREATE),
                st(d(C3, 1), CONFIGURED, CREATE),
                st(d(C3, 2), CONFIGURED, CREATE)));
    assertThat(meta("descriptor3", "base-value3")).contains(0);
  }

  // ------------------------------------------------------------------ B58 – B62, B66

  @Test
  @DisplayName(
      "B58 B66 deleting a base deletes its derived values first; afterwards the base is"
          + " NONEXISTENT/UNDEFINED, watchers saw it once as REMOVED")
  void deleteBaseWithDerived() {
    List<BaseValueStatus> seen = Collections.synchronizedList(new ArrayList<>());
    env.commit(A1, arr(1));
    kvs.watchValueStatus(KeySelector.prefix(CatalogueFixtures.PREFIX_A), seen::add);
    sb.clearCalls();
    long seq = env.commit(A1, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(A1, 1), "DELETE " + A1);
    assertBoth(
        env.txn(seq),
        op(DELETE, d(A1, 1))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED")
            .prevValue(s("item1"))
            .newValue(null),
        op(DELETE, A1).states(CONFIGURED, REMOVED).prevValue(arr(1)).newValue(null));
    assertThat(seen).hasSize(1);
    assertThat(seen.get(0).value()).isEqualTo(st(A1, REMOVED, DELETE));
    assertThat(kvs.valueStatus(A1))
        .isEqualTo(new BaseValueStatus(ValueStatus.nonexistent(A1), List.of()));
    assertThat(kvs.valueStatus(A1).value().lastOperation()).isEqualTo(UNDEFINED);
    assertThat(kvs.valueStatus(d(A1, 1)).state()).isEqualTo(NONEXISTENT);
    assertThat(kvs.valueStatuses()).isEmpty();
    assertThat(meta("descriptor1", "base-value1")).isEmpty();
    assertThat(sb.keys()).isEmpty();
  }

  @Test
  @DisplayName(
      "B58 B59 deleting a dependency: dependents are un-configured first (derived"
          + " subtree, then direct dependents, key order), become PENDING keeping their value;"
          + " the dependency's Delete comes last")
  void deleteDependencyUnconfiguresDependents() {
    dataChangeTxns();
    sb.clearCalls();
    long seq = env.commit(A1, null);
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(B2, 2), "DELETE " + d(A1, 1), "DELETE " + d(B2, 1), "DELETE " + A1);
    assertBoth(
        env.txn(seq),
        op(DELETE, d(B2, 2))
            .states(CONFIGURED, PENDING)
            .flags("DERIVED")
            .prevValue(s("item2"))
            .newValue(s("item2")),
        op(DELETE, d(A1, 1))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED")
            .prevValue(s("item1"))
            .newValue(null),
        op(DELETE, d(B2, 1))
            .states(CONFIGURED, PENDING)
            .flags("DERIVED")
            .prevValue(s("item1"))
            .newValue(s("item1")),
        op(DELETE, A1).states(CONFIGURED, REMOVED).prevValue(arr(1)).newValue(null));
    assertThat(kvs.valueStatus(B2))
        .isEqualTo(
            base(
                st(B2, CONFIGURED, CREATE),
                st(d(B2, 1), PENDING, DELETE, A1),
                st(d(B2, 2), PENDING, DELETE, d(A1, 1))));
    assertThat(kvs.valueStatus(A1).state()).isEqualTo(NONEXISTENT);
    assertThat(sb.keys()).containsExactly(B2, C3, d(C3, 1));
    assertThat(meta("descriptor1", "base-value1")).isEmpty();
    assertThat(meta("descriptor2", "base-value2")).contains(0);
  }

  @Test
  @DisplayName(
      "B60 (NB variant) deleting a dependency and its dependent in one transaction:"
          + " the pending-delete and the requested delete merge into one (CONFIGURED→REMOVED)")
  void deleteDependencyAndDependentTogether() {
    dataChangeTxns();
    sb.clearCalls();
    long seq = env.commit(B2, null, A1, null);
    assertThat(sb.callLog())
        .containsExactly(
            "DELETE " + d(B2, 2),
            "DELETE " + d(A1, 1),
            "DELETE " + d(B2, 1),
            "DELETE " + A1,
            "DELETE " + B2);
    assertBoth(
        env.txn(seq),
        op(DELETE, d(B2, 2))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED")
            .prevValue(s("item2"))
            .newValue(null),
        op(DELETE, d(A1, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
        op(DELETE, d(B2, 1))
            .states(CONFIGURED, REMOVED)
            .flags("DERIVED")
            .prevValue(s("item1"))
            .newValue(null),
        op(DELETE, A1).states(CONFIGURED, REMOVED),
        op(DELETE, B2).states(CONFIGURED, REMOVED).prevValue(arr(1, 2)).newValue(null));
    assertThat(kvs.valueStatuses()).extracting(BaseValueStatus::key).containsExactly(C3);
    assertThat(sb.keys()).containsExactly(C3, d(C3, 1));
  }

  @Test
  @DisplayName(
      "B61 deleting an unknown key records nothing and calls nothing (the transaction"
          + " still gets its number)")
  void deleteUnknownKey() {
    env.commit(A1, arr(1));
    sb.clearCalls();
    long seq = env.commit(CatalogueFixtures.A4, null, C3, null);
    assertThat(seq).isEqualTo(1);
    TxnAssert.assertThat(env.txn(seq)).executedNothing();
    assertThat(env.txn(seq).planned()).isEmpty();
    assertThat(sb.callLog()).isEmpty();
    assertThat(kvs.valueStatus(CatalogueFixtures.A4).state()).isEqualTo(NONEXISTENT);
    assertThat(kvs.valueStatuses()).extracting(BaseValueStatus::key).containsExactly(A1);
  }

  @Test
  @DisplayName(
      "B58 B62 deleting a base with a pending derived value: the pending one is a"
          + " bookkeeping-only DELETE {NOOP} (PENDING→REMOVED)")
  void deletePendingDerived() {
    env.commit(B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    sb.clearCalls();
    long seq = env.commit(B2, null);
    assertThat(sb.callLog()).containsExactly("DELETE " + d(B2, 1), "DELETE " + B2);
    assertBoth(
        env.txn(seq),
        op(DELETE, d(B2, 1)).states(CONFIGURED, REMOVED).flags("DERIVED"),
        op(DELETE, d(B2, 2))
            .states(PENDING, REMOVED)
            .flags("DERIVED", "NOOP")
            .prevValue(s("item2"))
            .newValue(null),
        op(DELETE, B2).states(CONFIGURED, REMOVED));
    assertThat(kvs.valueStatus(B2).state()).isEqualTo(NONEXISTENT);
    assertThat(meta("descriptor2", "base-value2")).isEmpty();
  }

  @Test
  @DisplayName(
      "B62 deleting an unavailable base value (PENDING, or FAILED after a failed Create)"
          + " records DELETE {NOOP} →REMOVED and calls nothing")
  void deleteUnavailableBase() {
    registerDescriptorD();
    env.commit(D4, DV.of("a", MISSING));
    sb.planError(D6, new RuntimeException("failed to create value"));
    assertThatThrownBy(() -> env.commit(D6, DV.of("x"))).isInstanceOf(TransactionException.class);
    assertThat(kvs.valueStatus(D6).value())
        .isEqualTo(new ValueStatus(D6, FAILED, "failed to create value", CREATE, List.of()));
    sb.clearCalls();

    long seq = env.commit(D4, null, D6, null);
    assertThat(sb.callLog()).isEmpty();
    assertBoth(
        env.txn(seq),
        op(DELETE, D4)
            .states(PENDING, REMOVED)
            .flags("NOOP")
            .prevValue(DV.of("a", MISSING))
            .newValue(null),
        op(DELETE, D6).states(FAILED, REMOVED).flags("NOOP").prevValue(DV.of("x")));
    assertThat(kvs.valueStatus(D4).state()).isEqualTo(NONEXISTENT);
    assertThat(kvs.valueStatus(D6).state()).isEqualTo(NONEXISTENT);
  }

  // ------------------------------------------------------------------ B63 – B65

  @Test
  @DisplayName(
      "B63 an update whose new dependencies are unmet deletes the old value (with the old"
          + " value) and keeps the new one PENDING; created once the dependency appears")
  void updateWithUnmetNewDependencies() {
    registerDescriptorD();
    env.commit(D1, DV.of("a"));
    sb.clearCalls();
    long seq = env.commit(D1, DV.of("b", D2));
    assertThat(sb.callLog()).containsExactly("DELETE " + D1);
    assertThat(sb.calls().get(0).value()).isEqualTo(DV.of("a"));
    assertBoth(
        env.txn(seq),
        op(UPDATE, D1).states(CONFIGURED, PENDING).prevValue(DV.of("a")).newValue(DV.of("b", D2)));
    assertThat(kvs.valueStatus(D1).value()).isEqualTo(st(D1, PENDING, UPDATE, D2));
    assertThat(kvs.dumpValues("descriptorD", View.NB))
        .extracting(KVWithMetadata::value)
        .containsExactly(DV.of("b", D2));
    assertThat(sb.keys()).isEmpty();

    sb.clearCalls();
    seq = env.commit(D2, DV.of("dep"));
    assertThat(sb.callLog()).containsExactly("CREATE " + D2, "CREATE " + D1);
    assertThat(sb.get(D1).orElseThrow().value()).isEqualTo(DV.of("b", D2));
    assertBoth(
        env.txn(seq),
        op(CREATE, D2).states(NONEXISTENT, CONFIGURED),
        op(CREATE, D1)
            .states(PENDING, CONFIGURED)
            .prevValue(DV.of("b", D2))
            .newValue(DV.of("b", D2)));
    assertThat(kvs.valueStatus(D1).value()).isEqualTo(st(D1, CONFIGURED, CREATE));
  }

  @Test
  @DisplayName(
      "B64 Update and Delete receive the very object last applied and the stored"
          + " metadata; nothing is called for keys outside the descriptor's selector")
  void callsConsistentWithSouthbound() {
    String g1 = "/prefixG/g1";
    List<String> problems = Collections.synchronizedList(new ArrayList<>());
    List<String> calls = Collections.synchronizedList(new ArrayList<>());
    AtomicReference<Object> applied = new AtomicReference<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("descriptorG", StringValue.class)
            .withMetadata(Integer.class)
            .nbKeyPrefix("/prefixG/")
            .create(
                (key, v) -> {
                  calls.add("CREATE " + key);
                  if (applied.get() != null) problems.add("create of existing " + key);
                  applied.set(v);
                  return 42;
                })
            .update(
                (key, o, n, m) -> {
                  calls.add("UPDATE " + key);
                  if (o != applied.get())
                    problems.add("update old value is not the applied object");
                  if (!Integer.valueOf(42).equals(m)) problems.add("update metadata " + m);
                  applied.set(n);
                  return 43;
                })
            .delete(
                (key, v, m) -> {
                  calls.add("DELETE " + key);
                  if (v != applied.get()) problems.add("delete value is not the applied object");
                  if (!Integer.valueOf(43).equals(m)) problems.add("delete metadata " + m);
                  applied.set(null);
                })
            .build());
    StringValue first = new StringValue("first");
    StringValue second = new StringValue("second");
    env.commit(g1, first);
    env.commit(g1, second);
    assertThat(kvs.metadataMap("descriptorG", Integer.class).lookup(g1)).contains(43);
    env.commit(g1, null);
    assertThat(calls).containsExactly("CREATE " + g1, "UPDATE " + g1, "DELETE " + g1);
    assertThat(problems).isEmpty();
    assertThat(kvs.metadataMap("descriptorG", Integer.class).lookup(g1)).isEmpty();
    // the other descriptors were never called
    assertThat(sb.callLog()).isEmpty();
  }

  @Test
  @DisplayName(
      "B65 invalid derived values are skipped: a nil derived value and a derived key"
          + " colliding with an existing base value (ours, D57: the collision fails the commit,"
          + " naming both keys)")
  void invalidDerivedValuesSkipped() {
    String e1 = "/prefixE/e1";
    kvs.registerDescriptors(
        sb.descriptor("descriptorE", StringValue.class)
            .nbKeyPrefix("/prefixE/")
            .derivedValues(
                (key, v) ->
                    List.of(
                        KeyValuePair.of(key + "/nil", null),
                        KeyValuePair.of(A1, s("collides")),
                        KeyValuePair.of(key + "/ok", s("ok"))))
            .build());
    env.commit(A1, arr(1));
    sb.clearCalls();
    TransactionException conflict =
        Assertions.assertThrows(TransactionException.class, () -> env.commit(e1, s("e")));
    assertThat(conflict.keyErrors())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.key()).isEqualTo(A1);
              assertThat(e.kind()).isEqualTo(KeyError.Kind.CONFLICT);
              assertThat(e.message()).contains(e1);
            });
    long seq = conflict.seqNum();
    assertThat(sb.callLog()).containsExactly("CREATE " + e1, "CREATE " + e1 + "/ok");
    assertBoth(
        env.txn(seq),
        op(CREATE, e1).states(NONEXISTENT, CONFIGURED),
        op(CREATE, e1 + "/ok").states(NONEXISTENT, CONFIGURED).flags("DERIVED").newValue(s("ok")));
    assertThat(kvs.valueStatus(e1))
        .isEqualTo(base(st(e1, CONFIGURED, CREATE), st(e1 + "/ok", CONFIGURED, CREATE)));
    assertThat(kvs.valueStatus(A1))
        .isEqualTo(base(st(A1, CONFIGURED, CREATE), st(d(A1, 1), CONFIGURED, CREATE)));
    assertThat(sb.get(A1).orElseThrow().value()).isEqualTo(arr(1));
    assertThat(kvs.valueStatus(e1 + "/nil").state()).isEqualTo(NONEXISTENT);
  }

  // ------------------------------------------------------------------ B67

  /** A mock interface. */
  record Iface(String name) {}

  /** A mock bridge domain listing its interfaces. */
  record Bd(String name, List<String> interfaces) {}

  /** A derived bridge-domain membership. */
  record Binding(String bd, String iface) {}

  @Test
  @DisplayName(
      "B67 scale smoke: one transaction with N=10 interfaces and a bridge domain"
          + " deriving one binding per interface (each depending on its interface)")
  void scaleSmoke() {
    int n = 10;
    kvs.registerDescriptors(
        sb.descriptor("iface", Iface.class).nbKeyPrefix("/if/").build(),
        sb.descriptor("bd", Bd.class)
            .nbKeyPrefix("/bd/")
            .keySelector(k -> k.startsWith("/bd/") && !k.contains("/interface/"))
            .derivedValues(
                (key, bd) ->
                    bd.interfaces().stream()
                        .map(
                            i ->
                                KeyValuePair.of(key + "/interface/" + i, new Binding(bd.name(), i)))
                        .toList())
            .build(),
        sb.descriptor("binding", Binding.class)
            .keySelector(k -> k.startsWith("/bd/") && k.contains("/interface/"))
            .baseKeys(k -> false)
            .dependencies((key, b) -> List.of(Dependency.onKey("interface", "/if/" + b.iface())))
            .build());
    Txn t = kvs.startNBTransaction();
    List<String> names = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      names.add("if" + i);
      t.setValue("/if/if" + i, new Iface("if" + i));
    }
    t.setValue("/bd/bd1", new Bd("bd1", names));
    long seq = t.commit();

    List<String> expectedCalls = new ArrayList<>(List.of("CREATE /bd/bd1"));
    List<OpSpec> expectedOps =
        new ArrayList<>(List.of(op(CREATE, "/bd/bd1").states(NONEXISTENT, CONFIGURED)));
    List<ValueStatus> bindings = new ArrayList<>();
    for (String i : names) {
      String binding = "/bd/bd1/interface/" + i;
      expectedCalls.add("CREATE /if/" + i);
      expectedCalls.add("CREATE " + binding);
      expectedOps.add(op(CREATE, "/if/" + i).states(NONEXISTENT, CONFIGURED));
      expectedOps.add(
          op(CREATE, binding)
              .states(NONEXISTENT, CONFIGURED)
              .flags("DERIVED")
              .prevValue(null)
              .newValue(new Binding("bd1", i)));
      bindings.add(st(binding, CONFIGURED, CREATE));
    }
    assertThat(sb.callLog()).containsExactlyElementsOf(expectedCalls);
    assertBoth(env.txn(seq), expectedOps.toArray(OpSpec[]::new));
    assertThat(kvs.valueStatus("/bd/bd1"))
        .isEqualTo(new BaseValueStatus(st("/bd/bd1", CONFIGURED, CREATE), bindings));
    assertThat(kvs.valueStatuses())
        .hasSize(n + 1)
        .allSatisfy(s -> assertThat(s.state()).isEqualTo(CONFIGURED));
    assertThat(sb.keys()).hasSize(2 * n + 1);
  }
}
