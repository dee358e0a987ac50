package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.kvscheduler.agent.grpc.MockDomain;
import io.kvscheduler.agent.internal.confirm.CommitConfirmer;
import io.kvscheduler.agent.internal.northbound.GrpcNorthbound;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.grpc.GrpcSettings;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.proto.ConfigData;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Confirmed commits over real HTTP and gRPC: {@code PUT /configuration?confirm-within=...}, {@code
 * POST /configuration/confirm} and {@code /rollback}, {@code GET /configuration/pending}, the gRPC
 * metadata {@code confirm-within}, and the probes of the settings.
 */
class ConfirmedCommitRestTest {
  static final String TAP = "config/mock/v1/interfaces/";
  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  static final ObjectMapper JSON = new ObjectMapper();

  static Agent agent;
  static int port;
  static int grpcPort;

  @BeforeAll
  static void start() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder()
                .restAddress("127.0.0.1:0")
                .grpc(
                    new GrpcSettings(
                        "127.0.0.1:0", null, null, null, GrpcSettings.DEFAULT_MAX_MESSAGE_BYTES))
                .printTxnSummary(false)
                .build(),
            List.of(new MockAgentPlugin()));
    port = restPort(agent);
    grpcPort =
        agent.sources().stream()
            .filter(GrpcNorthbound.class::isInstance)
            .map(GrpcNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
  }

  @AfterAll
  static void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  @AfterEach
  void nothingLeftPending() throws Exception {
    if (agent.confirmations().pending().isPresent()) {
      agent.confirmations().rollback().get();
    }
  }

  static int restPort(Agent a) {
    return a.sources().stream()
        .filter(RestNorthbound.class::isInstance)
        .map(RestNorthbound.class::cast)
        .findFirst()
        .orElseThrow()
        .port();
  }

  static String yaml(String... names) {
    StringBuilder b = new StringBuilder("mockConfig:\n  Interface_list:\n");
    for (String n : names) {
      b.append("  - name: ").append(n).append("\n    type: TAP\n    enabled: true\n");
    }
    return b.toString();
  }

  static HttpResponse<String> send(int port, String method, String path, String body)
      throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/yaml")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> put(String query, String yaml) throws Exception {
    return send(port, "PUT", "/configuration" + query, yaml);
  }

  static RecordedTxn lastTxn(Agent a) {
    List<RecordedTxn> h = a.scheduler().transactionHistory();
    return h.get(h.size() - 1);
  }

  @Test
  void aBadConfirmWithinIs400NamingTheParameterAndNothingIsApplied() throws Exception {
    int txns = agent.scheduler().transactionHistory().size();
    for (String bad : List.of("soon", "0s", "2h", "-5s", "")) {
      HttpResponse<String> r = put("?replace&confirm-within=" + bad, yaml("bad"));
      assertThat(r.statusCode()).as(bad + ": " + r.body()).isEqualTo(400);
      assertThat(r.body()).as(bad).contains("confirm-within");
    }
    HttpResponse<String> r = put("?confirm-within=30s&dry-run", yaml("bad"));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
    assertThat(r.body()).contains("dry-run");
    assertThat(agent.northbound().desired()).doesNotContainKey(TAP + "bad");
    assertThat(agent.scheduler().transactionHistory()).hasSize(txns);
    assertThat(agent.confirmations().pending()).isEmpty();
  }

  @Test
  void confirmOrRollbackWithNothingPendingIs409() throws Exception {
    HttpResponse<String> r = send(port, "POST", "/configuration/confirm", null);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
    assertThat(r.body()).contains("nothing to confirm");
    r = send(port, "POST", "/configuration/rollback", null);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
    assertThat(r.body()).contains("nothing to roll back");
    assertThat(
            JSON.readTree(send(port, "GET", "/configuration/pending", null).body())
                .get("pending")
                .isNull())
        .isTrue();
  }

  @Test
  void aConfirmedCommitStaysAndASecondOneWhilePendingIs409NamingIt() throws Exception {
    assertThat(put("?replace", yaml("c0")).statusCode()).isEqualTo(200);
    HttpResponse<String> r = put("?replace&confirm-within=30s", yaml("c0", "c1"));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode pending = JSON.readTree(r.body()).get("pending");
    assertThat(pending.get("source").asText()).isEqualTo("rest");
    assertThat(pending.get("confirmWithin").asText()).isEqualTo("30000ms");
    long id = pending.get("id").asLong();
    assertThat(agent.scheduler().valueStatus(TAP + "c1").state()).isEqualTo(ValueState.CONFIGURED);
    JsonNode listed = JSON.readTree(send(port, "GET", "/configuration/pending", null).body());
    assertThat(listed.get("pending").get("id").asLong()).isEqualTo(id);
    assertThat(listed.get("pending").get("deadline").asText()).isNotEmpty();

    r = put("?confirm-within=10s", yaml("c2"));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
    assertThat(r.body()).contains("confirmed commit #" + id + " from rest");
    r = put("", yaml("c2")); // a plain PUT of the same source would be rolled back with it
    assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
    assertThat(agent.northbound().desired()).doesNotContainKey(TAP + "c2");

    r = send(port, "POST", "/configuration/confirm", null);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(JSON.readTree(r.body()).get("confirmed").get("id").asLong()).isEqualTo(id);
    assertThat(agent.confirmations().pending()).isEmpty();
    assertThat(agent.northbound().desired()).containsKeys(TAP + "c0", TAP + "c1");
    assertThat(send(port, "GET", "/metrics", null).body())
        .contains("kvs_confirmed_commits_total{outcome=\"confirmed\"}")
        .contains("kvs_confirmed_commit_pending 0.0");
  }

  @Test
  void postRollbackRestoresTheSourcesPreviousConfigurationInOneTransaction() throws Exception {
    assertThat(put("?replace", yaml("r0")).statusCode()).isEqualTo(200);
    assertThat(put("?replace&confirm-within=1m", yaml("r1", "r2")).statusCode()).isEqualTo(200);
    assertThat(agent.northbound().desired()).containsKeys(TAP + "r1").doesNotContainKey(TAP + "r0");
    assertThat(send(port, "GET", "/metrics", null).body())
        .contains("kvs_confirmed_commit_pending 1.0");

    HttpResponse<String> r = send(port, "POST", "/configuration/rollback", null);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    long seq = JSON.readTree(r.body()).get("rollback").asLong();
    RecordedTxn rollback = lastTxn(agent);
    assertThat(rollback.seqNum()).isEqualTo(seq);
    assertThat(rollback.description()).isEqualTo("rollback: requested");
    assertThat(agent.northbound().desired())
        .containsKey(TAP + "r0")
        .doesNotContainKeys(TAP + "r1", TAP + "r2");
    assertThat(agent.scheduler().valueStatus(TAP + "r0").state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.scheduler().valueStatus(TAP + "r1").state()).isEqualTo(ValueState.NONEXISTENT);
    String history = send(port, "GET", "/scheduler/txn-history", null).body();
    assertThat(history).contains("rollback: requested");
    assertThat(send(port, "GET", "/metrics", null).body())
        .contains("kvs_confirmed_commits_total{outcome=\"rolled_back\"}");
  }

  @Test
  void notConfirmedInTimeTheAgentRollsBackByItselfAndLogsIt() throws Exception {
    assertThat(put("?replace", yaml("d0")).statusCode()).isEqualTo(200);
    try (LogCapture log = new LogCapture(CommitConfirmer.class)) {
      assertThat(put("?replace&confirm-within=300ms", yaml("d1")).statusCode()).isEqualTo(200);
      await().atMost(Duration.ofSeconds(20)).until(() -> agent.confirmations().pending().isEmpty());
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> lastTxn(agent).description().equals("rollback: not confirmed within 300ms"));
      assertThat(agent.northbound().desired())
          .containsKey(TAP + "d0")
          .doesNotContainKey(TAP + "d1");
      assertThat(log.messages())
          .anySatisfy(m -> assertThat(m).startsWith("rollback: not confirmed within 300ms"));
    }
  }

  @Test
  void grpcMetadataConfirmWithinMakesAConfirmedCommit() throws Exception {
    ManagedChannel channel =
        Grpc.newChannelBuilderForAddress("127.0.0.1", grpcPort, InsecureChannelCredentials.create())
            .build();
    try {
      var stub =
          ConfiguratorServiceGrpc.newBlockingStub(channel).withDeadlineAfter(20, TimeUnit.SECONDS);
      UpdateRequest g1 = update("g1");
      var bad = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(within("soon")));
      assertThatThrownBy(() -> bad.update(g1))
          .satisfies(
              e -> {
                assertThat(Status.fromThrowable(e).getCode())
                    .isEqualTo(Status.Code.INVALID_ARGUMENT);
                assertThat(Status.fromThrowable(e).getDescription()).contains("confirm-within");
              });
      assertThat(agent.northbound().desired()).doesNotContainKey(TAP + "g1");

      var confirmed =
          stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(within("30s")));
      confirmed.update(g1);
      assertThat(agent.confirmations().pending().orElseThrow().source()).isEqualTo("grpc");
      assertThat(agent.northbound().desired()).containsKey(TAP + "g1");
      assertThatThrownBy(() -> confirmed.update(update("g2")))
          .satisfies(
              e -> {
                assertThat(Status.fromThrowable(e).getCode())
                    .isEqualTo(Status.Code.FAILED_PRECONDITION);
                assertThat(Status.fromThrowable(e).getDescription()).contains("from grpc");
              });
      assertThat(send(port, "POST", "/configuration/rollback", null).statusCode()).isEqualTo(200);
      assertThat(agent.northbound().desired()).doesNotContainKey(TAP + "g1");
    } finally {
      channel.shutdownNow();
    }
  }

  static Metadata within(String value) {
    Metadata m = new Metadata();
    m.put(Metadata.Key.of("confirm-within", Metadata.ASCII_STRING_MARSHALLER), value);
    return m;
  }

  static UpdateRequest update(String name) {
    return UpdateRequest.newBuilder()
        .setUpdate(
            MockDomain.config(
                ConfigData.newBuilder()
                    .addInterfaces(
                        io.kvscheduler.plugins.mock.proto.interfaces.Interface.newBuilder()
                            .setName(name)
                            .setType(
                                io.kvscheduler.plugins.mock.proto.interfaces.Interface.Type.TAP))))
        .build();
  }

  @Test
  void aFailingProbeRollsBackAtOnceNamingItAndPassingProbesConfirm() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    try (ServerSocket open = new ServerSocket(0);
        Agent probed =
            Agent.start(
                AgentConfig.builder()
                    .restAddress("127.0.0.1:0")
                    .printTxnSummary(false)
                    .probes(
                        List.of(
                            Probe.tcp("listening", "127.0.0.1:" + open.getLocalPort(), null),
                            Probe.tcp("api", "127.0.0.1:" + closedPort, Duration.ofMillis(500))))
                    .build(),
                List.of(new MockAgentPlugin()))) {
      int p = restPort(probed);
      assertThat(send(p, "PUT", "/configuration?replace", yaml("p0")).statusCode()).isEqualTo(200);
      HttpResponse<String> r =
          send(p, "PUT", "/configuration?replace&confirm-within=10m", yaml("p1"));
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> lastTxn(probed).description().startsWith("rollback: probe"));
      assertThat(lastTxn(probed).description())
          .startsWith("rollback: probe 'api' failed: ")
          .contains("Connection refused");
      assertThat(probed.confirmations().pending()).isEmpty();
      assertThat(probed.northbound().desired())
          .containsKey(TAP + "p0")
          .doesNotContainKey(TAP + "p1");
    }
    try (ServerSocket open = new ServerSocket(0);
        Agent probed =
            Agent.start(
                AgentConfig.builder()
                    .restAddress("127.0.0.1:0")
                    .printTxnSummary(false)
                    .probes(
                        List.of(Probe.tcp("listening", "127.0.0.1:" + open.getLocalPort(), null)))
                    .build(),
                List.of(new MockAgentPlugin()))) {
      int p = restPort(probed);
      assertThat(send(p, "PUT", "/configuration?confirm-within=10m", yaml("q1")).statusCode())
          .isEqualTo(200);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> probed.confirmations().pending().isEmpty());
      assertThat(probed.northbound().desired()).containsKey(TAP + "q1");
      assertThat(lastTxn(probed).description()).doesNotStartWith("rollback");
    }
  }

  @Test
  void aProbeCommandThatDoesNotExistStopsTheStartNamingTheProbe() {
    assertThatThrownBy(
            () ->
                Agent.start(
                    AgentConfig.builder()
                        .restAddress("127.0.0.1:0")
                        .probes(
                            List.of(
                                Probe.command(
                                    "gw", List.of("no-such-program-kvs", "-c", "1"), null, null)))
                        .build(),
                    List.of(new MockAgentPlugin())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("probe 'gw'")
        .hasMessageContaining("no-such-program-kvs");
  }
}
