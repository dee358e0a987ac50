package io.kvscheduler.agent.internal.config;

import static io.kvscheduler.agent.internal.config.SettingValues.bool;
import static io.kvscheduler.agent.internal.config.SettingValues.checkedEndpoints;
import static io.kvscheduler.agent.internal.config.SettingValues.duration;
import static io.kvscheduler.agent.internal.config.SettingValues.endpoints;
import static io.kvscheduler.agent.internal.config.SettingValues.readYaml;
import static io.kvscheduler.agent.internal.config.SettingValues.set;
import static io.kvscheduler.agent.internal.config.SettingValues.split;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.EtcdSettings;
import io.kvscheduler.agent.Probe;
import io.kvscheduler.agent.RestSecurity;
import io.kvscheduler.agent.internal.rest.RestAddress;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Builds the agent's {@link AgentConfig} from its sources, later ones winning: defaults, the YAML
 * settings file given with {@code --config}, environment variables vpp-agent users know, and the
 * command-line flags ({@link AgentOptions}). The settings and their keys are listed on {@link
 * AgentConfig}.
 */
public final class SettingsLoader {
  private SettingsLoader() {}

  /** Prints the flags of {@code kvs-agent run} (its {@code --help}). */
  public static void usage(PrintStream out) {
    AgentOptions.commandLine(new AgentOptions()).usage(out);
  }

  private static final Set<String> KEYS =
      Set.of(
          "label",
          "config-dir",
          "rest-address",
          "etcd-endpoints",
          "status-publishing",
          "print-txn-summary",
          "operation-timeout",
          "linux",
          "etcd-config",
          "etcd",
          "file-settle-time",
          "grpc-address",
          "grpc-config",
          "rest-token-file",
          "rest-read-only",
          "rest-allowed-hosts",
          "rest-tls-cert",
          "rest-tls-key",
          "txn-log-max-ops",
          "parallelism",
          "follow-external-links",
          "read-only",
          "state-dir",
          "standby",
          "probes",
          "fleet-url");

  /** The keys the settings file takes. */
  public static Set<String> keys() {
    return KEYS;
  }

