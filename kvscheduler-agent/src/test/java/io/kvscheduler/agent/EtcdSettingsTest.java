package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd connection settings, written as in vpp-agent's etcd.conf: from {@code ETCD_CONFIG}, {@code
 * --etcd-config}, or the agent settings file ({@code etcd-config}, {@code etcd:}).
 */
class EtcdSettingsTest {
  @TempDir Path dir;

  @BeforeEach
  void tlsFiles() throws Exception {
    for (String f : List.of("ca.crt", "client.crt", "client.key")) {
      Files.writeString(dir.resolve(f), "-----BEGIN CERTIFICATE-----\n");
    }
  }

  private Path write(String name, String yaml) throws Exception {
    Path f = dir.resolve(name);
    Files.writeString(f, yaml);
    return f;
  }

  @Test
  void defaultsWhenEtcdIsNotConfigured() throws Exception {
    AgentConfig c = AgentConfig.load(List.of(), Map.of());
    assertThat(c.etcd()).isEqualTo(EtcdSettings.defaults());
    assertThat(c.etcd().dialTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.etcd().requestTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.etcd().leaseTtl()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.etcd().tls()).isFalse();
    assertThat(c.etcd().user()).isEmpty();
  }

  @Test
  void etcdConfigFileFromTheEnvironmentSetsEverything() throws Exception {
    Path f =
        write(
            "etcd.conf",
            """
        endpoints:
          - "10.0.0.1:2379"
          - "10.0.0.2:2379"
        dial-timeout: 500ms
        operation-timeout: 4s
        session-ttl: 7
        insecure-transport: false
        insecure-skip-tls-verify: false
        ca-file: ca.crt
        cert-file: client.crt
        key-file: client.key
        username: agent
        password: s3cret
        auto-compact: 0
        resync-after-reconnect: true
        """);
    AgentConfig c = AgentConfig.load(List.of(), Map.of("ETCD_CONFIG", f.toString()));
    assertThat(c.etcdEndpoints()).containsExactly("10.0.0.1:2379", "10.0.0.2:2379");
    EtcdSettings s = c.etcd();
    assertThat(s.dialTimeout()).isEqualTo(Duration.ofMillis(500));
    assertThat(s.requestTimeout()).isEqualTo(Duration.ofSeconds(4));
    assertThat(s.leaseTtl()).isEqualTo(Duration.ofSeconds(7));
    assertThat(s.tls()).isTrue();
    // relative to the file naming them
    assertThat(s.caFile()).isEqualTo(dir.toAbsolutePath().resolve("ca.crt"));
    assertThat(s.certFile()).isEqualTo(dir.toAbsolutePath().resolve("client.crt"));
    assertThat(s.keyFile()).isEqualTo(dir.toAbsolutePath().resolve("client.key"));
    assertThat(s.username()).isEqualTo("agent");
    assertThat(s.password()).isEqualTo("s3cret");
    assertThat(s.toString()).doesNotContain("s3cret").contains("password=***");
    assertThat(c.toString()).doesNotContain("s3cret");
  }

  @Test
  void anEtcdConfigFileWithoutEndpointsMeansVppAgentsDefaultEndpoint() throws Exception {
    Path f = write("etcd.conf", "insecure-transport: true\n");
    AgentConfig c = AgentConfig.load(List.of(), Map.of("ETCD_CONFIG", f.toString()));
    assertThat(c.etcdEndpoints()).containsExactly("127.0.0.1:2379");
    assertThat(c.etcd().tls()).isFalse();
    Path empty = write("empty.conf", "");
    assertThat(
            AgentConfig.load(List.of("--etcd-config", empty.toString()), Map.of()).etcdEndpoints())
        .containsExactly("127.0.0.1:2379");
  }

