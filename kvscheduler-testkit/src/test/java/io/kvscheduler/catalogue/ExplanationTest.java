package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.Explanation.Reason;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link KVScheduler#explanation}: the causes of a value's state as a typed tree. */
class ExplanationTest {
  /** A value needing keys, or any key under prefixes; invalid or failing on request. */
  record Item(List<String> needs, List<String> anyOf, boolean invalid, boolean fail) {
    static Item needing(String... keys) {
      return new Item(List.of(keys), List.of(), false, false);
    }
  }

  static KVScheduler scheduler() {
    KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
    kvs.registerDescriptors(
        KVDescriptor.builder("items", Item.class)
            .nbKeyPrefix("item/")
            .validate(
                (k, v) -> {
                  if (v.invalid()) {
                    throw new InvalidValueException("colour is not a colour", "colour");
                  }
                })
            .create(
                (k, v) -> {
                  if (v.fail()) {
                    throw new IllegalStateException("southbound says no");
                  }
                  return null;
                })
            .delete((k, v, m) -> {})
            .dependencies(
                (k, v) -> {
                  List<Dependency> deps = new ArrayList<>();
                  v.needs().forEach(n -> deps.add(Dependency.onKey("needs " + n, n)));
                  if (!v.anyOf().isEmpty()) {
                    deps.add(Dependency.anyOfPrefixes("any", v.anyOf().toArray(String[]::new)));
                  }
                  return deps;
                })
            .build());
    return kvs;
  }

  static void commit(KVScheduler kvs, String key, Item item) {
    try {
      kvs.startNBTransaction().setValue(key, item).commit();
    } catch (RuntimeException expected) {
      // failed or invalid values fail the commit
    }
  }

  @Test
  @DisplayName(
      "a PENDING value: its missing dependency, its unmatched any-of with the prefixes,"
          + " and a dependency that is itself INVALID, down to the root")
  void pendingChains() {
    try (KVScheduler kvs = scheduler()) {
      commit(kvs, "item/bad", new Item(List.of(), List.of(), true, false));
      commit(
          kvs,
          "item/a",
          new Item(
              List.of("item/missing", "item/bad"), List.of("item/x-", "item/y-"), false, false));
      Explanation e = kvs.explanation("item/a");
      assertThat(e.state()).isEqualTo(ValueState.PENDING);
      assertThat(e.reason()).isEqualTo(Reason.WAITING);
      assertThat(e.causes()).hasSize(3);
      Explanation missing = e.causes().get(0);
      assertThat(missing.key()).isEqualTo("item/missing");
      assertThat(missing.reason()).isEqualTo(Reason.MISSING_DEPENDENCY);
      assertThat(missing.dependency()).isEqualTo("needs item/missing");
      Explanation bad = e.causes().get(1);
      assertThat(bad.key()).isEqualTo("item/bad");
      assertThat(bad.reason()).isEqualTo(Reason.INVALID);
      assertThat(bad.invalidFields()).containsExactly("colour");
      assertThat(bad.error()).contains("colour is not a colour");
      assertThat(bad.dependency()).isEqualTo("needs item/bad");
      Explanation any = e.causes().get(2);
      assertThat(any.reason()).isEqualTo(Reason.NO_MATCHING_KEY);
      assertThat(any.key()).isEmpty();
      assertThat(any.anyOfPrefixes()).containsExactly("item/x-", "item/y-");
      // the text form tells the same story
      assertThat(String.join("\n", kvs.explain("item/a")))
          .contains("item/missing", "item/bad is INVALID");
    }
  }

  @Test
  @DisplayName(
      "a dependency cycle is named in full; failed values carry error and operation;"
          + " applied and unknown keys say so")
  void cyclesFailuresAndTheRest() {
    try (KVScheduler kvs = scheduler()) {
      var txn = kvs.startNBTransaction();
      txn.setValue("item/c1", Item.needing("item/c2", "item/none"));
      txn.setValue("item/c2", Item.needing("item/c1"));
      txn.commit();
      Explanation c1 = kvs.explanation("item/c1");
      assertThat(c1.reason()).isEqualTo(Reason.WAITING);
      Explanation viaC2 =
          c1.causes().stream().filter(c -> c.key().equals("item/c2")).findFirst().orElseThrow();
      assertThat(viaC2.reason()).isEqualTo(Reason.WAITING);
      Explanation cycle = viaC2.causes().get(0);
      assertThat(cycle.reason()).isEqualTo(Reason.CYCLE);
      assertThat(cycle.cycle()).containsExactly("item/c1", "item/c2", "item/c1");

      commit(kvs, "item/f", new Item(List.of(), List.of(), false, true));
      Explanation f = kvs.explanation("item/f");
      assertThat(f.state()).isEqualTo(ValueState.FAILED);
      assertThat(f.reason()).isEqualTo(Reason.FAILED);
      assertThat(f.error()).contains("southbound says no");
      assertThat(f.failedOperation()).isEqualTo(TxnOperation.CREATE);

      commit(kvs, "item/ok", Item.needing());
      assertThat(kvs.explanation("item/ok").reason()).isEqualTo(Reason.APPLIED);
      assertThat(kvs.explanation("item/unknown").reason()).isEqualTo(Reason.UNKNOWN_KEY);
    }
  }
}
