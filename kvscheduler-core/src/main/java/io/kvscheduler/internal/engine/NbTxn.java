package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Plan;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.loop.EngineFuture;
import io.kvscheduler.internal.engine.loop.EngineLoop;
import io.kvscheduler.internal.engine.loop.Queued;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An NB transaction being built ({@code startNBTransaction()}): collects values, then queues them
 * once on the engine loop, waiting for the result, for room, or for neither.
 */
final class NbTxn implements Txn {
  private static final Logger LOG = LoggerFactory.getLogger(NbTxn.class);

  private final EngineLoop loop;
  private final Registry registry;
  private final boolean rejectUnselectedKeys;
  private final TxnProcessor processor;
  private final Map<String, Object> values = new LinkedHashMap<>();
  private final Set<String> assumedAbsent = new TreeSet<>();
  private boolean committed;

  /** {@code processor}: plans the transaction on the engine thread ({@link #plan}). */
  NbTxn(EngineLoop loop, Registry registry, boolean rejectUnselectedKeys, TxnProcessor processor) {
    this.loop = loop;
    this.registry = registry;
    this.rejectUnselectedKeys = rejectUnselectedKeys;
    this.processor = processor;
  }

  @Override
  public Txn setValue(String key, Object value) {
    if (committed) {
      throw new IllegalStateException("transaction was already committed");
    }
    Objects.requireNonNull(key, "key must not be null");
    if (key.isEmpty()) {
      throw new IllegalArgumentException("key must not be empty");
    }
    values.put(key, value);
    return this;
  }

  @Override
  public Plan plan(TxnOptions options) {
    Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
    if (committed) {
      throw new IllegalStateException("transaction was already committed");
    }
    if (loop.inCallback()) {
      throw new IllegalStateException(
          "plan() cannot run inside a descriptor callback: the engine is in the middle of the"
              + " callback's transaction");
    }
    loop.ensureOpen();
    checkOptions(options);
    checkSelected();
    List<ValueToApply> kvs = values();
    return loop.onEngine("plan", () -> processor.plan(kvs, options));
  }

  @Override
  public Txn assumeAbsent(String key) {
    if (committed) {
      throw new IllegalStateException("transaction was already committed");
    }
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key must not be empty");
    }
    assumedAbsent.add(key);
    return this;
  }

  @Override
  public long commit(TxnOptions options) {
    Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
    if (loop.inCallback()) {
      throw new IllegalStateException(
          "commit() cannot wait inside a descriptor callback: the"
              + " engine runs the callback and would wait for itself; use commitAsync()");
    }
    CompletableFuture<Long> f = new CompletableFuture<>();
    submit(options, f, true);
    return EngineLoop.await(f);
  }

  @Override
  public CompletableFuture<Long> commitAsync(TxnOptions options) {
    Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
    CompletableFuture<Long> f = new EngineFuture<>(loop);
    submit(options, f, true);
    return f;
  }

  @Override
  public CompletableFuture<Long> tryCommitAsync(TxnOptions options) {
    Objects.requireNonNull(options, "options (TxnOptions.defaults() for none)");
    CompletableFuture<Long> f = new EngineFuture<>(loop);
    submit(options, f, false);
    return f;
  }

  /** Refuses options that cannot go with this transaction's values. */
  private void checkOptions(TxnOptions o) {
    if (o.resync() == ResyncType.DOWNSTREAM && !values.isEmpty()) {
      throw new IllegalArgumentException(
          "downstream resync combined with data changes in one transaction");
    }
    if (o.revert() && o.resync() != ResyncType.NOT_RESYNC) {
      throw new IllegalArgumentException("it is not supported to combine resync with revert");
    }
  }

  /** The values to apply, in the order they were set. */
  private List<ValueToApply> values() {
    List<ValueToApply> kvs = new ArrayList<>(values.size());
    values.forEach((k, v) -> kvs.add(ValueToApply.nb(k, v)));
    return kvs;
  }

  /**
   * Warns about (or, with {@code rejectUnselectedKeys}, refuses) values of keys that no registered
   * descriptor selects: they would wait as UNIMPLEMENTED for a descriptor.
   */
  private void checkSelected() {
    List<String> unselected = new ArrayList<>();
    values.forEach(
        (k, v) -> {
          if (v != null && registry.forKey(k) == null) {
            unselected.add(k);
          }
        });
    if (unselected.isEmpty()) {
      return;
    }
    if (rejectUnselectedKeys) {
      committed = false; // nothing was queued: the caller may fix the keys
      throw new IllegalArgumentException(
          "no registered descriptor selects key"
              + (unselected.size() > 1 ? "s " : " ")
              + String.join(", ", unselected));
    }
    LOG.warn(
        "no registered descriptor selects key{} {}: UNIMPLEMENTED until one is registered",
        unselected.size() > 1 ? "s" : "",
        String.join(", ", unselected));
  }

  /**
   * Queues the transaction, to complete {@code f}. From a descriptor callback it is queued to run
   * after the current transaction, never waiting. Otherwise a full queue is waited for when {@code
   * waitForRoom}, else refused with a {@link QueueFullException}.
   */
  private void submit(TxnOptions o, CompletableFuture<Long> f, boolean waitForRoom) {
    if (committed) {
      throw new IllegalStateException("transaction was already committed");
    }
    committed = true;
    loop.ensureOpen();
    checkOptions(o);
    checkSelected();
    List<ValueToApply> kvs = values();
    Queued.Nb q = new Queued.Nb(kvs, o, f, Set.copyOf(assumedAbsent));
    if (loop.inCallback()) {
      loop.queueFromCallback(q);
    } else if (waitForRoom) {
      loop.putWaiting(q);
    } else if (loop.offer(q)) {
      loop.failIfClosed(q);
    } else {
      committed = false; // nothing was queued: the caller may try again
      throw new QueueFullException();
    }
  }
}
