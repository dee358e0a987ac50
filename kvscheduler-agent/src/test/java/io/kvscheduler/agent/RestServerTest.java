package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kvscheduler.agent.internal.logging.LogTail;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.rest.InfoRoutes;
import io.kvscheduler.agent.internal.rest.RestLimits;
import io.kvscheduler.agent.internal.rest.RestServer;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.assertj.core.api.Assertions;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The REST API over real HTTP, with the mock plugins. */
class RestServerTest {
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String TAP5 = "config/mock/v1/interfaces/tap5";
  static final String LOOP5 = "config/mock/v1/interfaces/loop5";
  static final String BD5 = "config/mock/v1/bridge-domain/bd5";
  static final String FIB5 = "config/mock/v1/fib/bd5/mac/00:11:22:33:44:55";

  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  static final ObjectMapper JSON = new ObjectMapper();

  static final String CONFIG =
      """
      mockConfig:
        Interface_list:
        - name: tap5
          type: TAP
          enabled: true
          physAddress: "00:11:22:33:44:01"
        - name: loop5
          type: LOOPBACK
        BridgeDomain_list:
        - name: bd5
          interfaces:
          - name: tap5
          - name: loop5
            bridgedVirtualInterface: true
        FIBEntry_list:
        - physAddress: "00:11:22:33:44:55"
          bridgeDomain: bd5
          outgoingInterface: tap5
      """;

