package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.kvscheduler.agent.internal.northbound.GrpcNorthbound;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.grpc.GrpcSettings;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.proto.ConfigData;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code /scheduler/*} endpoints over real HTTP against a running agent with the mock plugins,
 * holding values in every interesting state: CONFIGURED, PENDING (a missing interface and a missing
 * bridge domain), INVALID, FAILED and RETRYING.
 */
class SchedulerRestTest {
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String NOTYPE = "config/mock/v1/interfaces/notype";
  static final String FAILING = "config/mock/v1/interfaces/failing";
  static final String RETRYING = "config/mock/v1/interfaces/retrying";
  static final String BD1 = "config/mock/v1/bridge-domain/bd1";
  static final String BD1_TAP1 = "mock/bd/bd1/interface/tap1";
  static final String BD1_GONE = "mock/bd/bd1/interface/gone";
  static final String FIB = "config/mock/v1/fib/nobd/mac/aa:bb:cc:dd:ee:ff";

  static final ObjectMapper JSON = new ObjectMapper();
  static final List<String> NODE_KEYS =
      List.of(
          "Since",
          "Until",
          "Key",
          "Label",
          "Value",
          "Flags",
          "MetadataFields",
          "Targets",
          "TargetUpdateOnly");

  static Agent agent;
  static KVScheduler kvs;
  static int port;
  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void start() throws Exception {
    MockAgentPlugin mock = new MockAgentPlugin();
    agent =
        Agent.start(
            AgentConfig.builder().restAddress("127.0.0.1:0").printTxnSummary(false).build(),
            List.of(mock));
    kvs = agent.scheduler();
    port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    kvs.startNBTransaction()
        .setValue(TAP1, Interface.of("tap1", Interface.Type.TAP, true))
        .setValue(
            BD1, BridgeDomain.of("bd1", BridgeDomain.member("tap1"), BridgeDomain.member("gone")))
        .setValue(FIB, new FibEntry("aa:bb:cc:dd:ee:ff", "nobd", FibEntry.Action.FORWARD, "tap1"))
        .commit();
    try {
      kvs.startNBTransaction().setValue(NOTYPE, new Interface("notype", null, false, "")).commit();
    } catch (RuntimeException expected) {
      // INVALID
    }
    mock.plugins().interfaces().southbound().failNextTapCreation("mock error");
    try {
      kvs.startNBTransaction()
          .setValue(FAILING, Interface.of("failing", Interface.Type.TAP, true))
          .commit();
    } catch (RuntimeException expected) {
      // FAILED
    }
    mock.plugins().interfaces().southbound().failNextTapCreation("mock error");
    try {
      kvs.startNBTransaction()
          .setValue(RETRYING, Interface.of("retrying", Interface.Type.TAP, true))
          .commit(
              TxnOptions.builder().retry(new RetryOptions(Duration.ofHours(1), 1, false)).build());
    } catch (RuntimeException expected) {
      // RETRYING
    }
    assertThat(kvs.valueStatus(TAP1).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(FIB).state()).isEqualTo(ValueState.PENDING);
    assertThat(kvs.valueStatus(NOTYPE).state()).isEqualTo(ValueState.INVALID);
    assertThat(kvs.valueStatus(FAILING).state()).isEqualTo(ValueState.FAILED);
    assertThat(kvs.valueStatus(RETRYING).state()).isEqualTo(ValueState.RETRYING);
  }

  @AfterAll
  static void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  static HttpResponse<String> get(String pathAndQuery) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
            .timeout(Duration.ofSeconds(30))
            .GET()
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(String pathAndQuery) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** A 200 JSON answer, parsed. */
  static JsonNode ok(String pathAndQuery) throws Exception {
    HttpResponse<String> r = get(pathAndQuery);
    assertThat(r.statusCode()).as(pathAndQuery + ": " + r.body()).isEqualTo(200);
    RestServerTest.assertContentType(r, "application/json; charset=UTF-8");
    assertThat(r.body()).endsWith("\n");
    return JSON.readTree(r.body());
  }