  /**
   * Reads the settings from the command-line arguments (after the command; parsed by picocli,
   * {@link AgentOptions}) and the environment.
   *
   * @throws IllegalArgumentException naming the bad flag, file, key or value
   */
  public static AgentConfig load(List<String> args, Map<String, String> env) throws IOException {
    String label = "vpp1";
    Path configDir = null;
    String rest = "127.0.0.1:9191";
    List<String> etcd = List.of();
    boolean status = false;
    boolean print = true;
    Duration timeout = null;
    boolean linux = false;
    EtcdConfigFile.Layers etcdLayers = new EtcdConfigFile.Layers();
    Duration settle = null;
    String grpcAddress = null;
    Path grpcConfig = null;
    String restToken = null;
    Path tokenFile = null;
    boolean readOnly = false;
    List<String> allowedHosts = List.of();
    Path tlsCert = null;
    Path tlsKey = null;
    int maxOps = AgentConfig.DEFAULT_TXN_LOG_MAX_OPS;
    int parallelism = 1;
    boolean followLinks = false;
    Path stateDir = defaultStateDir();
    boolean standby = false;
    List<Probe> probes = List.of();
    String fleetUrl = null;

    AgentOptions flags = AgentOptions.parse(args);
    if (!flags.config.isEmpty()) {
      Path file = flags.config.get(0);
      JsonNode root = readYaml(file, "cannot read agent config ");
      if (root != null && !root.isNull()) {
        if (!root.isObject()) {
          throw new IllegalArgumentException("agent config " + file + ": expected a mapping");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
          String k = it.next();
          if (!KEYS.contains(k)) {
            throw new IllegalArgumentException(
                "agent config "
                    + file
                    + ": unknown key '"
                    + k
                    + "' (known: "
                    + String.join(", ", new TreeSet<>(KEYS))
                    + ")");
          }
        }
        String where = "agent config " + file;
        label = text(root, "label", label, where);
        String dirSetting = text(root, "config-dir", null, where);
        if (dirSetting != null && dirSetting.isBlank()) {
          throw new IllegalArgumentException(where + ": config-dir is empty");
        }
        if (dirSetting != null) {
          configDir = file.toAbsolutePath().getParent().resolve(dirSetting);
        }
        JsonNode restNode = root.get("rest-address");
        if (restNode != null) {
          // YAML 1.1 reads a bare `off` as the boolean false
          if (restNode.isBoolean() && restNode.booleanValue()) {
            throw new IllegalArgumentException(
                where
                    + ": rest-address must be host:port or off,"
                    + " got '"
                    + restNode.asText()
                    + "'");
          }
          rest =
              restNode.isNull() || restNode.isBoolean()
                  ? "off"
                  : text(root, "rest-address", null, where);
        }
        String etcdFile = text(root, "etcd-config", null, where);
        if (etcdFile != null) {
          EtcdConfigFile.read(file.toAbsolutePath().getParent().resolve(etcdFile), etcdLayers);
        }
        if (root.hasNonNull("etcd")) {
          EtcdConfigFile.apply(
              root.get("etcd"), file.toAbsolutePath().getParent(), where + ": etcd", etcdLayers);
        }
        if (root.has("etcd-endpoints")) {
          etcdLayers.endpoints = endpoints(root.get("etcd-endpoints"), where + ": etcd-endpoints");
        }
        status = flag(root, "status-publishing", status, where);
        print = flag(root, "print-txn-summary", print, where);
        linux = flag(root, "linux", linux, where);
        String timeoutSetting = text(root, "operation-timeout", null, where);
        if (timeoutSetting != null) {
          timeout = duration(timeoutSetting, where + ": operation-timeout");
        }
        Path base = file.toAbsolutePath().getParent();
        String settleSetting = text(root, "file-settle-time", null, where);
        if (settleSetting != null) {
          settle = duration(settleSetting, where + ": file-settle-time");
        }
        grpcAddress = text(root, "grpc-address", null, where);
        String grpcConfigSetting = text(root, "grpc-config", null, where);
        if (grpcConfigSetting != null) {
          grpcConfig = base.resolve(grpcConfigSetting);
        }
        String tokenSetting = text(root, "rest-token-file", null, where);
        tokenFile = tokenSetting == null ? null : base.resolve(tokenSetting);
        readOnly = flag(root, "rest-read-only", readOnly, where);
        JsonNode hostsNode = root.get("rest-allowed-hosts");
        if (hostsNode != null && !hostsNode.isNull()) {
          allowedHosts = hosts(hostsNode, where);
        }
        readOnly = flag(root, "read-only", readOnly, where);
        followLinks = flag(root, "follow-external-links", followLinks, where);
        JsonNode stateNode = root.get("state-dir");
        if (stateNode != null) {
          // YAML 1.1 reads a bare `off` as the boolean false
          if (stateNode.isBoolean() && stateNode.booleanValue()) {
            throw new IllegalArgumentException(
                where + ": state-dir must be a directory or off, got 'true'");
          }
          String dir =
              stateNode.isNull() || stateNode.isBoolean()
                  ? "off"
                  : text(root, "state-dir", null, where);
          stateDir = stateDir(dir, base, where + ": state-dir");
        }
        standby = flag(root, "standby", standby, where);
        fleetUrl = text(root, "fleet-url", fleetUrl, where);
        if (set(root, "probes") != null) {
          probes = ProbeSettings.read(root.get("probes"), where + ": probes");
        }
        String certSetting = text(root, "rest-tls-cert", null, where);
        tlsCert = certSetting == null ? null : base.resolve(certSetting);
        String keySetting = text(root, "rest-tls-key", null, where);
        tlsKey = keySetting == null ? null : base.resolve(keySetting);
        String opsSetting = text(root, "txn-log-max-ops", null, where);
        if (opsSetting != null) {
          maxOps = count(opsSetting, where + ": txn-log-max-ops");
        }
        String parallelSetting = text(root, "parallelism", null, where);
        if (parallelSetting != null) {
          parallelism = atLeastOne(parallelSetting, where + ": parallelism");
        }
      }
    }

    if (nonEmpty(env.get("MICROSERVICE_LABEL"))) {
      label = env.get("MICROSERVICE_LABEL");
    }
    if (nonEmpty(env.get("ETCD_CONFIG"))) {
      EtcdConfigFile.read(Path.of(env.get("ETCD_CONFIG")), etcdLayers);
    }
    if (nonEmpty(env.get("ETCD_ENDPOINTS"))) {
      etcdLayers.endpoints = checkedEndpoints(split(env.get("ETCD_ENDPOINTS")), "ETCD_ENDPOINTS");
    }
    List<String> etcdFlag = null;
    if (nonEmpty(env.get("ENABLE_STATUS_PUBLISHING"))) {
      status = true;
    }
    if (nonEmpty(env.get("KVS_LINUX"))) {
      if (!env.get("KVS_LINUX").equalsIgnoreCase("true")
          && !env.get("KVS_LINUX").equalsIgnoreCase("false")) {
        throw new IllegalArgumentException(
            "KVS_LINUX must be true or false, got '" + env.get("KVS_LINUX") + "'");
      }
      linux = Boolean.parseBoolean(env.get("KVS_LINUX"));
    }
    if (nonEmpty(env.get("GRPC_CONFIG"))) {
      grpcConfig = Path.of(env.get("GRPC_CONFIG"));
    }
    if (nonEmpty(env.get("KVS_STATE_DIR"))) {
      stateDir = stateDir(env.get("KVS_STATE_DIR"), null, "KVS_STATE_DIR");
    }
    if (nonEmpty(env.get("KVS_REST_TOKEN"))) {
      restToken = env.get("KVS_REST_TOKEN").strip();
    }

    if (flags.label != null) {
      label = flags.label;
    }
    if (flags.configDir != null) {
      configDir = flags.configDir;
    }
    if (flags.rest != null) {
      rest = flags.rest;
    }
    if (flags.etcd != null) {
      etcdFlag = checkedEndpoints(split(flags.etcd), "--etcd");
    }
    for (Path f : flags.etcdConfig) {
      EtcdConfigFile.read(f, etcdLayers);
    }
    status |= flags.statusPublishing;
    print &= !flags.quiet;
    if (flags.operationTimeout != null) {
      timeout = duration(flags.operationTimeout, "--operation-timeout");
    }
    if (flags.restTokenFile != null) {
      tokenFile = flags.restTokenFile;
    }
    readOnly |= flags.restReadOnly || flags.readOnly;
    followLinks |= flags.followExternalLinks;
    if (flags.restAllowedHosts != null) {
      allowedHosts = split(flags.restAllowedHosts);
    }
    if (flags.restTlsCert != null) {
      tlsCert = flags.restTlsCert;
    }
    if (flags.restTlsKey != null) {
      tlsKey = flags.restTlsKey;
    }
    if (flags.txnLogMaxOps != null) {
      maxOps = count(flags.txnLogMaxOps, "--txn-log-max-ops");
    }
    if (flags.parallelism != null) {
      parallelism = atLeastOne(flags.parallelism, "--parallelism");
    }
    linux |= flags.linux;
    if (flags.fileSettleTime != null) {
      settle = duration(flags.fileSettleTime, "--file-settle-time");
    }
    if (flags.grpc != null) {
      grpcAddress = flags.grpc;
    }
    if (flags.grpcConfig != null) {
      grpcConfig = flags.grpcConfig;
    }
    if (flags.stateDir != null) {
      stateDir = stateDir(flags.stateDir, null, "--state-dir");
    }
    if (etcdFlag != null) {
      etcd = etcdFlag;
    } else if (etcdLayers.endpoints != null) {
      etcd = etcdLayers.endpoints;
    } else if (etcdLayers.fileSeen) {
      etcd = List.of(EtcdConfigFile.DEFAULT_ENDPOINT);
    }
    EtcdSettings etcdSettings = etcdLayers.settings("etcd settings");
    if (!label.matches("[-A-Za-z0-9_.]+")) {
      throw new IllegalArgumentException(
          "invalid label '"
              + label
              + "': a label is letters, digits, '-', '_' and '.' (it is one element of the etcd"
              + " prefix /vnf-agent/<label>/)");
    }
    standby |= flags.standby;
    if (nonEmpty(env.get("KVS_FLEET_URL"))) {
      fleetUrl = env.get("KVS_FLEET_URL");
    }
    if (flags.fleetUrl != null) {
      fleetUrl = flags.fleetUrl;
    }
    if (!"off".equals(rest)) {
      RestAddress.check(rest); // a malformed address is an error of the settings
    }
    RestSecurity security =
        new RestSecurity(
            tokenFile != null ? null : restToken,
            tokenFile,
            readOnly,
            tlsCert,
            tlsKey,
            allowedHosts);
    byte[] token = security.loadToken();
    GrpcSettings grpc =
        grpcSettings(
            grpcAddress,
            grpcConfig,
            token == null ? null : new String(token, StandardCharsets.UTF_8));
    if (grpc != null && grpc.certFile() == null && tlsCert != null) {
      // no certificate of its own: gRPC serves TLS with the REST API's certificate
      grpc =
          new GrpcSettings(grpc.address(), tlsCert, tlsKey, grpc.token(), grpc.maxMessageBytes());
    }
    return new AgentConfig(
        label,
        configDir,
        "off".equals(rest) ? null : rest,
        etcd,
        status,
        print,
        timeout,
        linux ? Set.of("linux") : Set.of(),
        etcdSettings,
        settle,
        grpc,
        security,
        maxOps,
        parallelism,
        followLinks,
        stateDir,
        standby,
        probes,
        fleetUrl);
  }

