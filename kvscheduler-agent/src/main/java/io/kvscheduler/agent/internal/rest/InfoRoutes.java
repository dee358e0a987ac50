package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.EtcdSettings;
import io.kvscheduler.agent.Probe;
import io.kvscheduler.agent.RestSecurity;
import io.kvscheduler.agent.internal.logging.LogTail;
import io.kvscheduler.agent.internal.northbound.FileNorthbound;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code /info} route group: what a bug report needs about the agent itself. {@code GET
 * /info/version} (the keys of vpp-agent's version document, values honest: empty when unknown),
 * {@code GET /info/settings} (the settings in force, secrets left out: a token or an etcd password
 * is only said to be set) and {@code GET /info/log} (the recent log, {@link LogTail}).
 */
public final class InfoRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(InfoRoutes.class);

  private InfoRoutes() {}

  /** Adds the {@code /info} endpoints to {@code server}. */
  public static void register(RestServer server, AgentConfig config, LogTail log) {
    server.route("GET", "/info/version", Set.of(), r -> Response.json(200, version()));
    server.route("GET", "/info/settings", Set.of(), r -> Response.json(200, settings(config)));
    server.route("GET", "/info/log", Set.of(), r -> Response.text(200, log.text()));
  }

  /** The settings under their YAML keys; the bearer token is never shown. */
  static Map<String, Object> settings(AgentConfig c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("label", c.label());
    m.put("config-dir", c.configDir() == null ? null : c.configDir().toString());
    m.put("state-dir", c.stateDir() == null ? "off" : c.stateDir().toString());
    m.put("rest-address", c.restAddress() == null ? "off" : c.restAddress());
    m.put("etcd-endpoints", c.etcdEndpoints());
    EtcdSettings e = c.etcd();
    Map<String, Object> etcd = new LinkedHashMap<>();
    etcd.put("dial-timeout", e.dialTimeout().toString());
    etcd.put("operation-timeout", e.requestTimeout().toString());
    etcd.put("session-ttl", e.leaseTtl().toString());
    etcd.put("insecure-transport", e.insecureTransport());
    etcd.put("insecure-skip-tls-verify", e.insecureSkipTlsVerify());
    etcd.put("cert-file", e.certFile() == null ? null : e.certFile().toString());
    etcd.put("key-file", e.keyFile() == null ? null : e.keyFile().toString());
    etcd.put("ca-file", e.caFile() == null ? null : e.caFile().toString());
    etcd.put("username", e.username());
    etcd.put("password", e.password() == null ? "none" : "set");
    m.put("etcd", etcd);
    m.put("status-publishing", c.statusPublishing());
    m.put("print-txn-summary", c.printTxnSummary());
    m.put(
        "operation-timeout", c.operationTimeout() == null ? null : c.operationTimeout().toString());
    RestSecurity s = c.restSecurity();
    m.put(
        "rest-token",
        s.tokenFile() != null
            ? "set (from file " + s.tokenFile() + ")"
            : s.token() != null ? "set (from KVS_REST_TOKEN)" : "none");
    m.put("read-only", s.readOnly()); // REST and gRPC
    m.put("rest-read-only", s.readOnly());
    m.put("rest-allowed-hosts", s.allowedHosts());
    m.put("rest-tls-cert", s.tlsCert() == null ? null : s.tlsCert().toString());
    m.put("rest-tls-key", s.tlsKey() == null ? null : s.tlsKey().toString());
    m.put("txn-log-max-ops", c.txnLogMaxOps());
    m.put("parallelism", c.parallelism());
    m.put("follow-external-links", c.followExternalLinks());
    m.put("linux", c.enabledPlugins().contains("linux"));
    m.put(
        "file-settle-time",
        (c.fileSettleTime() != null ? c.fileSettleTime() : FileNorthbound.DEFAULT_SETTLE)
            .toString());
    GrpcSettings g = c.grpc();
    m.put("grpc-address", g == null ? "off" : g.address());
    Map<String, Object> grpc = null;
    if (g != null) {
      // what the server runs with: grpc.conf's keys, the address and token given beside it too
      grpc = new LinkedHashMap<>();
      grpc.put("endpoint", g.address());
      grpc.put("max-msg-size", g.maxMessageBytes());
      grpc.put("insecure-transport", g.certFile() == null);
      grpc.put("cert-file", g.certFile() == null ? null : g.certFile().toString());
      grpc.put("key-file", g.keyFile() == null ? null : g.keyFile().toString());
      grpc.put("token", g.token() == null ? "none" : "set");
    }
    m.put("grpc-config", grpc);
    m.put("standby", c.standby());
    m.put("probes", c.probes().stream().map(InfoRoutes::probe).toList());
    m.put("fleet-url", c.fleetUrl());
    return m;
  }

  /** A probe as the settings file writes it: its name, what it checks, its timeout. */
  private static Map<String, Object> probe(Probe p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", p.name());
    switch (p.kind()) {
      case COMMAND -> {
        m.put("command", p.command());
        if (p.netns() != null) {
          m.put("netns", p.netns());
        }
      }
      case TCP -> m.put("tcp", p.target());
      case HTTP -> m.put("http", p.target());
    }
    m.put("timeout", p.timeout().toString());
    return m;
  }

  /** The version document: the keys of vpp-agent's {@code types.Version}, in its order. */
  static Map<String, Object> version() {
    Map<String, Object> v = new LinkedHashMap<>();
    Properties build = buildInfo();
    v.put("App", "kvscheduler-agent");
    v.put("Version", build.getProperty("version", ""));
    v.put("GitCommit", "");
    v.put("GitBranch", "");
    v.put("BuildUser", "");
    v.put("BuildHost", "");
    v.put("BuildTime", 0L);
    v.put("GoVersion", "");
    v.put("OS", System.getProperty("os.name", "").toLowerCase(Locale.ROOT));
    String arch = System.getProperty("os.arch", "");
    v.put(
        "Arch",
        switch (arch) {
          case "x86_64" -> "amd64";
          case "aarch64" -> "arm64";
          default -> arch;
        });
    v.put("APIVersion", "");
    v.put("OSType", "");
    return v;
  }

  private static Properties buildInfo() {
    Properties p = new Properties();
    try (InputStream in =
        InfoRoutes.class.getResourceAsStream("/io/kvscheduler/agent/build.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      LOG.debug("cannot read build.properties", e);
    }
    if (p.getProperty("version", "").startsWith("${")) {
      p.remove("version");
    }
    return p;
  }
}
