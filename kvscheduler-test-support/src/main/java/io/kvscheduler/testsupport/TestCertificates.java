package io.kvscheduler.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Certificates for TLS tests, made with the {@code openssl} command: a CA, and server or client
 * pairs it signs (EC P-256, PEM, keys in PKCS#8). Server certificates name 127.0.0.1 and localhost.
 */
public final class TestCertificates {
  private final Path dir;

  public TestCertificates(Path dir) {
    this.dir = dir;
  }

  /**
   * A self-signed CA {@code name}: returns its certificate ({@code name.crt}, key {@code
   * name.key}).
   */
  public Path ca(String name) throws Exception {
    request(dir.resolve(name + ".key"), dir.resolve(name + ".crt"), name, "-x509", "-days", "2");
    return dir.resolve(name + ".crt");
  }

  /** A pair {@code name.crt}/{@code name.key} signed by CA {@code ca}; returns the certificate. */
  public Path signed(String name, String ca, boolean server) throws Exception {
    Path key = dir.resolve(name + ".key");
    Path csr = dir.resolve(name + ".csr");
    Path ext = dir.resolve(name + ".ext");
    Files.writeString(
        ext,
        server
            ? "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n"
            : "extendedKeyUsage=clientAuth\n");
    request(key, csr, name);
    openssl(
        "x509",
        "-req",
        "-in",
        csr.toString(),
        "-CA",
        dir.resolve(ca + ".crt").toString(),
        "-CAkey",
        dir.resolve(ca + ".key").toString(),
        "-CAcreateserial",
        "-out",
        dir.resolve(name + ".crt").toString(),
        "-days",
        "2",
        "-extfile",
        ext.toString());
    return dir.resolve(name + ".crt");
  }

  public Path key(String name) {
    return dir.resolve(name + ".key");
  }

  /** The certificate {@code name.crt} (of a CA or a pair) made before. */
  public Path cert(String name) {
    return dir.resolve(name + ".crt");
  }

  /**
   * {@code openssl req} with {@code options}: a new P-256 key into {@code key}, the request (or
   * with {@code -x509} the certificate) for {@code CN=name} into {@code out}.
   */
  private void request(Path key, Path out, String name, String... options)
      throws IOException, InterruptedException {
    List<String> args = new ArrayList<>(List.of("req"));
    args.addAll(List.of(options));
    args.addAll(
        List.of(
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-keyout",
            key.toString(),
            "-out",
            out.toString(),
            "-subj",
            "/CN=" + name));
    openssl(args.toArray(String[]::new));
  }

  private void openssl(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("openssl " + String.join(" ", args) + " failed: " + out);
    }
  }
}
