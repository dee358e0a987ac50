package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * (ours) Arguments are checked where they are given: a bad setting or a null argument fails at the
 * call, naming the parameter, instead of later on the engine thread or with the JDK's text.
 */
class ArgumentCheckTest {
  private final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  @Test
  @DisplayName("(ours) builder settings out of range fail at the setter, naming the setting")
  void builderSettingsOutOfRange() {
    assertThatThrownBy(() -> KVScheduler.builder().historyAgeLimit(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("historyAgeLimit must be positive, got PT-5S");
    assertThatThrownBy(() -> KVScheduler.builder().historyAgeLimit(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("historyAgeLimit must be positive, got PT0S");
    assertThatThrownBy(() -> KVScheduler.builder().permanentHistoryPeriod(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("permanentHistoryPeriod must not be negative, got PT-5S");
    assertThatThrownBy(() -> KVScheduler.builder().threadName(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("threadName must not be blank");
    assertThatThrownBy(() -> KVScheduler.builder().periodicDownstreamResync(null, Duration.ZERO))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("period");
    // the limits themselves are accepted
    KVScheduler.builder()
        .permanentHistoryPeriod(Duration.ZERO)
        .historyAgeLimit(Duration.ofNanos(1))
        .threadName("t");
  }

  @Test
  @DisplayName(
      "(ours) null arguments of the scheduler's methods fail at the call, naming the"
          + " parameter, and a commit given null options can still be committed")
  void nullArgumentsNamed() {
    assertThatThrownBy(() -> kvs.watchValueStatus(null, s -> {}))
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("selector");
    assertThatThrownBy(() -> kvs.watchValueStatus(KeySelector.any(), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("listener");
    assertThatThrownBy(() -> kvs.transactionHistory(null, Instant.MAX))
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("since");
    assertThatThrownBy(() -> kvs.graphSnapshot(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("time");
    assertThatThrownBy(() -> kvs.flagStats("value-state", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("selector");
    assertThatThrownBy(() -> kvs.validateSemantically(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("values");
    assertThatThrownBy(() -> kvs.pushSBNotification(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("values");
    assertThatThrownBy(
            () -> kvs.pushSBNotification(Arrays.asList(KVWithMetadata.of("a/x", "v"), null)))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("null entry");
    assertThatThrownBy(
            () ->
                kvs.registerDescriptors(
                    KVDescriptor.builder("a", String.class)
                        .nbKeyPrefix("a/")
                        .create((k, v) -> null)
                        .delete((k, v, m) -> {})
                        .build(),
                    null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("descriptor 2 of 2 is null");
    assertThat(kvs.descriptors()).isEmpty(); // nothing of the group was registered
    assertThatThrownBy(() -> Dependency.anyOf("l", null, KeySelector.any()))
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("keyPrefixes");
    assertThatThrownBy(() -> Dependency.anyOf("l", Arrays.asList("p/", null), KeySelector.any()))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("dependency 'l' has a null key prefix");
    assertThatThrownBy(() -> TxnOptions.builder().retry(null).build())
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("retry options");

    Txn txn = kvs.startNBTransaction().setValue("a/x", "v");
    assertThatThrownBy(() -> txn.commit(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("options");
    assertThatThrownBy(() -> txn.commitAsync(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageStartingWith("options");
    assertThat(txn.commit(TxnOptions.defaults())).isEqualTo(0); // not used up by the null
    assertThat(List.of(kvs.valueStatus("a/x").state().name())).containsExactly("UNIMPLEMENTED");
  }
}
