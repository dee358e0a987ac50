package io.kvscheduler.agent.internal;

import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each NB source's values and turns deliveries into scheduler transactions (with the
 * default retry). A resync of one source replaces that source's values; the transaction holds
 * the desired values of all sources. Deliveries are queued in the order they arrive (one lock
 * around store update and enqueue).
 *
 * <p>A key given by several sources takes the value delivered last. When that source removes it,
 * the value of the source that delivered it most recently before applies again (the key is not
 * deleted while a source still gives it). A resync that leaves a source's value of a key as it
 * was is no new delivery of that key. {@link #desired()} is what is applied.
 */
public final class Orchestrator implements Northbound {
  private static final Logger LOG = LoggerFactory.getLogger(Orchestrator.class);

  /** One source's value of a key, and when it was delivered (a counter: later is larger). */
  private record Given(Object value, long delivered) {}

  private final KVScheduler kvs;
  private final Map<String, Map<String, Given>> bySource = new HashMap<>();
  private long deliveries;

  public Orchestrator(KVScheduler kvs) {
    this.kvs = kvs;
  }

  @Override
  public synchronized CompletableFuture<Long> resync(String source, Map<String, Object> values) {
    Map<String, Given> before = bySource.getOrDefault(source, Map.of());
    Map<String, Given> mine = new HashMap<>();
    values.forEach((key, value) -> {
      if (value == null) {
        return;
      }
      Given old = before.get(key);
      mine.put(key, old != null && Objects.equals(old.value(), value)
          ? old : new Given(value, ++deliveries));
    });
    bySource.put(source, mine);
    mine.keySet().forEach(key -> warnIfShared(key, source));
    Txn txn = kvs.startNBTransaction();
    desiredLocked().forEach(txn::setValue);
    return txn.commitAsync(TxnOptions.defaults()
        .withDescription("resync from " + source)
        .withResync(ResyncType.FULL, true)
        .withRetryDefault());
  }

  @Override
  public synchronized CompletableFuture<Long> change(String source, Map<String, Object> changes) {
    Map<String, Given> mine = bySource.computeIfAbsent(source, s -> new HashMap<>());
    Txn txn = kvs.startNBTransaction();
    changes.forEach((key, value) -> {
      if (value == null) {
        mine.remove(key);
      } else {
        mine.put(key, new Given(value, ++deliveries));
        warnIfShared(key, source);
      }
      txn.setValue(key, effective(key)); // null when no source gives the key any more
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
    for (Map<String, Given> values : bySource.values()) {
      for (String key : values.keySet()) {
        all.computeIfAbsent(key, this::effective);
      }
    }
    return all;
  }

  /** The value of {@code key} delivered last among the sources that give it, or null. */
  private Object effective(String key) {
    Given best = null;
    for (Map<String, Given> values : bySource.values()) {
      Given g = values.get(key);
      if (g != null && (best == null || g.delivered() > best.delivered())) {
        best = g;
      }
    }
    return best == null ? null : best.value();
  }

  private void warnIfShared(String key, String source) {
    for (Map.Entry<String, Map<String, Given>> e : bySource.entrySet()) {
      if (!e.getKey().equals(source) && e.getValue().containsKey(key)) {
        LOG.warn("{} is given by the {} and the {} northbound; the value delivered last applies",
            key, e.getKey(), source);
        return;
      }
    }
  }
}
