package io.kvscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link ManualClock}: moves only when advanced, unless built with a tick. */
class ManualClockTest {
  private static final Instant START = Instant.parse("2024-01-01T00:00:00Z");

  @Test
  @DisplayName("reading the clock does not move it; advance does")
  void readingDoesNotTick() {
    ManualClock clock = new ManualClock();
    assertThat(clock.instant()).isEqualTo(START);
    assertThat(clock.instant()).isEqualTo(START);
    assertThat(clock.millis()).isEqualTo(START.toEpochMilli());
    assertThat(clock.peek()).isEqualTo(START);
    clock.advance(Duration.ofSeconds(1));
    assertThat(clock.instant()).isEqualTo(START.plusSeconds(1));
    assertThat(new ManualClock(START.plusSeconds(5)).instant()).isEqualTo(START.plusSeconds(5));
  }

  @Test
  @DisplayName("a clock built with a tick moves by it after each reading, peek excepted")
  void explicitTick() {
    ManualClock clock = new ManualClock(START, Duration.ofMillis(1));
    assertThat(clock.instant()).isEqualTo(START);
    assertThat(clock.peek()).isEqualTo(START.plusMillis(1));
    assertThat(clock.instant()).isEqualTo(START.plusMillis(1));
    assertThatThrownBy(() -> new ManualClock(START, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);

    ManualClock asked = new ManualClock().tickOnEveryRead(Duration.ofSeconds(1));
    assertThat(asked.instant()).isEqualTo(START);
    assertThat(asked.instant()).isEqualTo(START.plusSeconds(1));
    asked.tickOnEveryRead(Duration.ZERO);
    assertThat(asked.instant()).isEqualTo(START.plusSeconds(2));
    assertThat(asked.instant()).isEqualTo(START.plusSeconds(2));
  }

  @Test
  @DisplayName("the fixture's clock does not move while a transaction runs")
  void fixtureClockStandsStill() {
    try (SchedulerFixture fx = SchedulerFixture.create()) {
      fx.kvs()
          .registerDescriptors(
              fx.southbound().descriptor("d", String.class).nbKeyPrefix("config/").build());
      Instant before = fx.clock().peek();
      long seq = fx.commit("config/a", "x");
      assertThat(fx.clock().peek()).isEqualTo(before);
      assertThat(fx.txn(seq).start()).isEqualTo(before);
      assertThat(fx.txn(seq).stop()).isEqualTo(before);
    }
  }
}
