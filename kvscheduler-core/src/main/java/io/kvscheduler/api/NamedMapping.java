package io.kvscheduler.api;

import java.util.Optional;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * A read-only view of a descriptor's metadata map: metadata of the descriptor's configured base
 * values, keyed by the value's label ({@code keyLabel(key)}, the key itself by default), with
 * optional secondary indexes declared on the descriptor. Safe to read from any thread; the
 * scheduler updates it as operations succeed, so a descriptor callback sees metadata of values
 * created earlier in the same transaction.
 */
public interface NamedMapping<M> {
  /** Name of the mapping (the descriptor name). */
  String name();

  /** Metadata stored under {@code label}. */
  Optional<M> lookup(String label);

  /** All labels, sorted. */
  Set<String> labels();

  /**
   * Labels whose metadata has {@code value} in secondary index {@code index}, sorted.
   *
   * @throws IllegalArgumentException if the descriptor declares no index of that name
   */
  Set<String> lookupByIndex(String index, String value);

  /** Names of the declared secondary indexes. */
  Set<String> indexNames();

  /**
   * Watches changes: the listener gets (label, new metadata or empty when removed) after each
   * change, on the thread that changed it. A listener that throws is logged and ignored.
   */
  Subscription watch(BiConsumer<String, Optional<M>> listener);
}
