package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.QueueFullException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The orchestrator writes the deliveries of the kept sources to its journal before applying. */
class OrchestratorJournalTest {
  static final String P = "config/t/v1/items/";

  final Map<String, String> southbound = new ConcurrentHashMap<>();
  final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  final Orchestrator nb = new Orchestrator(kvs, Set.of("rest"));

  /** What the journal was given, as "source kind {key=value}"; fails while {@code failing}. */
  final List<String> written = new ArrayList<>();

  volatile boolean failing;

  final Orchestrator.Journal journal =
      new Orchestrator.Journal() {
        @Override
        public boolean keeps(String source) {
          return source.equals("rest") || source.equals("grpc");
        }

        @Override
        public void resync(String source, Map<String, Object> values) {
          write(source + " resync " + new java.util.TreeMap<>(values));
        }

        @Override
        public void change(String source, Map<String, Object> changes) {
          write(source + " change " + new java.util.TreeMap<>(changes));
        }

        private void write(String what) {
          // the southbound has not seen the delivery yet: written ahead
          written.add(what + " sb=" + new java.util.TreeMap<>(southbound));
          if (failing) {
            throw new IllegalStateException("not applied: the state store cannot be written");
          }
        }
      };

  OrchestratorJournalTest() {
    kvs.registerDescriptors(
        KVDescriptor.builder("item", String.class)
            .nbKeyPrefix(P)
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

  @Test
  @DisplayName(
      "labels are kept with the values: written with them, replaced by a delivery of the same"
          + " value, put back by a rollback, gone with the value")
  void labelsAreKeptWithTheValues() throws Exception {
    List<String> labelled = new ArrayList<>();
    Orchestrator.Journal withLabels =
        new Orchestrator.Journal() {
          @Override
          public boolean keeps(String source) {
            return journal.keeps(source);
          }

          @Override
          public void resync(String source, Map<String, Object> values) {
            throw new AssertionError("written without labels");
          }

          @Override
          public void change(String source, Map<String, Object> changes) {
            throw new AssertionError("written without labels");
          }

          @Override
          public void resync(
              String source, Map<String, Object> values, Map<String, Map<String, String>> l) {
            labelled.add(source + " resync " + new java.util.TreeMap<>(l));
          }

          @Override
          public void change(
              String source, Map<String, Object> changes, Map<String, Map<String, String>> l) {
            labelled.add(source + " change " + new java.util.TreeMap<>(l));
          }
        };
    nb.keep(withLabels, Map.of());
    nb.change("grpc", one(P + "a", "1"), Map.of(P + "a", Map.of("team", "x"))).get();
    assertThat(nb.labels(P + "a")).isEqualTo(Map.of("team", "x"));
    // the same value with other labels: the labels change, the southbound does not
    long seq = nb.change("grpc", one(P + "a", "1"), Map.of(P + "a", Map.of("team", "y"))).get();
    assertThat(kvs.recordedTransaction(seq).orElseThrow().executed()).isEmpty();
    assertThat(nb.labels(P + "a")).isEqualTo(Map.of("team", "y"));
    // an unconfirmed delivery's labels go with its rollback
    nb.deliverUnconfirmed(
            "grpc",
            one(P + "a", "2"),
            Map.of(P + "a", Map.of("team", "z")),
            false,
            () -> "c1",
            "to confirm")
        .get();
    assertThat(nb.labels(P + "a")).isEqualTo(Map.of("team", "z"));
    nb.rollBack("grpc", "rollback").get();
    assertThat(nb.labels(P + "a")).isEqualTo(Map.of("team", "y"));
    assertThat(southbound).containsEntry(P + "a", "1");
    // another source's later value applies, without labels; when it goes, the labels are back
    nb.change("rest", one(P + "a", "3")).get();
    assertThat(nb.labels(P + "a")).isEmpty();
    nb.change("rest", one(P + "a", null)).get();
    assertThat(nb.labels(P + "a")).isEqualTo(Map.of("team", "y"));
    nb.resync("grpc", Map.of(P + "b", "4"), Map.of(P + "b", Map.of("k", "v"))).get();
    assertThat(nb.labels(P + "a")).isEmpty(); // gone with the value
    assertThat(nb.labels(P + "b")).isEqualTo(Map.of("k", "v"));
    assertThat(labelled)
        .containsExactly(
            "grpc change {config/t/v1/items/a={team=x}}",
            "grpc change {config/t/v1/items/a={team=y}}",
            "rest change {}",
            "rest change {}",
            "grpc resync {config/t/v1/items/b={k=v}}");
  }

  @Test
  @DisplayName("deliveries of kept sources are written before they reach the southbound")
  void keptSourcesAreWrittenAhead() throws Exception {
    nb.keep(journal, Map.of());
    nb.change("rest", one(P + "a", "1")).get();
    nb.change("file", one(P + "f", "file")).get(); // not kept
    nb.resync("grpc", one(P + "g", "2")).get();
    nb.change("rest", one(P + "a", null)).get();
    assertThat(written)
        .containsExactly(
            "rest change {config/t/v1/items/a=1} sb={}",
            "grpc resync {config/t/v1/items/g=2} sb={config/t/v1/items/a=1,"
                + " config/t/v1/items/f=file}",
            "rest change {config/t/v1/items/a=null} sb={config/t/v1/items/a=1,"
                + " config/t/v1/items/f=file, config/t/v1/items/g=2}");
    assertThat(southbound).containsOnlyKeys(P + "f", P + "g");
  }

  @Test
  @DisplayName(
      "a delivery the journal cannot write is not applied, and the source keeps its values")
  void unwrittenDeliveryIsNotApplied() throws Exception {
    nb.keep(journal, Map.of());
    nb.change("rest", one(P + "a", "1")).get();
    failing = true;
    assertThatThrownBy(() -> nb.change("rest", one(P + "a", "2")).get())
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("not applied: the state store cannot be written");
    assertThatThrownBy(() -> nb.resync("grpc", one(P + "b", "3")).get())
        .isInstanceOf(ExecutionException.class)
        .hasMessageContaining("not applied");
    failing = false;
    nb.change("file", one(P + "c", "4")).get(); // a transaction after the refused ones
    assertThat(nb.desired()).containsOnly(Map.entry(P + "a", "1"), Map.entry(P + "c", "4"));
    assertThat(southbound).containsOnly(Map.entry(P + "a", "1"), Map.entry(P + "c", "4"));
  }

  @Test
  @DisplayName("restored values are the sources' own: resyncAll applies them, later pushes change")
  void restoredValuesAreApplied() throws Exception {
    nb.keep(journal, Map.of("rest", Map.of(P + "a", "1", P + "b", "2"), "grpc", Map.of()));
    assertThat(southbound).isEmpty(); // nothing committed yet
    nb.resyncAll("resync from the state store").get();
    assertThat(southbound).containsOnly(Map.entry(P + "a", "1"), Map.entry(P + "b", "2"));
    nb.resync("rest", one(P + "b", "2")).get(); // replaces: a removed
    assertThat(southbound).containsOnly(Map.entry(P + "b", "2"));
    assertThat(written)
        .containsExactly(
            "rest resync {config/t/v1/items/b=2} sb={"
                + "config/t/v1/items/a=1, config/t/v1/items/b=2}");
  }

  @Test
  @DisplayName("after a restart, etcd's (or a file's) first resync wins over the restored values")
  void firstResyncOfEtcdWinsOverRestored() throws Exception {
    nb.keep(journal, Map.of("rest", Map.of(P + "a", "from-rest", P + "b", "only-rest")));
    nb.resync("etcd", one(P + "a", "from-etcd")).get();
    assertThat(southbound)
        .containsOnly(Map.entry(P + "a", "from-etcd"), Map.entry(P + "b", "only-rest"));
    assertThat(written).isEmpty(); // etcd is not kept, the restored values are not written again
  }

  @Test
  @DisplayName("a REST delivery refused by the full queue is written back out of the journal")
  void refusedDeliveryIsWrittenBackOut() throws Exception {
    CountDownLatch inCall = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    KVScheduler small = KVScheduler.builder().printTxnSummary(false).queueCapacity(1).build();
    try {
      small.registerDescriptors(
          KVDescriptor.builder("item", String.class)
              .nbKeyPrefix(P)
              .create(
                  (key, v) -> {
                    inCall.countDown();
                    try {
                      release.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                    return null;
                  })
              .delete((key, v, meta) -> {})
              .build());
      Orchestrator o = new Orchestrator(small, Set.of("rest"));
      o.keep(journal, Map.of());
      o.change("file", one(P + "a", "A"));
      assertThat(inCall.await(20, TimeUnit.SECONDS)).isTrue(); // the engine is in a call
      o.change("file", one(P + "b", "B")); // the queue is full
      CompletableFuture<Long> rest = o.change("rest", one(P + "r", "R"));
      assertThatThrownBy(rest::get).hasCauseInstanceOf(QueueFullException.class);
      assertThat(written)
          .containsExactly(
              "rest change {config/t/v1/items/r=R} sb={}",
              "rest change {config/t/v1/items/r=null} sb={}");
      assertThat(o.desired()).doesNotContainKey(P + "r");
    } finally {
      release.countDown();
      small.close();
    }
  }
}
