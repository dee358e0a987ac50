package io.kvscheduler.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** vpp-agent's grpc.conf and the address rules. */
class GrpcSettingsTest {
  @TempDir Path dir;

  @Test
  void readsVppAgentsGrpcConf() throws Exception {
    Path conf =
        Files.writeString(
            dir.resolve("grpc.conf"),
            "endpoint: 0.0.0.0:9111\nmax-msg-size: 1024\ncert-file: tls/cert.pem\n"
                + "key-file: tls/key.pem\nextended-logging: true\n");
    GrpcSettings s = GrpcSettings.fromFile(conf);
    assertThat(s.address()).isEqualTo("0.0.0.0:9111");
    assertThat(s.maxMessageBytes()).isEqualTo(1024 * 1024);
    assertThat(s.certFile()).isEqualTo(dir.toAbsolutePath().resolve("tls/cert.pem"));
    assertThat(s.token()).isNull();
  }

  @Test
  void anEmptyHostIsTheLoopbackAddress() {
    assertThat(GrpcSettings.plain(":9111").socketAddress().getAddress().isLoopbackAddress())
        .isTrue();
    assertThat(GrpcSettings.plain(":9111").socketAddress().getPort()).isEqualTo(9111);
  }

  @Test
  void badSettingsNameTheFileAndTheKey() throws Exception {
    Path typo = Files.writeString(dir.resolve("a.conf"), "endpoint: :9111\nendpiont: x\n");
    assertThatThrownBy(() -> GrpcSettings.fromFile(typo))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(typo.toString())
        .hasMessageContaining("unknown key 'endpiont'");
    Path unix = Files.writeString(dir.resolve("b.conf"), "endpoint: /tmp/s\nnetwork: unix\n");
    assertThatThrownBy(() -> GrpcSettings.fromFile(unix))
        .hasMessageContaining("network 'unix' is not supported");
    Path noEndpoint = Files.writeString(dir.resolve("c.conf"), "max-msg-size: 10\n");
    assertThatThrownBy(() -> GrpcSettings.fromFile(noEndpoint))
        .hasMessageContaining("endpoint is missing");
    Path size = Files.writeString(dir.resolve("d.conf"), "endpoint: :1\nmax-msg-size: -1\n");
    assertThatThrownBy(() -> GrpcSettings.fromFile(size)).hasMessageContaining("max-msg-size");
    assertThatThrownBy(() -> GrpcSettings.plain("nohostport"))
        .hasMessageContaining("'nohostport' is not host:port");
    assertThatThrownBy(() -> new GrpcSettings(":1", dir.resolve("c"), null, null, 10))
        .hasMessageContaining("both a certificate and a key");
  }
}
