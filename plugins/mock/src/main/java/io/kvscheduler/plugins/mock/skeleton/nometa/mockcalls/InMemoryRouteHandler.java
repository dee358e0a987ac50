package io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls;

import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.List;
import java.util.TreeMap;

/**
 * The in-memory route southbound: a table of routes by destination. Prints every operation (e.g.
 * {@code Added route 10.1.0.0/16 via if 0 next hop 192.0.2.1 metric 100}). Thread-safe, so tests
 * may read it while the scheduler works.
 *
 * <p>Failure injection: {@link #failNextCall(RouteSbException)} makes the next call fail once.
 */
public final class InMemoryRouteHandler implements RouteApi {
  private final SbPrinter printer;
  private final TreeMap<String, SbRoute> routes = new TreeMap<>();
  private RouteSbException nextFailure;

  public InMemoryRouteHandler(SbPrinter printer) {
    this.printer = printer;
  }

  /** The next call (add, delete or metric change) throws {@code failure} instead. */
  public synchronized void failNextCall(RouteSbException failure) {
    nextFailure = failure;
  }

  @Override
  public synchronized void addRoute(SbRoute route) {
    failIfPlanned("add route " + route.destination());
    if (routes.containsKey(route.destination())) {
      throw new RouteSbException("route to " + route.destination() + " exists", false);
    }
    routes.put(route.destination(), route);
    printer.print(
        "Added route "
            + route.destination()
            + " via if "
            + route.interfaceHandle()
            + (route.nextHop().isEmpty() ? "" : " next hop " + route.nextHop())
            + " metric "
            + route.metric());
  }

  @Override
  public synchronized void deleteRoute(String destination) {
    failIfPlanned("delete route " + destination);
    if (routes.remove(destination) == null) {
      throw new RouteSbException("no route to " + destination, false);
    }
    printer.print("Deleted route " + destination);
  }

  @Override
  public synchronized void setRouteMetric(String destination, int metric) {
    failIfPlanned("set metric of route " + destination);
    SbRoute r = routes.get(destination);
    if (r == null) {
      throw new RouteSbException("no route to " + destination, false);
    }
    routes.put(destination, new SbRoute(destination, r.interfaceHandle(), r.nextHop(), metric));
    printer.print("Set metric of route " + destination + " to " + metric);
  }

  @Override
  public synchronized List<SbRoute> dumpRoutes() {
    return List.copyOf(routes.values());
  }

  private void failIfPlanned(String what) {
    if (nextFailure != null) {
      RouteSbException e = nextFailure;
      nextFailure = null;
      printer.print("Failed to " + what + ": " + e.getMessage());
      throw e;
    }
  }
}
