package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.rest.ProbeRoutes;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * vpp-agent's CLI, agentctl, against the agent: the exact requests its REST client sends (query
 * strings as Go's {@code url.Values.Encode} writes them: every parameter, sorted, {@code /}
 * escaped, empty when unused; the headers of Go's HTTP client, a PUT without body saying {@code
 * text/plain}) over real HTTP, and the JSON shapes it decodes.
 */
class AgentctlRequestsTest {
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String TAP2 = "config/mock/v1/interfaces/tap2";
  static final ObjectMapper JSON = new ObjectMapper();

  static Agent agent;
  static RawHttpClient http;

  @BeforeAll
  static void start() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder().restAddress("127.0.0.1:0").printTxnSummary(false).build(),
            List.of(new MockAgentPlugin()));
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    http = new RawHttpClient(port);
    agent
        .scheduler()
        .startNBTransaction()
        .setValue(TAP1, Interface.of("tap1", Interface.Type.TAP, true))
        .setValue(TAP2, Interface.of("tap2", Interface.Type.TAP, true))
        .commit();
  }

  @AfterAll
  static void stop() {
    if (http != null) {
      http.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  /** Go's HTTP client's headers for a request without body. */
  static Map<String, String> goHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("User-Agent", "Go-http-client/1.1");
    h.put("Accept-Encoding", "gzip");
    return h;
  }

  static RawHttpClient.Answer get(String target) throws Exception {
    return http.send("GET", target, goHeaders(), new byte[0]);
  }

  static JsonNode json(RawHttpClient.Answer a) throws Exception {
    return JSON.readTree(a.body());
  }

  static List<String> keys(JsonNode statuses) {
    List<String> out = new ArrayList<>();
    statuses.forEach(s -> out.add(s.get("value").get("key").asText()));
    return out;
  }

  @Test
  @DisplayName(
      "agentctl values: GET /scheduler/status?key=&key-prefix= answers every status (empty"
          + " parameters are absent); with a model's prefix, that model's statuses")
  void values() throws Exception {
    RawHttpClient.Answer all = get("/scheduler/status?key=&key-prefix=");
    assertThat(all.status()).as(all.text()).isEqualTo(200);
    assertThat(json(all).isArray()).isTrue();
    assertThat(keys(json(all))).contains(TAP1, TAP2);
    JsonNode tap1 = json(all).get(keys(json(all)).indexOf(TAP1)).get("value");
    assertThat(tap1.get("state").asText()).isEqualTo("CONFIGURED");
    assertThat(tap1.get("last_operation").asText()).isEqualTo("CREATE");

    RawHttpClient.Answer model =
        get("/scheduler/status?key=&key-prefix=config%2Fmock%2Fv1%2Finterfaces%2F");
    assertThat(model.status()).as(model.text()).isEqualTo(200);
    assertThat(keys(json(model))).containsExactly(TAP1, TAP2);

    // agentctl values with a key (not sent by the CLI, but by its client library)
    RawHttpClient.Answer one =
        get("/scheduler/status?key=config%2Fmock%2Fv1%2Finterfaces%2Ftap1&key-prefix=");
    assertThat(one.status()).as(one.text()).isEqualTo(200);
    assertThat(json(one).get("value").get("key").asText()).isEqualTo(TAP1);
  }

  @Test
  @DisplayName(
      "empty parameters are absent on every /scheduler route: txn-history, key-timeline's time,"
          + " graph-snapshot, flag-stats' prefix, dump, downstream-resync")
  void emptyParametersAreAbsent() throws Exception {
    RawHttpClient.Answer history = get("/scheduler/txn-history?format=&seq-num=&since=&until=");
    assertThat(history.status()).as(history.text()).isEqualTo(200);
    assertThat(json(history).isArray()).isTrue();
    assertThat(get("/scheduler/key-timeline?key=" + TAP1 + "&time=").status()).isEqualTo(200);
    assertThat(get("/scheduler/graph-snapshot?time=").status()).isEqualTo(200);
    RawHttpClient.Answer stats = get("/scheduler/flag-stats?flag=value-state&prefix=");
    assertThat(stats.status()).as(stats.text()).isEqualTo(200);
    assertThat(json(stats).get("TotalCount").asInt()).isPositive();
    RawHttpClient.Answer index = get("/scheduler/dump?descriptor=&key-prefix=&view=");
    assertThat(index.status()).as(index.text()).isEqualTo(200);
    assertThat(json(index).has("Descriptors")).isTrue();
    assertThat(get("/scheduler/graph?txn=&format=").status()).isEqualTo(200);
    // a required parameter given empty is still missing
    RawHttpClient.Answer noKey = get("/scheduler/key-timeline?key=");
    assertThat(noKey.status()).isEqualTo(400);
    assertThat(json(noKey).get("Error").asText()).contains("missing key");
  }

  /** Go's HTTP client's headers for a POST or PUT without body: agentctl says text/plain. */
  static Map<String, String> goEmptyBodyHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("User-Agent", "Go-http-client/1.1");
    h.put("Content-Type", "text/plain");
    h.put("Accept-Encoding", "gzip");
    return h;
  }

  @Test
  @DisplayName(
      "agentctl config resync: POST /scheduler/downstream-resync with Go's empty text/plain body"
          + " (and ?retry=1&verbose=1 for --retry --verbose) runs a downstream resync and answers"
          + " its RecordedTxn; a text/plain body or another site's Origin is still refused")
  void configResync() throws Exception {
    List<RecordedTxn> history = agent.scheduler().transactionHistory();
    long before = history.get(history.size() - 1).seqNum();
    RawHttpClient.Answer a =
        http.send("POST", "/scheduler/downstream-resync", goEmptyBodyHeaders(), new byte[0]);
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    JsonNode txn = json(a);
    assertThat(txn.get("SeqNum").asLong()).isGreaterThan(before);
    assertThat(txn.get("TxnType").asText()).isEqualTo("NBTransaction");
    assertThat(txn.get("ResyncType").asText()).isEqualTo("DownstreamResync");
    assertThat(txn.get("Start").isTextual()).isTrue();
    assertThat(txn.get("Stop").isTextual()).isTrue();

    RawHttpClient.Answer flags =
        http.send(
            "POST",
            "/scheduler/downstream-resync?retry=1&verbose=1",
            goEmptyBodyHeaders(),
            new byte[0]);
    assertThat(flags.status()).as(flags.text()).isEqualTo(200);
    assertThat(json(flags).get("ResyncType").asText()).isEqualTo("DownstreamResync");
    assertThat(json(flags).get("SeqNum").asLong()).isGreaterThan(txn.get("SeqNum").asLong());

    // what a page of another site could send is still refused
    RawHttpClient.Answer withBody =
        http.send(
            "POST",
            "/scheduler/downstream-resync",
            goEmptyBodyHeaders(),
            "x=y".getBytes(StandardCharsets.US_ASCII));
    assertThat(withBody.status()).isEqualTo(415);
    Map<String, String> crossSite = goEmptyBodyHeaders();
    crossSite.put("Origin", "http://elsewhere.example");
    RawHttpClient.Answer foreign =
        http.send("POST", "/scheduler/downstream-resync", crossSite, new byte[0]);
    assertThat(foreign.status()).isEqualTo(403);
    Map<String, String> nullOrigin = goEmptyBodyHeaders();
    nullOrigin.put("Origin", "null");
    assertThat(http.send("POST", "/scheduler/downstream-resync", nullOrigin, new byte[0]).status())
        .isEqualTo(403);
  }

  @Test
  @DisplayName(
      "agentctl dump: GET /scheduler/dump?key-prefix=<model prefix>&view=cached decodes as"
          + " RecordedKVWithMetadata")
  void dump() throws Exception {
    RawHttpClient.Answer a =
        get("/scheduler/dump?key-prefix=config%2Fmock%2Fv1%2Finterfaces%2F&view=cached");
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    List<String> keys = new ArrayList<>();
    json(a).forEach(kv -> keys.add(kv.get("Key").asText()));
    assertThat(keys).contains(TAP1, TAP2);
    assertThat(json(a).get(0).get("Value").has("ProtoMsgName")).isTrue();
  }

  @Test
  @DisplayName(
      "agentctl status: GET /readiness answers 200 with the probe's shape (numeric state 1,"
          + " start time, plugins, PluginStatus, NonFatalPlugins, interface_stats); /liveness the"
          + " same without interface statistics")
  void status() throws Exception {
    RawHttpClient.Answer ready = get("/readiness");
    assertThat(ready.status()).as(ready.text()).isEqualTo(200);
    JsonNode r = json(ready);
    assertThat(r.get("state").isInt()).isTrue();
    assertThat(r.get("state").asInt()).isEqualTo(1);
    assertThat(r.get("start_time").isNumber()).isTrue();
    assertThat(r.get("start_time").asLong())
        .isBetween(Instant.now().getEpochSecond() - 600, Instant.now().getEpochSecond());
    assertThat(r.get("last_change").isNumber()).isTrue();
    assertThat(r.get("last_update").isNumber()).isTrue();
    assertThat(r.get("interface_stats").isObject()).isTrue();
    assertThat(r.get("plugins").isArray()).isTrue();
    List<String> names = new ArrayList<>();
    r.get("plugins").forEach(p -> names.add(p.get("name").asText()));
    assertThat(names).contains("mock", "rest");
    r.get("plugins").forEach(p -> assertThat(p.get("state").asInt()).isEqualTo(1));
    assertThat(r.get("PluginStatus").get("mock").get("state").asInt()).isEqualTo(1);
    assertThat(r.get("PluginStatus").get("rest").get("last_change").isNumber()).isTrue();
    assertThat(r.get("NonFatalPlugins").isArray()).isTrue();

    RawHttpClient.Answer live = get("/liveness");
    assertThat(live.status()).isEqualTo(200);
    assertThat(json(live).get("state").asInt()).isEqualTo(1);
    assertThat(json(live).has("interface_stats")).isFalse();
    assertThat(json(live).has("PluginStatus")).isTrue();

    // agentctl status also reads the version
    assertThat(json(get("/info/version")).has("Version")).isTrue();
  }

  @Test
  @DisplayName(
      "the probes answer 500 for readiness while the agent starts or stops (state INIT, left out"
          + " as Go leaves zero out) and 200 for liveness; 500 for both on an error")
  void probesWhenNotReady() throws Exception {
    ProbeRoutes.State[] state = {ProbeRoutes.State.INIT};
    try (RestServer server = new RestServer("127.0.0.1:0")) {
      ProbeRoutes.register(
          server,
          () ->
              new ProbeRoutes.Health(
                  state[0], Instant.now(), Instant.now(), Map.of("mock", state[0])));
      server.start();
      try (RawHttpClient c = new RawHttpClient(server.port())) {
        RawHttpClient.Answer ready = c.send("GET", "/readiness", goHeaders(), new byte[0]);
        assertThat(ready.status()).isEqualTo(500);
        assertThat(json(ready).has("state")).isFalse();
        assertThat(json(ready).get("plugins").get(0).has("state")).isFalse();
        assertThat(c.send("GET", "/liveness", goHeaders(), new byte[0]).status()).isEqualTo(200);
        state[0] = ProbeRoutes.State.ERROR;
        RawHttpClient.Answer failed = c.send("GET", "/readiness", goHeaders(), new byte[0]);
        assertThat(failed.status()).isEqualTo(500);
        assertThat(json(failed).get("state").asInt()).isEqualTo(2);
        assertThat(c.send("GET", "/liveness", goHeaders(), new byte[0]).status()).isEqualTo(500);
      }
    }
  }

  @Test
  @DisplayName(
      "agentctl log list and log set: GET /log/list gives [{logger, level}]; PUT"
          + " /log/<logger>/<level> with Go's empty text/plain body sets the level in logback"
          + " and answers {logger, level}; an unknown level gets an error naming the accepted")
  void logLevels() throws Exception {
    String name = "io.kvscheduler.agent.internal.northbound";
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    Level before = ctx.getLogger(name).getLevel();
    try {
      RawHttpClient.Answer list = get("/log/list");
      assertThat(list.status()).isEqualTo(200);
      assertThat(json(list).isArray()).isTrue();
      Map<String, String> levels = new LinkedHashMap<>();
      json(list).forEach(l -> levels.put(l.get("logger").asText(), l.get("level").asText()));
      assertThat(levels).containsKey("ROOT");
      assertThat(levels.values()).allMatch(l -> l.equals(l.toLowerCase()));

      Map<String, String> put = goHeaders();
      put.put("Content-Type", "text/plain");
      RawHttpClient.Answer set = http.send("PUT", "/log/" + name + "/debug", put, new byte[0]);
      assertThat(set.status()).as(set.text()).isEqualTo(200);
      assertThat(json(set).get("logger").asText()).isEqualTo(name);
      assertThat(json(set).get("level").asText()).isEqualTo("debug");
      assertThat(ctx.getLogger(name).getLevel()).isEqualTo(Level.DEBUG);
      assertThat(ctx.getLogger(name + ".FileNorthbound").isDebugEnabled()).isTrue();
      Map<String, String> after = new LinkedHashMap<>();
      json(get("/log/list"))
          .forEach(l -> after.put(l.get("logger").asText(), l.get("level").asText()));
      assertThat(after).containsEntry(name, "debug");

      RawHttpClient.Answer bad = http.send("PUT", "/log/" + name + "/loud", put, new byte[0]);
      assertThat(bad.status()).isEqualTo(400);
      assertThat(json(bad).get("Error").asText()).contains("loud", "debug", "info");
      assertThat(ctx.getLogger(name).getLevel()).isEqualTo(Level.DEBUG);

      // a body on this PUT still needs a JSON or YAML content type
      RawHttpClient.Answer withBody =
          http.send("PUT", "/log/" + name + "/info", put, "x".getBytes(StandardCharsets.US_ASCII));
      assertThat(withBody.status()).isEqualTo(415);
    } finally {
      ctx.getLogger(name).setLevel(before);
    }
  }
}
