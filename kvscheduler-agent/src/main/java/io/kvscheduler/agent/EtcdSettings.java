package io.kvscheduler.agent;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How the agent connects to etcd: transport security, credentials, timeouts and the lease of the
 * keys it writes back. Named as in vpp-agent's {@code etcd.conf}.
 *
 * <p>TLS is used when {@link #tls()}: a CA, a client certificate or skipping verification is asked
 * for and the transport is not declared insecure (an endpoint may also be given as {@code
 * https://host:port}). Without a CA the JDK's trusted roots verify the server.
 *
 * @param dialTimeout limit of establishing a connection ({@code dial-timeout}, default 2 s)
 * @param requestTimeout limit of one request to etcd ({@code operation-timeout}, default 3 s); also
 *     the limit of noticing an endpoint that accepts connections but never answers
 * @param leaseTtl TTL of the lease under which the status keys are written ({@code session-ttl},
 *     default 10 s): they vanish that long after the agent died
 * @param insecureTransport plain TCP even if TLS files are given ({@code insecure-transport})
 * @param insecureSkipTlsVerify accept any server certificate ({@code insecure-skip-tls-verify}; for
 *     tests only)
 * @param certFile client certificate (PEM) for TLS client authentication ({@code cert-file})
 * @param keyFile its private key (PEM, PKCS#8) ({@code key-file})
 * @param caFile CA certificates (PEM) that sign the server certificate ({@code ca-file})
 * @param username user for etcd authentication ({@code username}), or null
 * @param password that user's password ({@code password}), or null; never printed
 */
public record EtcdSettings(
    Duration dialTimeout,
    Duration requestTimeout,
    Duration leaseTtl,
    boolean insecureTransport,
    boolean insecureSkipTlsVerify,
    Path certFile,
    Path keyFile,
    Path caFile,
    String username,
    String password) {

  /** Default of {@code dial-timeout}. */
  public static final Duration DEFAULT_DIAL_TIMEOUT = Duration.ofSeconds(2);

  /** Default of {@code operation-timeout}. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(3);

  /** Default of {@code session-ttl}. */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

  /**
   * @throws IllegalArgumentException when a timeout is not positive, the lease TTL is under one
   *     second, only one of certificate and key is given, TLS files are given with an insecure
   *     transport, or a password without a user
   */
  public EtcdSettings {
    Objects.requireNonNull(dialTimeout, "dialTimeout");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    Objects.requireNonNull(leaseTtl, "leaseTtl");
    if (dialTimeout.isNegative() || dialTimeout.isZero()) {
      throw new IllegalArgumentException("dial-timeout must be positive");
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("operation-timeout must be positive");
    }
    if (leaseTtl.toSeconds() < 1) {
      throw new IllegalArgumentException(
          "session-ttl must be at least 1s (etcd leases count" + " whole seconds)");
    }
    if ((certFile == null) != (keyFile == null)) {
      throw new IllegalArgumentException(
          "cert-file and key-file go together: "
              + (certFile == null ? "key-file" : "cert-file")
              + " is given without the other");
    }
    if (insecureTransport && (certFile != null || caFile != null)) {
      throw new IllegalArgumentException(
          "insecure-transport is true but TLS files are given"
              + " (cert-file, key-file, ca-file): remove one or the other");
    }
    if (password != null && username == null) {
      throw new IllegalArgumentException("password is given without username");
    }
  }

  /** The defaults: plain TCP, no credentials, 2 s / 3 s timeouts, 10 s lease TTL. */
  public static EtcdSettings defaults() {
    return new EtcdSettings(
        DEFAULT_DIAL_TIMEOUT,
        DEFAULT_REQUEST_TIMEOUT,
        DEFAULT_LEASE_TTL,
        false,
        false,
        null,
        null,
        null,
        null,
        null);
  }

  /** Whether the connection uses TLS (see the class comment). */
  public boolean tls() {
    return !insecureTransport && (caFile != null || certFile != null || insecureSkipTlsVerify);
  }

  /** The user for etcd authentication, if any. */
  public Optional<String> user() {
    return Optional.ofNullable(username);
  }

  /** These settings with other timeouts and lease TTL. */
  public EtcdSettings withTimeouts(Duration dial, Duration request, Duration lease) {
    return new EtcdSettings(
        dial,
        request,
        lease,
        insecureTransport,
        insecureSkipTlsVerify,
        certFile,
        keyFile,
        caFile,
        username,
        password);
  }

  /** The settings without the password, which is shown as {@code ***} when set. */
  @Override
  public String toString() {
    return "EtcdSettings[dial-timeout="
        + dialTimeout
        + ", operation-timeout="
        + requestTimeout
        + ", session-ttl="
        + leaseTtl
        + ", insecure-transport="
        + insecureTransport
        + ", insecure-skip-tls-verify="
        + insecureSkipTlsVerify
        + ", cert-file="
        + certFile
        + ", key-file="
        + keyFile
        + ", ca-file="
        + caFile
        + ", username="
        + username
        + ", password="
        + (password == null ? "null" : "***")
        + "]";
  }
}
