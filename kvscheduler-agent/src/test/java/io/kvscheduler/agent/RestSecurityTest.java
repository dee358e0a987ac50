package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.agent.internal.rest.RestServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bearer token, read-only mode and TLS of the REST API, with real HTTP and TLS clients. */
class RestSecurityTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String TAP9 = "config/mock/v1/interfaces/tap9";
  static final String PUT_TAP9 = "mockConfig:\n  Interface_list:\n  - name: tap9\n    type: TAP\n";

  @TempDir Path dir;
  final List<Agent> agents = new ArrayList<>();
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void close() {
    agents.forEach(Agent::close);
  }

  Agent start(List<String> args, Map<String, String> env) throws Exception {
    List<String> all = new ArrayList<>(List.of("--rest", "127.0.0.1:0", "--quiet"));
    all.addAll(args);
    Agent a = Agent.start(AgentConfig.load(all, env));
    agents.add(a);
    return a;
  }

  static int port(Agent a) {
    return a.sources().stream()
        .filter(RestNorthbound.class::isInstance)
        .map(RestNorthbound.class::cast)
        .findFirst()
        .orElseThrow()
        .port();
  }

  HttpResponse<String> send(Agent a, String method, String path, String body, String token)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port(a) + path))
            .timeout(Duration.ofSeconds(15))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      b.header("Content-Type", "application/yaml");
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  @DisplayName(
      "--rest :PORT listens on loopback only (as --grpc :PORT); 0.0.0.0:PORT on every interface")
  void colonPortIsLoopback() throws Exception {
    try (LogCapture log = new LogCapture(RestServer.class)) {
      Agent a = start(List.of("--rest", ":0"), Map.of());
      assertThat(log.messages())
          .anyMatch(m -> m.startsWith("REST API listening on http://127.0.0.1:" + port(a)));
      for (java.net.InetAddress other : nonLoopbackAddresses()) {
        assertThatThrownBy(
                () -> new java.net.Socket(other, port(a)).close(), "reached at %s", other)
            .isInstanceOf(IOException.class);
      }
      Agent all = start(List.of("--rest", "0.0.0.0:0"), Map.of());
      assertThat(log.messages())
          .anyMatch(m -> m.startsWith("REST API listening on http://0.0.0.0:" + port(all)));
    }
  }

  /** This host's addresses other than loopback ones (none in an empty network namespace). */
  static List<java.net.InetAddress> nonLoopbackAddresses() throws IOException {
    List<java.net.InetAddress> out = new ArrayList<>();
    for (java.net.NetworkInterface nic :
        java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces())) {
      if (nic.isUp() && !nic.isLoopback()) {
        nic.inetAddresses().filter(x -> x instanceof java.net.Inet4Address).forEach(out::add);
      }
    }
    return out;
  }

  @Test
  @DisplayName(
      "a warning at start when REST listens beyond loopback without a token, or with a token"
          + " over plain HTTP; none on loopback")
  void warnsWhenExposed() throws Exception {
    try (LogCapture log = new LogCapture(RestServer.class)) {
      start(List.of(), Map.of());
      start(List.of(), Map.of("KVS_REST_TOKEN", "s3cret"));
      assertThat(log.messages()).noneMatch(m -> m.contains("without a bearer token"));
      assertThat(log.messages()).noneMatch(m -> m.contains("plain HTTP"));

      start(List.of("--rest", "0.0.0.0:0"), Map.of());
      assertThat(log.messages())
          .anyMatch(
              m ->
                  m.contains("0.0.0.0")
                      && m.contains("without a bearer token")
                      && m.contains("--rest-token-file"));
      start(List.of("--rest", "0.0.0.0:0"), Map.of("KVS_REST_TOKEN", "s3cret"));
      assertThat(log.messages())
          .anyMatch(
              m ->
                  m.contains("plain HTTP")
                      && m.contains("0.0.0.0")
                      && m.contains("--rest-tls-cert"));
    }
  }

  @Test
  @DisplayName(
      "with a token file, a request without the token or with another one gets 401 and"
          + " changes nothing; with it, 200")
  void tokenFromFile() throws Exception {
    Path file = dir.resolve("token");
    Files.writeString(file, "s3cret-token\n");
    Agent a = start(List.of("--rest-token-file", file.toString()), Map.of());
    HttpResponse<String> none = send(a, "PUT", "/configuration", PUT_TAP9, null);
    assertThat(none.statusCode()).isEqualTo(401);
    assertThat(none.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    assertThat(JSON.readTree(none.body()).get("Error").asText()).contains("Authorization");
    assertThat(send(a, "PUT", "/configuration", PUT_TAP9, "wrong").statusCode()).isEqualTo(401);
    assertThat(send(a, "GET", "/scheduler/status", null, "s3cret").statusCode()).isEqualTo(401);
    assertThat(send(a, "GET", "/metrics", null, null).statusCode()).isEqualTo(401);
    assertThat(a.northbound().desired()).isEmpty();
    assertThat(a.scheduler().transactionHistory()).isEmpty();

    HttpResponse<String> ok = send(a, "PUT", "/configuration", PUT_TAP9, "s3cret-token");
    assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
    assertThat(a.northbound().desired()).containsOnlyKeys(TAP9);
    assertThat(send(a, "GET", "/scheduler/status?key=" + TAP9, null, "s3cret-token").statusCode())
        .isEqualTo(200);
  }

  @Test
  @DisplayName("the token may come from KVS_REST_TOKEN")
  void tokenFromEnvironment() throws Exception {
    Agent a = start(List.of(), Map.of("KVS_REST_TOKEN", "from-env"));
    assertThat(send(a, "GET", "/info/version", null, null).statusCode()).isEqualTo(401);
    assertThat(send(a, "GET", "/info/version", null, "from-env").statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("a token file that is missing or empty stops the agent with a message naming it")
  void badTokenFile() throws Exception {
    Path empty = dir.resolve("empty");
    Files.writeString(empty, "\n");
    assertThatThrownBy(() -> start(List.of("--rest-token-file", empty.toString()), Map.of()))
        .hasMessageContaining(empty.toString())
        .hasMessageContaining("no token");
    Path missing = dir.resolve("missing");
    assertThatThrownBy(() -> start(List.of("--rest-token-file", missing.toString()), Map.of()))
        .hasMessageContaining(missing.toString());
  }

  @Test
  @DisplayName(
      "read-only: PUT /configuration and POST downstream-resync get 403 and change"
          + " nothing; reads work")
  void readOnly() throws Exception {
    Agent a = start(List.of("--rest-read-only"), Map.of());
    HttpResponse<String> put = send(a, "PUT", "/configuration", PUT_TAP9, null);
    assertThat(put.statusCode()).isEqualTo(403);
    assertThat(JSON.readTree(put.body()).get("Error").asText()).contains("read-only");
    assertThat(send(a, "POST", "/scheduler/downstream-resync", null, null).statusCode())
        .isEqualTo(403);
    assertThat(a.northbound().desired()).isEmpty();
    assertThat(a.scheduler().transactionHistory()).isEmpty();
    assertThat(send(a, "GET", "/configuration", null, null).statusCode()).isEqualTo(200);
    assertThat(send(a, "GET", "/scheduler/status", null, null).statusCode()).isEqualTo(200);
  }

  @Test
  @DisplayName("TLS: an HTTPS client trusting the certificate is served; plain HTTP is refused")
  void tls() throws Exception {
    Path p12 = dir.resolve("server.p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-alias",
                "rest",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=ip:127.0.0.1,dns:localhost",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                p12.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    String out = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).as(out).isZero();
    KeyStore store = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(p12)) {
      store.load(in, "changeit".toCharArray());
    }
    Certificate cert = store.getCertificate("rest");
    PrivateKey key = (PrivateKey) store.getKey("rest", "changeit".toCharArray());
    Path certPem = dir.resolve("cert.pem");
    Path keyPem = dir.resolve("key.pem");
    Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()));
    Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()));

    Agent a =
        start(
            List.of("--rest-tls-cert", certPem.toString(), "--rest-tls-key", keyPem.toString()),
            Map.of());
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    trust.setCertificateEntry("rest", cert);
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(null, tmf.getTrustManagers(), null);
    HttpClient https =
        HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<String> r =
        https.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port(a) + "/scheduler/status"))
                .timeout(Duration.ofSeconds(15))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body().strip()).isEqualTo("null");

    // plain HTTP on the TLS port: no HTTP answer
    assertThatThrownBy(
            () -> {
              HttpResponse<String> plain = send(a, "GET", "/scheduler/status", null, null);
              assertThat(plain.statusCode()).isNotEqualTo(200);
              throw new IOException("answered " + plain.statusCode());
            })
        .isInstanceOf(IOException.class);
    // a default client does not trust the self-signed certificate
    assertThatThrownBy(
            () ->
                http.send(
                    HttpRequest.newBuilder(
                            URI.create("https://127.0.0.1:" + port(a) + "/info/version"))
                        .timeout(Duration.ofSeconds(15))
                        .GET()
                        .build(),
                    HttpResponse.BodyHandlers.ofString()))
        .isInstanceOf(SSLException.class);
  }

  @Test
  @DisplayName("a TLS certificate without key is refused when the settings are read")
  void tlsNeedsBoth() {
    assertThatThrownBy(() -> AgentConfig.load(List.of("--rest-tls-cert", "c.pem"), Map.of()))
        .hasMessageContaining("--rest-tls-key");
  }

  static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }
}
