package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.tuple;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.OperationListener;
import io.kvscheduler.api.OperationListener.Call;
import io.kvscheduler.api.OperationListener.CallOutcome;
import io.kvscheduler.api.OperationListener.SouthboundCall;
import io.kvscheduler.api.OperationListener.TxnEnded;
import io.kvscheduler.api.OperationListener.TxnOutcome;
import io.kvscheduler.api.OperationListener.TxnStarted;
import io.kvscheduler.api.OperationTimeoutException;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The operation listener ({@link io.kvscheduler.api.KVSchedulerBuilder#operationListener}): told of
 * each transaction's start and end and of each southbound call with its key, descriptor, operation,
 * duration and outcome; guarded, so a listener that throws never breaks the engine; and a listener
 * or callback that waits for a transaction fails at once instead of waiting for ever.
 */
@Timeout(30) // a deadlock must fail the test, not hang the build
class OperationListenerTest {
  private static final String PREFIX = "config/things/";

  /** What the southbound holds. */
  private final Map<String, Object> southbound = new ConcurrentHashMap<>();

  /** Lets a hanging Create return. */
  private final CountDownLatch release = new CountDownLatch(1);

  private final List<Object> events = new CopyOnWriteArrayList<>();

  private KVScheduler kvs;

  @AfterEach
  void close() {
    release.countDown();
    if (kvs != null) {
      kvs.close();
    }
  }

  /** Records every event, in order. */
  private final OperationListener recorder =
      new OperationListener() {
        @Override
        public void transactionStarted(TxnStarted txn) {
          events.add(txn);
        }

        @Override
        public void transactionEnded(TxnEnded txn) {
          events.add(txn);
        }

        @Override
        public void southboundCall(SouthboundCall call) {
          events.add(call);
        }
      };

  /**
   * Values "bad" fail to be created; "hang" hangs until {@link #release} (ignoring interrupts),
   * overrunning the 100 ms limit.
   */
  private KVDescriptor<String, Void> things() {
    return KVDescriptor.builder("things", String.class)
        .nbKeyPrefix(PREFIX)
        .create(
            (key, value) -> {
              if (value.equals("bad")) {
                throw new IllegalStateException("no room for " + key);
              }
              if (value.equals("hang")) {
                release.await();
              }
              southbound.put(key, value);
              return null;
            })
        .delete((key, value, meta) -> southbound.remove(key))
        .retrieve(
            correlate -> {
              List<KVWithMetadata<String, Void>> found = new ArrayList<>();
              southbound.forEach((k, v) -> found.add(KVWithMetadata.fromNb(k, (String) v)));
              return found;
            })
        .operationTimeout(Duration.ofMillis(100))
        .build();
  }

  private static <T> List<T> only(List<Object> events, Class<T> type) {
    return events.stream().filter(type::isInstance).map(type::cast).toList();
  }

  @Test
  @DisplayName(
      "the listener sees each transaction start and end and each call with key, descriptor,"
          + " operation, outcome and duration, before commit() returns")
  void transactionsAndCalls() {
    kvs = KVScheduler.builder().printTxnSummary(false).operationListener(recorder).build();
    kvs.registerDescriptors(things());

    long seq = kvs.startNBTransaction().setValue(PREFIX + "a", "ok").commit();
    // seen before commit() returned: no waiting
    assertThat(events)
        .containsExactly(
            new TxnStarted(seq, TxnType.NB_TRANSACTION, ResyncType.NOT_RESYNC),
            events.get(1),
            events.get(2));
    SouthboundCall create = (SouthboundCall) events.get(1);
    assertThat(create.seqNum()).isEqualTo(seq);
    assertThat(create.descriptor()).isEqualTo("things");
    assertThat(create.call()).isEqualTo(Call.CREATE);
    assertThat(create.key()).isEqualTo(PREFIX + "a");
    assertThat(create.outcome()).isEqualTo(CallOutcome.OK);
    assertThat(create.error()).isNull();
    assertThat(create.duration()).isPositive();
    TxnEnded ended = (TxnEnded) events.get(2);
    assertThat(ended.seqNum()).isEqualTo(seq);
    assertThat(ended.outcome()).isEqualTo(TxnOutcome.OK);
    assertThat(ended.failedKeys()).isZero();
    assertThat(ended.duration()).isGreaterThanOrEqualTo(create.duration());

    // a downstream resync: its Retrieve comes between start and end
    long resync =
        kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    List<Object> mine = ofTxn(resync);
    assertThat(mine.get(0))
        .isEqualTo(new TxnStarted(resync, TxnType.NB_TRANSACTION, ResyncType.DOWNSTREAM));
    assertThat(only(mine, SouthboundCall.class))
        .extracting(SouthboundCall::call, SouthboundCall::descriptor)
        .contains(tuple(Call.RETRIEVE, "things"));
    assertThat(mine.get(mine.size() - 1)).isInstanceOf(TxnEnded.class);

    // a failing call and one that overruns its time limit (other transactions may follow it, a
    // retry among them: only this one's events are looked at; the hanging Create is released
    // only after the test, as its late return adds a transaction of its own)
    events.clear();
    TransactionException failure =
        catchThrowableOfType(
            TransactionException.class,
            () ->
                kvs.startNBTransaction()
                    .setValue(PREFIX + "b", "bad")
                    .setValue(PREFIX + "c", "hang")
                    .commit());
    mine = ofTxn(failure.seqNum());
    List<SouthboundCall> calls = only(mine, SouthboundCall.class);
    assertThat(calls)
        .filteredOn(c -> c.call() != Call.RETRIEVE)
        .extracting(SouthboundCall::key, SouthboundCall::outcome)
        .containsExactly(
            tuple(PREFIX + "b", CallOutcome.ERROR), tuple(PREFIX + "c", CallOutcome.TIMEOUT));
    assertThat(calls.get(0).error()).hasMessageContaining("no room for " + PREFIX + "b");
    assertThat(calls.get(1).error()).isInstanceOf(OperationTimeoutException.class);
    // the failed values were read again: Retrieve calls, without a key
    assertThat(calls)
        .filteredOn(c -> c.call() == Call.RETRIEVE)
        .isNotEmpty()
        .allSatisfy(c -> assertThat(c.key()).isNull());
    assertThat(mine.get(0)).isInstanceOf(TxnStarted.class);
    TxnEnded failed = (TxnEnded) mine.get(mine.size() - 1);
    assertThat(failed.outcome()).isEqualTo(TxnOutcome.FAILED);
    assertThat(failed.failedKeys()).isEqualTo(2);
  }

  /** The events of transaction {@code seq}, in order. */
  private List<Object> ofTxn(long seq) {
    return events.stream()
        .filter(
            e ->
                e instanceof TxnStarted s && s.seqNum() == seq
                    || e instanceof TxnEnded x && x.seqNum() == seq
                    || e instanceof SouthboundCall c && c.seqNum() == seq)
        .toList();
  }

  @Test
  @DisplayName(
      "a listener that throws from every method is logged once and never breaks the engine")
  void throwingListener() {
    Logger log = CatalogueFixtures.engineLogger("Observer");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    log.addAppender(appender);
    try {
      kvs =
          KVScheduler.builder()
              .printTxnSummary(false)
              .operationListener(
                  new OperationListener() {
                    @Override
                    public void transactionStarted(TxnStarted txn) {
                      throw new IllegalStateException("listener broken");
                    }

                    @Override
                    public void transactionEnded(TxnEnded txn) {
                      throw new OutOfMemoryErrorLookalike();
                    }

                    @Override
                    public void southboundCall(SouthboundCall call) {
                      throw new IllegalStateException("listener broken");
                    }
                  })
              .build();
      kvs.registerDescriptors(things());
      for (int i = 0; i < 5; i++) {
        kvs.startNBTransaction().setValue(PREFIX + i, "ok").commit();
      }
      assertThat(southbound).hasSize(5);
      assertThat(kvs.valueStatus(PREFIX + 4).value().state()).isEqualTo(ValueState.CONFIGURED);
      assertThat(appender.list)
          .singleElement()
          .satisfies(
              e -> {
                assertThat(e.getLevel()).isEqualTo(Level.ERROR);
                assertThat(e.getFormattedMessage()).contains("operation listener");
              });
    } finally {
      log.detachAppender(appender);
    }
  }

  /** An error a listener throws, not fatal to the JVM. */
  private static final class OutOfMemoryErrorLookalike extends Error {
    private static final long serialVersionUID = 1L;
  }

  @Test
  @DisplayName(
      "waiting for commitAsync's future inside a listener fails at once instead of deadlocking;"
          + " the transaction still runs")
  void waitingInListenerFailsFast() throws Exception {
    AtomicReference<Throwable> refused = new AtomicReference<>();
    AtomicReference<java.util.concurrent.CompletableFuture<Long>> queued = new AtomicReference<>();
    kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .operationListener(
                new OperationListener() {
                  @Override
                  public void transactionEnded(TxnEnded txn) {
                    if (queued.get() != null) {
                      return;
                    }
                    var f = kvs.startNBTransaction().setValue(PREFIX + "later", "ok");
                    queued.set(f.commitAsync(TxnOptions.defaults()));
                    try {
                      queued.get().get();
                    } catch (Exception | Error e) {
                      refused.set(e);
                    }
                  }
                })
            .build();
    kvs.registerDescriptors(things());
    kvs.startNBTransaction().setValue(PREFIX + "first", "ok").commit();
    assertThat(refused.get())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("would wait for ever");
    assertThat(queued.get().get(10, TimeUnit.SECONDS)).isPositive();
    assertThat(southbound).containsKeys(PREFIX + "first", PREFIX + "later");
  }
}
