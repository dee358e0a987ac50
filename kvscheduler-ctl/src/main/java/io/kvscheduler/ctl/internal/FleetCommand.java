package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.EtcdSettings;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code fleet}: every agent found in etcd (label, claim, state, version, age of its last status,
 * values by state, northbound problems), once or live from an etcd watch; exit 1 when one is not
 * well.
 */
@Command(
    name = "fleet",
    description = {
      "Every agent found in etcd under /vnf-agent/: label, owner (host, pid), state, version,"
          + " age of its last status, its values by state (from config-status/, when the agents"
          + " publish statuses) and its northbound problems when published.",
      "Exits with 1 when an agent is not OK, its last status is stale, or it has FAILED or"
          + " INVALID values (for a periodic check).",
      "Examples: kvsctl fleet --etcd 127.0.0.1:2379",
      "          ETCD_CONFIG=etcd.conf kvsctl fleet -o json",
      "          kvsctl fleet --etcd 127.0.0.1:2379 --watch"
    })
public final class FleetCommand extends AgentCommand {
  @Mixin OutputFormat output;

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

  @Option(
      names = "--stale-after",
      paramLabel = "DURATION",
      defaultValue = "30s",
      description =
          "An agent whose last status is older is stale (default ${DEFAULT-VALUE}; agents"
              + " rewrite it every 10 s).")
  String staleAfter;

  @Option(
      names = "--watch",
      description = "Show the fleet again on every change (read from an etcd watch) until stopped.")
  boolean watch;

  @Option(
      names = "--updates",
      paramLabel = "N",
      description = "With --watch: stop after N views (default: never).")
  int updates;

  @Override
  protected int run() throws Exception {
    Duration stale = duration(staleAfter);
    Map<String, String> env = new HashMap<>();
    for (String k : List.of("ETCD_ENDPOINTS", "ETCD_CONFIG")) {
      String v = root().env().get(k);
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
    }
    if (cfg.etcdEndpoints().isEmpty()) {
      throw new CtlException(
          ExitCodes.USAGE,
          "no etcd endpoints: give --etcd ENDPOINTS, --etcd-config FILE, ETCD_ENDPOINTS or"
              + " ETCD_CONFIG");
    }
    EtcdSettings settings = cfg.etcd();
    Client client;
    try {
      client = EtcdClients.create(cfg.etcdEndpoints(), settings);
    } catch (IllegalArgumentException e) {
      throw new CtlException(ExitCodes.USAGE, e.getMessage(), e);
    }
    try (client) {
      FleetView view = new FleetView(client, settings.requestTimeout(), stale);
      if (!watch) {
        return show(read(view, cfg, settings), cfg);
      }
      return watch(client, view, cfg, settings);
    }
  }

  private int watch(Client client, FleetView view, AgentConfig cfg, EtcdSettings settings)
      throws Exception {
    Semaphore changed = new Semaphore(0);
    WatchOption opt = WatchOption.builder().isPrefix(true).build();
    try (Watch.Watcher w =
        client
            .getWatchClient()
            .watch(
                FleetView.bytes(FleetView.ROOT),
                opt,
                Watch.listener(
                    r -> {
                      for (WatchEvent e : r.getEvents()) {
                        if (matters(e.getKeyValue().getKey().toString(StandardCharsets.UTF_8))) {
                          changed.release();
                          return;
                        }
                      }
                    },
                    t -> changed.release()))) {
      int shown = 0;
      int last = ExitCodes.OK;
      while (updates <= 0 || shown < updates) {
        if (shown > 0) {
          // a change, or the ages moved on: several changes close together make one view
          changed.tryAcquire(10, TimeUnit.SECONDS);
          Thread.sleep(200);
          changed.drainPermits();
          out().println();
        }
        List<FleetView.AgentRow> rows;
        try {
          rows = view.read();
        } catch (Exception e) {
          err().println("kvsctl: " + explain(e, cfg, settings) + "; retrying");
          err().flush();
          Thread.sleep(1000);
          continue;
        }
        if (!output.json()) {
          out().println("fleet at " + Instant.now() + " (etcd " + cfg.etcdEndpoints() + ")");
        }
        last = show(rows, cfg);
        out().flush();
        shown++;
      }
      return last;
    }
  }

