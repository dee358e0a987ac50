package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Long dependency chains: a value created or taken down makes its dependents follow, link by link,
 * on the engine thread's default stack (the walk keeps its own stack of frames).
 */
class DeepChainTest {
  /** A link of the chain: the key it needs, or null for the root. */
  record Link(String needs) {}

  private static String key(int i) {
    return String.format("chain/%06d", i);
  }

  /** A scheduler whose southbound records "C key" / "D key" per call into {@code ops}. */
  private static KVScheduler scheduler(List<String> ops) {
    KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
    kvs.registerDescriptors(
        KVDescriptor.builder("chain", Link.class)
            .nbKeyPrefix("chain/")
            .create(
                (k, v) -> {
                  ops.add("C " + k);
                  return null;
                })
            .delete((k, v, m) -> ops.add("D " + k))
            .dependencies(
                (k, v) ->
                    v.needs() == null
                        ? List.of()
                        : List.of(Dependency.onKey("previous", v.needs())))
            .build());
    return kvs;
  }

  private static List<String> expected(String op, int n, boolean reversed) {
    List<String> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(op + " " + key(i));
    }
    if (reversed) {
      Collections.reverse(out);
    }
    return out;
  }

  @Test
  @DisplayName(
      "a chain of 5,000 values given in one transaction, last link first, is created"
          + " link by link; removing its root takes it down from the far end, and explain follows it"
          + " down to the missing root in lines of bounded length")
  void chainInOneTransaction() {
    int n = 5_000;
    List<String> ops = Collections.synchronizedList(new ArrayList<>());
    try (KVScheduler kvs = scheduler(ops)) {
      Txn txn = kvs.startNBTransaction();
      for (int i = n - 1; i >= 0; i--) {
        txn.setValue(key(i), new Link(i == 0 ? null : key(i - 1)));
      }
      txn.commit();
      assertThat(ops).isEqualTo(expected("C", n, false)); // List.equals: one pass
      assertThat(kvs.valueStatus(key(n - 1)).state()).isEqualTo(ValueState.CONFIGURED);

      ops.clear();
      kvs.startNBTransaction().setValue(key(0), null).commit();
      assertThat(ops).isEqualTo(expected("D", n, true)); // List.equals: one pass
      assertThat(kvs.valueStatus(key(n - 1)).state()).isEqualTo(ValueState.PENDING);
      List<String> why = kvs.explain(key(n - 1));
      // every link PENDING, then the missing root; lines of bounded length at any depth
      assertThat(why).hasSize(2 * (n - 1)).allMatch(line -> line.length() < 160);
      assertThat(why.get(0)).isEqualTo(key(n - 1) + " is PENDING");
      assertThat(why.get(why.size() - 1))
          .isEqualTo(
              "  ".repeat(32)
                  + "("
                  + (2 * n - 3)
                  + ")"
                  + " dependency 'previous': key "
                  + key(0)
                  + " does not exist");
    }
  }

  @Test
  @DisplayName(
      "a chain of 3,000 PENDING values waits for its root; the root's transaction"
          + " creates all of them")
  void pendingChainReleasedByItsRoot() {
    int n = 3_000;
    List<String> ops = Collections.synchronizedList(new ArrayList<>());
    try (KVScheduler kvs = scheduler(ops)) {
      for (int i = n - 1; i >= 1; i--) {
        kvs.startNBTransaction().setValue(key(i), new Link(key(i - 1))).commit();
      }
      assertThat(ops).isEmpty();
      long seq = kvs.startNBTransaction().setValue(key(0), new Link(null)).commit();
      assertThat(ops).isEqualTo(expected("C", n, false)); // List.equals: one pass
      assertThat(kvs.recordedTransaction(seq).orElseThrow().executed()).hasSize(n);
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  @DisplayName(
      "a chain of 100,000 values is taken down from the far end when its root goes, and comes"
          + " back when the root returns, each link's readiness decided without searching the"
          + " rest of the chain (a search per link to the chain's end took minutes at 20,000)")
  void longChainTakenDownInLinearTime() {
    int n = 100_000;
    List<String> ops = Collections.synchronizedList(new ArrayList<>());
    try (KVScheduler kvs = scheduler(ops)) {
      Txn txn = kvs.startNBTransaction();
      for (int i = 0; i < n; i++) {
        txn.setValue(key(i), new Link(i == 0 ? null : key(i - 1)));
      }
      txn.commit();
      assertThat(ops).isEqualTo(expected("C", n, false));

      ops.clear();
      kvs.startNBTransaction().setValue(key(0), null).commit();
      assertThat(ops).isEqualTo(expected("D", n, true));
      assertThat(kvs.valueStatus(key(n - 1)).state()).isEqualTo(ValueState.PENDING);
      assertThat(kvs.valueStatus(key(n - 1)).value().details()).containsExactly("previous");

      ops.clear();
      kvs.startNBTransaction().setValue(key(0), new Link(null)).commit();
      assertThat(ops).isEqualTo(expected("C", n, false));
      assertThat(kvs.valueStatus(key(n - 1)).state()).isEqualTo(ValueState.CONFIGURED);
    }
  }

  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  @DisplayName(
      "a ring of 20,000 values given in one transaction is ready as a whole and created; once one"
          + " of them goes, the rest are taken down from the far end and wait, and both forms of"
          + " explain follow the ring down to the missing value")
  void longRingReadyThroughItsCycle() {
    int n = 20_000;
    List<String> ops = Collections.synchronizedList(new ArrayList<>());
    try (KVScheduler kvs = scheduler(ops)) {
      Txn txn = kvs.startNBTransaction();
      for (int i = 0; i < n; i++) {
        txn.setValue(key(i), new Link(key((i + n - 1) % n)));
      }
      txn.commit();
      assertThat(ops).containsExactlyInAnyOrderElementsOf(expected("C", n, false));
      assertThat(kvs.valueStatus(key(n / 2)).state()).isEqualTo(ValueState.CONFIGURED);

      ops.clear();
      kvs.startNBTransaction().setValue(key(0), null).commit();
      assertThat(ops).isEqualTo(expected("D", n, true)); // List.equals: one pass
      assertThat(kvs.valueStatus(key(n - 1)).state()).isEqualTo(ValueState.PENDING);
      List<String> why = kvs.explain(key(n - 1));
      assertThat(why).hasSize(2 * (n - 1));
      assertThat(why.get(why.size() - 1))
          .endsWith("dependency 'previous': key " + key(0) + " does not exist");
      Explanation tree = kvs.explanation(key(n - 1));
      int depth = 0;
      while (!tree.causes().isEmpty()) {
        assertThat(tree.causes()).hasSize(1);
        tree = tree.causes().get(0);
        depth++;
      }
      assertThat(depth).isEqualTo(n - 1);
      assertThat(tree.key()).isEqualTo(key(0));
      assertThat(tree.reason()).isEqualTo(Explanation.Reason.MISSING_DEPENDENCY);
    }
  }
}
