package io.kvscheduler.agent;

import static io.kvscheduler.agent.SettingValues.checkedEndpoints;
import static io.kvscheduler.agent.SettingValues.duration;
import static io.kvscheduler.agent.SettingValues.endpoints;
import static io.kvscheduler.agent.SettingValues.split;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.agent.internal.ConfigDocument;
import io.kvscheduler.agent.internal.RestServer;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 *   <tr><td>rest-token-file</td><td>--rest-token-file</td><td>KVS_REST_TOKEN (the token
 *       itself)</td><td>none (no authentication of REST and gRPC calls)</td></tr>
 *   <tr><td>read-only</td><td>--read-only</td><td></td><td>false (REST and gRPC refuse every
 *       change when true)</td></tr>
 *   <tr><td>rest-read-only</td><td>--rest-read-only</td><td></td><td>false; the same as
 *       read-only (it covers gRPC too)</td></tr>
 *   <tr><td>follow-external-links</td><td>--follow-external-links</td><td></td><td>false
 *       (symbolic links in the config directory leading out of it are refused)</td></tr>
 *   <tr><td>rest-allowed-hosts (a list or a, b)</td><td>--rest-allowed-hosts</td><td></td>
 *       <td>none (only the addresses the REST API listens on)</td></tr>
 *   <tr><td>rest-tls-cert, rest-tls-key</td><td>--rest-tls-cert, --rest-tls-key</td><td></td>
 *       <td>none (plain HTTP); gRPC serves TLS with them too unless its grpc.conf names a
 *       certificate</td></tr>
 *   <tr><td>txn-log-max-ops</td><td>--txn-log-max-ops</td><td></td><td>50 (0: no limit)</td></tr>
 *   <tr><td>parallelism</td><td>--parallelism</td><td></td><td>1 (southbound calls one at a
 *       time)</td></tr>
 * </table>
 *
 * <p>The etcd connection settings (TLS, authentication, timeouts, lease TTL) are written as in
 * vpp-agent's {@code etcd.conf} (keys in the README). Naming an etcd configuration file turns the
 * etcd northbound on, at {@code 127.0.0.1:2379} if no source names endpoints, as vpp-agent does.
 * Order, later winning: the settings file's {@code etcd-config} file, its {@code etcd} mapping, its
 * {@code etcd-endpoints}; {@code ETCD_CONFIG}; {@code ETCD_ENDPOINTS}; {@code --etcd-config};
 * {@code --etcd}.
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
 * @param enabledPlugins names of plugins that are off by default and enabled here ({@code linux})
 * @param etcd how to connect to etcd (TLS, authentication, timeouts, lease TTL); null means {@link
 *     EtcdSettings#defaults()}
 * @param fileSettleTime how long the files a change of the file northbound touches must read the
 *     same before a change that removes or replaces values applies (additions apply at once), or
 *     null for the default ({@code FileNorthbound.DEFAULT_SETTLE}, 2 s); written as {@code
 *     operationTimeout}
 * @param grpc settings of the gRPC server, or null when it is off; {@link #load} gives it the REST
 *     API's certificate and key when the REST API has TLS and gRPC no certificate of its own
 * @param restSecurity bearer token (of the REST API and the gRPC server), read-only mode and TLS of
 *     the REST API
 * @param txnLogMaxOps operations printed per transaction in the transaction log, at most (the rest
 *     are counted and found in {@code /scheduler/txn-history}); 0 prints them all
 * @param parallelism southbound calls of one transaction that may run at the same time, at most
 *     (see {@code KVSchedulerBuilder.parallelism}); 1 runs them one at a time
 * @param followExternalLinks whether the file northbound reads a symbolic link whose target lies
 *     outside the config directory (by default such a link is refused and reported)
 */
public record AgentConfig(
    String label,
    Path configDir,
    String restAddress,
    List<String> etcdEndpoints,
    boolean statusPublishing,
    boolean printTxnSummary,
    Duration operationTimeout,
    Set<String> enabledPlugins,
    EtcdSettings etcd,
    Duration fileSettleTime,
    GrpcSettings grpc,
    RestSecurity restSecurity,
    int txnLogMaxOps,
    int parallelism,
    boolean followExternalLinks) {

  /** Operations printed per transaction by default. */
  public static final int DEFAULT_TXN_LOG_MAX_OPS = 50;

  public AgentConfig {
    etcdEndpoints = List.copyOf(etcdEndpoints);
    enabledPlugins = Set.copyOf(enabledPlugins);
    etcd = etcd != null ? etcd : EtcdSettings.defaults();
    Objects.requireNonNull(restSecurity, "restSecurity");
    if (txnLogMaxOps < 0) {
      throw new IllegalArgumentException(
          "txn-log-max-ops must not be negative, got " + txnLogMaxOps);
    }
    if (parallelism < 1) {
      throw new IllegalArgumentException("parallelism must be at least 1, got " + parallelism);
    }
  }

  /**
   * Settings with no plugin enabled beyond the default ones, the default etcd settings, no gRPC
   * server, the default REST security and transaction log.
   */
  public AgentConfig(
      String label,
      Path configDir,
      String restAddress,
      List<String> etcdEndpoints,
      boolean statusPublishing,
      boolean printTxnSummary,
      Duration operationTimeout) {
    this(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        Set.of(),
        null,
        null,
        null,
        RestSecurity.NONE,
        DEFAULT_TXN_LOG_MAX_OPS,
        1,
        false);
  }

  /** Settings without a gRPC server. */
  public AgentConfig(
      String label,
      Path configDir,
      String restAddress,
      List<String> etcdEndpoints,
      boolean statusPublishing,
      boolean printTxnSummary,
      Duration operationTimeout,
      Set<String> enabledPlugins) {
    this(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        null,
        null,
        null,
        RestSecurity.NONE,
        DEFAULT_TXN_LOG_MAX_OPS,
        1,
        false);
  }

  /** These settings with the plugin {@code name}, off by default, enabled. */
  public AgentConfig withPlugin(String name) {
    Set<String> names = new HashSet<>(enabledPlugins);
    names.add(name);
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        names,
        etcd,
        fileSettleTime,
        grpc,
        restSecurity,
        txnLogMaxOps,
        parallelism,
        followExternalLinks);
  }

  /** These settings with other etcd connection settings. */
  public AgentConfig withEtcd(EtcdSettings settings) {
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        settings,
        fileSettleTime,
        grpc,
        restSecurity,
        txnLogMaxOps,
        parallelism,
        followExternalLinks);
  }

  /** These settings with another settle time of the file northbound. */
  public AgentConfig withFileSettleTime(Duration settle) {
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        etcd,
        settle,
        grpc,
        restSecurity,
        txnLogMaxOps,
        parallelism,
        followExternalLinks);
  }

  /** These settings with the gRPC server of {@code settings} (null: off). */
  public AgentConfig withGrpc(GrpcSettings settings) {
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        etcd,
        fileSettleTime,
        settings,
        restSecurity,
        txnLogMaxOps,
        parallelism,
        followExternalLinks);
  }

  /** These settings with {@code parallelism} southbound calls at a time, at most. */
  public AgentConfig withParallelism(int parallelism) {
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        etcd,
        fileSettleTime,
        grpc,
        restSecurity,
        txnLogMaxOps,
        parallelism,
        followExternalLinks);
  }

  /** These settings with symbolic links leading out of the config directory followed or not. */
  public AgentConfig withFollowExternalLinks(boolean follow) {
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        etcd,
        fileSettleTime,
        grpc,
        restSecurity,
        txnLogMaxOps,
        parallelism,
        follow);
  }

  /** The same settings with other REST security. */
  public AgentConfig withRestSecurity(RestSecurity security) {
    return new AgentConfig(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        operationTimeout,
        enabledPlugins,
        etcd,
        fileSettleTime,
        grpc,
        security,
        txnLogMaxOps,
        parallelism,
        followExternalLinks);
  }

  /** Settings without an operation timeout. */
  public AgentConfig(
      String label,
      Path configDir,
      String restAddress,
      List<String> etcdEndpoints,
      boolean statusPublishing,
      boolean printTxnSummary) {
    this(
        label,
        configDir,
        restAddress,
        etcdEndpoints,
        statusPublishing,
        printTxnSummary,
        (Duration) null);
  }

  /** The defaults: label vpp1, REST on 127.0.0.1:9191, no file or etcd northbound. */
  public static AgentConfig defaults() {
    return new AgentConfig("vpp1", null, "127.0.0.1:9191", List.of(), false, true);
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
          "read-only");

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
    int maxOps = DEFAULT_TXN_LOG_MAX_OPS;
    int parallelism = 1;
    boolean followLinks = false;

    AgentOptions flags = AgentOptions.parse(args);
    if (!flags.config.isEmpty()) {
      Path file = flags.config.get(0);
      JsonNode root;
      try {
        root = ConfigDocument.parseYaml(Files.readString(file)).root();
      } catch (NoSuchFileException e) {
        throw new IllegalArgumentException(
            "cannot read agent config " + file + ": no such file", e);
      } catch (ConfigDocument.SyntaxException e) {
        throw new IllegalArgumentException(
            "cannot read agent config "
                + file
                + (e.line() > 0 ? ":" + e.line() : "")
                + ": "
                + e.getMessage(),
            e);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "cannot read agent config " + file + ": " + e.getMessage(), e);
      }
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
        followLinks);
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

  /** The etcd prefix of this agent: {@code /vnf-agent/<label>/}. */
  public String agentPrefix() {
    return "/vnf-agent/" + label + "/";
  }

  /** The boolean setting {@code name} of the file ({@code where}), or {@code dflt} when unset. */
  private static boolean flag(JsonNode root, String name, boolean dflt, String where) {
    JsonNode n = root.get(name);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (n.isBoolean()) {
      return n.booleanValue();
    }
    if (n.isTextual()
        && (n.textValue().equalsIgnoreCase("true") || n.textValue().equalsIgnoreCase("false"))) {
      return Boolean.parseBoolean(n.textValue()); // quoted, as templating tools often write it
    }
    throw new IllegalArgumentException(
        where
            + ": "
            + name
            + " must be true or false, got '"
            + (n.isValueNode() ? n.asText() : n.toString())
            + "'");
  }

  /** The single-value setting {@code name} of the file ({@code where}), or {@code dflt}. */
  private static String text(JsonNode root, String name, String dflt, String where) {
    JsonNode n = root.get(name);
    if (n == null || n.isNull()) {
      return dflt;
    }
    if (!n.isValueNode()) {
      throw new IllegalArgumentException(
          where
              + ": "
              + name
              + " must be a single value, got "
              + (n.isObject() ? "a mapping" : "a list"));
    }
    return n.asText();
  }

  private static boolean nonEmpty(String s) {
    return s != null && !s.isEmpty();
  }
}
