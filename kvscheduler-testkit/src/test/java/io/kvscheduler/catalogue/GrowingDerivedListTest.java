package io.kvscheduler.catalogue;

import io.kvscheduler.testkit.KVSchedulerTest;

/** {@link GrowingDerivedList} without simulation. */
@KVSchedulerTest
class GrowingDerivedListTest extends GrowingDerivedList {}