  /** The JVM system property that replaces the default state directory (a directory or off). */
  public static final String STATE_DIR_PROPERTY = "kvs.state-dir";

  /**
   * The state directory when no settings file, environment variable or flag names one: the system
   * property {@value #STATE_DIR_PROPERTY} when it is set (null for {@code off}), else {@link
   * #defaultStateDir(Map, String, Path)} for this process's user.
   */
  public static Path defaultStateDir() {
    String property = System.getProperty(STATE_DIR_PROPERTY);
    if (property != null) {
      return stateDir(property, null, "system property " + STATE_DIR_PROPERTY);
    }
    return defaultStateDir(System.getenv(), System.getProperty("user.name"), userHome());
  }

  /**
   * The default state directory: {@code /var/lib/kvscheduler} for root, else {@code
   * $XDG_DATA_HOME/kvscheduler} (when it is an absolute path) or {@code
   * ~/.local/share/kvscheduler}.
   */
  public static Path defaultStateDir(Map<String, String> env, String user, Path home) {
    if ("root".equals(user)) {
      return Path.of("/var/lib/kvscheduler");
    }
    String xdg = env.get("XDG_DATA_HOME");
    if (xdg != null && !xdg.isEmpty() && Path.of(xdg).isAbsolute()) {
      return Path.of(xdg, "kvscheduler");
    }
    return home.resolve(".local").resolve("share").resolve("kvscheduler");
  }

