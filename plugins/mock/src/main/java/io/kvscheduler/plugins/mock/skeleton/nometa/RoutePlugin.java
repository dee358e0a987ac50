package io.kvscheduler.plugins.mock.skeleton.nometa;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.plugins.mock.ifplugin.InterfacePlugin;
import io.kvscheduler.plugins.mock.skeleton.nometa.descriptor.RouteDescriptor;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.InMemoryRouteHandler;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.RouteApi;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.SbRoute;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.List;

/**
 * The route plugin (skeleton without metadata): builds the descriptor over a southbound and
 * registers it. It needs the interface plugin (its metadata map translates interface names to SB
 * handles), which must be registered first. Its API is small: without metadata there is nothing to
 * share with other plugins but what the southbound holds.
 */
public final class RoutePlugin {
  private final RouteApi southbound;

  private RoutePlugin(RouteApi southbound) {
    this.southbound = southbound;
  }

  /** Registers the route descriptor on {@code scheduler} over {@code southbound}. */
  public static RoutePlugin register(
      KVScheduler scheduler, InterfacePlugin interfaces, RouteApi southbound) {
    scheduler.registerDescriptors(RouteDescriptor.create(southbound, interfaces.interfaceIndex()));
    return new RoutePlugin(southbound);
  }

  /** Registers the route descriptor over a new in-memory southbound printing to {@code printer}. */
  public static RoutePlugin register(
      KVScheduler scheduler, InterfacePlugin interfaces, SbPrinter printer) {
    return register(scheduler, interfaces, new InMemoryRouteHandler(printer));
  }

  /** What the southbound holds now, destinations ascending. */
  public List<SbRoute> southboundState() {
    return southbound.dumpRoutes();
  }
}
