package io.kvscheduler.agent.internal.config;

import io.kvscheduler.agent.AgentConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The flags of {@code kvs-agent run}, parsed by picocli. Only what the command line says: {@link
 * AgentConfig#load} lays the flags over the defaults, the settings file and the environment (later
 * sources win). A flag given twice takes its last value, except {@code --config} (one settings
 * file) and {@code --etcd-config} (each file is read, in order).
 */
@Command(
    name = "kvs-agent run",
    mixinStandardHelpOptions = true,
    description = "Runs the agent until SIGTERM or SIGINT (then stops cleanly, exit code 0).",
    sortOptions = false,
    footerHeading = "%nEnvironment:%n",
    footer = {
      "  MICROSERVICE_LABEL        --label",
      "  ETCD_ENDPOINTS            --etcd",
      "  ETCD_CONFIG               --etcd-config",
      "  ENABLE_STATUS_PUBLISHING  --status-publishing (any non-empty value)",
      "  KVS_REST_TOKEN            the REST and gRPC bearer token itself",
      "  KVS_LINUX                 --linux (true or false)",
      "  GRPC_CONFIG               --grpc-config",
      "  KVS_STATE_DIR             --state-dir",
      "Sources, later ones winning: defaults, the --config file, the environment, flags.",
      "The --etcd-config file is written as vpp-agent's etcd.conf (endpoints, dial-timeout,",
      "operation-timeout, session-ttl, insecure-transport, insecure-skip-tls-verify,",
      "cert-file, key-file, ca-file, username, password)."
    })
final class AgentOptions {
  @Option(
      names = "--config",
      paramLabel = "FILE",
      description = "Settings file (YAML; keys as the flags without --, see docs/agent.md).")
  List<Path> config = new ArrayList<>();

  @Option(
      names = "--label",
      paramLabel = "L",
      description = "Microservice label: the etcd prefix is /vnf-agent/<label>/ (default vpp1).")
  String label;

  @Option(
      names = "--config-dir",
      paramLabel = "DIR",
      description = "Directory of the file northbound (default: none).")
  Path configDir;

  @Option(
      names = "--rest",
      paramLabel = "HOST:PORT|off",
      description =
          "Address of the REST API and web page (default 127.0.0.1:9191; :PORT is loopback,"
              + " 0.0.0.0:PORT every interface).")
  String rest;

  @Option(
      names = "--etcd",
      paramLabel = "ENDPOINTS",
      description = "etcd endpoints, comma-separated: turns the etcd northbound on.")
  String etcd;

  @Option(
      names = "--etcd-config",
      paramLabel = "FILE",
      description = "etcd connection settings (as vpp-agent's etcd.conf); turns etcd on.")
  List<Path> etcdConfig = new ArrayList<>();

  @Option(
      names = "--status-publishing",
      description = "Publish value statuses under config-status/ in etcd.")
  boolean statusPublishing;

  @Option(names = "--quiet", description = "Do not print the transaction log.")
  boolean quiet;

  @Option(
      names = "--operation-timeout",
      paramLabel = "DURATION",
      description = "Limit of one southbound call: 500ms, 5s, 1m or PT5S (default: none).")
  String operationTimeout;

  @Option(
      names = "--rest-token-file",
      paramLabel = "FILE",
      description = "File holding the REST bearer token (or KVS_REST_TOKEN).")
  Path restTokenFile;

  @Option(names = "--rest-read-only", description = "The same as --read-only.")
  boolean restReadOnly;

  @Option(
      names = "--rest-allowed-hosts",
      paramLabel = "HOSTS",
      description =
          "Host names accepted in the Host header of REST requests without a token, besides the"
              + " addresses listened on (comma-separated; name or name:port).")
  String restAllowedHosts;

  @Option(
      names = "--read-only",
      description =
          "Refuse every change over REST (403) and gRPC (PERMISSION_DENIED); reads stay allowed.")
  boolean readOnly;

  @Option(
      names = "--follow-external-links",
      description =
          "Read symbolic links in the config directory that lead out of it (refused by default).")
  boolean followExternalLinks;

  @Option(
      names = "--rest-tls-cert",
      paramLabel = "FILE",
      description = "PEM certificate of the REST API: HTTPS only.")
  Path restTlsCert;

  @Option(
      names = "--rest-tls-key",
      paramLabel = "FILE",
      description = "PEM private key (PKCS#8) of that certificate.")
  Path restTlsKey;

  @Option(
      names = "--txn-log-max-ops",
      paramLabel = "N",
      description = "Operations printed per transaction, at most (default 50; 0: all).")
  String txnLogMaxOps;

  @Option(
      names = "--parallelism",
      paramLabel = "N",
      description =
          "Southbound calls of one transaction that may run at the same time (default 1: one at"
              + " a time).")
  String parallelism;

  @Option(
      names = "--linux",
      description =
          "Enable the Linux networking plugin (it configures the namespace the agent"
              + " runs in; off by default).")
  boolean linux;

  @Option(
      names = "--file-settle-time",
      paramLabel = "DURATION",
      description =
          "How long config files must read the same before a change that removes or"
              + " replaces values applies (default 2s).")
  String fileSettleTime;

  @Option(
      names = "--grpc",
      paramLabel = "HOST:PORT",
      description = "Address of the gRPC server (default: off).")
  String grpc;

  @Option(
      names = "--grpc-config",
      paramLabel = "FILE",
      description = "vpp-agent's grpc.conf (endpoint, max-msg-size, cert-file, key-file).")
  Path grpcConfig;

  @Option(
      names = "--state-dir",
      paramLabel = "DIR|off",
      description =
          "Where what REST and gRPC push is kept across restarts (default /var/lib/kvscheduler"
              + " for root, else $XDG_DATA_HOME/kvscheduler or ~/.local/share/kvscheduler; off:"
              + " in memory only).")
  String stateDir;

  @Option(
      names = "--fleet-url",
      paramLabel = "URL",
      description =
          "With etcd: where the view of the whole fleet is served (for instance by kvsctl fleet"
              + " --serve); the web page links to it.")
  String fleetUrl;

  @Option(
      names = "--standby",
      description =
          "With etcd: when another agent holds the label, wait and take over when it goes"
              + " (default: exit with an error naming the holder).")
  boolean standby;

  /** The command line of {@code kvs-agent run} (a repeated flag takes its last value). */
  static CommandLine commandLine(AgentOptions options) {
    CommandLine cl = new CommandLine(options);
    cl.setOverwrittenOptionsAllowed(true);
    return cl;
  }

  /**
   * Parses {@code args}.
   *
   * @throws IllegalArgumentException naming the flag: an unknown one, a flag without its value, a
   *     second settings file
   */
  static AgentOptions parse(List<String> args) {
    AgentOptions o = new AgentOptions();
    try {
      commandLine(o).parseArgs(args.toArray(String[]::new));
    } catch (CommandLine.UnmatchedArgumentException e) {
      throw new IllegalArgumentException("unknown option '" + e.getUnmatched().get(0) + "'", e);
    } catch (CommandLine.MissingParameterException e) {
      String flag =
          e.getMissing().isEmpty()
              ? "an option"
              : ((CommandLine.Model.OptionSpec) e.getMissing().get(0)).longestName();
      throw new IllegalArgumentException(
          flag + (flag.equals("--config") ? " needs a file" : " needs a value"), e);
    } catch (CommandLine.ParameterException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    if (o.config.size() > 1) {
      throw new IllegalArgumentException("--config given twice (one settings file at most)");
    }
    return o;
  }
}
