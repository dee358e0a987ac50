package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.internal.rest.SchedulerRoutes;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code /scheduler/status} and the cached and NB views of {@code /scheduler/dump} are read from
 * the engine's published snapshot: they are answered while a transaction holds the engine in a
 * southbound call, show the state before that transaction, and queue nothing for the engine.
 */
class StatusReadWhileEngineBusyTest {
  static final String PREFIX = "config/held/v1/";
  static final String DONE = PREFIX + "done";
  static final String HELD = PREFIX + "held";
  static final ObjectMapper JSON = new ObjectMapper();

  /** The value of the test's descriptor. */
  record Item(String name) {}

  @Test
  @DisplayName(
      "status and dump are answered from the published snapshot while a southbound"
          + " call holds the engine, and queue nothing for it")
  void readsWhileEngineHeld() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    KVDescriptor<Item, Void> held =
        KVDescriptor.builder("held-items", Item.class)
            .nbKeyPrefix(PREFIX)
            .create(
                (key, v) -> {
                  if (key.equals(HELD)) {
                    entered.countDown();
                    if (!release.await(60, TimeUnit.SECONDS)) {
                      throw new IllegalStateException("not released");
                    }
                  }
                  return null;
                })
            .delete((key, v, meta) -> {})
            .build();
    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build()) {
      kvs.registerDescriptors(held);
      kvs.startNBTransaction().setValue(DONE, new Item("done")).commit();
      RestServer rest = new RestServer("127.0.0.1:0");
      SchedulerRoutes.register(
          rest, kvs, new ModelRegistry(), new AgentMetrics(kvs, Clock.systemUTC()));
      rest.start();
      try {
        CompletableFuture<Long> txn =
            kvs.startNBTransaction()
                .setValue(HELD, new Item("held"))
                .commitAsync(TxnOptions.defaults());
        assertThat(entered.await(30, TimeUnit.SECONDS)).as("the create call started").isTrue();

        JsonNode all = get(rest, "/scheduler/status");
        assertThat(all.size()).isEqualTo(1);
        assertThat(all.at("/0/value/key").asText()).isEqualTo(DONE);
        assertThat(all.at("/0/value/state").asText()).isEqualTo("CONFIGURED");
        assertThat(get(rest, "/scheduler/status?key=" + HELD).toString())
            .isEqualTo("{\"value\":{\"key\":\"" + HELD + "\"}}");
        assertThat(get(rest, "/scheduler/status?descriptor=held-items").size()).isEqualTo(1);
        assertThat(
                get(rest, "/scheduler/dump?descriptor=held-items&view=cached")
                    .at("/0/Key")
                    .asText())
            .isEqualTo(DONE);
        assertThat(get(rest, "/scheduler/dump?key-prefix=" + PREFIX + "&view=NB").size())
            .isEqualTo(1);

        assertThat(txn).as("the transaction is still held in its southbound call").isNotDone();
        assertThat(kvs.queueLength()).as("nothing queued for the engine").isZero();

        release.countDown();
        txn.get(30, TimeUnit.SECONDS);
        assertThat(kvs.valueStatus(HELD).state()).isEqualTo(ValueState.CONFIGURED);
        assertThat(get(rest, "/scheduler/status").size()).isEqualTo(2);
      } finally {
        release.countDown();
        rest.close();
      }
    }
  }

  private static JsonNode get(RestServer rest, String pathAndQuery) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rest.port() + pathAndQuery))
                    .timeout(Duration.ofSeconds(10))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(pathAndQuery + ": " + r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }
}
