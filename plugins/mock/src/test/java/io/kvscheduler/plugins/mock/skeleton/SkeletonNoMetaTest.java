package io.kvscheduler.plugins.mock.skeleton;

import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.plugins.mock.ifplugin.InterfacePlugin;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.skeleton.nometa.RoutePlugin;
import io.kvscheduler.plugins.mock.skeleton.nometa.descriptor.RouteDescriptor;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.InMemoryRouteHandler;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.RouteSbException;
import io.kvscheduler.plugins.mock.skeleton.nometa.mockcalls.SbRoute;
import io.kvscheduler.plugins.mock.skeleton.nometa.model.Route;
import io.kvscheduler.plugins.mock.skeleton.nometa.model.RouteModel;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.TxnAssert;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The skeleton without metadata (routes) registered on a real scheduler. */
class SkeletonNoMetaTest {
  private static final Interface TAP1 = Interface.of("tap1", Interface.Type.TAP, true);
  private static final String TAP1_KEY = InterfaceModel.key("tap1");
  private static final Route ROUTE = Route.of("10.1.0.0/16", "tap1", "192.0.2.1");
  private static final String ROUTE_KEY = RouteModel.key(ROUTE);

  private final ManualClock clock = new ManualClock();
  private final ManualDelayScheduler delays = new ManualDelayScheduler(clock);
  private final KVScheduler kvs =
      KVScheduler.builder().printTxnSummary(false).clock(clock).delayScheduler(delays).build();
  private final List<String> sbLog = Collections.synchronizedList(new ArrayList<>());
  private final InterfacePlugin interfaces = InterfacePlugin.register(kvs, sbLog::add);
  private final InMemoryRouteHandler routeSb = new InMemoryRouteHandler(sbLog::add);
  private final RoutePlugin routes = RoutePlugin.register(kvs, interfaces, routeSb);

  @AfterEach
  void close() {
    kvs.close();
  }

  private TxnAssert txn(long seqNum) {
    return TxnAssert.assertThat(kvs.recordedTransaction(seqNum).orElseThrow());
  }

  private ValueStatus status(String key) {
    return kvs.valueStatus(key).value();
  }

  @Test
  void routeWaitsForItsInterfaceAndIsCreatedRightAfterIt() {
    long first = kvs.startNBTransaction().setValue(ROUTE_KEY, ROUTE).commit();

    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.PENDING);
    assertThat(status(ROUTE_KEY).details()).containsExactly(RouteDescriptor.INTERFACE_DEP);
    assertThat(sbLog).isEmpty();
    txn(first)
        .executed(
            op(TxnOperation.CREATE, ROUTE_KEY)
                .states(ValueState.NONEXISTENT, ValueState.PENDING)
                .flags("NOOP"));

    long second = kvs.startNBTransaction().setValue(TAP1_KEY, TAP1).commit();

