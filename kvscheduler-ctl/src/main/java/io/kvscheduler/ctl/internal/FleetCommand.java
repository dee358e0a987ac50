package io.kvscheduler.ctl.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.kvscheduler.agent.internal.etcd.EtcdClients;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code fleet}: every agent found in etcd (label, claim, state, version, age of its last status,
 * the lease that tells it alive, values by state, northbound problems), once or live from an etcd
 * watch; exit 1 when one is not well.
 */
@Command(
    name = "fleet",
    subcommands = {FleetRolloutCommand.class},
    description = {
      "Every agent found in etcd under /vnf-agent/: label, owner (host, pid), state, version,"
          + " age of its last status, its lease (how long since the agent renewed it, of its"
          + " TTL), its values by state (from config-status/, when the agents publish statuses)"
          + " and its northbound problems when published.",
      "Exits with 1 when an agent is not OK, its lease expired or was not renewed for more than"
          + " two thirds of its TTL, or it has FAILED or INVALID values (for a periodic check).",
      "Examples: kvsctl fleet --etcd 127.0.0.1:2379",
      "          ETCD_CONFIG=etcd.conf kvsctl fleet -o json",
      "          kvsctl fleet --etcd 127.0.0.1:2379 --watch",
      "          kvsctl fleet --etcd 127.0.0.1:2379 --serve 9192   (a web page on"
          + " http://127.0.0.1:9192/)",
      "Rolling values out to many agents: kvsctl fleet rollout --help"
    })
public final class FleetCommand extends AgentCommand {
  @Mixin OutputFormat output;

  @Mixin EtcdOptions etcdOptions;

  @Option(
      names = "--stale-after",
      paramLabel = "DURATION",
      defaultValue = "30s",
      description =
          "For an agent status written without a lease (vpp-agent rewrites its status every"
              + " 10 s): older is stale (default ${DEFAULT-VALUE}). Our agents write theirs under"
              + " a lease, which tells whether they are alive.")
  String staleAfter;

  @Option(
      names = "--watch",
      description = "Show the fleet again on every change (read from an etcd watch) until stopped.")
  boolean watch;

  @Option(
      names = "--serve",
      paramLabel = "[HOST:]PORT",
      description =
          "Serve the fleet view over HTTP until stopped: a web page at /, the JSON of -o json at"
              + " /fleet.json and, on every change, the same JSON as server-sent events at"
              + " /events; kept up to date from an etcd watch. PORT alone listens on loopback;"
              + " 0.0.0.0:PORT on every interface; port 0 picks a free port.")
  String serve;

  @Option(
      names = "--updates",
      paramLabel = "N",
      description = "With --watch or --serve: stop after N views (default: never).")
  int updates;

  @Override
  protected int run() throws Exception {
    Duration stale = EtcdOptions.duration(staleAfter, "--stale-after");
    try (EtcdOptions.Connection etcd = etcdOptions.connect(root().env())) {
      FleetView view = new FleetView(etcd.client(), etcd.settings().requestTimeout(), stale);
      if (serve != null) {
        if (watch) {
          throw new CtlException(ExitCodes.USAGE, "--serve and --watch go one without the other");
        }
        return serve(etcd, view);
      }
      if (!watch) {
        return show(read(view, etcd), etcd);
      }
      return watch(etcd, view);
    }
  }

