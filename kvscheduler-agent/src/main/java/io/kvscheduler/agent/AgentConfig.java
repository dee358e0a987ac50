package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.config.SettingsLoader;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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

  /**
   * Reads the settings from the command-line arguments (after the command; parsed by picocli) and
   * the environment: see {@link SettingsLoader#load}.
   *
   * @throws IllegalArgumentException naming the bad flag, file, key or value
   * @throws IOException when the REST token file cannot be read
   */
  public static AgentConfig load(List<String> args, Map<String, String> env) throws IOException {
    return SettingsLoader.load(args, env);
  }

  /** The etcd prefix of this agent: {@code /vnf-agent/<label>/}. */
  public String agentPrefix() {
    return "/vnf-agent/" + label + "/";
  }
}