    assertThat(sbLog)
        .containsExactly(
            "Created TAP interface: tap1 (handle 0)",
            "Set interface 'tap1' UP",
            "Added route 10.1.0.0/16 via if 0 next hop 192.0.2.1 metric 100");
    txn(second)
        .executed(
            op(TxnOperation.CREATE, TAP1_KEY).states(ValueState.NONEXISTENT, ValueState.CONFIGURED),
            op(TxnOperation.CREATE, ROUTE_KEY).states(ValueState.PENDING, ValueState.CONFIGURED));
    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(status(ROUTE_KEY).details()).isEmpty();
    assertThat(routes.southboundState())
        .containsExactly(new SbRoute("10.1.0.0/16", 0, "192.0.2.1", 100));
  }

  @Test
  void invalidRouteNamesEveryInvalidFieldAndMakesNoCall() {
    Route bad = new Route("10.1.0.0/33", "tap1", "300.0.0.1", -5);
    assertThatThrownBy(
            () ->
                kvs.startNBTransaction()
                    .setValue(TAP1_KEY, TAP1)
                    .setValue(RouteModel.key(bad), bad)
                    .commit())
        .isInstanceOf(TransactionException.class)
        .hasMessageContaining(
            "fields [destination next_hop metric] are invalid: "
                + "destination '10.1.0.0/33' is not an IPv4 prefix; "
                + "next hop '300.0.0.1' is not an IPv4 address; metric must not be negative");

    assertThat(status(RouteModel.key(bad)).state()).isEqualTo(ValueState.INVALID);
    assertThat(status(RouteModel.key(bad)).details())
        .containsExactly("destination", "next_hop", "metric");
    assertThat(sbLog)
        .containsExactly("Created TAP interface: tap1 (handle 0)", "Set interface 'tap1' UP");
  }

  @Test
  void metricUpdatesInPlaceDefaultIsEquivalentAndNextHopRecreates() {
    kvs.startNBTransaction().setValue(TAP1_KEY, TAP1).setValue(ROUTE_KEY, ROUTE).commit();
    sbLog.clear();

    // metric 0 means the default 100: nothing to do
    long same =
        kvs.startNBTransaction()
            .setValue(ROUTE_KEY, ROUTE.withMetric(Route.DEFAULT_METRIC))
            .commit();
    assertThat(sbLog).isEmpty();
    txn(same).executedNothing();

    long metric = kvs.startNBTransaction().setValue(ROUTE_KEY, ROUTE.withMetric(20)).commit();
    assertThat(sbLog).containsExactly("Set metric of route 10.1.0.0/16 to 20");
    txn(metric)
        .executed(
            op(TxnOperation.UPDATE, ROUTE_KEY)
                .states(ValueState.CONFIGURED, ValueState.CONFIGURED));
    sbLog.clear();

    long hop =
        kvs.startNBTransaction()
            .setValue(ROUTE_KEY, ROUTE.withMetric(20).withNextHop("192.0.2.2"))
            .commit();
    assertThat(sbLog)
        .containsExactly(
            "Deleted route 10.1.0.0/16",
            "Added route 10.1.0.0/16 via if 0 next hop 192.0.2.2 metric 20");
    txn(hop)
        .executed(
            op(TxnOperation.DELETE, ROUTE_KEY)
                .states(ValueState.CONFIGURED, ValueState.REMOVED)
                .flags("RECREATE"),
            op(TxnOperation.CREATE, ROUTE_KEY)
                .states(ValueState.REMOVED, ValueState.CONFIGURED)
                .flags("RECREATE"));
  }

  @Test
  void removingTheInterfaceDeletesTheRouteFirstAndLeavesItPending() {
    kvs.startNBTransaction().setValue(TAP1_KEY, TAP1).setValue(ROUTE_KEY, ROUTE).commit();
    sbLog.clear();

    long seq = kvs.startNBTransaction().setValue(TAP1_KEY, null).commit();

    assertThat(sbLog).containsExactly("Deleted route 10.1.0.0/16", "Deleted TAP interface: tap1");
    txn(seq)
        .executed(
            op(TxnOperation.DELETE, ROUTE_KEY).states(ValueState.CONFIGURED, ValueState.PENDING),
            op(TxnOperation.DELETE, TAP1_KEY).states(ValueState.CONFIGURED, ValueState.REMOVED));
    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.PENDING);
    assertThat(status(ROUTE_KEY).details()).containsExactly(RouteDescriptor.INTERFACE_DEP);
    assertThat(routes.southboundState()).isEmpty();
  }

  @Test
  void fullResyncRepairsWhatChangedBehindTheSchedulersBack() {
    Route other = Route.of("10.2.0.0/16", "tap1", "");
    kvs.startNBTransaction()
        .setValue(TAP1_KEY, TAP1)
        .setValue(ROUTE_KEY, ROUTE)
        .setValue(RouteModel.key(other), other)
        .commit();
    // behind the scheduler's back: a metric changed, a route lost, a stray route added
    routeSb.setRouteMetric("10.1.0.0/16", 55);
    routeSb.deleteRoute("10.2.0.0/16");
    routeSb.addRoute(new SbRoute("10.9.0.0/16", 0, "", 7));
    sbLog.clear();

    TxnOptions fullResync = TxnOptions.builder().resync(ResyncType.FULL).build();
    kvs.startNBTransaction()
        .setValue(TAP1_KEY, TAP1)
        .setValue(ROUTE_KEY, ROUTE)
        .setValue(RouteModel.key(other), other)
        .commit(fullResync);

    assertThat(sbLog)
        .containsExactly(
            "Deleted route 10.9.0.0/16",
            "Added route 10.2.0.0/16 via if 0 metric 100",
            "Set metric of route 10.1.0.0/16 to 100");
    assertThat(routes.southboundState())
        .containsExactly(
            new SbRoute("10.1.0.0/16", 0, "192.0.2.1", 100),
            new SbRoute("10.2.0.0/16", 0, "", 100));
    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(status(RouteModel.key(other)).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(RouteModel.key("10.9.0.0/16")).state())
        .isEqualTo(ValueState.NONEXISTENT);
    sbLog.clear();

    // in sync now: the retrieved metric 100 is equivalent to the desired 0, nothing to do
    kvs.startNBTransaction()
        .setValue(TAP1_KEY, TAP1)
        .setValue(ROUTE_KEY, ROUTE)
        .setValue(RouteModel.key(other), other)
        .commit(fullResync);
    assertThat(sbLog).isEmpty();
  }

  @Test
  void downstreamResyncRepairsTheSouthboundWithTheValuesTheSchedulerHolds() {
    Route other = Route.of("10.2.0.0/16", "tap1", "");
    kvs.startNBTransaction()
        .setValue(TAP1_KEY, TAP1)
        .setValue(ROUTE_KEY, ROUTE)
        .setValue(RouteModel.key(other), other)
        .commit();
    // behind the scheduler's back: a metric changed, a route lost, a stray route added
    routeSb.setRouteMetric("10.1.0.0/16", 55);
    routeSb.deleteRoute("10.2.0.0/16");
    routeSb.addRoute(new SbRoute("10.9.0.0/16", 0, "", 7));
    sbLog.clear();

    // repair the southbound: no values given, the desired state is what the scheduler holds
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());

    assertThat(sbLog)
        .containsExactly(
            "Deleted route 10.9.0.0/16",
            "Added route 10.2.0.0/16 via if 0 metric 100",
            "Set metric of route 10.1.0.0/16 to 100");
    assertThat(routes.southboundState())
        .containsExactly(
            new SbRoute("10.1.0.0/16", 0, "192.0.2.1", 100),
            new SbRoute("10.2.0.0/16", 0, "", 100));
    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(status(RouteModel.key(other)).state()).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void fullResyncWithoutValuesDeletesEverythingTheNorthboundAskedFor() {
    kvs.startNBTransaction().setValue(TAP1_KEY, TAP1).setValue(ROUTE_KEY, ROUTE).commit();
    sbLog.clear();

    // a full resync carries the whole desired state: an empty one desires nothing
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.FULL).build());

    assertThat(sbLog).containsExactly("Deleted route 10.1.0.0/16", "Deleted TAP interface: tap1");
    assertThat(routes.southboundState()).isEmpty();
    assertThat(kvs.valueStatus(ROUTE_KEY).value().state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(kvs.valueStatus(TAP1_KEY).value().state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  void temporaryFailureIsRetriedOtherFailuresAreFinal() {
    kvs.startNBTransaction().setValue(TAP1_KEY, TAP1).commit();
    sbLog.clear();
    TxnOptions withRetry =
        TxnOptions.builder().retry(new RetryOptions(Duration.ofSeconds(1), 3, false)).build();

    routeSb.failNextCall(new RouteSbException("southbound busy", true));
    assertThatThrownBy(() -> kvs.startNBTransaction().setValue(ROUTE_KEY, ROUTE).commit(withRetry))
        .isInstanceOf(TransactionException.class)
        .hasMessageContaining("southbound busy");
    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.RETRYING);
    assertThat(status(ROUTE_KEY).error()).isEqualTo("southbound busy");

    delays.advance(Duration.ofSeconds(1));
    kvs.transactionBarrier();
    assertThat(status(ROUTE_KEY).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(sbLog)
        .containsExactly(
            "Failed to add route 10.1.0.0/16: southbound busy",
            "Added route 10.1.0.0/16 via if 0 next hop 192.0.2.1 metric 100");

    Route other = Route.of("10.2.0.0/16", "tap1", "");
    routeSb.failNextCall(new RouteSbException("route table full", false));
    assertThatThrownBy(
            () -> kvs.startNBTransaction().setValue(RouteModel.key(other), other).commit(withRetry))
        .isInstanceOf(TransactionException.class);
    assertThat(status(RouteModel.key(other)).state()).isEqualTo(ValueState.FAILED);
    assertThat(status(RouteModel.key(other)).error()).isEqualTo("route table full");
    assertThat(delays.pending()).isEmpty();
  }
}
