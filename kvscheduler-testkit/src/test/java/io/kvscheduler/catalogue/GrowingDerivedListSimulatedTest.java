package io.kvscheduler.catalogue;

import io.kvscheduler.testkit.KVSchedulerTest;

/** {@link GrowingDerivedList} with every transaction simulated first (and rolled back). */
@KVSchedulerTest(simulation = true)
class GrowingDerivedListSimulatedTest extends GrowingDerivedList {}
