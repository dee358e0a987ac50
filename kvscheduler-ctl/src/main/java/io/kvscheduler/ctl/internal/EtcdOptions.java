package io.kvscheduler.ctl.internal;

import io.etcd.jetcd.Client;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.EtcdSettings;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * How the fleet commands reach etcd: {@code --etcd ENDPOINTS} and {@code --etcd-config FILE}, else
 * {@code ETCD_ENDPOINTS} and {@code ETCD_CONFIG}, read with the agent's own code so that the same
 * settings file works for both.
 */
public final class EtcdOptions {
  @Option(
      names = "--etcd",
      paramLabel = "ENDPOINTS",
      description =
          "etcd endpoints, comma-separated (default: ETCD_ENDPOINTS, else those of the"
              + " etcd configuration file).")
  String endpoints;

  @Option(
      names = "--etcd-config",
      paramLabel = "FILE",
      description =
          "etcd connection settings as the agent reads them (vpp-agent's etcd.conf: endpoints,"
              + " TLS files, username and password, timeouts; default: ETCD_CONFIG).")
  Path etcdConfig;

  /** A connection: the endpoints and settings read, and a client (to close). */
  record Connection(AgentConfig config, EtcdSettings settings, Client client)
      implements AutoCloseable {
    List<String> endpoints() {
      return config.etcdEndpoints();
    }

    /** {@code etcd at [endpoints]: <why>}, naming the settings to check. */
    String explain(Throwable e, String prefix) {
      return "etcd at " + endpoints() + ": " + EtcdClients.explain(e, settings, prefix);
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /** These options where given, else {@code fallback}'s (the parent command's). */
  EtcdOptions orElse(EtcdOptions fallback) {
    if (endpoints != null || etcdConfig != null || fallback == null) {
      return this;
    }
    return fallback;
  }

  /**
   * Reads the settings (options, else {@code env}) and opens a client.
   *
   * @throws CtlException with {@link ExitCodes#USAGE} when no endpoint is given or a setting is bad
   */
  Connection connect(Map<String, String> environment) {
    Map<String, String> env = new HashMap<>();
    for (String k : List.of("ETCD_ENDPOINTS", "ETCD_CONFIG")) {
      String v = environment.get(k);
      if (v != null) {
        env.put(k, v);
      }
    }
    List<String> args = new ArrayList<>(List.of("--rest", "off"));
    if (endpoints != null) {
      args.addAll(List.of("--etcd", endpoints));
    }
    if (etcdConfig != null) {
      args.addAll(List.of("--etcd-config", etcdConfig.toString()));
    }
    AgentConfig cfg;
    try {
      // the agent's own reading of the etcd settings: the same files, variables and checks
      cfg = AgentConfig.load(args, env);
    } catch (IllegalArgumentException e) {
      throw new CtlException(ExitCodes.USAGE, e.getMessage(), e);
    } catch (java.io.IOException e) {
      throw new CtlException(ExitCodes.FAILED, "cannot read the etcd settings: " + e, e);
    }
    if (cfg.etcdEndpoints().isEmpty()) {
      throw new CtlException(
          ExitCodes.USAGE,
          "no etcd endpoints: give --etcd ENDPOINTS, --etcd-config FILE, ETCD_ENDPOINTS or"
              + " ETCD_CONFIG");
    }
    EtcdSettings settings = cfg.etcd();
    try {
      return new Connection(cfg, settings, EtcdClients.create(cfg.etcdEndpoints(), settings));
    } catch (IllegalArgumentException e) {
      throw new CtlException(ExitCodes.USAGE, e.getMessage(), e);
    }
  }

  /**
   * A duration as {@code 500ms}, {@code 30s}, {@code 2m} or ISO-8601 ({@code PT30S}).
   *
   * @throws CtlException with {@link ExitCodes#USAGE} naming {@code option} when it is none
   */
  static Duration duration(String text, String option) {
    String t = text.strip();
    try {
      if (t.matches("\\d+ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      }
      if (t.matches("\\d+s?")) {
        return Duration.ofSeconds(Long.parseLong(t.replace("s", "")));
      }
      if (t.matches("\\d+m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      return Duration.parse(t);
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new CtlException(
          ExitCodes.USAGE, option + ": '" + text + "' is not a duration such as 30s or 2m");
    }
  }
}
