package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.agent.internal.etcd.LabelClaim;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code GET /info/label}: whether this agent holds its label in etcd ({@link LabelClaim}): {@code
 * label}, {@code key}, {@code state} ({@code OWNER}, {@code LOST}, {@code UNCLAIMED}, ...), {@code
 * since}, {@code detail} and the {@code holder} (host, pid, start time, version, whether it is this
 * agent). Without etcd the state is {@code NONE}. {@code fleet_url}: where the view of the whole
 * fleet is served (the agent's {@code fleet-url} setting), null when not set.
 */
public final class LabelRoutes {
  private LabelRoutes() {}

  /**
   * Adds the route; {@code claim} is null when etcd is off, {@code fleetUrl} when no fleet view is
   * configured.
   */
  public static void register(RestServer server, String label, LabelClaim claim, String fleetUrl) {
    server.route(
        "GET",
        "/info/label",
        Set.of(),
        r -> {
          Map<String, Object> m;
          if (claim != null) {
            m = new LinkedHashMap<>(claim.describeState());
          } else {
            m = new LinkedHashMap<>();
            m.put("label", label);
            m.put("state", "NONE");
            m.put("detail", "etcd is off: the label is not claimed");
          }
          m.put("fleet_url", fleetUrl);
          return Response.json(200, m);
        });
  }
}