  /** Watches {@code /vnf-agent/}: a permit on {@code changed} for each change of a view. */
  private static Watch.Watcher watchFleet(EtcdOptions.Connection etcd, Semaphore changed) {
    WatchOption opt = WatchOption.builder().isPrefix(true).build();
    return etcd.client()
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
                t -> changed.release()));
  }

  /**
   * Serves the view (see {@link FleetServer}) until interrupted (or {@code --updates} views),
   * reading etcd again on every change and at least every 10 s; exit code 0 once stopped.
   */
  private int serve(EtcdOptions.Connection etcd, FleetView view) throws Exception {
    Semaphore changed = new Semaphore(0);
    FleetServer server;
    try {
      server = new FleetServer(serve);
    } catch (IllegalArgumentException e) {
      throw new CtlException(ExitCodes.USAGE, "--serve " + serve + ": " + e.getMessage());
    }
    try (server;
        Watch.Watcher w = watchFleet(etcd, changed)) {
      try {
        server.start();
      } catch (IOException | RuntimeException e) {
        throw new CtlException(
            ExitCodes.FAILED, "cannot serve the fleet view on " + serve + ": " + e.getMessage(), e);
      }
      out()
          .println(
              "kvsctl: fleet view of etcd "
                  + etcd.endpoints()
                  + " at http://"
                  + host(serve)
                  + ":"
                  + server.port()
                  + "/ (JSON at /fleet.json); stop with Ctrl-C");
      out().flush();
      int shown = 0;
      while (updates <= 0 || shown < updates) {
        if (shown > 0) {
          changed.tryAcquire(10, TimeUnit.SECONDS);
          Thread.sleep(200);
          changed.drainPermits();
        }
        try {
          List<FleetView.AgentRow> rows = view.read();
          server.update(json(rows));
        } catch (InterruptedException e) {
          throw e;
        } catch (Exception e) {
          String why = etcd.explain(e, FleetView.ROOT);
          server.failed(why);
          err().println("kvsctl: " + why + "; retrying");
          err().flush();
          Thread.sleep(1000);
        }
        shown++;
      }
      return ExitCodes.OK;
    } catch (InterruptedException e) {
      return ExitCodes.OK; // stopped
    }
  }

  /** The host part of a {@code --serve} address, as a URL names it. */
  private static String host(String address) {
    int colon = address.lastIndexOf(':');
    String h = colon < 0 ? "" : address.substring(0, colon);
    return h.isEmpty() ? "127.0.0.1" : h;
  }

  private int watch(EtcdOptions.Connection etcd, FleetView view) throws Exception {
    Semaphore changed = new Semaphore(0);
    try (Watch.Watcher w = watchFleet(etcd, changed)) {
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
          err().println("kvsctl: " + etcd.explain(e, FleetView.ROOT) + "; retrying");
          err().flush();
          Thread.sleep(1000);
          continue;
        }
        if (!output.json()) {
          out().println("fleet at " + Instant.now() + " (etcd " + etcd.endpoints() + ")");
        }
        last = show(rows, etcd);
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

  private List<FleetView.AgentRow> read(FleetView view, EtcdOptions.Connection etcd) {
    try {
      return view.read();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CtlException(ExitCodes.FAILED, "interrupted");
    } catch (Exception e) {
      throw new CtlException(
          ExitCodes.ofEtcdFailure(e), etcd.explain(e, FleetView.ROOT), EtcdClients.unwrap(e));
    }
  }

  /** Prints the rows; the exit code: 1 when one agent is not well. */
  private int show(List<FleetView.AgentRow> rows, EtcdOptions.Connection etcd) {
    boolean ok = rows.stream().allMatch(FleetView.AgentRow::ok);
    if (output.json()) {
      out().println(Json.pretty(json(rows)));
    } else if (rows.isEmpty()) {
      out().println("no agent found under " + FleetView.ROOT + " in etcd " + etcd.endpoints());
    } else {
      Table t =
          new Table(
              "LABEL",
              "STATE",
              "OWNER",
              "VERSION",
              "LAST STATUS",
              "LEASE",
              "VALUES",
              "NB PROBLEMS",
              "ISSUES");
      for (FleetView.AgentRow r : rows) {
        t.row(
            r.label(),
            r.state(),
            owner(r.owner()),
            r.version(),
            r.lastStatusAgeSeconds() == null ? "-" : ago(r.lastStatusAgeSeconds()),
            lease(r.lease()),
            values(r.values()),
            String.valueOf(r.northboundProblems().size()),
            String.join("; ", r.issues()));
      }
      t.print(out());
    }
    return ok ? ExitCodes.OK : ExitCodes.FAILED;
  }

  /** The view as {@code -o json} prints it: {@code read_at}, {@code ok}, {@code agents}. */
  static ObjectNode json(List<FleetView.AgentRow> rows) {
    ObjectNode n = JsonNodeFactory.instance.objectNode();
    n.put("read_at", Instant.now().toString());
    n.put("ok", rows.stream().allMatch(FleetView.AgentRow::ok));
    ArrayNode a = n.putArray("agents");
    rows.forEach(r -> a.add(r.json()));
    return n;
  }

  /**
   * How long ago, in the largest unit that fits: {@code 42s ago}, {@code 5m ago}, {@code 3h ago}.
   */
  static String ago(long seconds) {
    if (seconds < 120) {
      return seconds + "s ago";
    }
    if (seconds < 2 * 3600) {
      return seconds / 60 + "m ago";
    }
    if (seconds < 2 * 86400) {
      return seconds / 3600 + "h ago";
    }
    return seconds / 86400 + "d ago";
  }

  /**
   * The lease as the table shows it: how long since it was renewed, of its TTL ({@code 2s/10s}), or
   * {@code expired}; {@code -} when none.
   */
  private static String lease(FleetView.Lease l) {
    if (l == null) {
      return "-";
    }
    if (l.expired()) {
      return "expired";
    }
    return l.notRenewedSeconds() + "s/" + l.ttlSeconds() + "s";
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
}
