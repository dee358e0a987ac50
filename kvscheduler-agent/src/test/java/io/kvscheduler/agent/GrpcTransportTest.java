package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.TlsChannelCredentials;
import io.kvscheduler.agent.internal.northbound.GrpcNorthbound;
import io.kvscheduler.grpc.GrpcServer;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.testsupport.TestCertificates;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gRPC server's transport as the agent's settings make it: address, TLS, warnings. */
class GrpcTransportTest {
  @TempDir Path dir;

  static int grpcPort(Agent agent) {
    return agent.sources().stream()
        .filter(GrpcNorthbound.class::isInstance)
        .map(s -> ((GrpcNorthbound) s).port())
        .findFirst()
        .orElseThrow();
  }

  /** A Get over a channel to {@code host:port}; the status code of its failure, OK if none. */
  static Status.Code get(String host, int port, ChannelCredentials creds) {
    ManagedChannel ch = Grpc.newChannelBuilderForAddress(host, port, creds).build();
    try {
      ConfiguratorServiceGrpc.newBlockingStub(ch)
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .get(GetRequest.getDefaultInstance());
      return Status.Code.OK;
    } catch (RuntimeException e) {
      return Status.fromThrowable(e).getCode();
    } finally {
      ch.shutdownNow();
    }
  }

  static Optional<InetAddress> nonLoopbackAddress() throws Exception {
    for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (i.isUp() && !i.isLoopback()) {
        for (InetAddress a : Collections.list(i.getInetAddresses())) {
          if (a instanceof Inet4Address) {
            return Optional.of(a);
          }
        }
      }
    }
    return Optional.empty();
  }

  @Test
  @DisplayName("--grpc :PORT listens on loopback only")
  void emptyHostIsLoopback() throws Exception {
    Optional<InetAddress> other = nonLoopbackAddress();
    assumeTrue(other.isPresent(), "skipped: no address beyond loopback to try");
    try (Agent agent =
        Agent.start(
            AgentConfig.load(List.of("--grpc", ":0", "--rest", "off", "--quiet"), Map.of()))) {
      int port = grpcPort(agent);
      assertThat(get("127.0.0.1", port, InsecureChannelCredentials.create()))
          .isEqualTo(Status.Code.OK);
      assertThat(get(other.get().getHostAddress(), port, InsecureChannelCredentials.create()))
          .isEqualTo(Status.Code.UNAVAILABLE);
    }
  }

  @Test
  @DisplayName(
      "with REST TLS and no certificate of its own, gRPC serves TLS with the REST certificate:"
          + " a plaintext client fails, a client trusting the certificate is served")
  void grpcTakesTheRestCertificate() throws Exception {
    TestCertificates certs = new TestCertificates(dir);
    Path ca = certs.ca("ca");
    Path cert = certs.signed("server", "ca", true);
    Path key = dir.resolve("server.key");
    AgentConfig cfg =
        AgentConfig.load(
            List.of(
                "--grpc",
                "127.0.0.1:0",
                "--rest",
                "127.0.0.1:0",
                "--rest-tls-cert",
                cert.toString(),
                "--rest-tls-key",
                key.toString(),
                "--quiet"),
            Map.of());
    assertThat(cfg.grpc().certFile()).isEqualTo(cert);
    assertThat(cfg.grpc().keyFile()).isEqualTo(key);
    try (Agent agent = Agent.start(cfg)) {
      int port = grpcPort(agent);
      assertThat(get("127.0.0.1", port, InsecureChannelCredentials.create()))
          .isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(
              get(
                  "127.0.0.1",
                  port,
                  TlsChannelCredentials.newBuilder().trustManager(ca.toFile()).build()))
          .isEqualTo(Status.Code.OK);
    }
  }

  @Test
  @DisplayName("gRPC's own certificate (grpc.conf cert-file, key-file) wins over the REST one")
  void grpcOwnCertificateWins() throws Exception {
    TestCertificates certs = new TestCertificates(dir);
    certs.ca("ca");
    Path rest = certs.signed("rest", "ca", true);
    Path own = certs.signed("grpc", "ca", true);
    Path conf =
        java.nio.file.Files.writeString(
            dir.resolve("grpc.conf"),
            "endpoint: 127.0.0.1:0\ncert-file: grpc.crt\nkey-file: grpc.key\n");
    AgentConfig cfg =
        AgentConfig.load(
            List.of(
                "--grpc-config",
                conf.toString(),
                "--rest-tls-cert",
                rest.toString(),
                "--rest-tls-key",
                dir.resolve("rest.key").toString()),
            Map.of());
    assertThat(cfg.grpc().certFile()).isEqualTo(own);
  }

  @Test
  @DisplayName(
      "a warning at start: a token over plain gRPC beyond loopback, and gRPC beyond loopback"
          + " without a token; none on loopback")
  void warningsAboutExposedGrpc() throws Exception {
    try (LogCapture log = new LogCapture(GrpcServer.class)) {
      try (Agent agent =
          Agent.start(
              AgentConfig.load(
                  List.of("--grpc", "0.0.0.0:0", "--rest", "off", "--quiet"),
                  Map.of("KVS_REST_TOKEN", "t0k3n")))) {
        assertThat(log.messages())
            .anySatisfy(
                m ->
                    assertThat(m)
                        .contains("beyond loopback")
                        .contains("bearer token")
                        .contains("plaintext")
                        .contains("0.0.0.0"));
      }
      try (Agent agent =
          Agent.start(
              AgentConfig.load(
                  List.of("--grpc", "0.0.0.0:0", "--rest", "off", "--quiet"), Map.of()))) {
        assertThat(log.messages())
            .anySatisfy(
                m ->
                    assertThat(m)
                        .contains("beyond loopback")
                        .contains("without a bearer token")
                        .contains("0.0.0.0"));
      }
      int before = log.messages().size();
      try (Agent agent =
          Agent.start(
              AgentConfig.load(List.of("--grpc", ":0", "--rest", "off", "--quiet"), Map.of()))) {
        assertThat(log.messages().subList(before, log.messages().size()))
            .noneSatisfy(m -> assertThat(m).contains("beyond loopback"));
      }
    }
  }
}
