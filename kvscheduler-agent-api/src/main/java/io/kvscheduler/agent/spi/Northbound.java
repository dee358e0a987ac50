package io.kvscheduler.agent.spi;

import io.kvscheduler.api.Plan;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Where northbound sources (files, etcd, REST, plugins) deliver desired configuration. Each source
 * has a label; a resync from a source replaces that source's values, and the scheduler's full
 * resync is built from the values chosen over every source ({@link #desired()}). Every delivery
 * becomes one scheduler transaction with the default retry (1 s, 3 attempts, exponential back-off),
 * as in vpp-agent.
 */
public interface Northbound {

  /**
   * Replaces the values of {@code source} with {@code values} and commits a full resync of all
   * sources' values.
   *
   * @return the transaction's sequence number, or an exception naming every failed key
   */
  CompletableFuture<Long> resync(String source, Map<String, Object> values);

  /**
   * Applies changes of {@code source} as one change transaction. A {@code null} value means the
   * source no longer gives the key: the key is deleted unless another source still gives it, whose
   * value then applies.
   */
  CompletableFuture<Long> change(String source, Map<String, Object> changes);

  /**
   * Like {@link #resync(String, Map)}, each value with the labels given with it (by key; a key
   * without labels may be left out): user-defined {@code name: value} pairs kept with the value, as
   * the generic API's {@code UpdateItem.labels}. The default ignores the labels.
   */
  default CompletableFuture<Long> resync(
      String source, Map<String, Object> values, Map<String, Map<String, String>> labels) {
    return resync(source, values);
  }

  /**
   * Like {@link #change(String, Map)}; the labels of each key changed are replaced by {@code
   * labels}'s (none when left out). The default ignores the labels.
   */
  default CompletableFuture<Long> change(
      String source, Map<String, Object> changes, Map<String, Map<String, String>> labels) {
    return change(source, changes);
  }

  /**
   * The labels given with the value {@link #desired()} lists for {@code key}, empty when none. The
   * default has none.
   */
  default Map<String, String> labels(String key) {
    return Map.of();
  }

  /**
   * What {@link #resync} of {@code source} with {@code values} would do, done nothing of: the plan
   * of the full resync it would commit ({@link io.kvscheduler.api.Txn#plan}). The source's values
   * stay as they are; nothing is journaled.
   *
   * @throws UnsupportedOperationException if this northbound cannot plan (the default)
   */
  default Plan planResync(String source, Map<String, Object> values) {
    throw new UnsupportedOperationException("this northbound cannot plan a delivery");
  }

  /**
   * What {@link #change} of {@code source} with {@code changes} would do, done nothing of: the plan
   * of the change transaction it would commit. The source's values stay as they are; nothing is
   * journaled.
   *
   * @throws UnsupportedOperationException if this northbound cannot plan (the default)
   */
  default Plan planChange(String source, Map<String, Object> changes) {
    throw new UnsupportedOperationException("this northbound cannot plan a delivery");
  }

  /**
   * The desired configuration: the value chosen for each key any source gives. A key given by
   * several sources has the value delivered last; once that source removes it, the value of the
   * source that delivered it most recently before. Listed as soon as delivered, whether or not its
   * transaction has finished or the value could be applied.
   */
  Map<String, Object> desired();
}
