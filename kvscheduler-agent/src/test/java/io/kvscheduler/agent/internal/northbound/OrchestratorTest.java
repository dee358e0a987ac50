package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How the orchestrator combines sources that give the same key. */
class OrchestratorTest {
  static final String K = "config/t/v1/items/a";

  final Map<String, String> southbound = new ConcurrentHashMap<>();
  final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  final Orchestrator nb = new Orchestrator(kvs);

  OrchestratorTest() {
    kvs.registerDescriptors(
        KVDescriptor.builder("item", String.class)
            .nbKeyPrefix("config/t/v1/items/")
            .create(
                (key, v) -> {
                  southbound.put(key, v);
                  return null;
                })
            .update(
                (key, before, after, meta) -> {
                  southbound.put(key, after);
                  return null;
                })
            .delete((key, v, meta) -> southbound.remove(key))
            .build());
  }

  @AfterEach
  void close() {
    kvs.close();
  }

  private static Map<String, Object> one(String key, Object value) {
    Map<String, Object> m = new HashMap<>();
    m.put(key, value);
    return m;
  }

  /** The orchestrator desires exactly {@code expected}, and the southbound holds it. */
  private void assertApplied(Map<String, String> expected) {
    assertThat(nb.desired()).containsExactlyInAnyOrderEntriesOf(expected);
    assertThat(southbound).containsExactlyInAnyOrderEntriesOf(expected);
  }

  @Test
  @DisplayName("D26 the last delivery of a key wins, and desired() lists the value chosen")
  void theLastDeliveryOfAKeyWinsAndDesiredShowsWhatIsApplied() throws Exception {
    nb.change("file", one(K, "from-file")).get();
    nb.change("rest", one(K, "from-rest")).get();
    assertApplied(Map.of(K, "from-rest"));

    nb.change("file", one(K, "file-again")).get();
    assertApplied(Map.of(K, "file-again"));
  }

  @Test
  @DisplayName("D26 removing a key from one source applies the value another source still gives")
  void removingAKeyFromOneSourceAppliesTheValueAnotherSourceStillGives() throws Exception {
    nb.change("file", one(K, "from-file")).get();
    nb.change("rest", one(K, "from-rest")).get();
    nb.change("rest", one(K, null)).get();
    assertApplied(Map.of(K, "from-file"));

    nb.change("file", one(K, null)).get();
    assertApplied(Map.of());
  }

  @Test
  @DisplayName("D26 a delivery that repeats a source's value does not take the key back")
  void aResyncThatLeavesItsValueUnchangedDoesNotTakeTheKeyBack() throws Exception {
    nb.resync("file", Map.of(K, "from-file")).get();
    nb.change("rest", one(K, "from-rest")).get();
    nb.resync("file", Map.of(K, "from-file")).get();
    assertApplied(Map.of(K, "from-rest"));

    nb.resync("file", Map.of(K, "file-changed")).get();
    assertThat(southbound).containsExactlyEntriesOf(Map.of(K, "file-changed"));
    nb.resync("file", Map.of()).get();
    assertApplied(Map.of(K, "from-rest"));
  }

  @Test
  @DisplayName("D26 a source that is not the last to deliver a key removes it without effect")
  void removingAKeyFromASourceThatDidNotWinChangesNothing() throws Exception {
    nb.change("file", one(K, "from-file")).get();
    nb.change("rest", one(K, "from-rest")).get();
    nb.change("file", one(K, null)).get();
    assertApplied(Map.of(K, "from-rest"));

    nb.change("file", one(K, "from-file")).get();
    nb.change("rest", one(K, "from-rest")).get(); // repeated: no new delivery
    assertThat(southbound).containsExactlyEntriesOf(Map.of(K, "from-file"));
  }
}
