package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.config.SettingsLoader;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Settings of the agent, built with {@link #builder()} or read by {@link #load}. Sources of {@link
 * #load}, later ones winning: defaults, the YAML file given with {@code --config}, environment
 * variables vpp-agent users know, command-line flags.
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
 *   <tr><td>state-dir</td><td>--state-dir</td><td>KVS_STATE_DIR</td><td>{@link #load}: {@code
 *       /var/lib/kvscheduler} for root, else {@code $XDG_DATA_HOME/kvscheduler} or {@code
 *       ~/.local/share/kvscheduler} ({@code off}: nothing kept); {@link #builder()}: off</td></tr>
 *   <tr><td>standby</td><td>--standby</td><td></td><td>false (with etcd, an agent whose label
 *       another agent holds exits; true: it waits and takes over when the holder goes)</td></tr>
 *   <tr><td>probes (a list)</td><td></td><td></td><td>none (a confirmed commit is confirmed by
 *       hand only)</td></tr>
 *   <tr><td>fleet-url</td><td>--fleet-url</td><td>KVS_FLEET_URL</td><td>none (with etcd, the web
 *       page tells how to serve a fleet view with {@code kvsctl fleet --serve})</td></tr>
 * </table>
 *
 * <p>The etcd connection settings (TLS, authentication, timeouts, lease TTL) are written as in
 * vpp-agent's {@code etcd.conf} (keys in docs/agent.md). Naming an etcd configuration file turns
 * the etcd northbound on, at {@code 127.0.0.1:2379} if no source names endpoints, as vpp-agent
 * does. Order, later winning: the settings file's {@code etcd-config} file, its {@code etcd}
 * mapping, its {@code etcd-endpoints}; {@code ETCD_CONFIG}; {@code ETCD_ENDPOINTS}; {@code
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
 * @param stateDir directory of the state store, where what REST and gRPC pushed is kept across
 *     restarts ({@code <dir>/<label>/pushed.db}), or null when nothing is kept
 * @param standby with etcd, whether an agent whose label another agent holds waits for the label (a
 *     hot standby) instead of exiting
 * @param probes run after a confirmed commit applies: the first failure rolls it back, all passing
 *     confirm it (see {@link Probe}); empty: confirmed commits are confirmed by hand only. The
 *     programs of command probes must exist: the agent does not start otherwise
 * @param fleetUrl with etcd, where the view of the whole fleet is served (for instance by {@code
 *     kvsctl fleet --serve}): the web page links to it, {@code GET /info/label} gives it; an
 *     absolute http or https URL, or null
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
    boolean followExternalLinks,
    Path stateDir,
    boolean standby,
    List<Probe> probes,
    String fleetUrl) {

  /** Operations printed per transaction by default. */
  public static final int DEFAULT_TXN_LOG_MAX_OPS = 50;

  public AgentConfig {
    if (label == null || label.isEmpty() || label.contains("/")) {
      throw new IllegalArgumentException(
          "invalid label '"
              + label
              + "': a label is one non-empty element of the etcd prefix /vnf-agent/<label>/,"
              + " without '/'");
    }
    etcdEndpoints = List.copyOf(etcdEndpoints);
    probes = probes == null ? List.of() : List.copyOf(probes);
    if (probes.stream().map(Probe::name).distinct().count() < probes.size()) {
      throw new IllegalArgumentException("probes: two probes have the same name");
    }
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
    fleetUrl = checkFleetUrl(fleetUrl);
  }

  /** {@code url} when it is an absolute http or https URL (null stays null), else why not. */
  private static String checkFleetUrl(String url) {
    if (url == null || url.isBlank()) {
      return null;
    }
    try {
      URI u = new URI(url.strip());
      String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(Locale.ROOT);
      if ((scheme.equals("http") || scheme.equals("https")) && u.getHost() != null) {
        return u.toString();
      }
    } catch (URISyntaxException e) {
      // said below
    }
    throw new IllegalArgumentException(
        "fleet-url '"
            + url
            + "' is not an absolute http or https URL (for instance http://fleet.example:9192/)");
  }

  /**
   * A builder of settings starting from the defaults: label {@code vpp1}, REST on {@code
   * 127.0.0.1:9191} without a token, no file, etcd or gRPC source, transaction logs printed (at
   * most {@value #DEFAULT_TXN_LOG_MAX_OPS} operations each), no operation timeout, southbound calls
   * one at a time, the default etcd settings and file settle time, no state directory (what REST
   * and gRPC push is kept in memory only; {@link #load} has one by default).
   */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from these settings. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.label = label;
    b.configDir = configDir;
    b.restAddress = restAddress;
    b.etcdEndpoints = etcdEndpoints;
    b.statusPublishing = statusPublishing;
    b.printTxnSummary = printTxnSummary;
    b.operationTimeout = operationTimeout;
    b.enabledPlugins = new HashSet<>(enabledPlugins);
    b.etcd = etcd;
    b.fileSettleTime = fileSettleTime;
    b.grpc = grpc;
    b.restSecurity = restSecurity;
    b.txnLogMaxOps = txnLogMaxOps;
    b.parallelism = parallelism;
    b.followExternalLinks = followExternalLinks;
    b.stateDir = stateDir;
    b.standby = standby;
    b.probes = probes;
    b.fleetUrl = fleetUrl;
    return b;
  }

  /** The defaults: label vpp1, REST on 127.0.0.1:9191, no file or etcd northbound. */
  public static AgentConfig defaults() {
    return builder().build();
  }

  /**
   * Builds {@link AgentConfig}; each setter sets the record component of the same name (see the
   * record's parameters), and {@link #build} checks them as the record does.
   */
  public static final class Builder {
    private String label = "vpp1";
    private Path configDir;
    private String restAddress = "127.0.0.1:9191";
    private List<String> etcdEndpoints = List.of();
    private boolean statusPublishing;
    private boolean printTxnSummary = true;
    private Duration operationTimeout;
    private Set<String> enabledPlugins = new HashSet<>();
    private EtcdSettings etcd;
    private Duration fileSettleTime;
    private GrpcSettings grpc;
    private RestSecurity restSecurity = RestSecurity.NONE;
    private int txnLogMaxOps = DEFAULT_TXN_LOG_MAX_OPS;
    private int parallelism = 1;
    private boolean followExternalLinks;
    private Path stateDir;
    private boolean standby;
    private List<Probe> probes = List.of();
    private String fleetUrl;

    private Builder() {}

    public Builder label(String label) {
      this.label = label;
      return this;
    }

    /** The directory of the file northbound; null (the default) leaves it off. */
    public Builder configDir(Path dir) {
      this.configDir = dir;
      return this;
    }

    /** {@code host:port} of the REST API; null turns it off. */
    public Builder restAddress(String address) {
      this.restAddress = address;
      return this;
    }

    /** etcd endpoints; empty (the default) leaves the etcd northbound off. */
    public Builder etcdEndpoints(List<String> endpoints) {
      this.etcdEndpoints = endpoints;
      return this;
    }

    public Builder statusPublishing(boolean publish) {
      this.statusPublishing = publish;
      return this;
    }

    public Builder printTxnSummary(boolean print) {
      this.printTxnSummary = print;
      return this;
    }

    /** Limit of one southbound call; null (the default) for none. */
    public Builder operationTimeout(Duration timeout) {
      this.operationTimeout = timeout;
      return this;
    }

    /** Enables the plugin {@code name}, which is off by default ({@code linux}). */
    public Builder enablePlugin(String name) {
      this.enabledPlugins.add(name);
      return this;
    }

    /** How to connect to etcd; null for {@link EtcdSettings#defaults()}. */
    public Builder etcd(EtcdSettings settings) {
      this.etcd = settings;
      return this;
    }

    /** Settle time of the file northbound; null for its default. */
    public Builder fileSettleTime(Duration settle) {
      this.fileSettleTime = settle;
      return this;
    }

    /** Settings of the gRPC server; null (the default) leaves it off. */
    public Builder grpc(GrpcSettings settings) {
      this.grpc = settings;
      return this;
    }

    public Builder restSecurity(RestSecurity security) {
      this.restSecurity = security;
      return this;
    }

    public Builder txnLogMaxOps(int max) {
      this.txnLogMaxOps = max;
      return this;
    }

    public Builder parallelism(int parallelism) {
      this.parallelism = parallelism;
      return this;
    }

    public Builder followExternalLinks(boolean follow) {
      this.followExternalLinks = follow;
      return this;
    }

    /** The state directory; null (the default) keeps what REST and gRPC push in memory only. */
    public Builder stateDir(Path dir) {
      this.stateDir = dir;
      return this;
    }

    /** With etcd: wait for a label another agent holds instead of exiting. */
    public Builder standby(boolean standby) {
      this.standby = standby;
      return this;
    }

    /** The probes run after a confirmed commit applies; empty (the default): none. */
    public Builder probes(List<Probe> probes) {
      this.probes = probes;
      return this;
    }

    /** Where the fleet view is served (the web page links to it); null (the default): none. */
    public Builder fleetUrl(String url) {
      this.fleetUrl = url;
      return this;
    }

    /**
     * The settings.
     *
     * @throws IllegalArgumentException when a count is out of range (see the record)
     * @throws NullPointerException when the REST security is null
     */
    public AgentConfig build() {
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
          followExternalLinks,
          stateDir,
          standby,
          probes,
          fleetUrl);
    }
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
