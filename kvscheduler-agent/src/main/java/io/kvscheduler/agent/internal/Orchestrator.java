package io.kvscheduler.agent.internal;

import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * Keeps each NB source's values and turns deliveries into scheduler transactions (with the
 * default retry). A resync of one source replaces that source's values; the transaction holds
 * the union of all sources. Deliveries are queued in the order they arrive (one lock around
 * store update and enqueue).
 */
public final class Orchestrator implements Northbound {
  private final KVScheduler kvs;
  private final Map<String, Map<String, Object>> bySource = new HashMap<>();

  public Orchestrator(KVScheduler kvs) {
    this.kvs = kvs;
  }

  @Override
  public synchronized CompletableFuture<Long> resync(String source, Map<String, Object> values) {
    bySource.put(source, new HashMap<>(values));
    Txn txn = kvs.startNBTransaction();
    desiredLocked().forEach(txn::setValue);
    return txn.commitAsync(TxnOptions.defaults()
        .withDescription("resync from " + source)
        .withResync(ResyncType.FULL, true)
        .withRetryDefault());
  }

  @Override
  public synchronized CompletableFuture<Long> change(String source, Map<String, Object> changes) {
    Map<String, Object> mine = bySource.computeIfAbsent(source, s -> new HashMap<>());
    Txn txn = kvs.startNBTransaction();
    changes.forEach((key, value) -> {
      if (value == null) {
        mine.remove(key);
      } else {
        mine.put(key, value);
      }
      txn.setValue(key, value);
    });
    return txn.commitAsync(TxnOptions.defaults()
        .withDescription("change from " + source)
        .withRetryDefault());
  }

  @Override
  public synchronized Map<String, Object> desired() {
    return desiredLocked();
  }

  private Map<String, Object> desiredLocked() {
    Map<String, Object> all = new TreeMap<>();
    bySource.values().forEach(all::putAll);
    return all;
  }
}
