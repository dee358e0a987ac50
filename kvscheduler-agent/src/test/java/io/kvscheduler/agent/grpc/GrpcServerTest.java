package io.kvscheduler.agent.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.internal.northbound.GrpcNorthbound;
import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import io.kvscheduler.grpc.GrpcSettings;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.grpc.proto.configurator.NotifyRequest;
import io.kvscheduler.grpc.proto.configurator.NotifyResponse;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import io.kvscheduler.grpc.proto.generic.ModelDetail;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceNotification;
import io.kvscheduler.grpc.proto.linux.interfaces.InterfaceState;
import io.kvscheduler.plugins.mock.proto.ConfigData;
import io.kvscheduler.plugins.mock.proto.interfaces.Interface;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gRPC server on Netty as the agent runs it: settings, TLS, token, limits, stop. */
class GrpcServerTest {
  @TempDir Path dir;

  static int port(Agent agent) {
    return agent.sources().stream()
        .filter(GrpcNorthbound.class::isInstance)
        .map(s -> ((GrpcNorthbound) s).port())
        .findFirst()
        .orElseThrow();
  }

  static ManagedChannel channel(int port, ChannelCredentials creds) {
    return Grpc.newChannelBuilderForAddress("127.0.0.1", port, creds).build();
  }

  static UpdateRequest tap(String name) {
    return UpdateRequest.newBuilder()
        .setUpdate(
            MockDomain.config(
                ConfigData.newBuilder()
                    .addInterfaces(
                        Interface.newBuilder().setName(name).setType(Interface.Type.TAP))))
        .build();
  }

  @Test
  @DisplayName("settings: off by default; --grpc, grpc.conf (GRPC_CONFIG, --grpc-config), token")
  void settings() throws Exception {
    assertThat(AgentConfig.load(List.of(), Map.of()).grpc()).isNull();
    assertThat(AgentConfig.load(List.of("--grpc", "127.0.0.1:9111"), Map.of()).grpc().address())
        .isEqualTo("127.0.0.1:9111");
    Path conf =
        Files.writeString(dir.resolve("grpc.conf"), "endpoint: 0.0.0.0:9111\nmax-msg-size: 64\n");
    GrpcSettings fromEnv =
        AgentConfig.load(List.of(), Map.of("GRPC_CONFIG", conf.toString())).grpc();
    assertThat(fromEnv.address()).isEqualTo("0.0.0.0:9111");
    assertThat(fromEnv.maxMessageBytes()).isEqualTo(64 * 1024);
    GrpcSettings both =
        AgentConfig.load(
                List.of("--grpc-config", conf.toString(), "--grpc", ":7000"),
                Map.of("KVS_REST_TOKEN", "t0k"))
            .grpc();
    assertThat(both.address()).isEqualTo(":7000");
    assertThat(both.maxMessageBytes()).isEqualTo(64 * 1024);
    assertThat(both.token()).isEqualTo("t0k");
    Path token = Files.writeString(dir.resolve("token"), "from-file\n");
    assertThat(
            AgentConfig.load(
                    List.of("--grpc", ":1", "--rest-token-file", token.toString()),
                    Map.of("KVS_REST_TOKEN", "env"))
                .grpc()
                .token())
        .isEqualTo("from-file");
    Path yaml = Files.writeString(dir.resolve("agent.yaml"), "grpc-address: 127.0.0.1:9222\n");
    assertThat(AgentConfig.load(List.of("--config", yaml.toString()), Map.of()).grpc().address())
        .isEqualTo("127.0.0.1:9222");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--grpc", "nonsense"), Map.of()))
        .hasMessageContaining("--grpc")
        .hasMessageContaining("nonsense");
  }

