package io.kvscheduler.internal.engine;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.View;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.loop.EngineLoop;
import io.kvscheduler.internal.engine.publish.KeyRevision;
import io.kvscheduler.internal.engine.publish.Published;
import java.util.ArrayList;
import java.util.List;

/**
 * Dumps of one descriptor's values: the NB view (intents) and the cached view (the scheduler's
 * picture of the southbound) read the published snapshot; the SB view calls the descriptor's
 * Retrieve on the engine thread.
 */
final class ValueDumps {
  private final Registry registry;
  private final Published published;
  private final EngineLoop loop;
  private final TxnProcessor processor;

  ValueDumps(Registry registry, Published published, EngineLoop loop, TxnProcessor processor) {
    this.registry = registry;
    this.published = published;
    this.loop = loop;
    this.processor = processor;
  }

  /**
   * The values of {@code descriptor}, registered as {@code h}; a desired value of another class
   * than the descriptor's (INVALID) is left out.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  <V, M> List<KVWithMetadata<V, M>> of(
      DescriptorHandle h, KVDescriptor<V, M> descriptor, View view) {
    List<KVWithMetadata<Object, Object>> all = new ArrayList<>(dump(h, view));
    // metadata is checked by the engine; a desired value of another class (INVALID) is left out
    all.removeIf(kv -> kv.value() != null && !descriptor.valueType().isInstance(kv.value()));
    return (List) all;
  }

  /** The values of the descriptor registered as {@code descriptorName}. */
  List<KVWithMetadata<Object, Object>> byName(String descriptorName, View view) {
    DescriptorHandle h = registry.byName(descriptorName);
    if (h == null) {
      throw new IllegalArgumentException("descriptor " + descriptorName + " is not registered");
    }
    return dump(h, view);
  }

  /** The values of the descriptor whose NB key prefix is {@code keyPrefix}. */
  List<KVWithMetadata<Object, Object>> byKeyPrefix(String keyPrefix, View view) {
    for (DescriptorHandle h : registry.ordered()) {
      if (!keyPrefix.isEmpty() && h.descriptor.nbKeyPrefix().equals(keyPrefix)) {
        return dump(h, view);
      }
    }
    throw new IllegalArgumentException(
        "no descriptor found matching the key prefix '" + keyPrefix + "'");
  }

  private List<KVWithMetadata<Object, Object>> dump(DescriptorHandle h, View view) {
    if (view == View.SB) {
      if (!h.canRetrieve()) {
        throw new IllegalArgumentException(
            "descriptor " + h.name + " does not support Retrieve operation");
      }
      return loop.onEngine(
          "a dump of the SB view (descriptor " + h.name + ")",
          () -> processor.refresher().retrieveForDump(h));
    }
    List<KVWithMetadata<Object, Object>> out = new ArrayList<>();
    for (KeyRevision v : published.current().withPrefix(h.descriptor.nbKeyPrefix())) {
      if (v.derivedFrom != null || !h.name.equals(v.descriptor)) {
        continue;
      }
      if (view == View.NB) {
        if (v.state == ValueState.OBTAINED || v.intentDelete() || v.intent() == null) {
          continue;
        }
        out.add(new KVWithMetadata<>(v.key, v.intent(), v.metadata, ValueOrigin.FROM_NB));
      } else {
        if (!v.available()) {
          continue;
        }
        out.add(
            new KVWithMetadata<>(
                v.key,
                v.value,
                v.metadata,
                v.state == ValueState.OBTAINED ? ValueOrigin.FROM_SB : ValueOrigin.FROM_NB));
      }
    }
    return out;
  }
}
