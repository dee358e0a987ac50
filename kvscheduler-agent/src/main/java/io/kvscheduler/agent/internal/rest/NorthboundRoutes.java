package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.agent.internal.northbound.NorthboundProblems;
import java.util.Set;

/**
 * {@code GET /northbound/problems}: the input the northbound sources rejected or ignored and that
 * is still wrong, a JSON array of {@link NorthboundProblems#json(NorthboundProblems.Problem)}
 * objects ({@code []} when all is well).
 */
public final class NorthboundRoutes {
  private NorthboundRoutes() {}

  /** Adds {@code GET /northbound/problems} to {@code server}. */
  public static void register(RestServer server, NorthboundProblems problems) {
    server.route("GET", "/northbound/problems", Set.of(), r -> Response.json(200, problems.json()));
  }
}
