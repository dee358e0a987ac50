package io.kvscheduler.agent;

import static io.kvscheduler.agent.SettingValues.bool;
import static io.kvscheduler.agent.SettingValues.checkedEndpoints;
import static io.kvscheduler.agent.SettingValues.duration;
import static io.kvscheduler.agent.SettingValues.endpoints;
import static io.kvscheduler.agent.SettingValues.readYaml;
import static io.kvscheduler.agent.SettingValues.set;
import static io.kvscheduler.agent.SettingValues.split;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.internal.RestServer;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Settings of the agent. Sources, later ones winning: defaults, the YAML file given with {@code
 * --config}, environment variables vpp-agent users know, command-line flags.
 *
 * <table>
 *   <caption>settings</caption>
 *   <tr><th>YAML key</th><th>flag</th><th>environment</th><th>default</th></tr>
 *   <tr><td>label</td><td>--label</td><td>MICROSERVICE_LABEL</td><td>vpp1</td></tr>
 *   <tr><td>config-dir</td><td>--config-dir</td><td></td><td>none (file northbound off)</td></tr>
 *   <tr><td>rest-address</td><td>--rest</td><td></td><td>127.0.0.1:9191 ({@code off} disables)</td></tr>
 *   <tr><td>etcd-endpoints</td><td>--etcd</td><td>ETCD_ENDPOINTS</td><td>none (etcd northbound off)</td></tr>
 *   <tr><td>status-publishing</td><td>--status-publishing</td><td>ENABLE_STATUS_PUBLISHING (non-empty)</td><td>false</td></tr>
 *   <tr><td>print-txn-summary</td><td>--quiet (sets false)</td><td></td><td>true</td></tr>
 *   <tr><td>operation-timeout</td><td>--operation-timeout</td><td></td><td>none (southbound
 *       calls are not bounded)</td></tr>
 *   <tr><td>linux</td><td>--linux</td><td>KVS_LINUX ({@code true})</td><td>false (the Linux
 *       networking plugin is off: the agent does not touch the host's network)</td></tr>
 *   <tr><td>etcd-config (a file), etcd (a mapping)</td><td>--etcd-config</td><td>ETCD_CONFIG</td>
 *       <td>{@link EtcdSettings#defaults()}</td></tr>
 *   <tr><td>file-settle-time</td><td>--file-settle-time</td><td></td><td>2s</td></tr>
 *   <tr><td>grpc-address</td><td>--grpc</td><td></td><td>none (gRPC server off)</td></tr>
 *   <tr><td>grpc-config</td><td>--grpc-config</td><td>GRPC_CONFIG</td><td>none: vpp-agent's
 *       {@code grpc.conf} ({@code endpoint}, {@code max-msg-size}, TLS); {@code --grpc} wins
 *       over its endpoint</td></tr>
 *   <tr><td></td><td>--rest-token-file</td><td>KVS_REST_TOKEN</td><td>none: the bearer token
 *       the gRPC calls must carry</td></tr>
 * </table>
 *
 * <p>The etcd connection settings (TLS, authentication, timeouts, lease TTL) are written as in
 * vpp-agent's {@code etcd.conf} (keys in the README). Naming an etcd configuration file
 * turns the etcd northbound on, at {@code 127.0.0.1:2379} if no source names endpoints, as
 * vpp-agent does. Order, later winning: the settings file's {@code etcd-config} file, its {@code
 * etcd} mapping, its {@code etcd-endpoints}; {@code ETCD_CONFIG}; {@code ETCD_ENDPOINTS}; {@code
 * --etcd-config}; {@code --etcd}.
 *
 * @param label microservice label: the etcd prefix is {@code /vnf-agent/<label>/}
 * @param configDir directory of the file northbound, or null
 * @param restAddress host:port of the REST API, or null when off
 * @param etcdEndpoints etcd endpoints (host:port or URLs); empty = etcd northbound off
 * @param statusPublishing publish value statuses under {@code config-status/} in etcd
 * @param printTxnSummary print every transaction's log
 * @param operationTimeout limit of one southbound call of the plugins' descriptors (see {@code
 *     KVSchedulerBuilder.operationTimeout}), or null for none; written {@code 500ms}, {@code 5s},
 *     {@code 1m} or as an ISO-8601 duration ({@code PT5S})
 * @param enabledPlugins names of plugins that are off by default and enabled here ({@code
 *     linux})
 * @param etcd how to connect to etcd (TLS, authentication, timeouts, lease TTL); null means
 *     {@link EtcdSettings#defaults()}
 * @param fileSettleTime how long the files a change of the file northbound touches must read
 *     the same before a change that removes or replaces values applies (additions apply at
 *     once), or null for the default ({@code FileNorthbound.DEFAULT_SETTLE}, 2 s); written as
 *     {@code operationTimeout}
 * @param grpc settings of the gRPC server, or null when it is off
 */
public record AgentConfig(String label, Path configDir, String restAddress,
    List<String> etcdEndpoints, boolean statusPublishing, boolean printTxnSummary,
    Duration operationTimeout, Set<String> enabledPlugins, EtcdSettings etcd,
    Duration fileSettleTime, GrpcSettings grpc) {

  public AgentConfig {
    etcdEndpoints = List.copyOf(etcdEndpoints);
    enabledPlugins = Set.copyOf(enabledPlugins);
    etcd = etcd != null ? etcd : EtcdSettings.defaults();
  }

  /** Settings with no plugin enabled beyond the default ones and the default etcd settings. */
  public AgentConfig(String label, Path configDir, String restAddress,
      List<String> etcdEndpoints, boolean statusPublishing, boolean printTxnSummary,
      Duration operationTimeout) {
    this(label, configDir, restAddress, etcdEndpoints, statusPublishing, printTxnSummary,
        operationTimeout, Set.of(), null, null, null);
  }

  /** These settings with the plugin {@code name}, off by default, enabled. */
  public AgentConfig withPlugin(String name) {
    Set<String> names = new HashSet<>(enabledPlugins);
    names.add(name);
    return new AgentConfig(label, configDir, restAddress, etcdEndpoints, statusPublishing,
        printTxnSummary, operationTimeout, names, etcd, fileSettleTime, grpc);
  }

  /** These settings with other etcd connection settings. */
  public AgentConfig withEtcd(EtcdSettings settings) {
    return new AgentConfig(label, configDir, restAddress, etcdEndpoints, statusPublishing,
        printTxnSummary, operationTimeout, enabledPlugins, settings, fileSettleTime, grpc);
  }

  /** These settings with another settle time of the file northbound. */
  public AgentConfig withFileSettleTime(Duration settle) {
    return new AgentConfig(label, configDir, restAddress, etcdEndpoints, statusPublishing,
        printTxnSummary, operationTimeout, enabledPlugins, etcd, settle, grpc);
  }

  /** These settings with the gRPC server of {@code settings} (null: off). */
  public AgentConfig withGrpc(GrpcSettings settings) {
    return new AgentConfig(label, configDir, restAddress, etcdEndpoints, statusPublishing,
        printTxnSummary, operationTimeout, enabledPlugins, etcd, fileSettleTime, settings);
  }

  /** Settings without an operation timeout. */
  public AgentConfig(String label, Path configDir, String restAddress,
      List<String> etcdEndpoints, boolean statusPublishing, boolean printTxnSummary) {
    this(label, configDir, restAddress, etcdEndpoints, statusPublishing, printTxnSummary,
        (Duration) null);
  }

  /** The defaults: label vpp1, REST on 127.0.0.1:9191, no file or etcd northbound. */
  public static AgentConfig defaults() {
    return new AgentConfig("vpp1", null, "127.0.0.1:9191", List.of(), false, true);
  }

  private static final Set<String> KEYS = Set.of("label", "config-dir", "rest-address",
      "etcd-endpoints", "status-publishing", "print-txn-summary", "operation-timeout", "linux",
      "etcd-config", "etcd", "file-settle-time", "grpc-address", "grpc-config");

  /**
   * Reads the settings from the command-line arguments (after the command) and the environment.
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
    Path tokenFile = null;

    int fileAt = args.indexOf("--config");
    if (fileAt >= 0 && args.lastIndexOf("--config") != fileAt) {
      throw new IllegalArgumentException("--config given twice (one settings file at most)");
    }
    if (fileAt >= 0) {
      if (fileAt + 1 >= args.size()) {
        throw new IllegalArgumentException("--config needs a file");
      }
      Path file = Path.of(args.get(fileAt + 1));
      JsonNode root = readYaml(file, "cannot read agent config ");
      if (root != null && !root.isNull()) {
        if (!root.isObject()) {
          throw new IllegalArgumentException("agent config " + file + ": expected a mapping");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
          String k = it.next();
          if (!KEYS.contains(k)) {
            throw new IllegalArgumentException("agent config " + file + ": unknown key '" + k
                + "' (known: " + String.join(", ", new TreeSet<>(KEYS)) + ")");
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
            throw new IllegalArgumentException(where + ": rest-address must be host:port or off,"
                + " got '" + restNode.asText() + "'");
          }
          rest = restNode.isNull() || restNode.isBoolean()
              ? "off" : text(root, "rest-address", null, where);
        }
        String etcdFile = text(root, "etcd-config", null, where);
        if (etcdFile != null) {
          EtcdConfigFile.read(file.toAbsolutePath().getParent().resolve(etcdFile), etcdLayers);
        }
        if (root.hasNonNull("etcd")) {
          EtcdConfigFile.apply(root.get("etcd"), file.toAbsolutePath().getParent(),
              where + ": etcd", etcdLayers);
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
        String settleSetting = text(root, "file-settle-time", null, where);
        if (settleSetting != null) {
          settle = duration(settleSetting, where + ": file-settle-time");
        }
        grpcAddress = text(root, "grpc-address", null, where);
        String grpcConfigSetting = text(root, "grpc-config", null, where);
        if (grpcConfigSetting != null) {
          grpcConfig = file.toAbsolutePath().getParent().resolve(grpcConfigSetting);
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
        throw new IllegalArgumentException("KVS_LINUX must be true or false, got '"
            + env.get("KVS_LINUX") + "'");
      }
      linux = Boolean.parseBoolean(env.get("KVS_LINUX"));
    }
    if (nonEmpty(env.get("GRPC_CONFIG"))) {
      grpcConfig = Path.of(env.get("GRPC_CONFIG"));
    }

    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      switch (a) {
        case "--config" -> i++;
        case "--label" -> label = value(args, ++i, a);
        case "--config-dir" -> configDir = Path.of(value(args, ++i, a));
        case "--rest" -> rest = value(args, ++i, a);
        case "--etcd" -> etcdFlag = checkedEndpoints(split(value(args, ++i, a)), a);
        case "--etcd-config" -> EtcdConfigFile.read(Path.of(value(args, ++i, a)), etcdLayers);
        case "--status-publishing" -> status = true;
        case "--quiet" -> print = false;
        case "--operation-timeout" -> timeout = duration(value(args, ++i, a), a);
        case "--grpc" -> grpcAddress = value(args, ++i, a);
        case "--grpc-config" -> grpcConfig = Path.of(value(args, ++i, a));
        case "--rest-token-file" -> tokenFile = Path.of(value(args, ++i, a));
        case "--linux" -> linux = true;
        case "--file-settle-time" -> settle = duration(value(args, ++i, a), a);
        default -> throw new IllegalArgumentException("unknown option '" + a + "'");
      }
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
      throw new IllegalArgumentException("invalid label '" + label + "'");
    }
    if (!"off".equals(rest)) {
      RestServer.checkAddress(rest); // a malformed address is an error of the settings
    }
    GrpcSettings grpc =
        grpcSettings(grpcAddress, grpcConfig, apiToken(tokenFile, env));
    AgentConfig config = new AgentConfig(label, configDir, "off".equals(rest) ? null : rest,
        etcd, status, print, timeout)
        .withEtcd(etcdSettings)
        .withFileSettleTime(settle)
        .withGrpc(grpc);
    return linux ? config.withPlugin("linux") : config;
  }

  /**
   * The gRPC server's settings: from vpp-agent's {@code grpc.conf} when one is given, its
   * endpoint replaced by {@code address} when that is given too; null when neither is.
   */
  private static GrpcSettings grpcSettings(String address, Path conf,
      String token) throws IOException {
    GrpcSettings s = null;
    if (conf != null) {
      s = GrpcSettings.fromFile(conf);
    }
    if (address != null) {
      try {
        s = s == null ? GrpcSettings.plain(address)
            : new GrpcSettings(address, s.certFile(), s.keyFile(), null,
                s.maxMessageBytes());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--grpc: " + e.getMessage(), e);
      }
    }
    return s == null || token == null ? s : s.withToken(token);
  }

  /**
   * The bearer token of the APIs: the first line of {@code --rest-token-file}, else {@code
   * KVS_REST_TOKEN}; null when neither is set.
   */
  private static String apiToken(Path file, Map<String, String> env) throws IOException {
    if (file != null) {
      String t;
      try {
        t = Files.readString(file).lines().findFirst().orElse("").strip();
      } catch (NoSuchFileException e) {
        throw new IllegalArgumentException("--rest-token-file " + file + ": no such file", e);
      }
      if (t.isEmpty()) {
        throw new IllegalArgumentException("--rest-token-file " + file + " holds no token");
      }
      return t;
    }
    return nonEmpty(env.get("KVS_REST_TOKEN")) ? env.get("KVS_REST_TOKEN").strip() : null;
  }

  /** The etcd prefix of this agent: {@code /vnf-agent/<label>/}. */
  public String agentPrefix() {
    return "/vnf-agent/" + label + "/";
  }

  private static String value(List<String> args, int i, String flag) {
    if (i >= args.size() || args.get(i).startsWith("--")) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args.get(i);
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
