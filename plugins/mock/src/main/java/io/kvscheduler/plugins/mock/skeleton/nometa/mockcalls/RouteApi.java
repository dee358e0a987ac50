package io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls;

import java.util.List;

/**
 * The calls the route descriptor makes into the southbound. Routes are identified by their
 * destination. Every method throws {@link RouteSbException} on failure.
 */
public interface RouteApi {

  /** Adds a route; fails when a route to {@code destination} exists. */
  void addRoute(SbRoute route);

  /** Deletes the route to {@code destination}; fails when there is none. */
  void deleteRoute(String destination);

  /** Changes the metric of the route to {@code destination}. */
  void setRouteMetric(String destination, int metric);

  /** Every route of the southbound, destinations ascending. */
  List<SbRoute> dumpRoutes();
}
