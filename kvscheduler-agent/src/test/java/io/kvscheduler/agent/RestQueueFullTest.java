package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.metrics.AgentMetrics;
import io.kvscheduler.agent.internal.northbound.Orchestrator;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.internal.rest.SchedulerRoutes;
import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.mockcalls.MockIfaceHandler;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A full transaction queue is an error the REST client sees (503 with a JSON error), counted in
 * {@code /metrics}, and nothing of the refused request is kept; files and etcd would wait for room
 * instead. The engine is held inside a southbound call (the mock southbound's lock) while the
 * queue, of one place, fills up.
 */
class RestQueueFullTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String IF = "config/mock/v1/interfaces/";

  final KVScheduler kvs =
      KVScheduler.builder()
          .printTxnSummary(false)
          .queueCapacity(1)
          .threadName("kvs-engine")
          .build();
  final ModelRegistry models = new ModelRegistry();
  final MockAgentPlugin mock = new MockAgentPlugin();
  final AgentMetrics metrics = new AgentMetrics(kvs, Clock.systemUTC());
  final Northbound northbound =
      metrics.northbound(new Orchestrator(kvs, Set.of(RestNorthbound.SOURCE)));
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  RestServer rest;

  @AfterEach
  void stop() {
    if (rest != null) {
      rest.close();
    }
    kvs.close();
  }

  void start() throws Exception {
    mock.init(
        new AgentContext() {
          @Override
          public KVScheduler scheduler() {
            return kvs;
          }

          @Override
          public ModelRegistry models() {
            return models;
          }

          @Override
          public Northbound northbound() {
            return northbound;
          }

          @Override
          public String label() {
            return "vpp1";
          }

          @Override
          public <P extends AgentPlugin> Optional<P> plugin(Class<P> type) {
            return Optional.empty();
          }
        });
    rest = new RestServer("127.0.0.1:0");
    new RestNorthbound(rest, models, northbound);
    SchedulerRoutes.register(rest, kvs, models, metrics);
    rest.start();
  }

  HttpRequest put(String tap) {
    return HttpRequest.newBuilder(uri("/configuration"))
        .timeout(Duration.ofSeconds(60))
        .header("Content-Type", "application/yaml")
        .PUT(
            HttpRequest.BodyPublishers.ofString(
                "mockConfig:\n  Interface_list:\n  - name: " + tap + "\n    type: TAP\n"))
        .build();
  }

  URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + rest.port() + pathAndQuery);
  }

  String get(String pathAndQuery) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(pathAndQuery)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return r.body();
  }

  @Test
  void aFullQueueIsA503TheClientSeesCountedInMetricsAndNothingOfTheRequestIsKept()
      throws Exception {
    start();
    MockIfaceHandler sb = mock.plugins().interfaces().southbound();
    CompletableFuture<HttpResponse<String>> first;
    CompletableFuture<HttpResponse<String>> second;
    HttpResponse<String> refused;
    synchronized (sb) { // the engine blocks in its first southbound call
      first = http.sendAsync(put("tap1"), HttpResponse.BodyHandlers.ofString());
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> northbound.desired().containsKey(IF + "tap1") && kvs.queueLength() == 0);
      second = http.sendAsync(put("tap2"), HttpResponse.BodyHandlers.ofString());
      await().atMost(Duration.ofSeconds(20)).until(() -> kvs.queueLength() == 1);

      refused = http.send(put("tap3"), HttpResponse.BodyHandlers.ofString());
      // a refused change of a value given before leaves that value as it was
      HttpResponse<String> refusedChange =
          http.send(
              HttpRequest.newBuilder(uri("/configuration"))
                  .timeout(Duration.ofSeconds(60))
                  .header("Content-Type", "application/yaml")
                  .PUT(
                      HttpRequest.BodyPublishers.ofString(
                          "mockConfig:\n  Interface_list:\n"
                              + "  - name: tap1\n    type: TAP\n    physAddress: \"02:00:00:00:00:01\"\n"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(refusedChange.statusCode()).as(refusedChange.body()).isEqualTo(503);
      assertThat(northbound.desired().get(IF + "tap1"))
          .isEqualTo(Interface.of("tap1", Interface.Type.TAP, false));
      // readers are not held by the full queue
      assertThat(get("/configuration")).contains("tap1", "tap2").doesNotContain("tap3");
      assertThat(first).isNotDone();
    }
    assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Content-Type"))
        .hasValueSatisfying(t -> assertThat(t.toLowerCase()).contains("application/json"));
    JsonNode error = JSON.readTree(refused.body());
    assertThat(error.get("Error").asText()).contains("transaction queue is full");

    assertThat(first.get().statusCode()).isEqualTo(200);
    assertThat(second.get().statusCode()).isEqualTo(200);
    assertThat(kvs.valueStatus(IF + "tap1").state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(IF + "tap2").state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(IF + "tap3").state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(northbound.desired()).doesNotContainKey(IF + "tap3");
    assertThat(get("/metrics")).contains("kvs_commits_refused_total 2.0");

    // sent again once there is room, it is applied
    assertThat(http.send(put("tap3"), HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(200);
    assertThat(kvs.valueStatus(IF + "tap3").state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(northbound.desired()).containsKeys(IF + "tap1", IF + "tap2", IF + "tap3");
  }
}
