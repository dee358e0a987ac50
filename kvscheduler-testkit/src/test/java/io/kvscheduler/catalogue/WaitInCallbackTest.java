package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A descriptor callback that waits for a transaction it committed ({@code commitAsync(...).get()})
 * would wait for ever: the transaction runs only after the one that called the callback. It fails
 * at once instead, and the transaction still runs.
 */
@Timeout(30) // a deadlock must fail the test, not hang the build
class WaitInCallbackTest {
  private KVScheduler kvs;

  @AfterEach
  void close() {
    if (kvs != null) {
      kvs.close();
    }
  }

  @Test
  @DisplayName(
      "commitAsync().get() and .join() inside a descriptor callback fail at once instead of"
          + " deadlocking")
  void waitingInCallbackFailsFast() throws Exception {
    List<Throwable> refused = new CopyOnWriteArrayList<>();
    List<CompletableFuture<Long>> queued = new CopyOnWriteArrayList<>();
    kvs = KVScheduler.builder().printTxnSummary(false).build();
    kvs.registerDescriptors(
        KVDescriptor.builder("waiting", String.class)
            .nbKeyPrefix("config/waiting/")
            .create(
                (key, value) -> {
                  if (value.equals("wait")) {
                    var f =
                        kvs.startNBTransaction()
                            .setValue("config/waiting/next", "x")
                            .commitAsync(TxnOptions.defaults());
                    queued.add(f);
                    try {
                      f.get();
                    } catch (IllegalStateException e) {
                      refused.add(e);
                    }
                    try {
                      f.thenApply(s -> s + 1).join();
                    } catch (IllegalStateException e) {
                      refused.add(e);
                    }
                  }
                  return null;
                })
            .delete((key, value, meta) -> {})
            .build());
    kvs.startNBTransaction().setValue("config/waiting/a", "wait").commit();
    assertThat(refused)
        .hasSize(2)
        .allSatisfy(e -> assertThat(e).hasMessageContaining("descriptor callback"));
    assertThat(queued.get(0).get(10, TimeUnit.SECONDS)).isPositive();
    assertThat(kvs.valueStatus("config/waiting/next").value().state())
        .isEqualTo(ValueState.CONFIGURED);
  }
}
