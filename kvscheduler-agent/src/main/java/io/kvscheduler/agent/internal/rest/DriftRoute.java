package io.kvscheduler.agent.internal.rest;

import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnOptions;
import java.util.Set;

/**
 * {@code GET /scheduler/drift} (our extension): the plan of a downstream resync, worked out without
 * doing it ({@code Txn.plan}): the southbound is read through the descriptors' Retrieve and
 * compared with the intent; nothing is called, changed or recorded. 200 {@code {"drift":
 * true|false, "operations": [...]}} ({@link PlanJson}); {@code drift} is true when an operation
 * would change something (a call, or a new state).
 */
final class DriftRoute {
  private static final TxnOptions DOWNSTREAM =
      TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build();

  private DriftRoute() {}

  /** Adds {@code GET /scheduler/drift} to {@code server}. */
  static void register(RestServer server, KVScheduler kvs, ModelRegistry models) {
    PlanJson json = new PlanJson(models);
    server.route(
        "GET",
        "/scheduler/drift",
        Set.of(),
        req -> {
          Plan plan = kvs.startNBTransaction().plan(DOWNSTREAM);
          return Response.json(200, json.drift(plan));
        });
  }
}