  @Test
  @DisplayName("TLS and the bearer token over Netty; reflection lists the services")
  void tlsTokenAndReflection() throws Exception {
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    Process openssl;
    try {
      openssl =
          new ProcessBuilder(
                  "openssl",
                  "req",
                  "-x509",
                  "-newkey",
                  "rsa:2048",
                  "-nodes",
                  "-keyout",
                  key.toString(),
                  "-out",
                  cert.toString(),
                  "-days",
                  "1",
                  "-subj",
                  "/CN=localhost",
                  "-addext",
                  "subjectAltName=IP:127.0.0.1")
              .redirectErrorStream(true)
              .start();
    } catch (IOException e) {
      openssl = null;
    }
    assumeTrue(
        openssl != null && openssl.waitFor(60, TimeUnit.SECONDS) && openssl.exitValue() == 0,
        "skipped: openssl cannot make a test certificate");
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress(null)
            .printTxnSummary(false)
            .grpc(
                new GrpcSettings(
                    "127.0.0.1:0", cert, key, "s3cret", GrpcSettings.DEFAULT_MAX_MESSAGE_BYTES))
            .build();
    try (Agent agent = Agent.start(cfg)) {
      ManagedChannel tls =
          channel(
              port(agent), TlsChannelCredentials.newBuilder().trustManager(cert.toFile()).build());
      Metadata auth = new Metadata();
      auth.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer s3cret");
      var stub =
          ConfiguratorServiceGrpc.newBlockingStub(tls).withDeadlineAfter(20, TimeUnit.SECONDS);
      assertThatThrownBy(() -> stub.get(GetRequest.getDefaultInstance()))
          .satisfies(
              e ->
                  assertThat(Status.fromThrowable(e).getCode())
                      .isEqualTo(Status.Code.UNAUTHENTICATED));
      stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth)).update(tap("t1"));
      assertThat(agent.northbound().desired()).containsKey("config/mock/v1/interfaces/t1");

