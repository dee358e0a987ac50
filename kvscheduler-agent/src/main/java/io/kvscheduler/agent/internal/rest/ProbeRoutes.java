package io.kvscheduler.agent.internal.rest;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code GET /readiness} and {@code GET /liveness}: the agent status in the shape of vpp-agent's
 * probes (cn-infra's exposed status, what {@code agentctl status} decodes and a Kubernetes probe
 * can read). The keys: {@code build_version}, {@code state} (a number: 0 starting or stopping, left
 * out as Go leaves out zero values; 1 OK; 2 error), {@code start_time}, {@code last_change} and
 * {@code last_update} (Unix seconds), {@code plugins} ({@code [{"name", "state"}]}), readiness only
 * {@code interface_stats} ({@code {}}: the agent keeps no interface statistics), {@code
 * PluginStatus} ({@code {name: {"state", "last_change", "last_update"}}}) and {@code
 * NonFatalPlugins}. Readiness answers 200 when the state is OK and 500 otherwise (while starting,
 * stopping); liveness 200 unless the state is an error.
 */
public final class ProbeRoutes {
  /** Go's {@code status.OperationalState}: INIT, OK, ERROR. */
  public enum State {
    INIT,
    OK,
    ERROR
  }

  /**
   * What the probes report.
   *
   * @param state the agent's state
   * @param startTime when the agent started
   * @param lastChange when the state last changed
   * @param plugins the plugins and northbound sources, in start order, each with its state
   */
  public record Health(
      State state, Instant startTime, Instant lastChange, Map<String, State> plugins) {}

  private ProbeRoutes() {}

  /** Adds {@code GET /readiness} and {@code GET /liveness} to {@code server}. */
  public static void register(RestServer server, Supplier<Health> health) {
    Objects.requireNonNull(health, "health");
    server.route(
        "GET",
        "/readiness",
        Set.of(),
        r -> {
          Health h = health.get();
          return Response.json(h.state() == State.OK ? 200 : 500, status(h, true));
        });
    server.route(
        "GET",
        "/liveness",
        Set.of(),
        r -> {
          Health h = health.get();
          return Response.json(h.state() == State.ERROR ? 500 : 200, status(h, false));
        });
  }

  /** The exposed status: the agent status' fields, then the plugins' and the non-fatal ones. */
  static Map<String, Object> status(Health h, boolean readiness) {
    long now = Instant.now().getEpochSecond();
    Map<String, Object> m = new LinkedHashMap<>();
    String version = String.valueOf(InfoRoutes.version().get("Version"));
    if (!version.isEmpty()) {
      m.put("build_version", version);
    }
    if (h.state() != State.INIT) {
      m.put("state", h.state().ordinal());
    }
    m.put("start_time", h.startTime().getEpochSecond());
    m.put("last_change", h.lastChange().getEpochSecond());
    m.put("last_update", now);
    if (readiness) {
      m.put("interface_stats", Map.of());
    }
    List<Map<String, Object>> plugins = new ArrayList<>();
    Map<String, Object> perPlugin = new LinkedHashMap<>();
    h.plugins()
        .forEach(
            (name, state) -> {
              Map<String, Object> p = new LinkedHashMap<>();
              p.put("name", name);
              if (state != State.INIT) {
                p.put("state", state.ordinal());
              }
              plugins.add(p);
              Map<String, Object> s = new LinkedHashMap<>();
              if (state != State.INIT) {
                s.put("state", state.ordinal());
              }
              s.put("last_change", h.lastChange().getEpochSecond());
              s.put("last_update", now);
              perPlugin.put(name, s);
            });
    if (!plugins.isEmpty()) {
      m.put("plugins", plugins);
    }
    m.put("PluginStatus", perPlugin);
    m.put("NonFatalPlugins", List.of());
    return m;
  }
}
