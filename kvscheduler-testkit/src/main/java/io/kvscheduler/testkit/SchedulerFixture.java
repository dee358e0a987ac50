package io.kvscheduler.testkit;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVSchedulerBuilder;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * A scheduler set up for deterministic tests, with what a test drives it by: a {@link ManualClock},
 * a {@link ManualDelayScheduler} on that clock (retries and periodic work run only when the test
 * advances it), status updates delivered on the engine thread before the transaction's {@code
 * commit} returns, no transaction log, and a {@link MockSouthbound} to build descriptors on.
 *
 * <p>The {@link KVSchedulerTest} extension gives each test one and closes it afterwards; {@link
 * #create()} makes one by hand (then close it yourself, e.g. with try-with-resources).
 *
 * <pre>{@code
 * try (SchedulerFixture fx = SchedulerFixture.create()) {
 *   fx.kvs().registerDescriptors(fx.southbound().descriptor("d", String.class)
 *       .nbKeyPrefix("config/").build());
 *   long seq = fx.commit("config/a", "x", "config/b", "y");
 *   TxnAssert.assertThat(fx.txn(seq)).executed(op(CREATE, "config/a"), op(CREATE, "config/b"));
 *   fx.assertSouthboundConsistent();
 * }
 * }</pre>
 */
public final class SchedulerFixture implements AutoCloseable {
  private final KVScheduler kvs;
  private final MockSouthbound southbound;
  private final ManualClock clock;
  private final ManualDelayScheduler timers;

  private SchedulerFixture(
      KVScheduler kvs, MockSouthbound southbound, ManualClock clock, ManualDelayScheduler timers) {
    this.kvs = kvs;
    this.southbound = southbound;
    this.clock = clock;
    this.timers = timers;
  }

  /** A fixture with the defaults described above. */
  public static SchedulerFixture create() {
    return create(UnaryOperator.identity());
  }

  /**
   * A fixture whose scheduler is built with the defaults described above, then {@code configure}d
   * (e.g. {@code b -> b.enableTxnSimulation(true)}); what {@code configure} sets wins over the
   * defaults.
   *
   * @throws NullPointerException if {@code configure} is null or returns null
   */
  public static SchedulerFixture create(UnaryOperator<KVSchedulerBuilder> configure) {
    Objects.requireNonNull(configure, "configure");
    ManualClock clock = new ManualClock();
    ManualDelayScheduler timers = new ManualDelayScheduler(clock);
    KVSchedulerBuilder builder =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(timers)
            .statusExecutor(Runnable::run)
            .printTxnSummary(false);
    KVScheduler kvs =
        Objects.requireNonNull(configure.apply(builder), "configured builder").build();
    return new SchedulerFixture(kvs, new MockSouthbound(), clock, timers);
  }

  /** The scheduler. */
  public KVScheduler kvs() {
    return kvs;
  }

  /** The mock southbound: build descriptors on it, plan failures, read its calls. */
  public MockSouthbound southbound() {
    return southbound;
  }

  /** The scheduler's clock. */
  public ManualClock clock() {
    return clock;
  }

  /** The scheduler's delay scheduler: {@link ManualDelayScheduler#advance} runs what falls due. */
  public ManualDelayScheduler timers() {
    return timers;
  }

  /**
   * Commits one NB transaction setting {@code key, value, key, value, ...} (a {@code null} value
   * deletes the key) with the default options, waits for it, and returns its sequence number.
   *
   * @throws IllegalArgumentException if the arguments are not key/value pairs with string keys
   * @throws io.kvscheduler.api.TransactionException if a value of the transaction failed
   */
  public long commit(Object... keyValuePairs) {
    return commit(TxnOptions.defaults(), keyValuePairs);
  }

  /**
   * Same as {@link #commit(Object...)} with {@code options}.
   *
   * @throws IllegalArgumentException if the arguments are not key/value pairs with string keys
   * @throws io.kvscheduler.api.TransactionException if a value of the transaction failed
   */
  public long commit(TxnOptions options, Object... keyValuePairs) {
    Objects.requireNonNull(options, "options");
    if (keyValuePairs.length % 2 != 0) {
      throw new IllegalArgumentException(
          "key/value pairs expected, got " + keyValuePairs.length + " arguments");
    }
    Txn txn = kvs.startNBTransaction();
    for (int i = 0; i < keyValuePairs.length; i += 2) {
      if (!(keyValuePairs[i] instanceof String key)) {
        throw new IllegalArgumentException(
            "argument " + i + " is a key and must be a String, got " + keyValuePairs[i]);
      }
      txn.setValue(key, keyValuePairs[i + 1]);
    }
    return txn.commit(options);
  }

  /**
   * The record of transaction {@code seqNum}.
   *
   * @throws AssertionError if the history holds no such transaction
   */
  public RecordedTxn txn(long seqNum) {
    return kvs.recordedTransaction(seqNum)
        .orElseThrow(() -> new AssertionError("no record of txn #" + seqNum));
  }

  /**
   * Checks that the scheduler never made an inconsistent call on the mock southbound (a Create of a
   * key it holds, an Update or Delete of a key it does not hold or with another value).
   *
   * @throws AssertionError listing the inconsistent calls, if there were any
   */
  public void assertSouthboundConsistent() {
    List<String> inconsistencies = southbound.inconsistencies();
    if (!inconsistencies.isEmpty()) {
      throw new AssertionError(
          "inconsistent calls on the mock southbound:\n  " + String.join("\n  ", inconsistencies));
    }
  }

  /** Closes the scheduler (see {@link KVScheduler#close()}). */
  @Override
  public void close() {
    kvs.close();
  }
}
