package io.kvscheduler.testkit;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Builds a descriptor whose Create/Update/Delete/Retrieve operate on a {@link MockSouthbound}.
 * Everything else (dependencies, derived values, comparator, validation, re-creation rule) is given
 * here as on {@link KVDescriptor.Builder}.
 *
 * <p>With metadata, Create of a base value returns an {@code Integer} starting at {@link
 * #firstFreeIndex} and growing by one per successful base Create; Update keeps the old metadata;
 * derived values get none. A key counts as a base key when it is selected by {@link #baseKeys}
 * (default: keys without a further {@code /} after the NB key prefix).
 *
 * <p>{@link #maxConcurrency} and {@link #latency} make the descriptor's calls concurrent and slow;
 * the southbound checks them ({@link MockSouthbound}).
 */
public final class MockDescriptorBuilder<V> {
  private final MockSouthbound sb;
  private final String name;
  private final Class<V> type;
  private String nbKeyPrefix = "";
  private KeySelector keySelector;
  private KeySelector baseKeys;
  private boolean withMetadata;
  private boolean withUpdate = true;
  private boolean withRetrieve = true;
  private boolean derivedOnly;
  private int firstFreeIndex;
  private KVDescriptor.KeyLabel keyLabel;
  private KVDescriptor.Equivalence<V> comparator;
  private KVDescriptor.Validator<V> validate;
  private KVDescriptor.DerivedValues<V> derived;
  private KVDescriptor.Dependencies<V> deps;
  private KVDescriptor.RecreateDecider<V, Object> recreate;
  private KVDescriptor.RetriableFailure retriable;
  private final List<String> retrieveDeps = new ArrayList<>();
  private int maxConcurrency = 1;
  private Duration latency;

  MockDescriptorBuilder(MockSouthbound sb, String name, Class<V> type) {
    this.sb = sb;
    this.name = name;
    this.type = type;
  }

  public MockDescriptorBuilder<V> nbKeyPrefix(String p) {
    this.nbKeyPrefix = p;
    return this;
  }

  public MockDescriptorBuilder<V> keySelector(KeySelector s) {
    this.keySelector = s;
    return this;
  }

  /** Which keys are base values (they get metadata and are returned by Retrieve). */
  public MockDescriptorBuilder<V> baseKeys(KeySelector s) {
    this.baseKeys = s;
    return this;
  }

  /** Integer metadata; the key label becomes the key without the NB key prefix. */
  public MockDescriptorBuilder<V> withMetadata() {
    this.withMetadata = true;
    return this;
  }

  /** First metadata index handed out by Create (default 0). */
  public MockDescriptorBuilder<V> firstFreeIndex(int i) {
    this.firstFreeIndex = i;
    return this;
  }

  /** Without Update every change is a re-creation. */
  public MockDescriptorBuilder<V> withoutUpdate() {
    this.withUpdate = false;
    return this;
  }

  /** The descriptor describes only derived values: the northbound may not set its keys. */
  public MockDescriptorBuilder<V> derivedOnly() {
    this.derivedOnly = true;
    return this;
  }

  /** Without Retrieve the southbound is never refreshed. */
  public MockDescriptorBuilder<V> withoutRetrieve() {
    this.withRetrieve = false;
    return this;
  }

  public MockDescriptorBuilder<V> keyLabel(KVDescriptor.KeyLabel l) {
    this.keyLabel = l;
    return this;
  }

  public MockDescriptorBuilder<V> equivalence(KVDescriptor.Equivalence<V> c) {
    this.comparator = c;
    return this;
  }

  public MockDescriptorBuilder<V> validate(KVDescriptor.Validator<V> v) {
    this.validate = v;
    return this;
  }

  public MockDescriptorBuilder<V> derivedValues(KVDescriptor.DerivedValues<V> d) {
    this.derived = d;
    return this;
  }

  public MockDescriptorBuilder<V> dependencies(KVDescriptor.Dependencies<V> d) {
    this.deps = d;
    return this;
  }

  public MockDescriptorBuilder<V> updateWithRecreate(KVDescriptor.RecreateDecider<V, Object> r) {
    this.recreate = r;
    return this;
  }

  public MockDescriptorBuilder<V> isRetriableFailure(KVDescriptor.RetriableFailure r) {
    this.retriable = r;
    return this;
  }

  public MockDescriptorBuilder<V> retrieveDependencies(String... names) {
    retrieveDeps.addAll(List.of(names));
    return this;
  }

  /**
   * How many calls of the descriptor the scheduler may run at the same time ({@link
   * KVDescriptor.Builder#maxConcurrency}); the southbound records more as an inconsistency.
   */
  public MockDescriptorBuilder<V> maxConcurrency(int limit) {
    this.maxConcurrency = limit;
    return this;
  }

  /** Every call of this descriptor takes {@code latency} (instead of the southbound's). */
  public MockDescriptorBuilder<V> latency(Duration latency) {
    Objects.requireNonNull(latency, "latency");
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must not be negative, got " + latency);
    }
    this.latency = latency;
    return this;
  }

  /** Builds the descriptor. */
  public KVDescriptor<V, Object> build() {
    KeySelector selector = keySelector != null ? keySelector : KeySelector.prefix(nbKeyPrefix);
    String prefix = nbKeyPrefix;
    KeySelector base =
        baseKeys != null
            ? baseKeys
            : key ->
                prefix.isEmpty()
                    || (key.startsWith(prefix) && key.indexOf('/', prefix.length()) < 0);
    AtomicInteger next = new AtomicInteger(firstFreeIndex);
    boolean meta = withMetadata;
    KVDescriptor.Builder<V, Object> b =
        meta
            ? KVDescriptor.builder(name, type).withMetadata(Object.class)
            : withoutMetadata(KVDescriptor.builder(name, type));
    b.nbKeyPrefix(prefix)
        .keySelector(selector)
        .maxConcurrency(maxConcurrency)
        .retrieveDependencies(retrieveDeps.toArray(String[]::new));
    sb.register(name, selector, maxConcurrency, latency);
    KVDescriptor.Dependencies<V> given = deps;
    // asked again only when the southbound checks dependencies: tests count the callback's calls
    KVDescriptor.Dependencies<V> depsOf =
        (key, value) ->
            given != null && sb.checksDependencies() ? given.dependencies(key, value) : List.of();
    if (derivedOnly) {
      b.derivedOnly();
    }
    if (keyLabel != null) {
      b.keyLabel(keyLabel);
    } else if (meta && !prefix.isEmpty()) {
      b.keyLabel(key -> key.startsWith(prefix) ? key.substring(prefix.length()) : key);
    }
    b.create(
        (key, value) -> {
          boolean isBase = base.test(key);
          // handed out only when the call succeeds, under the southbound's lock
          Supplier<Object> m = meta && isBase ? next::getAndIncrement : () -> null;
          return sb.create(name, key, value, m, !isBase, depsOf.dependencies(key, value));
        });
    b.delete((key, value, metadata) -> sb.delete(name, key, value));
    if (withUpdate) {
      b.update(
          (key, oldValue, newValue, metadata) -> {
            sb.update(
                name,
                key,
                oldValue,
                newValue,
                metadata,
                !base.test(key),
                depsOf.dependencies(key, newValue));
            return metadata;
          });
    }
    if (withRetrieve) {
      b.retrieve(
          correlate -> {
            List<KVWithMetadata<Object, Object>> corr = new ArrayList<>();
            for (KVWithMetadata<V, Object> c : correlate) {
              corr.add(new KVWithMetadata<>(c.key(), c.value(), c.metadata(), c.origin()));
            }
            List<KVWithMetadata<V, Object>> out = new ArrayList<>();
            for (MockSouthbound.Entry e : sb.retrieve(name, selector, corr)) {
              if (type.isInstance(e.value())) {
                out.add(
                    new KVWithMetadata<>(e.key(), type.cast(e.value()), e.metadata(), e.origin()));
              }
            }
            return out;
          });
    }
    if (comparator != null) {
      b.equivalence(comparator);
    }
    if (validate != null) {
      b.validate(validate);
    }
    if (derived != null) {
      KVDescriptor.DerivedValues<V> d = derived;
      b.derivedValues(
          (key, value) -> {
            List<KeyValuePair> out = d.derive(key, value);
            List<String> keys = new ArrayList<>(out.size());
            if (out != null) {
              for (KeyValuePair kv : out) {
                if (kv != null) {
                  keys.add(kv.key());
                }
              }
            }
            sb.noteDerived(key, keys);
            return out;
          });
    }
    if (deps != null) {
      b.dependencies(deps);
    }
    if (recreate != null) {
      b.updateWithRecreate(recreate);
    }
    if (retriable != null) {
      b.isRetriableFailure(retriable);
    }
    return b.build();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <V> KVDescriptor.Builder<V, Object> withoutMetadata(
      KVDescriptor.Builder<V, Void> b) {
    return (KVDescriptor.Builder) b;
  }
}
