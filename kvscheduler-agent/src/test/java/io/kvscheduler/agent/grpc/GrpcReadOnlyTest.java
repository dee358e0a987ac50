package io.kvscheduler.agent.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.DeleteRequest;
import io.kvscheduler.grpc.proto.configurator.DumpRequest;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.grpc.proto.generic.DumpStateRequest;
import io.kvscheduler.grpc.proto.generic.GetConfigRequest;
import io.kvscheduler.grpc.proto.generic.KnownModelsRequest;
import io.kvscheduler.grpc.proto.generic.ManagerServiceGrpc;
import io.kvscheduler.grpc.proto.generic.MetaServiceGrpc;
import io.kvscheduler.grpc.proto.generic.SetConfigRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One read-only mode for every northbound the agent serves: REST and gRPC refuse changes. */
class GrpcReadOnlyTest {
  static void assertRefused(ThrowingCallable call, String flag) {
    assertThatThrownBy(call)
        .satisfies(
            e -> {
              Status s = Status.fromThrowable(e);
              assertThat(s.getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
              assertThat(s.getDescription()).contains("read-only").contains(flag);
            });
  }

  @Test
  @DisplayName("read-only in the settings file (read-only, or rest-read-only) and as flags")
  void readOnlySettings(@TempDir Path dir) throws Exception {
    assertThat(AgentConfig.load(List.of(), Map.of()).restSecurity().readOnly()).isFalse();
    for (String key : List.of("read-only", "rest-read-only")) {
      Path f = Files.writeString(dir.resolve(key + ".yaml"), key + ": true\n");
      assertThat(
              AgentConfig.load(List.of("--config", f.toString()), Map.of())
                  .restSecurity()
                  .readOnly())
          .isTrue();
    }
  }

  @ParameterizedTest(name = "{0} refuses every change over gRPC and REST; reads stay allowed")
  @ValueSource(strings = {"--read-only", "--rest-read-only"})
  void readOnlyRefusesEveryChangeOverGrpcAndRest(String flag) throws Exception {
    AgentConfig cfg =
        AgentConfig.load(
            List.of(flag, "--grpc", "127.0.0.1:0", "--rest", "127.0.0.1:0", "--quiet"), Map.of());
    try (Agent agent = Agent.start(cfg)) {
      ManagedChannel ch =
          GrpcServerTest.channel(GrpcServerTest.port(agent), InsecureChannelCredentials.create());
      try {
        var configurator =
            ConfiguratorServiceGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS);
        var manager =
            ManagerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(20, TimeUnit.SECONDS);
        assertRefused(() -> configurator.update(GrpcServerTest.tap("t1")), "--read-only");
        assertRefused(
            () ->
                configurator.delete(
                    DeleteRequest.newBuilder()
                        .setDelete(GrpcServerTest.tap("t1").getUpdate())
                        .build()),
            "--read-only");
        assertRefused(
            () ->
                manager.setConfig(
                    SetConfigRequest.newBuilder()
                        .addUpdates(GrpcApiTest.put(GrpcApiTest.tap("t2"), Map.of()))
                        .build()),
            "--read-only");
        assertThat(agent.northbound().desired()).isEmpty();

        // reads stay allowed
        configurator.get(GetRequest.getDefaultInstance());
        configurator.dump(DumpRequest.getDefaultInstance());
        manager.getConfig(GetConfigRequest.getDefaultInstance());
        manager.dumpState(DumpStateRequest.getDefaultInstance());
        MetaServiceGrpc.newBlockingStub(ch)
            .withDeadlineAfter(20, TimeUnit.SECONDS)
            .knownModels(KnownModelsRequest.getDefaultInstance());
      } finally {
        ch.shutdownNow();
      }
      int restPort =
          agent.sources().stream()
              .filter(io.kvscheduler.agent.internal.northbound.RestNorthbound.class::isInstance)
              .map(s -> ((io.kvscheduler.agent.internal.northbound.RestNorthbound) s).port())
              .findFirst()
              .orElseThrow();
      HttpResponse<String> put =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + restPort + "/configuration"))
                      .PUT(HttpRequest.BodyPublishers.ofString("{}"))
                      .header("Content-Type", "application/json")
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(put.statusCode()).isEqualTo(403);
    }
  }
}
