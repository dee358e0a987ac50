package io.kvscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link KVSchedulerTest#parallelism()}: the fixture's scheduler runs calls in parallel. */
class KVSchedulerTestParallelismTest {

  @Test
  @KVSchedulerTest(parallelism = 4)
  @DisplayName(
      "@KVSchedulerTest(parallelism = 4): independent calls of an opted-in descriptor overlap")
  void callsOverlap(SchedulerFixture fx) {
    fx.southbound().latency(Duration.ofMillis(50));
    fx.kvs()
        .registerDescriptors(
            fx.southbound()
                .descriptor("things", String.class)
                .nbKeyPrefix("config/things/")
                .maxConcurrency(4)
                .build());
    fx.commit(
        "config/things/a",
        "a",
        "config/things/b",
        "b",
        "config/things/c",
        "c",
        "config/things/d",
        "d");
    assertThat(fx.southbound().peakConcurrency("things")).isGreaterThan(1);
  }

  @Test
  @KVSchedulerTest
  @DisplayName("@KVSchedulerTest: one call at a time by default")
  void sequentialByDefault(SchedulerFixture fx) {
    fx.southbound().latency(Duration.ofMillis(5));
    fx.kvs()
        .registerDescriptors(
            fx.southbound()
                .descriptor("things", String.class)
                .nbKeyPrefix("config/things/")
                .maxConcurrency(4)
                .build());
    fx.commit("config/things/a", "a", "config/things/b", "b");
    assertThat(fx.southbound().peakConcurrency()).isEqualTo(1);
  }
}
