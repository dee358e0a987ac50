package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A derived value whose key is an NB value's key: whichever comes first keeps the key, and the
 * commit that brings the second fails naming both keys, in either order; nothing is dropped
 * silently.
 */
class DerivedKeyCollisionTest {
  private static final String NB = "nb/x";
  private static final String BASE = "d/1";

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
    kvs.registerDescriptors(
        sb.descriptor("nb", String.class).nbKeyPrefix("nb/").build(),
        sb.descriptor("deriving", String.class)
            .nbKeyPrefix("d/")
            .derivedValues((key, v) -> List.of(KeyValuePair.of(NB, "derived from " + key)))
            .build());
  }

  @AfterEach
  void tearDown() {
    kvs.close();
  }

  private TransactionException commitFails(String key, String value) {
    TransactionException e =
        catchThrowableOfType(
            () -> kvs.startNBTransaction().setValue(key, value).commit(),
            TransactionException.class);
    assertThat(e).as("the commit of " + key + " fails").isNotNull();
    return e;
  }

  private static void namesBoth(TransactionException e) {
    assertThat(e.keyErrors()).hasSize(1);
    KeyError ke = e.keyErrors().get(0);
    assertThat(ke.key()).isEqualTo(NB);
    assertThat(ke.kind()).isEqualTo(KeyError.Kind.CONFLICT);
    assertThat(ke.message()).contains(BASE);
    assertThat(e.getMessage()).contains(NB).contains(BASE);
  }

  @Test
  @DisplayName(
      "NB value first, then a base deriving its key: the base's commit fails naming both keys;"
          + " the NB value keeps its key")
  void nbFirst() {
    kvs.startNBTransaction().setValue(NB, "own").commit();

    namesBoth(commitFails(BASE, "b"));

    assertThat(kvs.valueStatus(BASE).value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(BASE).derived()).isEmpty();
    assertThat(kvs.valueStatus(NB).value().state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(sb.get(NB).orElseThrow().value()).isEqualTo("own");
  }

  @Test
  @DisplayName(
      "base deriving the key first, then the NB value: the NB value's commit fails naming both"
          + " keys; the derived value keeps its key")
  void baseFirst() {
    kvs.startNBTransaction().setValue(BASE, "b").commit();

    namesBoth(commitFails(NB, "own"));

    assertThat(kvs.valueStatus(BASE).derived())
        .singleElement()
        .satisfies(d -> assertThat(d.state()).isEqualTo(ValueState.CONFIGURED));
    assertThat(sb.get(NB).orElseThrow().value()).isEqualTo("derived from " + BASE);
  }
}
