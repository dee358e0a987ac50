package io.kvscheduler.agent.internal.config;

import static io.kvscheduler.agent.internal.config.SettingValues.bool;
import static io.kvscheduler.agent.internal.config.SettingValues.duration;
import static io.kvscheduler.agent.internal.config.SettingValues.endpoints;
import static io.kvscheduler.agent.internal.config.SettingValues.readYaml;
import static io.kvscheduler.agent.internal.config.SettingValues.set;
import static io.kvscheduler.agent.internal.config.SettingValues.text;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.EtcdSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reads etcd connection settings written as vpp-agent's {@code etcd.conf} (a YAML mapping): from
 * the file named by {@code ETCD_CONFIG} or {@code --etcd-config}, or from the {@code etcd:} mapping
 * of the agent's settings file. Later sources override the keys they set, one by one.
 *
 * <table>
 *   <caption>keys</caption>
 *   <tr><th>key</th><th>meaning</th></tr>
 *   <tr><td>endpoints</td><td>list (or comma-separated string) of host:port or URLs</td></tr>
 *   <tr><td>dial-timeout, operation-timeout</td><td>durations: 500ms, 2s, 1m, PT2S</td></tr>
 *   <tr><td>session-ttl</td><td>whole seconds (as in vpp-agent) or a duration</td></tr>
 *   <tr><td>insecure-transport, insecure-skip-tls-verify</td><td>true or false</td></tr>
 *   <tr><td>cert-file, key-file, ca-file</td><td>PEM files, relative to the file naming
 *       them</td></tr>
 *   <tr><td>username, password</td><td>etcd authentication</td></tr>
 * </table>
 *
 * vpp-agent keys without meaning here ({@link #IGNORED}) are accepted and have no effect; any other
 * key is an error naming it.
 */
final class EtcdConfigFile {
  static final Set<String> KEYS =
      Set.of(
          "endpoints",
          "dial-timeout",
          "operation-timeout",
          "session-ttl",
          "insecure-transport",
          "insecure-skip-tls-verify",
          "cert-file",
          "key-file",
          "ca-file",
          "username",
          "password");

  /** vpp-agent's keys that are accepted without effect (the behaviour they choose is fixed). */
  static final Set<String> IGNORED =
      Set.of(
          "auto-compact",
          "resync-after-reconnect",
          "allow-delayed-start",
          "reconnect-interval",
          "expand-env-variables");

  /** vpp-agent's default endpoint when a configuration file names none. */
  static final String DEFAULT_ENDPOINT = "127.0.0.1:2379";

  private EtcdConfigFile() {}

  /** The settings collected so far; null fields are not set. */
  static final class Layers {
    List<String> endpoints;
    boolean fileSeen;
    Duration dialTimeout;
    Duration requestTimeout;
    Duration leaseTtl;
    Boolean insecureTransport;
    Boolean insecureSkipTlsVerify;
    Path certFile;
    Path keyFile;
    Path caFile;
    String username;
    String password;

    /** The settings, defaults for what no source set. */
    EtcdSettings settings(String where) {
      EtcdSettings d = EtcdSettings.defaults();
      try {
        return new EtcdSettings(
            or(dialTimeout, d.dialTimeout()),
            or(requestTimeout, d.requestTimeout()),
            or(leaseTtl, d.leaseTtl()),
            insecureTransport != null && insecureTransport,
            insecureSkipTlsVerify != null && insecureSkipTlsVerify,
            certFile,
            keyFile,
            caFile,
            username,
            password);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage(), e);
      }
    }

    private static <T> T or(T v, T dflt) {
      return v != null ? v : dflt;
    }
  }

  /**
   * Reads {@code file} into {@code into}.
   *
   * @throws IllegalArgumentException naming the file (and line or key) and the cause
   */
  static void read(Path file, Layers into) {
    JsonNode root = readYaml(file, "etcd config ");
    into.fileSeen = true;
    if (root == null || root.isNull()) {
      return; // an empty file: vpp-agent's defaults
    }
    apply(root, file.toAbsolutePath().getParent(), "etcd config " + file, into);
  }

  /**
   * Reads the mapping {@code map} (of a file in {@code baseDir}, described by {@code where}).
   *
   * @throws IllegalArgumentException naming {@code where}, the key and the cause
   */
  static void apply(JsonNode map, Path baseDir, String where, Layers into) {
    if (!map.isObject()) {
      throw new IllegalArgumentException(where + ": expected a mapping of etcd settings");
    }
    for (Iterator<String> it = map.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!KEYS.contains(k) && !IGNORED.contains(k)) {
        throw new IllegalArgumentException(
            where
                + ": unknown key '"
                + k
                + "' (known: "
                + String.join(", ", new TreeSet<>(KEYS))
                + ")");
      }
    }
    JsonNode n;
    if ((n = set(map, "endpoints")) != null) {
      into.endpoints = endpoints(n, where + ": endpoints");
    }
    if ((n = set(map, "dial-timeout")) != null) {
      into.dialTimeout = duration(text(n, where, "dial-timeout"), where + ": dial-timeout");
    }
    if ((n = set(map, "operation-timeout")) != null) {
      into.requestTimeout =
          duration(text(n, where, "operation-timeout"), where + ": operation-timeout");
    }
    if ((n = set(map, "session-ttl")) != null) {
      into.leaseTtl =
          n.isIntegralNumber() && n.asLong() > 0
              ? Duration.ofSeconds(n.asLong())
              : duration(text(n, where, "session-ttl"), where + ": session-ttl");
    }
    if ((n = set(map, "insecure-transport")) != null) {
      into.insecureTransport = bool(n, where, "insecure-transport");
    }
    if ((n = set(map, "insecure-skip-tls-verify")) != null) {
      into.insecureSkipTlsVerify = bool(n, where, "insecure-skip-tls-verify");
    }
    if ((n = set(map, "cert-file")) != null) {
      into.certFile = file(n, baseDir, where, "cert-file");
    }
    if ((n = set(map, "key-file")) != null) {
      into.keyFile = file(n, baseDir, where, "key-file");
    }
    if ((n = set(map, "ca-file")) != null) {
      into.caFile = file(n, baseDir, where, "ca-file");
    }
    if ((n = set(map, "username")) != null) {
      into.username = text(n, where, "username");
    }
    if ((n = set(map, "password")) != null) {
      into.password = text(n, where, "password");
    }
  }

  /** A readable file, relative to {@code baseDir}. */
  private static Path file(JsonNode n, Path baseDir, String where, String key) {
    String text = text(n, where, key);
    if (text.isBlank()) {
      throw new IllegalArgumentException(where + ": " + key + " is empty");
    }
    Path p = baseDir == null ? Path.of(text) : baseDir.resolve(text);
    if (!Files.isRegularFile(p)) {
      throw new IllegalArgumentException(where + ": " + key + " '" + p + "': no such file");
    }
    if (!Files.isReadable(p)) {
      throw new IllegalArgumentException(where + ": " + key + " '" + p + "': not readable");
    }
    return p;
  }
}
