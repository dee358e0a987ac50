package io.kvscheduler.internal.idxmap;

import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.internal.util.UserCode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Metadata map with secondary indexes. Written by one thread at a time (the engine thread, or the
 * thread of a parallel call that returned, while the engine thread waits); read from any thread
 * (concurrent maps; a reader may see a label's new metadata before its new index entries, never a
 * torn metadata object).
 */
public final class NamedMappingImpl<M> implements NamedMapping<M> {
  private static final Logger LOG = LoggerFactory.getLogger(NamedMappingImpl.class);

  private final String name;
  private final ConcurrentSkipListMap<String, M> byLabel = new ConcurrentSkipListMap<>();
  private final Map<String, Function<? super M, ? extends Collection<String>>> extractors;
  private final Map<String, ConcurrentHashMap<String, Set<String>>> indexes =
      new ConcurrentHashMap<>();
  private final CopyOnWriteArrayList<BiConsumer<String, Optional<M>>> watchers =
      new CopyOnWriteArrayList<>();

  public NamedMappingImpl(
      String name, Map<String, Function<? super M, ? extends Collection<String>>> extractors) {
    this.name = name;
    this.extractors = Map.copyOf(extractors);
    for (String idx : extractors.keySet()) {
      indexes.put(idx, new ConcurrentHashMap<>());
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Optional<M> lookup(String label) {
    return Optional.ofNullable(byLabel.get(label));
  }

  @Override
  public Set<String> labels() {
    return Collections.unmodifiableSet(new TreeSet<>(byLabel.keySet()));
  }

  @Override
  public Set<String> lookupByIndex(String index, String value) {
    ConcurrentHashMap<String, Set<String>> idx = indexes.get(index);
    if (idx == null) {
      throw new IllegalArgumentException(
          "metadata map "
              + name
              + " has no index '"
              + index
              + "' (indexes: "
              + new TreeSet<>(indexes.keySet())
              + ")");
    }
    Set<String> labels = idx.get(value);
    return labels == null ? Set.of() : Collections.unmodifiableSet(new TreeSet<>(labels));
  }

  @Override
  public Set<String> indexNames() {
    return new TreeSet<>(indexes.keySet());
  }

  @Override
  public Subscription watch(BiConsumer<String, Optional<M>> listener) {
    watchers.add(listener);
    return () -> watchers.remove(listener);
  }

  /** Stores (or, for null, removes) the metadata of {@code label}. Engine thread only. */
  @SuppressWarnings("unchecked")
  public void put(String label, Object metadata) {
    M old = metadata == null ? byLabel.remove(label) : byLabel.put(label, (M) metadata);
    if (old == metadata) {
      return;
    }
    if (old != null) {
      forEachIndexValue(
          label,
          old,
          false,
          (idx, v) -> {
            Set<String> s = indexes.get(idx).get(v);
            if (s != null) {
              s.remove(label);
              if (s.isEmpty()) {
                indexes.get(idx).remove(v, s);
              }
            }
          });
    }
    if (metadata != null) {
      forEachIndexValue(
          label,
          (M) metadata,
          true,
          (idx, v) ->
              indexes.get(idx).computeIfAbsent(v, k -> ConcurrentHashMap.newKeySet()).add(label));
    }
    Optional<M> now = Optional.ofNullable((M) metadata);
    for (BiConsumer<String, Optional<M>> w : watchers) {
      try {
        w.accept(label, now);
      } catch (Throwable e) { // user code (an AssertionError of a test, too)
        e = UserCode.contained(e);
        LOG.warn("metadata map {}: watcher failed for label {}", name, label, e);
      }
    }
  }

  /**
   * Calls {@code f} with each index and each value the index's extractor gives for {@code m}.
   * Extractors are user code: one that throws, or whose collection fails while it is read, adds
   * nothing to its index (logged); null values are skipped.
   */
  private void forEachIndexValue(String label, M m, boolean adding, BiConsumer<String, String> f) {
    for (Map.Entry<String, Function<? super M, ? extends Collection<String>>> e :
        extractors.entrySet()) {
      List<String> vals = new ArrayList<>();
      try {
        Collection<String> got = e.getValue().apply(m);
        if (got != null) {
          for (String v : got) {
            if (v != null) {
              vals.add(v);
            }
          }
        }
      } catch (Throwable ex) {
        ex = UserCode.contained(ex);
        LOG.warn(
            "metadata map {}: index {} extractor failed for label {}; {}",
            name,
            e.getKey(),
            label,
            adding
                ? "the label is not indexed under it"
                : "the label's entries of the old metadata stay in the index",
            ex);
        continue;
      }
      for (String v : vals) {
        f.accept(e.getKey(), v);
      }
    }
  }
}