  @Test
  void laterSourcesOverrideTheKeysTheySet() throws Exception {
    write(
        "base.conf",
        """
        endpoints: "file:2379"
        dial-timeout: 1s
        username: from-file
        password: pw
        """);
    Path agent =
        write(
            "agent.yaml",
            """
        etcd-config: base.conf
        etcd:
          operation-timeout: 9s
        """);
    Path env = write("env.conf", "session-ttl: 30s\n");
    Path flag = write("flag.conf", "dial-timeout: 250ms\n");

    AgentConfig fileOnly = AgentConfig.load(List.of("--config", agent.toString()), Map.of());
    assertThat(fileOnly.etcdEndpoints()).containsExactly("file:2379");
    assertThat(fileOnly.etcd().dialTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(fileOnly.etcd().requestTimeout()).isEqualTo(Duration.ofSeconds(9));
    assertThat(fileOnly.etcd().username()).isEqualTo("from-file");

    AgentConfig all =
        AgentConfig.load(
            List.of("--config", agent.toString(), "--etcd-config", flag.toString()),
            Map.of("ETCD_CONFIG", env.toString(), "ETCD_ENDPOINTS", "env:2379"));
    assertThat(all.etcdEndpoints()).containsExactly("env:2379");
    assertThat(all.etcd().dialTimeout()).isEqualTo(Duration.ofMillis(250));
    assertThat(all.etcd().requestTimeout()).isEqualTo(Duration.ofSeconds(9));
    assertThat(all.etcd().leaseTtl()).isEqualTo(Duration.ofSeconds(30));
    assertThat(all.etcd().username()).isEqualTo("from-file");

    AgentConfig flagEndpoints =
        AgentConfig.load(
            List.of("--etcd", "flag:2379", "--etcd-config", flag.toString()),
            Map.of("ETCD_CONFIG", env.toString()));
    assertThat(flagEndpoints.etcdEndpoints()).containsExactly("flag:2379");
  }

  @Test
  void badEtcdSettingsAreErrorsNamingFileAndKey() throws Exception {
    assertError("dial-timeout: 500\n", "etcd.conf: dial-timeout: expected a positive duration");
    assertError("operation-timeout: -1s\n", "etcd.conf: operation-timeout");
    assertError("session-ttl: 0\n", "etcd.conf: session-ttl");
    assertError("colour: blue\n", "etcd.conf: unknown key 'colour'");
    assertError(
        "insecure-transport: maybe\n",
        "etcd.conf: insecure-transport must be true or false, got 'maybe'");
    assertError("ca-file: missing.crt\n", "etcd.conf: ca-file '");
    assertError("ca-file: missing.crt\n", "missing.crt': no such file");
    assertError(
        "cert-file: client.crt\n",
        "cert-file and key-file go together: cert-file is given without the other");
    assertError(
        "insecure-transport: true\nca-file: ca.crt\n",
        "insecure-transport is true but TLS files are given");
    assertError("password: x\n", "password is given without username");
    assertError("endpoints: [\"not a url\"]\n", "etcd.conf: endpoints: endpoint 'not a url'");
    assertError("endpoints: {a: b}\n", "etcd.conf: endpoints: expected a list");
    assertError("- a\n- b\n", "etcd.conf: expected a mapping of etcd settings");
    assertError("endpoints: [a\n", "etcd.conf:");

    assertThatThrownBy(
            () ->
                AgentConfig.load(
                    List.of(), Map.of("ETCD_CONFIG", dir.resolve("nope.conf").toString())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nope.conf")
        .hasMessageContaining("no such file");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--etcd-config"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--etcd-config needs a value");
    Path agent = write("agent.yaml", "etcd:\n  dial-timeout: soon\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", agent.toString()), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("agent.yaml: etcd: dial-timeout");
  }

  private void assertError(String yaml, String message) throws Exception {
    Path f = write("etcd.conf", yaml);
    assertThatThrownBy(() -> AgentConfig.load(List.of(), Map.of("ETCD_CONFIG", f.toString())))
        .as(yaml)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }
}
