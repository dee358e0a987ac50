package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Watch events are delivered off jetcd's event loop: a delivery that takes long (the scheduler's
 * queue is full, a resync holds the source) must not stall the client's other requests, or the
 * source takes itself for cut off from etcd, and a watch closed at that moment would wait for ever.
 */
class EtcdWatchDeliveryTest extends SharedEtcdTest {
  @Test
  void aSlowDeliveryDoesNotStallTheClient() throws Exception {
    String p = prefix("slow");
    CountDownLatch release = new CountDownLatch(1);
    List<String> delivered = new CopyOnWriteArrayList<>();
    Northbound slow =
        new Northbound() {
          @Override
          public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
            return CompletableFuture.completedFuture(0L);
          }

          @Override
          public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
            delivered.addAll(changes.keySet());
            try {
              // the first change waits for longer than a request may take
              release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return CompletableFuture.completedFuture(0L);
          }

          @Override
          public Map<String, Object> desired() {
            return Map.of();
          }
        };
    ModelRegistry models = new ModelRegistry();
    new MockAgentPlugin().registerModels(models);
    Duration request = Duration.ofSeconds(1);
    EtcdSettings settings =
        EtcdSettings.defaults()
            .withTimeouts(Duration.ofSeconds(2), request, Duration.ofSeconds(10));
    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build()) {
      EtcdNorthbound nb =
          new EtcdNorthbound("slow", List.of(etcd.endpoint()), settings, models, slow, kvs, false);
      try {
        nb.start();
        assertThat(nb.resyncCount()).isEqualTo(1);

        etcd.put(p + IF + "tap1", tap("tap1", true));
        await().atMost(TIMEOUT).until(() -> delivered.contains(IF + "tap1"));
        // the source probes etcd every second with the same client: while the delivery waits,
        // those probes must still be answered
        Thread.sleep(4 * request.toMillis());
        etcd.put(p + IF + "tap2", tap("tap2", true));
        release.countDown();

        await().atMost(TIMEOUT).until(() -> delivered.contains(IF + "tap2"));
        assertThat(delivered).containsExactly(IF + "tap1", IF + "tap2");
        assertThat(nb.resyncCount()).as("no outage seen, no second resync").isEqualTo(1);
        assertThat(nb.resumedCount()).isZero();
      } finally {
        release.countDown();
        nb.close();
      }
    }
  }
}