  private static Path userHome() {
    return Path.of(System.getProperty("user.home", "."));
  }

  /** {@code off} (null), or the directory, relative ones against {@code base} when given. */
  private static Path stateDir(String text, Path base, String what) {
    String t = text.strip();
    if (t.isEmpty()) {
      throw new IllegalArgumentException(what + ": expected a directory or off, got ''");
    }
    if (t.equals("off")) {
      return null;
    }
    return base == null ? Path.of(t) : base.resolve(t);
  }

  /**
   * The gRPC server's settings: from vpp-agent's {@code grpc.conf} when one is given, its endpoint
   * replaced by {@code address} when that is given too; null when neither is.
   */
  private static GrpcSettings grpcSettings(String address, Path conf, String token)
      throws IOException {
    GrpcSettings s = null;
    if (conf != null) {
      s = GrpcSettings.fromFile(conf);
    }
    if (address != null) {
      try {
        s =
            s == null
                ? GrpcSettings.plain(address)
                : new GrpcSettings(address, s.certFile(), s.keyFile(), null, s.maxMessageBytes());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--grpc: " + e.getMessage(), e);
      }
    }
    return s == null || token == null ? s : s.withToken(token);
  }

  /** The host names of {@code rest-allowed-hosts}: a list, or one text of comma-separated names. */
  private static List<String> hosts(JsonNode n, String where) {
    if (n.isValueNode()) {
      return split(n.asText());
    }
    List<String> out = new ArrayList<>();
    for (JsonNode h : n) {
      if (!h.isValueNode()) {
        throw new IllegalArgumentException(
            where + ": rest-allowed-hosts must be a list of host names, got " + n);
      }
      out.add(h.asText());
    }
    return out;
  }

  /** A count of 0 or more. */
  private static int atLeastOne(String text, String what) {
    try {
      int n = Integer.parseInt(text.strip());
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException(
        what + ": expected a whole number, 1 or more, got '" + text + "'");
  }

  private static int count(String text, String what) {
    try {
      int n = Integer.parseInt(text.strip());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException(
        what + ": expected a whole number, 0 or more, got '" + text + "'");
  }

  /** The boolean setting {@code name} of the file ({@code where}), or {@code dflt} when unset. */
  private static boolean flag(JsonNode root, String name, boolean dflt, String where) {
    JsonNode n = set(root, name);
    return n == null ? dflt : bool(n, where, name);
  }

  /** The single-value setting {@code name} of the file ({@code where}), or {@code dflt}. */
  private static String text(JsonNode root, String name, String dflt, String where) {
    JsonNode n = set(root, name);
    return n == null ? dflt : SettingValues.text(n, where, name);
  }

  private static boolean nonEmpty(String s) {
    return s != null && !s.isEmpty();
  }
}