  @TempDir Path dir;
  final List<Agent> agents = new ArrayList<>();
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  final List<RestServer> servers = new ArrayList<>();
  final List<Socket> sockets = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (Socket s : sockets) {
      s.close();
    }
    servers.forEach(RestServer::close);
    agents.forEach(Agent::close);
  }

  /** A REST server with other limits, over an agent without REST (its models and northbound). */
  RestServer server(RestLimits limits) throws Exception {
    Agent a = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    agents.add(a);
    return server(a.models(), a.northbound(), limits);
  }

  RestServer server(ModelRegistry models, Northbound northbound, RestLimits limits)
      throws Exception {
    RestNorthbound api = restApi(models, northbound, limits);
    servers.add(api.server());
    api.start();
    return api.server();
  }

  /**
   * The agent's {@code /configuration} and {@code /info} endpoints on a server of their own, with
   * {@code limits}; not started.
   */
  static RestNorthbound restApi(ModelRegistry models, Northbound northbound, RestLimits limits) {
    RestServer rs = new RestServer("127.0.0.1:0", limits, RestSecurity.NONE);
    InfoRoutes.register(rs, AgentConfig.defaults(), new LogTail(10));
    return new RestNorthbound(rs, models, northbound);
  }

  static URI uri(RestServer rs, String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + rs.port() + pathAndQuery);
  }

  /** Opens a connection and sends {@code text}, then nothing more. */
  Socket stall(int port, String text) throws Exception {
    Socket s = new Socket("127.0.0.1", port);
    sockets.add(s);
    s.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** A PUT that says its body has 100 bytes and sends 2. */
  static final String STALLED_PUT =
      "PUT /configuration HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
          + "Content-Length: 100\r\n\r\nab";

  /** Whether the server closed {@code s} within {@code wait} (EOF or reset). */
  static boolean closedByServer(Socket s, Duration wait) throws Exception {
    s.setSoTimeout((int) wait.toMillis());
    try {
      InputStream in = s.getInputStream();
      while (in.read() >= 0) {
        // a response, if any, then the end
      }
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  /**
   * {@code config} (ASCII) after YAML comment lines, {@code size} bytes in all (comments first:
   * SnakeYAML checks its size limit before each token, not after a trailing comment).
   */
  static String padded(String config, int size) {
    StringBuilder b = new StringBuilder(size);
    while (size - config.length() - b.length() > 80) {
      b.append("# ").append("x".repeat(77)).append('\n');
    }
    int rest = size - config.length() - b.length();
    return b.append('#').append("x".repeat(rest - 2)).append('\n').append(config).toString();
  }

  Agent start(Path configDir) throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .configDir(configDir)
                .restAddress("127.0.0.1:0")
                .printTxnSummary(false)
                .build());
    agents.add(a);
    return a;
  }

  static URI uri(Agent a, String pathAndQuery) {
    int port =
        a.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    return URI.create("http://127.0.0.1:" + port + pathAndQuery);
  }

  HttpResponse<String> get(Agent a, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri(a, path)).timeout(Duration.ofSeconds(15)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> put(Agent a, String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri(a, path))
            .timeout(Duration.ofSeconds(15))
            .header("Content-Type", "application/yaml")
            .PUT(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void infoVersion() throws Exception {
    Agent a = start(null);
    HttpResponse<String> r = get(a, "/info/version");
    assertThat(r.statusCode()).isEqualTo(200);
    assertContentType(r, "application/json; charset=UTF-8");
    assertThat(r.body()).startsWith("{\n  \"App\": \"kvscheduler-agent\",\n").endsWith("}\n");
    JsonNode v = JSON.readTree(r.body());
    List<String> keys = new ArrayList<>();
    v.fieldNames().forEachRemaining(keys::add);
    assertThat(keys)
        .containsExactly(
            "App",
            "Version",
            "GitCommit",
            "GitBranch",
            "BuildUser",
            "BuildHost",
            "BuildTime",
            "GoVersion",
            "OS",
            "Arch",
            "APIVersion",
            "OSType");
    assertThat(v.get("Version").asText()).isNotEmpty();
    assertThat(v.get("BuildTime").isIntegralNumber()).isTrue();
    assertThat(v.get("GoVersion").asText()).isEmpty();
  }

  @Test
  void wrongMethodAndUnknownPath() throws Exception {
    Agent a = start(null);
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(a, "/info/version"))
                .POST(HttpRequest.BodyPublishers.ofString(""))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(405);
    assertThat(get(a, "/no/such/path").statusCode()).isEqualTo(404);
  }

  @Test
  void putThenGetConfigurationRoundTrip() throws Exception {
    Files.writeString(
        dir.resolve("tap1.yaml"), "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP}\n");
    Agent a = start(dir);

    HttpResponse<String> r = put(a, "/configuration", CONFIG);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.body().strip()).isEqualTo("{}");
    // the PUT waited for the transaction
    assertThat(a.scheduler().valueStatus(TAP5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(a.scheduler().valueStatus(BD5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(a.scheduler().valueStatus(FIB5).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(a.northbound().desired()).containsOnlyKeys(TAP1, TAP5, LOOP5, BD5, FIB5);

    HttpResponse<String> g = get(a, "/configuration");
    assertThat(g.statusCode()).isEqualTo(200);
    assertContentType(g, "application/yaml; charset=UTF-8");
    String yaml = g.body();
    assertThat(yaml)
        .startsWith("mockConfig:\n  Interface_list:\n  - name: loop5\n")
        .contains("physAddress: 00:11:22:33:44:01")
        .contains("bridgedVirtualInterface: true")
        .doesNotContain("phys_address")
        .doesNotContain("---");
    JsonNode tree = YAML.readTree(yaml);
    assertThat(tree.at("/mockConfig/Interface_list")).hasSize(3);
    assertThat(tree.at("/mockConfig/Interface_list/2/name").asText()).isEqualTo("tap5");
    assertThat(tree.at("/mockConfig/Interface_list/2/physAddress").asText())
        .isEqualTo("00:11:22:33:44:01");
    assertThat(tree.at("/mockConfig/FIBEntry_list/0/physAddress").asText())
        .isEqualTo("00:11:22:33:44:55");

    // what GET returns, PUT takes back: a second agent ends up with the same configuration
    Agent b = start(null);
    HttpResponse<String> r2 = put(b, "/configuration?replace", yaml);
    assertThat(r2.statusCode()).as(r2.body()).isEqualTo(200);
    assertThat(b.northbound().desired()).isEqualTo(a.northbound().desired());
    assertThat(get(b, "/configuration").body()).isEqualTo(yaml);
    assertThat(b.scheduler().valueStatus(FIB5).state()).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void replaceResyncsOnlyTheRestSource() throws Exception {
    Files.writeString(
        dir.resolve("tap1.yaml"), "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP}\n");
    Agent a = start(dir);
    assertThat(put(a, "/configuration", CONFIG).statusCode()).isEqualTo(200);

    // without replace: an update, nothing removed
    assertThat(
            put(
                    a,
                    "/configuration",
                    """
        mockConfig:
          Interface_list:
          - name: loop6
            type: LOOPBACK
        """)
                .statusCode())
        .isEqualTo(200);
    assertThat(a.northbound().desired())
        .containsKeys(TAP1, TAP5, LOOP5, BD5, FIB5, "config/mock/v1/interfaces/loop6");

    // with replace: the REST source holds only the new values; the file's values stay
    HttpResponse<String> r =
        put(
            a,
            "/configuration?replace=",
            """
        {"mockConfig": {"Interface_list": [{"name": "tap5", "type": "TAP"}]}}
        """);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(a.northbound().desired()).containsOnlyKeys(TAP1, TAP5);
    assertThat(a.scheduler().valueStatus(BD5).state())
        .isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
    assertThat(a.scheduler().valueStatus(TAP1).state()).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void aBodyThatIsNotUtf8IsRejectedAndChangesNothing() throws Exception {
    Agent a = start(null);
    byte[] body =
        "\u00ff\u00femockConfig:\n  Interface_list:\n  - name: tap8\n"
            .getBytes(StandardCharsets.ISO_8859_1);
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(a, "/configuration"))
                .timeout(Duration.ofSeconds(15))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(r.body()).get("Error").asText()).contains("not UTF-8 text");
    assertThat(a.northbound().desired()).isEmpty();
  }

  @Test
  void emptyGroupsOfOtherAgentsAreAcceptedAsNothingToApply() throws Exception {
    Agent a = start(null);
    HttpResponse<String> r =
        put(
            a,
            "/configuration",
            "vppConfig: {}\nlinuxConfig:\n"
                + "mockConfig:\n  Interface_list:\n  - name: tap7\n    type: TAP\n");
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(a.scheduler().valueStatus("config/mock/v1/interfaces/tap7").state())
        .isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  @DisplayName(
      "a body that cannot be read, or names unknown groups, fields or values, is a 400"
          + " naming the place; a transaction that fails is a 500 naming the key")
  void badPutIs400WithTheProblem() throws Exception {
    Agent a = start(null);
    assertBad(
        a,
        "mockConfig:\n  Interface_list:\n  - name: x\n   type: TAP\n",
        "can't unmarshall input yaml data",
        "line 4");
    assertBad(a, "vppConfig:\n  interfaces: []\n", "unknown group 'vppConfig'", "mockConfig");
    assertBad(
        a,
        "mockConfig:\n  interfaces: []\n",
        "unknown field 'interfaces' in group mockConfig",
        "Interface_list");
    assertBad(
        a,
        "mockConfig:\n  Interface_list:\n  - name: x\n    type: TAPP\n",
        "mockConfig.Interface_list[0]: invalid value TAPP for field 'type'",
        "(line 4)");
    assertBad(
        a,
        "mockConfig:\n  Interface_list:\n  - name: x\n    mtu: 1500\n",
        "unknown field 'mtu'",
        "(line 4)");
    assertBad(
        a,
        "mockConfig:\n  Interface_list:\n  - name: x\n    type: TAP\n" + "    enabled: 5\n",
        "mockConfig.Interface_list[0]: wrong type for field 'enabled' of"
            + " mock.interfaces.Interface: expected true or false, got the number 5 (line 5)");
    assertBad(
        a,
        "mockConfig:\n  BridgeDomain_list:\n  - name: bd\n    interfaces:\n"
            + "    - name: a\n    - name: b\n      bridgedVirtualInterface: \"yes\"\n",
        "wrong type for field 'interfaces[1].bridged_virtual_interface'",
        "(line 7)");
    // the keyed format (as in the file source) is accepted: a key of no model is named
    assertBad(
        a,
        "config/mock/v9/tunnels/x: {name: x}\n",
        "config/mock/v9/tunnels/x",
        "no registered model",
        "config/mock/v1/interfaces/");
    assertThat(a.northbound().desired()).isEmpty();
    assertThat(a.scheduler().transactionHistory()).isEmpty();

    // decodes, but the transaction fails: the error names the key
    HttpResponse<String> failed =
        put(a, "/configuration", "mockConfig:\n  Interface_list:\n  - name: notype\n");
    assertThat(failed.statusCode()).as(failed.body()).isEqualTo(500);
    assertThat(JSON.readTree(failed.body()).asText())
        .contains("config/mock/v1/interfaces/notype", "without type");
    assertThat(a.scheduler().valueStatus("config/mock/v1/interfaces/notype").state())
        .isEqualTo(ValueState.INVALID);
  }

  @Test
  @DisplayName(
      "a bad body of megabytes on one line gets a short 400: the message names the place"
          + " and does not repeat the body")
  void aHugeBadBodyGetsAShortMessage() throws Exception {
    Agent a = start(null);
    String huge =
        "{\"mockConfig\": {\"Interface_list\": [{\"name\": \""
            + "x".repeat(2_000_000)
            + "\", \"type\": TAP}]}}";
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(a, "/configuration"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(huge))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body().length()).isLessThan(2000);
    assertThat(JSON.readTree(r.body()).get("Error").asText()).contains("line 1");
    assertThat(a.northbound().desired()).isEmpty();
  }

  private void assertBad(Agent a, String body, String... expected) throws Exception {
    HttpResponse<String> r = put(a, "/configuration", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    assertContentType(r, "application/json; charset=UTF-8");
    JsonNode msg = JSON.readTree(r.body());
    assertThat(fieldNames(msg)).as(r.body()).containsExactly("Error");
    assertThat(msg.get("Error").asText()).contains(expected);
  }

  /**
   * The response's media type and charset are {@code expected}'s (Jetty writes {@code
   * application/json;charset=utf-8} for Go's {@code application/json; charset=UTF-8}: the same
   * type, charset names are case-insensitive).
   */
  static void assertContentType(HttpResponse<?> r, String expected) {
    assertThat(r.headers().firstValue("Content-Type").orElse("").replace(" ", ""))
        .isEqualToIgnoringCase(expected.replace(" ", ""));
  }

  static List<String> fieldNames(JsonNode n) {
    List<String> keys = new ArrayList<>();
    n.fieldNames().forEachRemaining(keys::add);
    return keys;
  }

  @Test
  void getConfigurationWhenEmpty() throws Exception {
    Agent a = start(null);
    HttpResponse<String> g = get(a, "/configuration");
    assertThat(g.statusCode()).isEqualTo(200);
    assertThat(g.body()).isEqualTo("mockConfig: {}\n");
  }

  @Test
  void restOffAndBusyPort() throws Exception {
    Agent a = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    agents.add(a);
    assertThat(a.sources()).noneMatch(RestNorthbound.class::isInstance);

    Agent b = start(null);
    int port = uri(b, "/").getPort();
    Assertions.assertThatThrownBy(
            () ->
                Agent.start(
                    AgentConfig.builder()
                        .restAddress("127.0.0.1:" + port)
                        .printTxnSummary(false)
                        .build()))
        .hasMessageContaining("127.0.0.1:" + port);
  }

  @Test
  void aBusyPortStopsTheAgentBeforeAnyConfigurationIsApplied() throws Exception {
    Agent b = start(null);
    int port = uri(b, "/").getPort();
    Files.writeString(dir.resolve("interfaces.yaml"), CONFIG);
    MockAgentPlugin mock = new MockAgentPlugin();
    Assertions.assertThatThrownBy(
            () ->
                Agent.start(
                    AgentConfig.builder()
                        .configDir(dir)
                        .restAddress("127.0.0.1:" + port)
                        .printTxnSummary(false)
                        .build(),
                    List.of(mock)))
        .hasMessageContaining("cannot listen on 127.0.0.1:" + port);
    assertThat(mock.plugins().interfaces().southboundState()).isEmpty();
  }

  @Test
  void jsonWithTabsIsReadAsJsonWhenSaidSo() throws Exception {
    Agent a = start(null);
    String body =
        "{\n\t\"mockConfig\": {\n\t\t\"Interface_list\": [{\"name\": \"tab1\","
            + " \"type\": \"TAP\"}]\n\t}\n}\n";
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(a, "/configuration"))
                .timeout(Duration.ofSeconds(15))
                .header("Content-Type", "application/json")
                .PUT(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(a.northbound().desired()).containsKey("config/mock/v1/interfaces/tab1");
  }

  @Test
  void whatGetConfigurationWritesCanBePutBack() throws Exception {
    Agent a = start(null);
    assertThat(
            put(
                    a,
                    "/configuration",
                    "mockConfig:\n  Interface_list:\n"
                        + "  - name: \"0x1F\"\n    type: TAP\n  - name: \"1_000\"\n    type: TAP\n"
                        + "  - name: \".inf\"\n    type: TAP\n  - name: \"yes\"\n    type: TAP\n")
                .statusCode())
        .isEqualTo(200);
    Map<String, Object> before = a.northbound().desired();
    assertThat(before).hasSize(4);
    String listed = get(a, "/configuration").body();
    HttpResponse<String> r = put(a, "/configuration?replace", listed);
    assertThat(r.statusCode()).as(listed + r.body()).isEqualTo(200);
    assertThat(a.northbound().desired()).isEqualTo(before);
  }

  @Test
  void aReplaceFailsOnlyForWhatItPushedNotForOtherSourcesValues() throws Exception {
    Files.writeString(
        dir.resolve("bad.yaml"),
        "config/mock/v1/interfaces/bad1:" + " {name: bad1, type: TAP, physAddress: zz}\n");
    Agent a = start(dir);
    assertThat(a.scheduler().valueStatus("config/mock/v1/interfaces/bad1").state())
        .isEqualTo(ValueState.INVALID);
    HttpResponse<String> ok =
        put(
            a,
            "/configuration?replace",
            "mockConfig:\n  Interface_list:\n  - name: r5\n    type: TAP\n");
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    HttpResponse<String> bad =
        put(
            a,
            "/configuration?replace",
            "mockConfig:\n  Interface_list:\n  - name: r6\n    type: TAP\n    physAddress: qq\n");
    assertThat(bad.statusCode()).isEqualTo(500);
    assertThat(bad.body())
        .contains("config/mock/v1/interfaces/r6")
        .doesNotContain("config/mock/v1/interfaces/bad1");
  }

  @Test
  @DisplayName(
      "PUT /configuration of a body over 3 Mi code points (SnakeYAML's default limit) is"
          + " applied")
  void putOfABodyOverThreeMegabytesIsApplied() throws Exception {
    Agent a = start(null);
    String body = padded(CONFIG, 4 * 1024 * 1024);
    HttpResponse<String> r = put(a, "/configuration", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(a.northbound().desired()).containsKeys(TAP5, LOOP5, BD5, FIB5);
  }

  @Test
  @DisplayName(
      "replace, replace=, replace=true and replace=1 replace what REST pushed;"
          + " replace=false and replace=0 only change it")
  void replaceParameterValues() throws Exception {
    Agent a = start(null);
    String loop6 = "config/mock/v1/interfaces/loop6";
    String justLoop6 = "mockConfig:\n  Interface_list:\n  - name: loop6\n    type: LOOPBACK\n";
    for (String no : List.of("?replace=false", "?replace=0", "?replace=FALSE")) {
      assertThat(put(a, "/configuration", CONFIG).statusCode()).isEqualTo(200);
      HttpResponse<String> r = put(a, "/configuration" + no, justLoop6);
      assertThat(r.statusCode()).as(no + r.body()).isEqualTo(200);
      assertThat(a.northbound().desired()).as(no).containsOnlyKeys(TAP5, LOOP5, BD5, FIB5, loop6);
    }
    for (String yes :
        List.of("?replace", "?replace=", "?replace=true", "?replace=1", "?replace=True")) {
      assertThat(put(a, "/configuration", CONFIG).statusCode()).isEqualTo(200);
      HttpResponse<String> r = put(a, "/configuration" + yes, justLoop6);
      assertThat(r.statusCode()).as(yes + r.body()).isEqualTo(200);
      assertThat(a.northbound().desired()).as(yes).containsOnlyKeys(loop6);
    }
  }

  @Test
  @DisplayName(
      "any other value of replace, or another query parameter, is a 400 naming the"
          + " parameter and the accepted values; nothing is applied")
  void badReplaceValueIs400() throws Exception {
    Agent a = start(null);
    assertThat(put(a, "/configuration", CONFIG).statusCode()).isEqualTo(200);
    long txns = a.scheduler().transactionHistory().size();
    for (String bad :
        List.of("?replace=yes", "?replace=no", "?replace=2", "?replace=true&replace=0", "?x=1")) {
      HttpResponse<String> r =
          put(
              a,
              "/configuration" + bad,
              "mockConfig:\n  Interface_list:\n  - name: loop6\n    type: LOOPBACK\n");
      assertThat(r.statusCode()).as(bad).isEqualTo(400);
      assertContentType(r, "application/json; charset=UTF-8");
      assertThat(JSON.readTree(r.body()).get("Error").asText())
          .as(bad)
          .contains(bad.equals("?x=1") ? "unknown query parameter 'x'" : "'replace'");
    }
    assertThat(
            JSON.readTree(put(a, "/configuration?replace=yes", CONFIG).body())
                .get("Error")
                .asText())
        .isEqualTo(
            "bad value 'yes' of query parameter 'replace': accepted are"
                + " 'replace', 'replace=true' or 'replace=1' (yes) and 'replace=false' or 'replace=0'"
                + " (no)");
    assertThat(a.northbound().desired()).containsOnlyKeys(TAP5, LOOP5, BD5, FIB5);
    assertThat(a.scheduler().transactionHistory()).hasSize((int) txns);
  }

  @Test
  @DisplayName("stalled PUTs (more than the old pool of 4 threads) do not block a GET")
  void stalledPutsDoNotBlockAGet() throws Exception {
    Agent a = start(null);
    for (int i = 0; i < 8; i++) {
      stall(uri(a, "/").getPort(), STALLED_PUT);
    }
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(a, "/configuration"))
                .timeout(Duration.ofSeconds(5))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName(
      "a request not received within the I/O timeout of its first byte has its"
          + " connection closed, and its thread serves the next request")
  void stalledRequestsAreCutOffAfterTheTimeout() throws Exception {
    RestServer rs = server(new RestLimits(2, 8, Duration.ofMillis(500), 1024 * 1024));
    long start = System.nanoTime();
    Socket body = stall(rs.port(), STALLED_PUT);
    Socket headers = stall(rs.port(), "GET /configuration HTTP/1.1\r\nHost: 12");
    // both threads are taken: this GET waits in the queue until the stalled ones are cut off
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(rs, "/configuration"))
                .timeout(Duration.ofSeconds(10))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(closedByServer(body, Duration.ofSeconds(5))).isTrue();
    assertThat(closedByServer(headers, Duration.ofSeconds(5))).isTrue();
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    // the threads are free again
    assertThat(
            http.send(
                    HttpRequest.newBuilder(uri(rs, "/info/version"))
                        .timeout(Duration.ofSeconds(5))
                        .GET()
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(200);
  }

  @Test
  @DisplayName(
      "a small PUT whose client pauses for a second and a half in the middle of its"
          + " body (a loaded client) is served, not refused as a slow upload")
  void aSmallBodyWithAPauseIsServed() throws Exception {
    RestServer rs = server(new RestLimits(2, 8, Duration.ofSeconds(10), 1024 * 1024));
    byte[] body = CONFIG.getBytes(StandardCharsets.UTF_8);
    Socket s =
        stall(
            rs.port(),
            "PUT /configuration HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
                + "Content-Length: "
                + body.length
                + "\r\nConnection: close\r\n\r\n");
    int half = body.length / 2;
    s.getOutputStream().write(body, 0, half);
    s.getOutputStream().flush();
    // a few hundred bytes in 1.5 s is far below 1 KiB/s, but well within the grace
    Thread.sleep(1500);
    s.getOutputStream().write(body, half, body.length - half);
    s.getOutputStream().flush();
    s.setSoTimeout(15_000);
    String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(answer).startsWith("HTTP/1.1 200");
  }

  @Test
  @DisplayName(
      "a body trickling in slower than the minimum rate has its connection closed long"
          + " before the idle timeout")
  void aTricklingBodyIsCutOff() throws Exception {
    RestServer rs = server(new RestLimits(2, 8, Duration.ofSeconds(60), 1024 * 1024));
    Socket s =
        stall(
            rs.port(),
            "PUT /configuration HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
                + "Content-Length: 100000\r\n\r\n#");
    long start = System.nanoTime();
    boolean closed = false;
    StringBuilder answer = new StringBuilder();
    int sent = 0;
    // one byte every 200 ms: 5 bytes/s, far below the minimum of 1 KiB/s
    for (int i = 0; i < 100 && !closed; i++) {
      try {
        s.getOutputStream().write('x');
        s.getOutputStream().flush();
        sent++;
      } catch (IOException e) {
        closed = true;
        break;
      }
      s.setSoTimeout(200);
      try {
        int c;
        while ((c = s.getInputStream().read()) >= 0) {
          answer.append((char) c);
        }
        closed = true; // the server closed the connection (after an error answer, if any)
      } catch (SocketTimeoutException e) {
        // still open
      } catch (IOException e) {
        closed = true;
      }
    }
    assertThat(closed).isTrue();
    // Jetty measures the rate from the request's first byte: the cut may come at the first
    // read that finds too little, long before the idle timeout (without the minimum rate, the
    // 20 s of trickling pass and the connection stays open)
    assertThat(sent).as("bytes sent before the cut").isPositive();
    assertThat(answer.toString()).doesNotStartWith("HTTP/1.1 200");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    assertThat(
            http.send(
                    HttpRequest.newBuilder(uri(rs, "/info/version"))
                        .timeout(Duration.ofSeconds(5))
                        .GET()
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(200);
  }

  @Test
  @DisplayName(
      "a request body over the limit gets 413 naming its size and the limit; one at the"
          + " limit is applied")
  void bodyOverTheLimitIs413() throws Exception {
    RestServer rs = server(new RestLimits(4, 8, Duration.ofSeconds(10), 1024));
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(rs, "/configuration"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(padded(CONFIG, 2048)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(JSON.readTree(r.body()).asText())
        .isEqualTo("request body too large (2048 bytes, limit 1024 bytes)\n");

    // without a Content-Length (chunked): read up to the limit
    byte[] big = padded(CONFIG, 2048).getBytes(StandardCharsets.UTF_8);
    r =
        http.send(
            HttpRequest.newBuilder(uri(rs, "/configuration"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(413);
    assertThat(JSON.readTree(r.body()).asText())
        .isEqualTo("request body too large (more than 1024 bytes, limit 1024 bytes)\n");

    r =
        http.send(
            HttpRequest.newBuilder(uri(rs, "/configuration"))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(padded(CONFIG, 1024)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
  }

  @Test
  @DisplayName("once closed, the REST server delivers no PUT still under way to the northbound")
  void closedServerDeliversNoPendingPut() throws Exception {
    Agent a = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    agents.add(a);
    CountDownLatch release = new CountDownLatch(1);
    List<Map<String, Object>> delivered = Collections.synchronizedList(new ArrayList<>());
    Northbound slow =
        new Northbound() {
          @Override
          public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
            return change(source, values);
          }

          @Override
          public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
            delivered.add(changes);
            if (delivered.size() == 1) {
              try {
                release.await(); // the first delivery is slow
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            return CompletableFuture.completedFuture(1L);
          }

          @Override
          public Map<String, Object> desired() {
            return Map.of();
          }
        };
    RestNorthbound api = restApi(a.models(), slow, RestLimits.DEFAULT);
    servers.add(api.server());
    api.start();
    RestServer rs = api.server();
    var first =
        http.sendAsync(
            HttpRequest.newBuilder(uri(rs, "/configuration"))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(CONFIG))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> delivered.size() == 1);
    var second =
        http.sendAsync(
            HttpRequest.newBuilder(uri(rs, "/configuration"))
                .header("Content-Type", "application/yaml")
                .PUT(
                    HttpRequest.BodyPublishers.ofString(
                        "mockConfig:\n  Interface_list:\n  - name: late\n    type: TAP\n"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    // the second PUT is decoded and about to be delivered: it waits for the first (or, without
    // that wait, is delivered at once)
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                delivered.size() > 1
                    || Thread.getAllStackTraces().keySet().stream()
                        .anyMatch(
                            t ->
                                t.getName().startsWith("kvs-rest-")
                                    && t.getState() == Thread.State.BLOCKED));
    Thread closing = new Thread(api::close);
    closing.start();
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> closing.getState() != Thread.State.RUNNABLE);
    release.countDown();
    closing.join(10_000);
    Thread.sleep(200);
    assertThat(delivered).hasSize(1);
    first.cancel(true);
    second.cancel(true);
  }
}
