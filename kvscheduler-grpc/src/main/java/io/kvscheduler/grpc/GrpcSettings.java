package io.kvscheduler.grpc;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settings of the gRPC server.
 *
 * @param address {@code host:port} to listen on; an empty host ({@code :9111}) is the loopback
 *     address, {@code 0.0.0.0:9111} every interface; port 0 picks a free port
 * @param certFile PEM certificate chain for TLS, or null for plaintext
 * @param keyFile PEM private key for TLS (with {@code certFile})
 * @param token bearer token every call must carry in its {@code authorization} metadata ({@code
 *     Bearer <token>}), or null for none
 * @param maxMessageBytes largest request message accepted
 */
public record GrpcSettings(
    String address, Path certFile, Path keyFile, String token, int maxMessageBytes) {
  /** vpp-agent's default message size limit: 4096 KiB. */
  public static final int DEFAULT_MAX_MESSAGE_BYTES = 4096 * 1024;

  private static final Logger LOG = LoggerFactory.getLogger(GrpcSettings.class);

  /** Keys of vpp-agent's {@code grpc.conf} this server reads. */
  private static final Set<String> KEYS =
      Set.of("endpoint", "network", "max-msg-size", "insecure-transport", "cert-file", "key-file");

  /** Keys of vpp-agent's {@code grpc.conf} this server ignores (with a warning). */
  private static final Set<String> IGNORED =
      Set.of(
          "ca-files",
          "max-concurrent-streams",
          "extended-logging",
          "prometheus-metrics",
          "compression",
          "permission",
          "force-socket-removal",
          "client-token",
          "rate-limit",
          "rate-limit-burst",
          "tls");

  public GrpcSettings {
    address(address);
    if ((certFile == null) != (keyFile == null)) {
      throw new IllegalArgumentException("gRPC TLS needs both a certificate and a key file");
    }
    if (maxMessageBytes <= 0) {
      throw new IllegalArgumentException(
          "gRPC max message size must be positive, got " + maxMessageBytes);
    }
    if (token != null && token.isBlank()) {
      throw new IllegalArgumentException("gRPC bearer token is empty");
    }
  }

  /** Plaintext, no token, the default message size limit. */
  public static GrpcSettings plain(String address) {
    return new GrpcSettings(address, null, null, null, DEFAULT_MAX_MESSAGE_BYTES);
  }

  /** These settings with {@code token} (null for none). */
  public GrpcSettings withToken(String t) {
    return new GrpcSettings(address, certFile, keyFile, t, maxMessageBytes);
  }

  /** The socket address to listen on (the host resolved; empty host = loopback). */
  public InetSocketAddress socketAddress() {
    return address(address);
  }

  private static InetSocketAddress address(String address) {
    if (address == null) {
      throw new IllegalArgumentException("gRPC address is missing (host:port)");
    }
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new IllegalArgumentException("gRPC address '" + address + "' is not host:port");
    }
    String host = address.substring(0, colon);
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("gRPC address '" + address + "': bad port", e);
    }
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("gRPC address '" + address + "': bad port");
    }
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    return host.isEmpty()
        ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
        : InetSocketAddress.createUnresolved(host, port);
  }

  /**
   * Reads vpp-agent's {@code grpc.conf} (YAML): {@code endpoint} (host:port), {@code network}
   * ({@code tcp} only), {@code max-msg-size} (KiB), {@code insecure-transport}, {@code cert-file}
   * and {@code key-file} (TLS); vpp-agent keys this server does not implement are ignored with a
   * warning, other keys are an error.
   *
   * @throws IllegalArgumentException naming the file and the bad key or value
   * @throws IOException when the file cannot be read
   */
  public static GrpcSettings fromFile(Path file) throws IOException {
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(Files.readString(file));
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("gRPC config " + file + ": no such file", e);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("gRPC config " + file + ": " + e.getOriginalMessage(), e);
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new IllegalArgumentException("gRPC config " + file + " is empty (endpoint needed)");
    }
    if (!root.isObject()) {
      throw new IllegalArgumentException("gRPC config " + file + ": expected a mapping");
    }
    for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (IGNORED.contains(k)) {
        LOG.warn("gRPC config {}: '{}' is not supported by this agent, ignored", file, k);
      } else if (!KEYS.contains(k)) {
        throw new IllegalArgumentException(
            "gRPC config "
                + file
                + ": unknown key '"
                + k
                + "' (known: "
                + String.join(", ", new TreeSet<>(KEYS))
                + ")");
      }
    }
    String endpoint =
        text(root, "endpoint", file)
            .orElseThrow(
                () ->
                    new IllegalArgumentException("gRPC config " + file + ": endpoint is missing"));
    String network = text(root, "network", file).orElse("tcp");
    if (!network.equals("tcp")) {
      throw new IllegalArgumentException(
          "gRPC config " + file + ": network '" + network + "' is not supported (tcp only)");
    }
    int max = DEFAULT_MAX_MESSAGE_BYTES;
    if (root.hasNonNull("max-msg-size")) {
      JsonNode n = root.get("max-msg-size");
      if (!n.canConvertToInt() || n.asInt() <= 0 || n.asInt() > Integer.MAX_VALUE / 1024) {
        throw new IllegalArgumentException(
            "gRPC config "
                + file
                + ": max-msg-size must be a"
                + " positive number of KiB, got '"
                + n.asText()
                + "'");
      }
      max = n.asInt() * 1024;
    }
    Path base = file.toAbsolutePath().getParent();
    Path cert = text(root, "cert-file", file).map(base::resolve).orElse(null);
    Path key = text(root, "key-file", file).map(base::resolve).orElse(null);
    try {
      return new GrpcSettings(endpoint, cert, key, null, max);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("gRPC config " + file + ": " + e.getMessage(), e);
    }
  }

  private static Optional<String> text(JsonNode root, String key, Path file) {
    JsonNode n = root.get(key);
    if (n == null || n.isNull()) {
      return Optional.empty();
    }
    if (!n.isValueNode()) {
      throw new IllegalArgumentException(
          "gRPC config " + file + ": " + key + " must be a single value");
    }
    return Optional.of(n.asText());
  }
}
