package io.kvscheduler.bench;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import java.util.Map;

/**
 * One NB transaction of the given values, timed, as the kernel workloads (W8, W11, W12) commit
 * theirs: what it took and what its record says.
 *
 * @param seconds the commit's wall time
 * @param ops executed operations that reached a descriptor (no NOOP, no property)
 * @param failed executed operations that did not end CONFIGURED or REMOVED
 */
record TimedCommit(double seconds, long ops, long failed) {

  /** Commits {@code values} in one transaction; a failed transaction is measured all the same. */
  static TimedCommit of(KVScheduler kvs, Map<String, Object> values) {
    Txn txn = kvs.startNBTransaction();
    values.forEach(txn::setValue);
    long t0 = System.nanoTime();
    long seq;
    try {
      seq = txn.commit(TxnOptions.defaults());
    } catch (TransactionException e) {
      seq = e.seqNum();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    RecordedTxn rec = kvs.recordedTransaction(seq).orElseThrow();
    long ops =
        rec.executed().stream()
            .filter(op -> !op.is(RecordedTxnOp.Flag.NOOP) && !op.is(RecordedTxnOp.Flag.PROPERTY))
            .count();
    long failed =
        rec.executed().stream()
            .map(RecordedTxnOp::newState)
            .filter(s -> s != ValueState.CONFIGURED && s != ValueState.REMOVED)
            .count();
    return new TimedCommit(seconds, ops, failed);
  }
}
