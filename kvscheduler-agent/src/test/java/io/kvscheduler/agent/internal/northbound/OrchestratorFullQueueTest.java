package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.QueueFullException;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A delivery that waits for room in a full queue (files, etcd, gRPC) holds nobody else up: a REST
 * delivery is refused at once, {@code desired()} answers at once, and the waiting delivery is
 * applied once there is room. The engine is held inside a southbound call while the queue, of one
 * place, is full.
 */
class OrchestratorFullQueueTest {
  static final String P = "config/t/v1/items/";
  static final Duration AT_ONCE = Duration.ofSeconds(3);

  final Map<String, String> southbound = new ConcurrentHashMap<>();
  final CountDownLatch inCall = new CountDownLatch(1);
  final CountDownLatch release = new CountDownLatch(1);
  final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).queueCapacity(1).build();
  final Orchestrator nb = new Orchestrator(kvs, Set.of(RestNorthbound.SOURCE));
  final ExecutorService threads = Executors.newCachedThreadPool();

  OrchestratorFullQueueTest() {
    kvs.registerDescriptors(
        KVDescriptor.builder("item", String.class)
            .nbKeyPrefix(P)
            .create(
                (key, v) -> {
                  inCall.countDown();
                  try {
                    release.await(60, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  southbound.put(key, v);
                  return null;
                })
            .delete((key, v, meta) -> southbound.remove(key))
            .build());
  }

  @AfterEach
  void close() {
    release.countDown();
    threads.shutdownNow();
    kvs.close();
  }

  @Test
  void aDeliveryWaitingForRoomHoldsUpNeitherRefusalsNorReaders() throws Exception {
    CompletableFuture<Long> first = nb.change("file", Map.of(P + "a", "A"));
    assertThat(inCall.await(20, TimeUnit.SECONDS)).isTrue(); // the engine is in a call
    CompletableFuture<Long> second = nb.change("file", Map.of(P + "b", "B"));
    assertThat(kvs.queueLength()).isEqualTo(1); // the queue is full

    // etcd delivers a change: it waits for room
    CompletableFuture<CompletableFuture<Long>> waiting =
        CompletableFuture.supplyAsync(() -> nb.change("etcd", Map.of(P + "c", "C")), threads);
    Thread.sleep(300);
    assertThat(waiting).isNotDone();

    // meanwhile a REST delivery is refused at once, and the configuration can be read
    CompletableFuture<Long> rest =
        CompletableFuture.supplyAsync(
                () -> nb.change(RestNorthbound.SOURCE, Map.of(P + "d", "D")), threads)
            .get(AT_ONCE.toMillis(), TimeUnit.MILLISECONDS);
    assertThatThrownBy(rest::get)
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(QueueFullException.class)
        .hasMessageContaining("transaction queue is full");
    Map<String, Object> desired =
        CompletableFuture.supplyAsync(nb::desired, threads)
            .get(AT_ONCE.toMillis(), TimeUnit.MILLISECONDS);
    assertThat(desired).containsOnlyKeys(P + "a", P + "b"); // neither refused nor waiting yet
    assertThat(waiting).isNotDone();

    // room: the waiting delivery is queued and applied; the refused one is not
    release.countDown();
    CompletableFuture<Long> third = waiting.get(20, TimeUnit.SECONDS);
    third.get(20, TimeUnit.SECONDS);
    first.get(20, TimeUnit.SECONDS);
    second.get(20, TimeUnit.SECONDS);
    assertThat(southbound)
        .containsExactlyInAnyOrderEntriesOf(Map.of(P + "a", "A", P + "b", "B", P + "c", "C"));
    assertThat(nb.desired()).containsOnlyKeys(P + "a", P + "b", P + "c");
  }

  @Test
  void aDeliveryInterruptedWhileItWaitsForRoomKeepsNothing() throws Exception {
    nb.change("file", Map.of(P + "a", "A"));
    assertThat(inCall.await(20, TimeUnit.SECONDS)).isTrue();
    nb.change("file", Map.of(P + "b", "B"));
    CompletableFuture<Throwable> failure = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              try {
                nb.change("etcd", Map.of(P + "c", "C"));
                failure.complete(null);
              } catch (RuntimeException e) {
                failure.complete(e);
              }
            });
    t.start();
    await()
        .atMost(AT_ONCE)
        .until(
            () ->
                t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING);
    t.interrupt();
    assertThat(failure.get(20, TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("interrupted while waiting for room in the transaction queue");
    assertThat(nb.desired()).containsOnlyKeys(P + "a", P + "b");
  }
}