  /** Whether a change of {@code key} can change the view (not the configuration itself). */
  private static boolean matters(String key) {
    String rest = key.substring(Math.min(key.length(), FleetView.ROOT.length()));
    int slash = rest.indexOf('/');
    String sub = slash < 0 ? "" : rest.substring(slash + 1);
    return !sub.startsWith(FleetView.CONFIG);
  }

  private List<FleetView.AgentRow> read(FleetView view, AgentConfig cfg, EtcdSettings settings) {
    try {
      return view.read();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CtlException(ExitCodes.FAILED, "interrupted");
    } catch (Exception e) {
      Throwable c = EtcdClients.unwrap(e);
      String msg = String.valueOf(c.getMessage());
      boolean unreachable = c instanceof TimeoutException || msg.contains("UNAVAILABLE");
      throw new CtlException(
          unreachable ? ExitCodes.UNREACHABLE : ExitCodes.FAILED, explain(e, cfg, settings), c);
    }
  }

  private static String explain(Throwable e, AgentConfig cfg, EtcdSettings settings) {
    return "etcd at "
        + cfg.etcdEndpoints()
        + ": "
        + EtcdClients.explain(e, settings, FleetView.ROOT);
  }

  /** Prints the rows; the exit code: 1 when one agent is not well. */
  private int show(List<FleetView.AgentRow> rows, AgentConfig cfg) {
    boolean ok = rows.stream().allMatch(FleetView.AgentRow::ok);
    if (output.json()) {
      ObjectNode n = JsonNodeFactory.instance.objectNode();
      n.put("read_at", Instant.now().toString());
      n.put("ok", ok);
      ArrayNode a = n.putArray("agents");
      rows.forEach(r -> a.add(r.json()));
      out().println(Json.pretty(n));
    } else if (rows.isEmpty()) {
      out().println("no agent found under " + FleetView.ROOT + " in etcd " + cfg.etcdEndpoints());
    } else {
      Table t =
          new Table(
              "LABEL",
              "STATE",
              "OWNER",
              "VERSION",
              "LAST STATUS",
              "VALUES",
              "NB PROBLEMS",
              "ISSUES");
      for (FleetView.AgentRow r : rows) {
        t.row(
            r.label(),
            r.state(),
            owner(r.owner()),
            r.version(),
            r.lastStatusAgeSeconds() == null ? "-" : r.lastStatusAgeSeconds() + "s ago",
            values(r.values()),
            String.valueOf(r.northboundProblems().size()),
            String.join("; ", r.issues()));
      }
      t.print(out());
    }
    return ok ? ExitCodes.OK : ExitCodes.FAILED;
  }

  private static String owner(JsonNode o) {
    if (o == null) {
      return "-";
    }
    return o.path("host").asText("?") + " pid " + o.path("pid").asText("?");
  }

  private static String values(Map<String, Integer> v) {
    if (v.isEmpty()) {
      return "-";
    }
    StringBuilder b = new StringBuilder();
    v.forEach((s, n) -> b.append(b.length() == 0 ? "" : ", ").append(s).append(' ').append(n));
    return b.toString();
  }

  private static Duration duration(String text) {
    String t = text.strip();
    try {
      if (t.matches("\\d+ms")) {
        return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
      }
      if (t.matches("\\d+s")) {
        return Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      if (t.matches("\\d+m")) {
        return Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
      }
      return Duration.parse(t);
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new CtlException(
          ExitCodes.USAGE, "--stale-after: '" + text + "' is not a duration such as 30s or 2m");
    }
  }
}
