package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Which descriptor a key belongs to is never a guess: overlapping NB key prefixes are refused at
 * registration; a key two custom selectors both take fails as INVALID naming both; a selector that
 * throws is reported once.
 */
class DescriptorSelectionTest {
  private final MockSouthbound sb = new MockSouthbound();
  private KVScheduler kvs;

  @BeforeEach
  void setUp() {
    ManualClock clock = new ManualClock();
    kvs =
        KVScheduler.builder()
            .clock(clock)
            .delayScheduler(new ManualDelayScheduler(clock))
            .statusExecutor(Runnable::run)
            .build();
  }

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  @Test
  @DisplayName("NB key prefixes x/ and x/y/ are refused at registration, naming both descriptors")
  void overlappingPrefixesRefused() {
    assertThatThrownBy(
            () ->
                kvs.registerDescriptors(
                    sb.descriptor("outer", String.class).nbKeyPrefix("x/").build(),
                    sb.descriptor("inner", String.class).nbKeyPrefix("x/y/").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inner")
        .hasMessageContaining("outer")
        .hasMessageContaining("x/y/");
    // nothing of the group was registered
    kvs.registerDescriptors(sb.descriptor("outer", String.class).nbKeyPrefix("x/").build());
    // nor in a later registration
    assertThatThrownBy(
            () ->
                kvs.registerDescriptors(
                    sb.descriptor("inner", String.class).nbKeyPrefix("x/y/").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inner")
        .hasMessageContaining("outer");
  }

  @Test
  @DisplayName(
      "a key two custom key selectors both take fails as INVALID naming both descriptors;"
          + " nothing is called")
  void keyOfTwoSelectorsInvalid() {
    kvs.registerDescriptors(
        sb.descriptor("first", String.class)
            .nbKeyPrefix("p/")
            .keySelector(k -> k.startsWith("p/") && !k.endsWith("/q"))
            .build(),
        sb.descriptor("second", String.class)
            .nbKeyPrefix("q/")
            .keySelector(k -> k.startsWith("q/") || k.startsWith("p/both"))
            .build());

    TransactionException e =
        org.assertj.core.api.Assertions.catchThrowableOfType(
            () -> kvs.startNBTransaction().setValue("p/both", "v").setValue("p/one", "v").commit(),
            TransactionException.class);

    assertThat(e).isNotNull();
    assertThat(e.keyErrors()).hasSize(1);
    KeyError ke = e.keyErrors().get(0);
    assertThat(ke.key()).isEqualTo("p/both");
    assertThat(ke.kind()).isEqualTo(KeyError.Kind.INVALID);
    assertThat(ke.message()).contains("first").contains("second");
    assertThat(kvs.valueStatus("p/both").value().state()).isEqualTo(ValueState.INVALID);
    assertThat(kvs.valueStatus("p/one").value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(sb.callLog()).containsExactly("CREATE p/one");
  }

  @Test
  @DisplayName("a key selector that throws is reported by one error, with one stack trace")
  void throwingSelectorLoggedOnce() {
    Logger log = CatalogueFixtures.engineLogger("Registry");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    log.addAppender(appender);
    try {
      kvs.registerDescriptors(
          sb.descriptor("plain", String.class).nbKeyPrefix("a/").build(),
          sb.descriptor("fragile", String.class)
              .nbKeyPrefix("b/")
              .keySelector(
                  k -> {
                    if (k.contains("boom")) {
                      throw new IllegalStateException("selector broken");
                    }
                    return k.startsWith("b/");
                  })
              .build());
      kvs.startNBTransaction().setValue("a/boom", "v").commit();
      kvs.startNBTransaction().setValue("a/boom", "w").commit();
    } finally {
      log.detachAppender(appender);
    }
    assertThat(kvs.valueStatus("a/boom").value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(appender.list.stream().filter(ev -> ev.getLevel() == Level.ERROR))
        .hasSize(1)
        .allSatisfy(
            ev -> {
              assertThat(ev.getFormattedMessage()).contains("fragile").contains("a/boom");
              assertThat(ev.getThrowableProxy()).isNotNull();
            });
  }

  @Test
  @DisplayName("setValue(null, v) says the key must not be null")
  void nullKey() {
    assertThatThrownBy(() -> kvs.startNBTransaction().setValue(null, "v"))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("key must not be null");
  }
}