      CompletableFuture<List<String>> services = new CompletableFuture<>();
      var reflection =
          ServerReflectionGrpc.newStub(tls)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(auth));
      var requests =
          reflection.serverReflectionInfo(
              new StreamObserver<>() {
                @Override
                public void onNext(ServerReflectionResponse r) {
                  services.complete(
                      r.getListServicesResponse().getServiceList().stream()
                          .map(ServiceResponse::getName)
                          .toList());
                }

                @Override
                public void onError(Throwable t) {
                  services.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {}
              });
      requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
      assertThat(services.get(10, TimeUnit.SECONDS))
          .contains(
              "ligato.configurator.ConfiguratorService",
              "ligato.generic.ManagerService",
              "ligato.generic.MetaService");
      requests.onCompleted();

      ManagedChannel plain = channel(port(agent), InsecureChannelCredentials.create());
      assertThatThrownBy(
              () ->
                  ConfiguratorServiceGrpc.newBlockingStub(plain)
                      .withDeadlineAfter(5, TimeUnit.SECONDS)
                      .get(GetRequest.getDefaultInstance()))
          .satisfies(
              e ->
                  assertThat(Status.fromThrowable(e).getCode()).isEqualTo(Status.Code.UNAVAILABLE));
      tls.shutdownNow();
      plain.shutdownNow();
    }
  }

  @Test
  @DisplayName("reflection v1alpha (what vpp-agent's agentctl asks) lists the services too")
  @SuppressWarnings("deprecation") // v1alpha is deprecated in grpc-java, still what agentctl uses
  void reflectionV1alpha() throws Exception {
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress(null)
            .printTxnSummary(false)
            .grpc(GrpcSettings.plain("127.0.0.1:0"))
            .build();
    try (Agent agent = Agent.start(cfg)) {
      ManagedChannel ch = channel(port(agent), InsecureChannelCredentials.create());
      CompletableFuture<List<String>> services = new CompletableFuture<>();
      var requests =
          io.grpc.reflection.v1alpha.ServerReflectionGrpc.newStub(ch)
              .serverReflectionInfo(
                  new StreamObserver<>() {
                    @Override
                    public void onNext(io.grpc.reflection.v1alpha.ServerReflectionResponse r) {
                      services.complete(
                          r.getListServicesResponse().getServiceList().stream()
                              .map(io.grpc.reflection.v1alpha.ServiceResponse::getName)
                              .toList());
                    }

                    @Override
                    public void onError(Throwable t) {
                      services.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {}
                  });
      requests.onNext(
          io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
              .setListServices("")
              .build());
      assertThat(services.get(10, TimeUnit.SECONDS))
          .contains(
              "ligato.configurator.ConfiguratorService",
              "ligato.generic.ManagerService",
              "ligato.generic.MetaService",
              "grpc.reflection.v1alpha.ServerReflection");
      requests.onCompleted();
      ch.shutdownNow();
    }
  }

  @Test
  @DisplayName("a request over max-msg-size is refused with RESOURCE_EXHAUSTED, nothing applied")
  void messageSizeLimit() throws Exception {
    Path conf =
        Files.writeString(dir.resolve("grpc.conf"), "endpoint: 127.0.0.1:0\nmax-msg-size: 1\n");
    AgentConfig cfg =
        AgentConfig.load(
            List.of("--rest", "off", "--quiet"), Map.of("GRPC_CONFIG", conf.toString()));
    try (Agent agent = Agent.start(cfg)) {
      ManagedChannel ch = channel(port(agent), InsecureChannelCredentials.create());
      assertThatThrownBy(
              () ->
                  ConfiguratorServiceGrpc.newBlockingStub(ch)
                      .withDeadlineAfter(10, TimeUnit.SECONDS)
                      .update(tap("x".repeat(2000))))
          .satisfies(
              e ->
                  assertThat(Status.fromThrowable(e).getCode())
                      .isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
      assertThat(agent.northbound().desired()).isEmpty();
      ch.shutdownNow();
    }
  }

  @Test
  @DisplayName("stopping the agent ends open streams with UNAVAILABLE and closes the port")
  void gracefulStop() throws Exception {
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress(null)
            .printTxnSummary(false)
            .grpc(GrpcSettings.plain("127.0.0.1:0"))
            .build();
    Agent agent = Agent.start(cfg);
    int port = port(agent);
    ManagedChannel ch = channel(port, InsecureChannelCredentials.create());
    CompletableFuture<Status> ended = new CompletableFuture<>();
    ConfiguratorServiceGrpc.newStub(ch)
        .notify(
            NotifyRequest.getDefaultInstance(),
            new StreamObserver<>() {
              @Override
              public void onNext(NotifyResponse r) {}

              @Override
              public void onError(Throwable t) {
                ended.complete(Status.fromThrowable(t));
              }

              @Override
              public void onCompleted() {
                ended.complete(Status.OK);
              }
            });
    Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                agent.sources().stream()
                        .filter(GrpcNorthbound.class::isInstance)
                        .mapToInt(s -> ((GrpcNorthbound) s).api().openStreams())
                        .sum()
                    == 1);
    long t0 = System.nanoTime();
    agent.close();
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    assertThat(ended.get(5, TimeUnit.SECONDS).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(IOException.class);
    ch.shutdownNow();
  }

  /** A plugin that publishes notifications through the agent's sink when told to. */
  static final class Notifier implements AgentPlugin {
    volatile AgentContext ctx;

    @Override
    public String name() {
      return "notifier";
    }

    @Override
    public void init(AgentContext ctx) {
      this.ctx = ctx;
    }
  }

  @Test
  @DisplayName(
      "a plugin's notifications, published into the agent's sink, reach a Notify client by their"
          + " domain")
  void pluginNotificationsReachNotify() throws Exception {
    Notifier notifier = new Notifier();
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress(null)
            .printTxnSummary(false)
            .grpc(GrpcSettings.plain("127.0.0.1:0"))
            .build();
    try (Agent agent = Agent.start(cfg, List.of(notifier))) {
      ManagedChannel ch = channel(port(agent), InsecureChannelCredentials.create());
      BlockingQueue<NotifyResponse> got = new LinkedBlockingQueue<>();
      ConfiguratorServiceGrpc.newStub(ch)
          .notify(
              NotifyRequest.getDefaultInstance(),
              new StreamObserver<>() {
                @Override
                public void onNext(NotifyResponse r) {
                  got.add(r);
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
              });
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  agent.sources().stream()
                          .filter(GrpcNorthbound.class::isInstance)
                          .mapToInt(s -> ((GrpcNorthbound) s).api().openStreams())
                          .sum()
                      == 1);
      // a message no Notification field carries is not streamed; the next one is
      notifier.ctx.notifications().publish(ModelDetail.getDefaultInstance());
      notifier
          .ctx
          .notifications()
          .publish(
              io.kvscheduler.grpc.proto.linux.Notification.newBuilder()
                  .setInterface(
                      InterfaceNotification.newBuilder()
                          .setType(InterfaceNotification.NotifType.UPDOWN)
                          .setState(
                              InterfaceState.newBuilder()
                                  .setName("veth1")
                                  .setOperStatus(InterfaceState.Status.UP)))
                  .build());
      NotifyResponse r = got.poll(10, TimeUnit.SECONDS);
      assertThat(r).as("the notification reached the client").isNotNull();
      assertThat(r.getNextIdx()).isEqualTo(1);
      assertThat(r.getNotification().getLinuxNotification().getInterface().getState().getName())
          .isEqualTo("veth1");
      assertThat(got.poll(300, TimeUnit.MILLISECONDS)).isNull();
      ch.shutdownNow();
    }
  }
}