  /** A client mistake: {@code status} with {@code {"Error": ...}} containing {@code words}. */
  static void error(HttpResponse<String> r, int status, String... words) throws Exception {
    assertThat(r.statusCode()).as(r.uri() + ": " + r.body()).isEqualTo(status);
    RestServerTest.assertContentType(r, "application/json; charset=UTF-8");
    // one JSON object, nothing after it
    JsonNode e =
        JSON.reader().with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).readTree(r.body());
    assertThat(keys(e)).as(r.body()).containsExactly("Error");
    assertThat(e.get("Error").asText()).contains(words);
  }

  static List<String> keys(JsonNode n) {
    return RestServerTest.fieldNames(n);
  }

  static JsonNode find(JsonNode array, String field, String value) {
    for (JsonNode n : array) {
      if (n.path(field).asText().equals(value)) {
        return n;
      }
    }
    throw new AssertionError("no element with " + field + "=" + value + " in " + array);
  }

  // ------------------------------------------------------------------ txn-history

  @Test
  @DisplayName(
      "txn-history: every transaction, oldest first, RecordedTxn keys in order, zero"
          + " fields left out")
  void txnHistory() throws Exception {
    JsonNode all = ok("/scheduler/txn-history");
    assertThat(all.isArray()).isTrue();
    assertThat(all.size()).isGreaterThanOrEqualTo(5);
    long prev = -1;
    for (JsonNode t : all) {
      assertThat(t.get("SeqNum").asLong()).isGreaterThan(prev);
      prev = t.get("SeqNum").asLong();
      List<String> k = keys(t);
      assertThat(
              List.of(
                  "PreRecord",
                  "WithSimulation",
                  "Start",
                  "Stop",
                  "SeqNum",
                  "TxnType",
                  "ResyncType",
                  "Description",
                  "RetryForTxn",
                  "RetryAttempt",
                  "Values",
                  "Planned",
                  "Executed"))
          .containsSubsequence(k);
      assertThat(k).contains("Start", "Stop", "SeqNum", "TxnType").doesNotContain("PreRecord");
      assertThat(t.get("Start").asText())
          .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d*[1-9])?(Z|[+-]\\d\\d:\\d\\d)");
    }
    JsonNode first = all.get(0);
    assertThat(first.get("TxnType").asText()).isIn("NBTransaction", "SBNotification");
    // the transaction that failed TAP creation: the op carries the error, values their proto
    JsonNode failed = null;
    for (JsonNode t : all) {
      for (JsonNode op : t.path("Executed")) {
        if (op.get("Key").asText().equals(FAILING) && failed == null) {
          failed = op;
        }
      }
    }
    assertThat(failed).isNotNull();
    assertThat(keys(failed))
        .containsExactly("Operation", "Key", "NewState", "NewValue", "NewErrMsg");
    assertThat(failed.get("NewState").asText()).isEqualTo("FAILED");
    assertThat(failed.get("NewErrMsg").asText()).isEqualTo("mock error");
    assertThat(keys(failed.get("NewValue"))).containsExactly("ProtoMsgName", "ProtoMsgData");
    assertThat(failed.at("/NewValue/ProtoMsgName").asText()).isEqualTo("mock.interfaces.Interface");
    assertThat(failed.at("/NewValue/ProtoMsgData/name").asText()).isEqualTo("failing");
    assertThat(failed.at("/NewValue/ProtoMsgData/type").asText()).isEqualTo("TAP");
  }

  @Test
  @DisplayName(
      "txn-history?seq-num=N: one RecordedTxn; derived values with the nested proto name;"
          + " Values with Key, Value, Origin")
  void txnHistoryBySeqNum() throws Exception {
    long seq =
        kvs.transactionHistory().stream()
            .filter(t -> t.values().stream().anyMatch(v -> v.key().equals(BD1)))
            .findFirst()
            .orElseThrow()
            .seqNum();
    JsonNode t = ok("/scheduler/txn-history?seq-num=" + seq);
    assertThat(t.get("SeqNum").asLong()).isEqualTo(seq);
    assertThat(t.get("TxnType").asText()).isEqualTo("NBTransaction");
    JsonNode bd = find(t.get("Values"), "Key", BD1);
    assertThat(keys(bd)).containsExactly("Key", "Value", "Origin");
    assertThat(bd.get("Origin").asInt()).isEqualTo(1);
    assertThat(bd.at("/Value/ProtoMsgName").asText()).isEqualTo("mock.l2.BridgeDomain");
    assertThat(bd.at("/Value/ProtoMsgData/interfaces/0/name").asText()).isEqualTo("tap1");
    JsonNode derived = find(t.get("Executed"), "Key", BD1_TAP1);
    assertThat(derived.get("IsDerived").asBoolean()).isTrue();
    assertThat(derived.at("/NewValue/ProtoMsgName").asText())
        .isEqualTo("mock.l2.BridgeDomain.Interface");
    JsonNode pending = find(t.get("Executed"), "Key", BD1_GONE);
    assertThat(pending.get("NewState").asText()).isEqualTo("PENDING");
    assertThat(pending.get("NOOP").asBoolean()).isTrue();

    error(
        get("/scheduler/txn-history?seq-num=999999"),
        404,
        "transaction with such sequence number is not recorded");
    error(get("/scheduler/txn-history?seq-num=abc"), 400, "'seq-num'", "abc");
    error(get("/scheduler/txn-history?seq-num=-1"), 400, "'seq-num'");
  }

  @Test
  @DisplayName(
      "txn-history: since/until in ns since the epoch; until before since is null; an"
          + " empty window is []")
  void txnHistoryWindow() throws Exception {
    long now = System.currentTimeMillis() * 1_000_000L;
    assertThat(ok("/scheduler/txn-history?since=" + (now + 3_600_000_000_000L)).isArray()).isTrue();
    assertThat(ok("/scheduler/txn-history?since=" + (now + 3_600_000_000_000L)).size()).isZero();
    assertThat(ok("/scheduler/txn-history?since=10&until=5").isNull()).isTrue();
    assertThat(ok("/scheduler/txn-history?since=0&until=" + (now + 1_000_000_000L)).size())
        .isEqualTo(kvs.transactionHistory().size());
    error(
        get("/scheduler/txn-history?since=yesterday"),
        400,
        "'since'",
        "nanoseconds since the Unix epoch");
    error(get("/scheduler/txn-history?until=1.5"), 400, "'until'");
  }

  @Test
  @DisplayName("txn-history?format=text: the transaction text; one transaction verbose")
  void txnHistoryText() throws Exception {
    HttpResponse<String> r = get("/scheduler/txn-history?format=text");
    assertThat(r.statusCode()).isEqualTo(200);
    RestServerTest.assertContentType(r, "text/plain; charset=UTF-8");
    assertThat(r.body())
        .startsWith("Transaction #0:\n    * transaction arguments:\n" + "        - seqNum: 0\n");
    assertThat(r.body())
        .contains("\nTransaction #1:\n", "- error: mock error\n", "[DERIVED NOOP IS-PENDING]");
    long seq =
        kvs.transactionHistory().stream()
            .filter(t -> t.values().stream().anyMatch(v -> v.key().equals(FAILING)))
            .findFirst()
            .orElseThrow()
            .seqNum();
    String one = get("/scheduler/txn-history?format=text&seq-num=" + seq).body();
    assertThat(one)
        .startsWith("* transaction arguments:\n    - seqNum: " + seq + "\n")
        .contains("- prev-state: NONEXISTENT \n", "- new-state: FAILED \n");
    error(get("/scheduler/txn-history?format=xml"), 400, "'format'", "json, text");
    error(
        get("/scheduler/txn-history?seqnum=1"), 400, "unknown query parameter 'seqnum'", "seq-num");
  }

  // ------------------------------------------------------------------ timeline and snapshot

  @Test
  @DisplayName("key-timeline: RecordedNode keys in order, flags as strings, time picks one")
  void keyTimeline() throws Exception {
    JsonNode revs = ok("/scheduler/key-timeline?key=" + FAILING);
    assertThat(revs.isArray()).isTrue();
    JsonNode last = revs.get(revs.size() - 1);
    assertThat(keys(last)).containsExactlyElementsOf(NODE_KEYS);
    assertThat(last.get("Until").asText()).isEqualTo("0001-01-01T00:00:00Z");
    assertThat(last.get("Key").asText()).isEqualTo(FAILING);
    assertThat(keys(last.get("Flags")))
        .containsSubsequence("last-update", "error", "value-state", "descriptor");
    assertThat(last.at("/Flags/value-state").asText()).isEqualTo("FAILED");
    assertThat(last.at("/Flags/error").asText()).isEqualTo("mock error");
    assertThat(last.at("/Flags/descriptor").asText()).isEqualTo("mock-interface");
    assertThat(last.at("/Flags/last-update").asText()).startsWith("TXN-");
    assertThat(last.get("TargetUpdateOnly").asBoolean()).isFalse();

    // the derived binding waits for interface 'gone': a depends-on target with no match
    JsonNode bind = ok("/scheduler/key-timeline?key=" + BD1_GONE);
    JsonNode node = bind.get(bind.size() - 1);
    assertThat(node.at("/Flags/value-state").asText()).isEqualTo("PENDING");
    assertThat(node.at("/Flags/derived").asText()).isEqualTo(BD1);
    JsonNode target = node.get("Targets").get(0);
    assertThat(keys(target)).containsExactly("Relation", "Label", "ExpectedKey", "MatchingKeys");
    assertThat(target.get("Relation").asText()).isEqualTo("depends-on");
    assertThat(target.get("ExpectedKey").asText()).isEqualTo("config/mock/v1/interfaces/gone");
    assertThat(target.get("MatchingKeys").size()).isZero();

    long now = System.currentTimeMillis() * 1_000_000L + 1_000_000_000L;
    JsonNode at = ok("/scheduler/key-timeline?key=" + FAILING + "&time=" + now);
    assertThat(at.isObject()).isTrue();
    assertThat(at.get("Key").asText()).isEqualTo(FAILING);
    assertThat(ok("/scheduler/key-timeline?key=" + FAILING + "&time=1").isNull()).isTrue();
    assertThat(ok("/scheduler/key-timeline?key=no/such/key").isNull()).isTrue();
    error(get("/scheduler/key-timeline"), 400, "missing key argument");
    error(get("/scheduler/key-timeline?key=" + TAP1 + "&time=now"), 400, "'time'");
  }

  @Test
  @DisplayName(
      "graph-snapshot: one RecordedNode per key; base values list their derived"
          + " values; time=1 is empty")
  void graphSnapshot() throws Exception {
    JsonNode all = ok("/scheduler/graph-snapshot");
    assertThat(all.isArray()).isTrue();
    List<String> ks = new ArrayList<>();
    all.forEach(n -> ks.add(n.get("Key").asText()));
    assertThat(ks).contains(TAP1, BD1, BD1_TAP1, BD1_GONE, FIB, NOTYPE, FAILING, RETRYING);
    JsonNode bd = find(all, "Key", BD1);
    assertThat(keys(bd)).containsExactlyElementsOf(NODE_KEYS);
    List<String> derives = new ArrayList<>();
    bd.get("Targets")
        .forEach(
            t -> {
              if (t.get("Relation").asText().equals("derives")) {
                derives.add(t.get("Label").asText());
              }
            });
    assertThat(derives).containsExactlyInAnyOrder(BD1_TAP1, BD1_GONE);
    JsonNode tap = find(all, "Key", TAP1);
    assertThat(tap.get("Targets").isNull()).isTrue();
    assertThat(keys(tap.get("MetadataFields"))).contains("sb-index");
    assertThat(ok("/scheduler/graph-snapshot?time=1").size()).isZero();
    error(get("/scheduler/graph-snapshot?time=x"), 400, "'time'");
  }

  // ------------------------------------------------------------------ flag-stats

  @Test
  @DisplayName(
      "flag-stats: TotalCount and PerValueCount; prefix filters; missing or unknown"
          + " flag is a 400 naming the accepted flags")
  void flagStats() throws Exception {
    JsonNode s = ok("/scheduler/flag-stats?flag=value-state");
    assertThat(keys(s)).containsExactly("TotalCount", "PerValueCount");
    assertThat(s.get("TotalCount").asLong()).isPositive();
    assertThat(s.at("/PerValueCount/FAILED").asLong()).isPositive();
    assertThat(s.at("/PerValueCount/INVALID").asLong()).isPositive();
    JsonNode only =
        ok(
            "/scheduler/flag-stats?flag=descriptor&prefix=config/mock/v1/fib/"
                + "&prefix=config/mock/v1/bridge-domain/");
    assertThat(keys(only.get("PerValueCount")))
        .containsExactly("mock-bridge-domain", "mock-l2-fib");
    // a flag without a value is counted under its name, never under an empty key
    JsonNode unavailable = ok("/scheduler/flag-stats?flag=unavailable");
    assertThat(unavailable.get("TotalCount").asLong()).isPositive();
    assertThat(keys(unavailable.get("PerValueCount"))).containsExactly("unavailable");
    assertThat(unavailable.at("/PerValueCount/unavailable").asLong())
        .isEqualTo(unavailable.get("TotalCount").asLong());
    error(get("/scheduler/flag-stats"), 400, "missing flag argument");
    error(
        get("/scheduler/flag-stats?flag=colour"),
        400,
        "unknown flag 'colour'",
        "last-update, error, value-state, unavailable, descriptor, derived");
  }

  // ------------------------------------------------------------------ downstream-resync

  @Test
  @DisplayName(
      "downstream-resync: POST commits a DownstreamResync and returns its record"
          + " without Values; GET is 405; a bad flag is 400")
  void downstreamResync() throws Exception {
    // an agent of its own: a downstream resync re-applies the failed values of the shared one
    try (Agent own =
        Agent.start(
            AgentConfig.builder().restAddress("127.0.0.1:0").printTxnSummary(false).build())) {
      int ownPort =
          own.sources().stream()
              .filter(RestNorthbound.class::isInstance)
              .map(RestNorthbound.class::cast)
              .findFirst()
              .orElseThrow()
              .port();
      String base = "http://127.0.0.1:" + ownPort;
      HttpResponse<String> r =
          HTTP.send(
              HttpRequest.newBuilder(
                      URI.create(base + "/scheduler/downstream-resync?retry=true&verbose=1"))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      JsonNode t = JSON.readTree(r.body());
      assertThat(t.get("TxnType").asText()).isEqualTo("NBTransaction");
      assertThat(t.get("ResyncType").asText()).isEqualTo("DownstreamResync");
      assertThat(keys(t)).doesNotContain("Values");
      assertThat(own.scheduler().recordedTransaction(t.get("SeqNum").asLong())).isPresent();
      assertThat(
              HTTP.send(
                      HttpRequest.newBuilder(URI.create(base + "/scheduler/downstream-resync"))
                          .GET()
                          .build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(405);
      error(
          HTTP.send(
              HttpRequest.newBuilder(URI.create(base + "/scheduler/downstream-resync?retry=maybe"))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString()),
          400,
          "'retry'");
      assertThat(own.scheduler().transactionHistory()).hasSize(1);
    }
  }

  // ------------------------------------------------------------------ dump

  @Test
  @DisplayName(
      "dump: the index, then values per descriptor or key prefix in the SB, NB and"
          + " cached views")
  void dump() throws Exception {
    JsonNode index = ok("/scheduler/dump");
    assertThat(keys(index)).containsExactly("Descriptors", "KeyPrefixes", "Views");
    List<String> names = new ArrayList<>();
    index.get("Descriptors").forEach(n -> names.add(n.asText()));
    assertThat(names).contains("mock-interface", "mock-bridge-domain", "mock-l2-fib");
    assertThat(names.indexOf("mock-interface")).isLessThan(names.indexOf("mock-bridge-domain"));
    // the NB key prefixes registered, none empty (a derived values' descriptor has none)
    List<String> prefixes = new ArrayList<>();
    index.get("KeyPrefixes").forEach(n -> prefixes.add(n.asText()));
    assertThat(prefixes)
        .contains("config/mock/v1/interfaces/", "config/mock/v1/bridge-domain/")
        .doesNotContain("");
    assertThat(prefixes.indexOf("config/mock/v1/interfaces/"))
        .isLessThan(prefixes.indexOf("config/mock/v1/bridge-domain/"));
    assertThat(index.get("Views").toString()).isEqualTo("[\"SB\",\"NB\",\"cached\"]");

    JsonNode sb = ok("/scheduler/dump?descriptor=mock-interface");
    JsonNode tap = find(sb, "Key", TAP1);
    assertThat(keys(tap)).containsExactly("Key", "Value", "Origin", "Metadata");
    assertThat(tap.at("/Value/ProtoMsgName").asText()).isEqualTo("mock.interfaces.Interface");
    assertThat(tap.get("Origin").asInt()).isEqualTo(1);
    JsonNode nb = ok("/scheduler/dump?key-prefix=config/mock/v1/interfaces/&view=NB");
    List<String> nbKeys = new ArrayList<>();
    nb.forEach(n -> nbKeys.add(n.get("Key").asText()));
    assertThat(nbKeys).contains(TAP1, NOTYPE, FAILING);
    JsonNode cached = ok("/scheduler/dump?descriptor=mock-interface&view=cached");
    List<String> cachedKeys = new ArrayList<>();
    cached.forEach(n -> cachedKeys.add(n.get("Key").asText()));
    assertThat(cachedKeys).contains(TAP1).doesNotContain(NOTYPE, FAILING);

    error(
        get("/scheduler/dump?descriptor=mock-interface&view=everything"),
        400,
        "'view'",
        "SB, NB, cached");
    error(
        get("/scheduler/dump?key-prefix=config/nothing/"),
        404,
        "no descriptor found matching the key prefix");
    error(get("/scheduler/dump?descriptor=nothing"), 404, "'nothing'", "not registered");
    error(
        get("/scheduler/dump?descriptor=mock-interface&key-prefix=config/mock/v1/fib/"),
        400,
        "either");
    error(get("/scheduler/dump?descriptor=a&descriptor=b"), 400, "'descriptor'", "2 times");
  }

  // ------------------------------------------------------------------ status

  @Test
  @DisplayName(
      "status: one value with its derived values; states FAILED, RETRYING, PENDING"
          + " (details: labels), INVALID (details: fields); unknown keys have only the key")
  void status() throws Exception {
    JsonNode bd = ok("/scheduler/status?key=" + BD1);
    assertThat(keys(bd)).containsExactly("value", "derived_values");
    assertThat(keys(bd.get("value"))).containsExactly("key", "state", "last_operation");
    JsonNode gone = find(bd.get("derived_values"), "key", BD1_GONE);
    assertThat(keys(gone)).containsExactly("key", "state", "last_operation", "details");
    assertThat(gone.get("state").asText()).isEqualTo("PENDING");

    JsonNode failed = ok("/scheduler/status?key=" + FAILING).get("value");
    assertThat(keys(failed)).containsExactly("key", "state", "error", "last_operation");
    assertThat(failed.get("state").asText()).isEqualTo("FAILED");
    assertThat(failed.get("error").asText()).isEqualTo("mock error");
    JsonNode retrying = ok("/scheduler/status?key=" + RETRYING).get("value");
    assertThat(retrying.get("state").asText()).isEqualTo("RETRYING");
    assertThat(retrying.get("error").asText()).isEqualTo("mock error");
    JsonNode invalid = ok("/scheduler/status?key=" + NOTYPE).get("value");
    assertThat(invalid.get("state").asText()).isEqualTo("INVALID");
    assertThat(invalid.get("details").toString()).isEqualTo("[\"type\"]");
    JsonNode pending = ok("/scheduler/status?key=" + FIB);
    assertThat(keys(pending)).containsExactly("value");
    assertThat(pending.at("/value/state").asText()).isEqualTo("PENDING");
    assertThat(pending.at("/value/details").size()).isPositive();

    JsonNode unknown = ok("/scheduler/status?key=no/such/key");
    assertThat(unknown.toString()).isEqualTo("{\"value\":{\"key\":\"no/such/key\"}}");

    // Go's MarshalIndent layout, also for a streamed array
    assertThat(get("/scheduler/status").body())
        .startsWith("[\n  {\n    \"value\": {\n" + "      \"key\": ")
        .endsWith("\n  }\n]\n");
    JsonNode all = ok("/scheduler/status");
    List<String> ks = new ArrayList<>();
    all.forEach(n -> ks.add(n.at("/value/key").asText()));
    assertThat(ks).isSorted().contains(TAP1, BD1, FIB, NOTYPE).doesNotContain(BD1_TAP1);
    JsonNode fibs = ok("/scheduler/status?key-prefix=config/mock/v1/fib/");
    assertThat(fibs.size()).isEqualTo(1);
    JsonNode bds = ok("/scheduler/status?descriptor=mock-bridge-domain");
    assertThat(bds.size()).isEqualTo(1);
    error(get("/scheduler/status?key-prefix=config/nothing/"), 404, "unknown key prefix");
    error(get("/scheduler/status?key=a&descriptor=b"), 400, "at most one");
  }

  // ------------------------------------------------------------------ stats

  @Test
  @DisplayName("stats: TxnStats with operation and state counts, per-descriptor call counts")
  void stats() throws Exception {
    JsonNode s = ok("/scheduler/stats");
    assertThat(keys(s))
        .containsExactly("TxnStats", "GraphMethods", "AllDescriptors", "Descriptors");
    assertThat(keys(s.get("TxnStats")))
        .containsExactly(
            "TotalProcessed", "OperationCount", "ValueStateCount", "ErrorCount", "Methods");
    assertThat(keys(s.at("/TxnStats/ValueStateCount"))).hasSize(ValueState.values().length);
    assertThat(s.at("/TxnStats/ValueStateCount/FAILED").asLong()).isPositive();
    assertThat(s.at("/TxnStats/ErrorCount").asLong()).isPositive();
    assertThat(keys(s.get("Descriptors"))).contains("mock-interface");
    assertThat(keys(s.at("/Descriptors/mock-interface/0"))).containsExactly("name", "count");
    error(
        get("/scheduler/stats?verbose=1"),
        400,
        "unknown query parameter 'verbose'",
        "it takes none");
  }

  // ------------------------------------------------------------------ graph

  @Test
  @DisplayName(
      "graph: DOT source coloured by state with labelled dependencies; JSON nodes and"
          + " edges; txn=N; SVG rendered by Graphviz or a clear error naming the package")
  void graph() throws Exception {
    HttpResponse<String> raw = get("/scheduler/graph?format=raw");
    assertThat(raw.statusCode()).isEqualTo(200);
    assertThat(raw.body())
        .startsWith("digraph kvscheduler {")
        .contains("\"" + BD1_GONE + "\" -> \"config/mock/v1/interfaces/gone\" [label=")
        .contains("subgraph cluster_")
        .contains("fillcolor=\"#ff9b9b\"");

    JsonNode g = ok("/scheduler/graph?format=json");
    assertThat(keys(g)).containsExactly("nodes", "edges");
    JsonNode failing = find(g.get("nodes"), "key", FAILING);
    assertThat(keys(failing))
        .containsExactly(
            "key",
            "label",
            "state",
            "descriptor",
            "derivedFrom",
            "error",
            "unavailable",
            "lastUpdate",
            "value",
            "placeholder");
    assertThat(failing.get("state").asText()).isEqualTo("FAILED");
    JsonNode derived = find(g.get("nodes"), "key", BD1_TAP1);
    assertThat(derived.get("derivedFrom").asText()).isEqualTo(BD1);
    JsonNode missing = find(g.get("nodes"), "key", "config/mock/v1/interfaces/gone");
    assertThat(missing.get("placeholder").asBoolean()).isTrue();
    JsonNode edge = find(g.get("edges"), "from", BD1_GONE);
    assertThat(keys(edge)).containsExactly("from", "to", "relation", "label", "satisfied");
    assertThat(edge.get("relation").asText()).isEqualTo("depends-on");
    assertThat(edge.get("satisfied").asBoolean()).isFalse();

    JsonNode early = ok("/scheduler/graph?format=json&txn=0");
    assertThat(early.get("nodes").size()).isLessThan(g.get("nodes").size());

    HttpResponse<String> svg = get("/scheduler/graph");
    HttpResponse<String> laidOut = get("/scheduler/graph?format=dot");
    if (svg.statusCode() == 200) {
      assertThat(svg.headers().firstValue("Content-Type").orElse("")).startsWith("image/svg+xml");
      assertThat(svg.body()).contains("<svg", BD1_GONE);
      assertThat(laidOut.statusCode()).isEqualTo(200);
      assertThat(laidOut.body()).startsWith("digraph kvscheduler {").contains("pos=\"");
    } else {
      error(svg, 501, "graphviz", "format=raw");
      error(laidOut, 501, "graphviz");
    }
    error(get("/scheduler/graph?format=png"), 400, "'format'");
    error(get("/scheduler/graph?txn=x"), 400, "'txn'");
    error(get("/scheduler/graph?txn=999999&format=raw"), 404, "not recorded");
  }

  // ------------------------------------------------------------------ explain

  @Test
  @DisplayName(
      "explain: the root-cause chain as a JSON tree: missing dependency, invalid fields,"
          + " error text; text form on request")
  void explain() throws Exception {
    JsonNode bind = ok("/scheduler/explain?key=" + BD1_GONE);
    assertThat(keys(bind)).containsExactly("key", "state", "reason", "causes");
    assertThat(bind.get("reason").asText()).isEqualTo("WAITING");
    JsonNode cause = bind.get("causes").get(0);
    assertThat(cause.get("key").asText()).isEqualTo("config/mock/v1/interfaces/gone");
    assertThat(cause.get("state").asText()).isEqualTo("NONEXISTENT");
    assertThat(cause.get("reason").asText()).isEqualTo("MISSING_DEPENDENCY");
    assertThat(cause.get("dependency").asText()).isNotEmpty();

    JsonNode invalid = ok("/scheduler/explain?key=" + NOTYPE);
    assertThat(invalid.get("reason").asText()).isEqualTo("INVALID");
    assertThat(invalid.get("invalidFields").toString()).isEqualTo("[\"type\"]");
    assertThat(invalid.get("error").asText()).contains("without type");
    JsonNode failed = ok("/scheduler/explain?key=" + FAILING);
    assertThat(keys(failed)).containsExactly("key", "state", "reason", "error", "failedOperation");
    assertThat(failed.get("failedOperation").asText()).isEqualTo("CREATE");
    assertThat(ok("/scheduler/explain?key=" + TAP1).get("reason").asText()).isEqualTo("APPLIED");
    assertThat(ok("/scheduler/explain?key=no/such").get("reason").asText())
        .isEqualTo("UNKNOWN_KEY");

    HttpResponse<String> text = get("/scheduler/explain?format=text&key=" + BD1_GONE);
    assertThat(text.statusCode()).isEqualTo(200);
    assertThat(text.body()).startsWith(BD1_GONE + " is PENDING\n");
    error(get("/scheduler/explain"), 400, "missing key argument");
  }

  // ------------------------------------------------------------------ reads and the engine

  @Test
  @DisplayName(
      "a client reading a large status answer slowly does not hold the engine:"
          + " transactions go on while its answer is being written")
  void aSlowReaderDoesNotStallTheEngine() throws Exception {
    try (Agent own =
        Agent.start(
            AgentConfig.builder().restAddress("127.0.0.1:0").printTxnSummary(false).build())) {
      int ownPort =
          own.sources().stream()
              .filter(RestNorthbound.class::isInstance)
              .map(RestNorthbound.class::cast)
              .findFirst()
              .orElseThrow()
              .port();
      var txn = own.scheduler().startNBTransaction();
      for (int i = 0; i < 20_000; i++) {
        txn.setValue(
            "config/mock/v1/interfaces/lo" + i,
            Interface.of("lo" + i, Interface.Type.LOOPBACK, true));
      }
      txn.commit();
      try (Socket s = new Socket()) {
        s.setReceiveBufferSize(4096);
        s.connect(new InetSocketAddress("127.0.0.1", ownPort));
        s.getOutputStream()
            .write(
                ("GET /scheduler/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        InputStream in = s.getInputStream();
        byte[] first = new byte[100];
        assertThat(in.readNBytes(first, 0, first.length)).isEqualTo(first.length);
        assertThat(new String(first, StandardCharsets.US_ASCII)).startsWith("HTTP/1.1 200");
        // the answer (several MB) is stuck in the socket buffers: the engine goes on
        long t0 = System.nanoTime();
        for (int i = 0; i < 20; i++) {
          own.scheduler()
              .startNBTransaction()
              .setValue(
                  "config/mock/v1/interfaces/lo" + i,
                  Interface.of("lo" + i, Interface.Type.LOOPBACK, false))
              .commit();
        }
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(20));
        assertThat(own.scheduler().valueStatus("config/mock/v1/interfaces/lo19").state())
            .isEqualTo(ValueState.CONFIGURED);
        // and the answer goes on once the client reads again
        String rest = new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
        assertThat(rest).contains("\"key\": \"config/mock/v1/interfaces/lo");
      }
    }
  }

  // ------------------------------------------------------------------ metrics

  @Test
  @DisplayName(
      "metrics: valid Prometheus text with transactions, durations, queue, operations,"
          + " value states, retries and northbound deliveries")
  void metrics() throws Exception {
    HttpResponse<String> put =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/configuration"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/yaml")
                .PUT(
                    HttpRequest.BodyPublishers.ofString(
                        "mockConfig:\n  Interface_list:\n  - name: metered\n    type: LOOPBACK\n"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
    HttpResponse<String> r = get("/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
    String text = r.body();
    for (String line : text.split("\n")) {
      if (!line.startsWith("#") && !line.isBlank()) {
        assertThat(line).matches("[a-zA-Z_:][a-zA-Z0-9_:]*(\\{.*\\})? \\S+");
      }
    }
    assertThat(text)
        .contains(
            "# TYPE kvs_transactions_total counter",
            "kvs_transactions_total{result=\"error\",resync=\"NotResync\",type=\"NBTransaction\"}",
            "kvs_transaction_duration_seconds_bucket{",
            "kvs_transaction_duration_seconds_count ",
            "kvs_queue_length ",
            "kvs_queue_wait_seconds_count ",
            "kvs_commits_refused_total 0.0",
            "kvs_operations_total{descriptor=\"mock-interface\",operation=\"CREATE\","
                + "result=\"error\"}",
            "kvs_values{state=\"FAILED\"} 1.0",
            "kvs_southbound_call_seconds_count{call=\"create\",descriptor=\"mock-interface\"}",
            "kvs_values{state=\"INVALID\"} 1.0",
            "kvs_values{state=\"RETRYING\"} 1.0",
            "kvs_northbound_deliveries_total{kind=\"change\",source=\"rest\"} 1.0");
    // the JVM's and the process's own metrics
    assertThat(text)
        .contains(
            "jvm_memory_used_bytes{",
            "jvm_gc_memory_allocated_bytes_total ",
            "jvm_threads_live_threads ",
            "jvm_classes_loaded_classes ",
            "process_cpu_usage ",
            "system_cpu_count ",
            "process_uptime_seconds ",
            "process_start_time_seconds ",
            "process_files_open_files ");
    assertThat(text).containsPattern("kvs_retries_scheduled_total [1-9]");
    // counted once: a second scrape does not count the same transactions again
    long count = count(text);
    assertThat(count(get("/metrics").body())).isEqualTo(count);
  }

  @Test
  @DisplayName("metrics: files rejected by reason; gRPC requests by method and status code")
  void sourceMetrics(@TempDir Path dir) throws Exception {
    Files.writeString(
        dir.resolve("good.yaml"),
        "config/mock/v1/interfaces/good:\n  name: good\n  type: LOOPBACK\n");
    Files.writeString(
        dir.resolve("malformed.yaml"),
        "config/mock/v1/interfaces/bad:\n  name: bad\n type LOOPBACK\n");
    Files.writeString(dir.resolve("unknown.yaml"), "config/mock/v9/tunnels/t1:\n  name: t1\n");
    AgentConfig cfg =
        AgentConfig.builder()
            .configDir(dir)
            .restAddress("127.0.0.1:0")
            .printTxnSummary(false)
            .grpc(
                new GrpcSettings(
                    "127.0.0.1:0", null, null, "s3cret", GrpcSettings.DEFAULT_MAX_MESSAGE_BYTES))
            .build();
    try (Agent own = Agent.start(cfg, List.of(new MockAgentPlugin()))) {
      int restPort =
          own.sources().stream()
              .filter(RestNorthbound.class::isInstance)
              .map(RestNorthbound.class::cast)
              .findFirst()
              .orElseThrow()
              .port();
      int grpcPort =
          own.sources().stream()
              .filter(GrpcNorthbound.class::isInstance)
              .map(GrpcNorthbound.class::cast)
              .findFirst()
              .orElseThrow()
              .port();
      ManagedChannel channel =
          Grpc.newChannelBuilderForAddress(
                  "127.0.0.1", grpcPort, InsecureChannelCredentials.create())
              .build();
      try {
        var stub =
            ConfiguratorServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(20, TimeUnit.SECONDS);
        assertThatThrownBy(() -> stub.get(GetRequest.getDefaultInstance()))
            .satisfies(
                e ->
                    assertThat(Status.fromThrowable(e).getCode())
                        .isEqualTo(Status.Code.UNAUTHENTICATED));
        Metadata auth = new Metadata();
        auth.put(
            Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer s3cret");
        var authorized = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth));
        authorized.get(GetRequest.getDefaultInstance());
        authorized.get(GetRequest.getDefaultInstance());
        authorized.update(
            UpdateRequest.newBuilder()
                .setUpdate(
                    io.kvscheduler.agent.grpc.MockDomain.config(
                        ConfigData.newBuilder()
                            .addInterfaces(
                                io.kvscheduler.plugins.mock.proto.interfaces.Interface.newBuilder()
                                    .setName("g1")
                                    .setType(
                                        io.kvscheduler.plugins.mock.proto.interfaces.Interface.Type
                                            .TAP))))
                .build());
        // an open Notify stream is counted in kvs_grpc_streams
        ConfiguratorServiceGrpc.newStub(channel)
            .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth))
            .notify(
                io.kvscheduler.grpc.proto.configurator.NotifyRequest.getDefaultInstance(),
                new io.grpc.stub.StreamObserver<>() {
                  @Override
                  public void onNext(io.kvscheduler.grpc.proto.configurator.NotifyResponse r) {}

                  @Override
                  public void onError(Throwable t) {}

                  @Override
                  public void onCompleted() {}
                });
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> metrics(restPort).contains("kvs_grpc_streams 1.0"));
      } finally {
        channel.shutdownNow();
      }
      String get = "rpc=\"ligato.configurator.ConfiguratorService/Get\"";
      String text =
          HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + "/metrics"))
                      .timeout(Duration.ofSeconds(30))
                      .GET()
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertThat(text)
          .contains(
              "kvs_northbound_rejected_values_total{reason=\"malformed\",source=\"file\"} 1.0",
              "kvs_northbound_rejected_values_total{reason=\"unknown-model\",source=\"file\"} 1.0",
              "kvs_grpc_requests_total{code=\"UNAUTHENTICATED\"," + get + "} 1.0",
              "kvs_grpc_requests_total{code=\"OK\"," + get + "} 2.0",
              "kvs_grpc_requests_total{code=\"OK\","
                  + "rpc=\"ligato.configurator.ConfiguratorService/Update\"} 1.0");
    }
  }

  /** What {@code GET /metrics} answers. */
  static String metrics(int restPort) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + restPort + "/metrics"))
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** The value of kvs_transaction_duration_seconds_count. */
  static long count(String text) {
    for (String line : text.split("\n")) {
      if (line.startsWith("kvs_transaction_duration_seconds_count ")) {
        return (long) Double.parseDouble(line.substring(line.indexOf(' ') + 1));
      }
    }
    throw new AssertionError("no kvs_transaction_duration_seconds_count in " + text);
  }

  // ------------------------------------------------------------------ the server's own errors

  @Test
  @DisplayName("a malformed URL, an unknown path and a wrong method are JSON errors")
  void malformedRequests() throws Exception {
    String bad =
        raw(
            "GET /scheduler/status?key=%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Connection: close\r\n\r\n");
    assertThat(bad).startsWith("HTTP/1.1 400");
    assertThat(bad).containsIgnoringCase("content-type: application/json");
    assertThat(bad).contains("{\n  \"Error\": \"");
    String badPath =
        raw("GET /sch%zzeduler HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assertThat(badPath).startsWith("HTTP/1.1 400");
    assertThat(badPath).contains("\"Error\"");
    // Jetty's own answers, too, are not to be sniffed as another type
    assertThat(badPath).containsIgnoringCase("X-Content-Type-Options: nosniff");
    error(get("/scheduler/nothing"), 404, "no such endpoint");
    error(post("/scheduler/status"), 405, "POST");
  }

  /** Sends {@code request} on a plain socket and returns the whole answer. */
  static String raw(String request) throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
