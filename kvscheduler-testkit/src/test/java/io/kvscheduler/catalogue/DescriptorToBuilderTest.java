package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** {@link KVDescriptor#toBuilder()}: a variant of a descriptor, every setting carried over. */
class DescriptorToBuilderTest {

  record Meta(String id) {}

  private final List<String> calls = new CopyOnWriteArrayList<>();

  private KVDescriptor<String, Meta> full() {
    return KVDescriptor.builder("full", String.class)
        .withMetadata(Meta.class)
        .valueTypeName("text")
        .nbKeyPrefix("config/full/")
        .keyLabel(key -> key.substring("config/full/".length()))
        .equivalence((key, a, b) -> a.equalsIgnoreCase(b))
        .metadataIndex("ids", m -> Set.of(m.id()))
        .validate((key, value) -> {})
        .create(
            (key, value) -> {
              calls.add("create " + key);
              return new Meta(value);
            })
        .update((key, oldValue, newValue, meta) -> new Meta(newValue))
        .delete((key, value, meta) -> calls.add("delete " + key))
        .updateWithRecreate((key, oldValue, newValue, meta) -> false)
        .retrieve(correlate -> List.of())
        .isRetriableFailure(e -> false)
        .derivedValues((key, value) -> List.of(new KeyValuePair(key + "/d", value)))
        .dependencies((key, value) -> List.of(Dependency.onKey("x", "config/x")))
        .operationTimeout(Duration.ofSeconds(3))
        .maxConcurrency(4)
        .build();
  }

  @Test
  @DisplayName("toBuilder().build() has every setting of the original")
  void copiesEverySetting() {
    KVDescriptor<String, Meta> d = full();
    KVDescriptor<String, Meta> copy = d.toBuilder().build();
    assertThat(copy).isNotSameAs(d);
    assertThat(copy.name()).isEqualTo(d.name());
    assertThat(copy.valueType()).isEqualTo(d.valueType());
    assertThat(copy.valueTypeName()).isEqualTo("text");
    assertThat(copy.nbKeyPrefix()).isEqualTo(d.nbKeyPrefix());
    assertThat(copy.keyLabel()).isEqualTo(d.keyLabel());
    assertThat(copy.equivalence()).isEqualTo(d.equivalence());
    assertThat(copy.withMetadata()).isTrue();
    assertThat(copy.metadataType()).isEqualTo(Meta.class);
    assertThat(copy.metadataIndexes()).isEqualTo(d.metadataIndexes());
    assertThat(copy.validate()).isEqualTo(d.validate());
    assertThat(copy.create()).isEqualTo(d.create());
    assertThat(copy.update()).isEqualTo(d.update());
    assertThat(copy.delete()).isEqualTo(d.delete());
    assertThat(copy.updateWithRecreate()).isEqualTo(d.updateWithRecreate());
    assertThat(copy.retrieve()).isEqualTo(d.retrieve());
    assertThat(copy.isRetriableFailure()).isEqualTo(d.isRetriableFailure());
    assertThat(copy.derivedValues()).isEqualTo(d.derivedValues());
    assertThat(copy.dependencies()).isEqualTo(d.dependencies());
    assertThat(copy.retrieveDependencies()).isEqualTo(d.retrieveDependencies());
    assertThat(copy.operationTimeout()).contains(Duration.ofSeconds(3));
    assertThat(copy.maxConcurrency()).isEqualTo(4);
    assertThat(copy.derivedOnly()).isFalse();
    assertThat(copy.selects("config/full/a")).isTrue();
  }

  @Test
  @DisplayName(
      "a variant wraps a callback and changes a setting; the original is unchanged; a default key"
          + " selector follows a new prefix, an explicit one stays")
  void variant() {
    KVDescriptor<String, Meta> d = full();
    KVDescriptor.Creator<String, Meta> inner = d.create().orElseThrow();
    KVDescriptor<String, Meta> logged =
        d.toBuilder()
            .nbKeyPrefix("config/other/")
            .create(
                (key, value) -> {
                  calls.add("before " + key);
                  return inner.create(key, value);
                })
            .build();
    assertThat(d.nbKeyPrefix()).isEqualTo("config/full/");
    assertThat(logged.selects("config/other/a")).isTrue();
    assertThat(logged.selects("config/full/a")).isFalse();

    KVDescriptor<String, Void> explicit =
        KVDescriptor.builder("explicit", String.class)
            .keySelector(KeySelector.prefix("sel/"))
            .create((key, value) -> null)
            .delete((key, value, meta) -> {})
            .build();
    assertThat(explicit.toBuilder().nbKeyPrefix("config/e/").build().selects("sel/a")).isTrue();

    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build()) {
      kvs.registerDescriptors(
          logged.toBuilder().dependencies(null).derivedValues(null).retrieve(null).build());
      kvs.startNBTransaction().setValue("config/other/a", "v").commit();
    }
    assertThat(calls).containsExactly("before config/other/a", "create config/other/a");
  }
}
