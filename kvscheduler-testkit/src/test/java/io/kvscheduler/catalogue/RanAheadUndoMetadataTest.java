package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.View;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Revert in parallel: a value whose Delete ran ahead beyond the failure is re-created by the undo,
 * which returns new metadata (a device index); the scheduler must pass that metadata, not the
 * deleted object's, to the value's later calls.
 */
class RanAheadUndoMetadataTest {
  record Held(String value, int index) {}

  final Map<String, Held> held = new ConcurrentHashMap<>();
  final List<String> violations = new CopyOnWriteArrayList<>();
  final AtomicInteger nextIndex = new AtomicInteger(100);

  KVScheduler scheduler() {
    KVScheduler kvs =
        KVScheduler.builder()
            .parallelism(8)
            .revertInParallel(true)
            .printTxnSummary(false)
            .threadName("kvs-meta")
            .build();
    kvs.registerDescriptors(
        KVDescriptor.builder("iface", String.class)
            .nbKeyPrefix("if/")
            .withMetadata(Integer.class)
            .maxConcurrency(8)
            .create(
                (key, value) -> {
                  int idx = nextIndex.getAndIncrement();
                  held.put(key, new Held(value, idx));
                  return idx;
                })
            .update(
                (key, o, n, meta) -> {
                  Held h = held.get(key);
                  if (h == null || !Objects.equals(h.index(), meta)) {
                    violations.add(
                        "UPDATE " + key + " with metadata " + meta + ", device has " + h);
                  }
                  held.put(key, new Held(n, h == null ? -1 : h.index()));
                  return meta;
                })
            .delete(
                (key, value, meta) -> {
                  if (key.equals("if/a-fail")) {
                    Thread.sleep(200);
                    throw new IllegalStateException("refused " + key);
                  }
                  Held h = held.get(key);
                  if (h == null || !Objects.equals(h.index(), meta)) {
                    violations.add(
                        "DELETE " + key + " with metadata " + meta + ", device has " + h);
                  }
                  held.remove(key);
                })
            .build());
    return kvs;
  }

  static long commit(KVScheduler kvs, boolean revert, Object... kv) {
    var txn = kvs.startNBTransaction();
    for (int i = 0; i < kv.length; i += 2) {
      txn.setValue((String) kv[i], kv[i + 1]);
    }
    try {
      return txn.commit(TxnOptions.builder().revert(revert).build());
    } catch (TransactionException e) {
      return e.seqNum();
    }
  }

  @Test
  void metadataOfAValueWhoseDeleteRanBeyondTheFailureAndWasUndone() {
    KVScheduler kvs = scheduler();
    try {
      commit(kvs, false, "if/a-fail", "z", "if/b", "x1");
      // if/a-fail sorts before if/b: the Delete of if/b runs ahead beyond the failure, is undone
      // by a Create (a new index)
      long seq = commit(kvs, true, "if/a-fail", null, "if/b", null);
      RecordedTxn rec = kvs.recordedTransaction(seq).orElseThrow();
      assertThat(rec.executed())
          .anyMatch(op -> op.key().equals("if/b") && op.is(RecordedTxnOp.Flag.RAN_AHEAD));
      assertThat(kvs.dumpValues("iface", View.CACHED))
          .filteredOn(kv -> kv.key().equals("if/b"))
          .extracting(kv -> kv.metadata())
          .containsExactly(held.get("if/b").index());
      commit(kvs, false, "if/b", "x2");
      commit(kvs, false, "if/b", null);
      assertThat(violations).isEmpty();
    } finally {
      kvs.close();
    }
  }
}
