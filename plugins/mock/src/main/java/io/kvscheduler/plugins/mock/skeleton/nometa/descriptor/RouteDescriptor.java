package io.kvscheduler.plugins.mock.skeleton.nometa.descriptor;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.plugins.mock.ifplugin.descriptor.InterfaceDescriptor;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.RouteApi;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.RouteSbException;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.SbRoute;
import io.kvscheduler.plugins.mock.skeleton.nometa.model.Route;
import io.kvscheduler.plugins.mock.skeleton.nometa.model.RouteModel;
import io.kvscheduler.plugins.mock.util.Ipv4;
import io.kvscheduler.plugins.mock.util.SbIndex;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Teaches the scheduler to configure static routes — a descriptor without metadata.
 *
 * <ul>
 *   <li>Keys {@code config/skeleton/v1/route/<destination>}, label: the destination.
 *   <li>Dependency {@value #INTERFACE_DEP}: the outgoing mock interface must exist, so Create
 *       always finds its SB handle in the interface metadata map, and the route is deleted before
 *       its interface.
 *   <li>Validate: destination prefix, interface name, next hop and metric.
 *   <li>Update changes the metric in place; another interface or next hop re-creates the route;
 *       metric 0 and {@link Route#DEFAULT_METRIC} are equivalent.
 *   <li>Retrieve reads every route and translates interface handles back to names, so interfaces
 *       are retrieved first.
 *   <li>Only temporary southbound errors are retriable.
 * </ul>
 *
 * <p>The class holds nothing but its southbound and the interface map: descriptors are stateless,
 * the scheduler keeps the state.
 */
public final class RouteDescriptor {
  /** Descriptor name: unique among all descriptors registered on a scheduler. */
  public static final String NAME = "skeleton-route";

  /** Label of the dependency on the outgoing interface (shown while the route is PENDING). */
  public static final String INTERFACE_DEP = "interface-exists";

  private final RouteApi sb;
  private final NamedMapping<SbIndex> interfaces;

  private RouteDescriptor(RouteApi sb, NamedMapping<SbIndex> interfaces) {
    this.sb = sb;
    this.interfaces = interfaces;
  }

  /**
   * The descriptor working over {@code sb}; {@code interfaces} is the interface plugin's metadata
   * map (interface name → SB handle, secondary index {@link InterfaceDescriptor#SB_INDEX}).
   */
  public static KVDescriptor<Route, Void> create(RouteApi sb, NamedMapping<SbIndex> interfaces) {
    RouteDescriptor d = new RouteDescriptor(sb, interfaces);
    return KVDescriptor.builder(NAME, Route.class)
        // identification: the type name, the NB prefix (also the default key
        // selector), a stricter selector and a label for the key
        .valueTypeName(RouteModel.TYPE_NAME)
        .nbKeyPrefix(RouteModel.KEY_PREFIX)
        .keySelector(RouteModel::isKey)
        .keyLabel(RouteModel::destination)
        // value semantics
        .equivalence(RouteDescriptor::equivalent)
        .validate(RouteDescriptor::validate)
        .dependencies(RouteDescriptor::dependencies)
        // southbound operations
        .createWithoutMetadata(d::create)
        .updateWithoutMetadata(d::update)
        .updateWithRecreate(RouteDescriptor::needsRecreate)
        .delete(d::delete)
        .retrieve(d::retrieve)
        .retrieveDependencies(InterfaceDescriptor.NAME)
        .isRetriableFailure(RouteDescriptor::isRetriable)
        .build();
  }

  /**
   * Equivalence: decides whether going from {@code oldRoute} to {@code newRoute} needs an operation
   * at all. Called before every Update, and by a resync to compare the retrieved value with the
   * desired one. Keep it pure. Here: metric 0 means the default metric, so 0 and 100 are the same
   * route; everything else must be equal.
   */
  static boolean equivalent(String key, Route oldRoute, Route newRoute) {
    return oldRoute.destination().equals(newRoute.destination())
        && oldRoute.outInterface().equals(newRoute.outInterface())
        && oldRoute.nextHop().equals(newRoute.nextHop())
        && oldRoute.effectiveMetric() == newRoute.effectiveMetric();
  }

  /**
   * Validate: rejects a value the southbound could never accept, before Create and Update. Throw
   * {@link InvalidValueException} naming the invalid fields; the value becomes INVALID with those
   * fields as status details and no southbound call is made. Check syntax and internal consistency
   * only: the existence of other values is a dependency, not a validation.
   */
  static void validate(String key, Route route) {
    List<String> fields = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    if (!Ipv4.isPrefix(route.destination())) {
      fields.add("destination");
      reasons.add("destination '" + Excerpt.quote(route.destination()) + "' is not an IPv4 prefix");
    }
    if (route.outInterface().isEmpty()) {
      fields.add("out_interface");
      reasons.add("outgoing interface is missing");
    }
    if (!route.nextHop().isEmpty() && !Ipv4.isAddress(route.nextHop())) {
      fields.add("next_hop");
      reasons.add("next hop '" + Excerpt.quote(route.nextHop()) + "' is not an IPv4 address");
    }
    if (route.metric() < 0) {
      fields.add("metric");
      reasons.add("metric must not be negative");
    }
    if (!fields.isEmpty()) {
      throw new InvalidValueException(String.join("; ", reasons), fields);
    }
  }

  /**
   * Dependencies: keys that must exist (and be available) before Create is called. Each has a
   * label, unique within the value, reported while the value waits as PENDING. When a dependency
   * goes away, the scheduler deletes this value first and keeps it PENDING.
   */
  static List<Dependency> dependencies(String key, Route route) {
    return List.of(Dependency.onKey(INTERFACE_DEP, InterfaceModel.key(route.outInterface())));
  }

  /**
   * Create: makes the value exist in the southbound. Called only once Validate passed and every
   * dependency exists, so the interface's SB handle is in its metadata map. Routes have no
   * metadata: nothing to return. Replace the body with your southbound call.
   */
  private void create(String key, Route route) {
    sb.addRoute(toSb(route));
  }

  /**
   * Update: changes an existing value in place. Called only when the equivalence says the values
   * differ and {@link #needsRecreate} said no. Nothing to return, as for Create. Replace the body
   * with your southbound call.
   */
  private void update(String key, Route oldRoute, Route newRoute) {
    sb.setRouteMetric(newRoute.destination(), newRoute.effectiveMetric());
  }

  /**
   * UpdateWithRecreate: true when the southbound cannot apply the change in place; the scheduler
   * then calls Delete with the old value and Create with the new one (RECREATE flag). Here only the
   * metric can be changed in place.
   */
  static boolean needsRecreate(String key, Route oldRoute, Route newRoute, Void metadata) {
    return !oldRoute.outInterface().equals(newRoute.outInterface())
        || !oldRoute.nextHop().equals(newRoute.nextHop());
  }

  /**
   * Delete: removes the value from the southbound. Values that depend on this one were already
   * deleted, and the interface this route depends on still exists. Replace the body with your
   * southbound call.
   */
  private void delete(String key, Route route, Void metadata) {
    sb.deleteRoute(route.destination());
  }

  /**
   * Retrieve: reads every route of the southbound, for resync. Returned values are compared with
   * the desired ones and the differences applied. {@code correlate} lists the values the scheduler
   * expects; without metadata there is nothing to correlate: the key is computed from the
   * southbound data. Interfaces are retrieved first ({@code retrieveDependencies}), so their
   * handles can be translated back to names; a route through an interface the scheduler does not
   * know is skipped (nobody could have asked for it). Replace the dump with your southbound call.
   */
  private List<KVWithMetadata<Route, Void>> retrieve(List<KVWithMetadata<Route, Void>> correlate) {
    List<KVWithMetadata<Route, Void>> out = new ArrayList<>();
    for (SbRoute r : sb.dumpRoutes()) {
      Optional<String> iface =
          interfaces
              .lookupByIndex(InterfaceDescriptor.SB_INDEX, Integer.toString(r.interfaceHandle()))
              .stream()
              .findFirst();
      if (iface.isEmpty()) {
        continue;
      }
      Route route = new Route(r.destination(), iface.get(), r.nextHop(), r.metric());
      out.add(KVWithMetadata.fromNb(RouteModel.key(route), route));
    }
    return out;
  }

  /**
   * IsRetriableFailure: whether repeating a failed Create, Update or Delete may succeed. Only then
   * does a transaction with retry enabled schedule a retry (RETRYING); otherwise the value is
   * FAILED. Without this callback every failure is retriable.
   */
  static boolean isRetriable(Throwable error) {
    return error instanceof RouteSbException e && e.temporary();
  }

  private SbRoute toSb(Route route) {
    int handle =
        interfaces
            .lookup(route.outInterface())
            .orElseThrow(
                () ->
                    new IllegalStateException("no SB handle for interface " + route.outInterface()))
            .index();
    return new SbRoute(route.destination(), handle, route.nextHop(), route.effectiveMetric());
  }
}
