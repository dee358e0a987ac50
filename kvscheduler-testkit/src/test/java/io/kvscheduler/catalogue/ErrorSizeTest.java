package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * An invalid value of a megabyte, committed again and again (as a northbound resyncs its whole
 * configuration for every small change): error messages quote a bounded part of it, the same error
 * is kept once, and the transaction history stays within its byte budget.
 */
class ErrorSizeTest {
  private static final String KEY = "name/big";
  private static final String BIG = "x".repeat(1 << 20);

  private final MockSouthbound sb = new MockSouthbound();
  private KVScheduler kvs;

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  private void start(long historyMaxBytes) {
    ManualClock clock = new ManualClock();
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .historyMaxBytes(historyMaxBytes)
            .build();
    kvs.registerDescriptors(
        sb.descriptor("name", String.class)
            .nbKeyPrefix("name/")
            .validate(
                (key, v) -> {
                  if (v.length() > 64) {
                    // quotes the whole value, as a careless descriptor would
                    throw new InvalidValueException("'" + v + "' is not a valid name", "name");
                  }
                })
            .build());
  }

  private KeyError resyncWithBigValue(int i) {
    TransactionException e =
        (TransactionException)
            catchFrom(
                () ->
                    kvs.startNBTransaction()
                        .setValue(KEY, BIG)
                        .setValue("name/small", "n" + i)
                        .commit(
                            TxnOptions.builder()
                                .resync(ResyncType.UPSTREAM)
                                .description("resync " + i)
                                .build()));
    assertThat(e.keyErrors()).hasSize(1);
    return e.keyErrors().get(0);
  }

  private static Throwable catchFrom(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      return e;
    }
    throw new AssertionError("the commit did not fail");
  }

  @Test
  @DisplayName("errors quoting a 1 MB invalid value are bounded and kept once per key")
  void boundedAndSharedErrors() {
    start(64L << 20);
    List<KeyError> errors = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      errors.add(resyncWithBigValue(i));
    }

    KeyError first = errors.get(0);
    assertThat(first.key()).isEqualTo(KEY);
    assertThat(first.message())
        .startsWith("field name is invalid: 'xxx")
        .contains("more characters")
        .hasSizeLessThan(Excerpt.MAX_MESSAGE_CHARS + 100);
    assertThat(first.cause().getMessage()).hasSizeLessThan(Excerpt.MAX_MESSAGE_CHARS + 100);
    for (KeyError e : errors) {
      assertThat(e.message()).isSameAs(first.message());
      assertThat(e.cause()).isSameAs(first.cause());
    }
    assertThat(kvs.valueStatus(KEY).value().state()).isEqualTo(ValueState.INVALID);
    assertThat(kvs.valueStatus(KEY).value().error()).isSameAs(first.message());
    for (NodeRevision r : kvs.keyTimeline(KEY)) {
      assertThat(r.error()).isSameAs(first.message());
    }
    for (RecordedTxn r : kvs.transactionHistory(Instant.MIN, Instant.MAX)) {
      for (RecordedTxnOp op : r.executed()) {
        assertThat(op.newError()).hasSizeLessThan(Excerpt.MAX_MESSAGE_CHARS + 100);
      }
    }
  }

  @Test
  @DisplayName("the transaction history keeps the newest records within its byte budget")
  void historyWithinByteBudget() {
    start(8L << 20);
    for (int i = 0; i < 40; i++) {
      resyncWithBigValue(i);
    }

    List<RecordedTxn> kept = kvs.transactionHistory(Instant.MIN, Instant.MAX);
    // each record holds the 1 MB value: at most 8 fit in 8 MiB
    assertThat(kept).hasSizeBetween(1, 8);
    assertThat(kept.get(kept.size() - 1).description()).isEqualTo("resync 39");
  }

  @Test
  @DisplayName("the transaction log shows a 1 MB value and its error bounded")
  void txnLogBounded() {
    start(64L << 20);
    try (TxnLogCapture log = new TxnLogCapture()) {
      resyncWithBigValue(0);
      resyncWithBigValue(1);

      assertThat(log.messages()).isNotEmpty();
      for (String m : log.messages()) {
        assertThat(m.lines()).allSatisfy(l -> assertThat(l).hasSizeLessThan(1500));
      }
      assertThat(String.join("\n", log.messages()))
          .contains("- key: " + KEY)
          .contains("more characters");
    }
  }
}
