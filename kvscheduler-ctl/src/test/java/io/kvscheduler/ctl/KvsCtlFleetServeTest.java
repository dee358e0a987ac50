package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.testsupport.EtcdFixture;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code kvsctl fleet --serve} against a real etcd with real agents (in this JVM), read with a real
 * HTTP client: the page, the JSON, the live events, an agent appearing.
 */
class KvsCtlFleetServeTest {
  private static final String IF = "config/mock/v1/interfaces/";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Pattern URL = Pattern.compile("at (http://127\\.0\\.0\\.1:(\\d+)/)");

  private static EtcdFixture etcd;
  private static final List<Agent> agents = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    etcd = EtcdFixture.startNew();
  }

  @AfterAll
  static void stop() throws Exception {
    agents.forEach(Agent::close);
    etcd.close();
  }

  private static Agent agent(String label) throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .label(label)
                .restAddress(null)
                .etcdEndpoints(List.of(etcd.endpoint()))
                .statusPublishing(true)
                .printTxnSummary(false)
                .build());
    agents.add(a);
    return a;
  }

  private static String tap(String name) {
    return "{\"name\":\"" + name + "\",\"type\":\"TAP\"}";
  }

  private HttpResponse<String> get(String url) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode agentIn(JsonNode view, String label) {
    for (JsonNode a : view.get("agents")) {
      if (a.get("label").asText().equals(label)) {
        return a;
      }
    }
    return null;
  }

  @Test
  void servesThePageTheJsonAndLiveEventsAndShowsAnAgentThatAppears() throws Exception {
    etcd.put("/vnf-agent/sa/" + IF + "tap1", tap("tap1"));
    agent("sa");
    await()
        .atMost(TIMEOUT)
        .until(() -> etcd.get("/vnf-agent/sa/config-status/mock/v1/interfaces/tap1") != null);

    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = KvsCtl.commandLine(Map.of());
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    AtomicInteger exit = new AtomicInteger(-1);
    Thread serving =
        new Thread(
            () -> exit.set(cl.execute("fleet", "--etcd", etcd.endpoint(), "--serve", "0")),
            "kvsctl-fleet-serve");
    serving.start();
    try {
      await().atMost(TIMEOUT).until(() -> URL.matcher(out.toString()).find());
      Matcher m = URL.matcher(out.toString());
      assertThat(m.find()).isTrue();
      String base = m.group(1);
      assertThat(out.toString()).contains("fleet view of etcd [" + etcd.endpoint() + "]");

      // the page and its files
      HttpResponse<String> page = get(base);
      assertThat(page.statusCode()).isEqualTo(200);
      assertThat(page.headers().firstValue("Content-Type").orElse("")).startsWith("text/html");
      assertThat(page.body()).contains("kvscheduler fleet", "/fleet.js", "/fleet.json");
      HttpResponse<String> js = get(base + "fleet.js");
      assertThat(js.statusCode()).isEqualTo(200);
      assertThat(js.headers().firstValue("Content-Type").orElse("")).startsWith("text/javascript");
      assertThat(js.body()).contains("EventSource('/events')");
      assertThat(get(base + "fleet.css").statusCode()).isEqualTo(200);
      assertThat(get(base + "nothing-here").statusCode()).isEqualTo(404);
      HttpResponse<String> post =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "fleet.json"))
                  .POST(HttpRequest.BodyPublishers.ofString("{}"))
                  .header("Content-Type", "application/json")
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(post.statusCode()).isEqualTo(405);

      // the JSON: what `kvsctl fleet -o json` prints
      await().atMost(TIMEOUT).until(() -> get(base + "fleet.json").statusCode() == 200);
      HttpResponse<String> first = get(base + "fleet.json");
      assertThat(first.headers().firstValue("Content-Type").orElse(""))
          .startsWith("application/json");
      JsonNode view = JSON.readTree(first.body());
      assertThat(view.get("read_at").asText()).isNotBlank();
      assertThat(view.get("ok").isBoolean()).isTrue();
      JsonNode sa = agentIn(view, "sa");
      assertThat(sa).as(first.body()).isNotNull();
      assertThat(sa.get("state").asText()).isEqualTo("OK");
      assertThat(sa.at("/owner/pid").asLong()).isEqualTo(ProcessHandle.current().pid());
      assertThat(sa.at("/values/CONFIGURED").asInt()).isEqualTo(1);
      // alive by its lease (session-ttl 10 s by default), renewed within two thirds of it
      assertThat(sa.at("/lease/ttl_seconds").asLong()).as(first.body()).isEqualTo(10);
      assertThat(sa.at("/lease/not_renewed_seconds").asLong()).isBetween(0L, 7L);
      assertThat(agentIn(view, "sb")).isNull();
      RunningAgent.Run once =
          RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "-o", "json");
      List<String> fields = new ArrayList<>();
      JSON.readTree(once.out()).fieldNames().forEachRemaining(fields::add);
      List<String> served = new ArrayList<>();
      view.fieldNames().forEachRemaining(served::add);
      assertThat(served).isEqualTo(fields);
      List<String> agentFields = new ArrayList<>();
      agentIn(JSON.readTree(once.out()), "sa").fieldNames().forEachRemaining(agentFields::add);
      List<String> servedAgentFields = new ArrayList<>();
      sa.fieldNames().forEachRemaining(servedAgentFields::add);
      assertThat(servedAgentFields).isEqualTo(agentFields);

      // the live events: the current view at once, then a new one on every change
      List<String> events = new CopyOnWriteArrayList<>();
      HttpResponse<InputStream> stream =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "events"))
                  .header("Accept", "text/event-stream")
                  .build(),
              HttpResponse.BodyHandlers.ofInputStream());
      assertThat(stream.statusCode()).isEqualTo(200);
      assertThat(stream.headers().firstValue("Content-Type").orElse(""))
          .startsWith("text/event-stream");
      Thread reader =
          new Thread(
              () -> {
                try (BufferedReader r =
                    new BufferedReader(
                        new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                  String line;
                  while ((line = r.readLine()) != null) {
                    if (line.startsWith("data:")) {
                      events.add(line.substring(5).strip());
                    }
                  }
                } catch (Exception e) {
                  // closed
                }
              },
              "fleet-events");
      reader.setDaemon(true);
      reader.start();
      await().atMost(TIMEOUT).until(() -> !events.isEmpty());
      assertThat(agentIn(JSON.readTree(events.get(0)), "sa")).isNotNull();

      // an agent appears: in the JSON and in an event, from the etcd watch (well before the
      // 10 s refresh)
      etcd.put("/vnf-agent/sb/" + IF + "tap1", tap("tap1"));
      etcd.put("/vnf-agent/sb/" + IF + "tap2", tap("tap2"));
      long t0 = System.nanoTime();
      agent("sb");
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> {
                JsonNode sb = agentIn(JSON.readTree(get(base + "fleet.json").body()), "sb");
                assertThat(sb).isNotNull();
                assertThat(sb.at("/values/CONFIGURED").asInt()).isEqualTo(2);
              });
      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  events.stream()
                      .anyMatch(
                          e -> {
                            try {
                              JsonNode sb = agentIn(JSON.readTree(e), "sb");
                              return sb != null && sb.at("/values/CONFIGURED").asInt() == 2;
                            } catch (Exception ex) {
                              return false;
                            }
                          }));
      System.out.printf(
          "[figure] fleet --serve: a new agent with 2 values shown %d ms after its start%n",
          (System.nanoTime() - t0) / 1_000_000);
      stream.body().close();
    } finally {
      serving.interrupt();
      serving.join(20_000);
    }
    assertThat(serving.isAlive()).isFalse();
    assertThat(exit.get()).as(err.toString()).isZero();
    // stopped: nothing listens any more
    Matcher m = URL.matcher(out.toString());
    assertThat(m.find()).isTrue();
    String base = m.group(1);
    assertThatThrownBy(() -> get(base + "fleet.json")).isInstanceOf(ConnectException.class);
  }

  @Test
  void badServeAddressIsRefused() {
    RunningAgent.Run bad =
        RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "--serve", "port");
    assertThat(bad.exit()).as(bad.out() + bad.err()).isEqualTo(2);
    assertThat(bad.err()).contains("--serve port");
    RunningAgent.Run both =
        RunningAgent.run(Map.of(), "fleet", "--etcd", etcd.endpoint(), "--serve", "0", "--watch");
    assertThat(both.exit()).isEqualTo(2);
    assertThat(both.err()).contains("--serve and --watch");
  }
}
