package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Plan;
import io.kvscheduler.api.PlannedOperation;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.BatchJournal;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.Readiness;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;
import io.kvscheduler.internal.engine.refresh.Refresher;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Works out what a transaction's commit would do without doing it ({@code Txn.plan}), on the engine
 * thread between transactions, in the steps of {@link TxnProcessor} up to the execution:
 *
 * <ol>
 *   <li>preparation, as for a commit ({@link TxnPreparer#preparePlan}): a resync reads the
 *       southbound (Retrieve) into the graph, leaving the descriptors' metadata maps alone; its
 *       batch is closed as the commit closes it, so the walk sees the graph the commit's walk
 *       would;
 *   <li>ordering, as for a commit;
 *   <li>a planning pass of the walk ({@link TxnExecutor#plan}): values are validated, every
 *       southbound call is assumed to succeed and none is made;
 *   <li>the pass's operations compressed as the commit's record compresses them, and each one's
 *       predicted state read from the graph with its details (what a PENDING value waits for);
 *   <li>the graph rolled back through both batches: the walk's and the refresh's.
 * </ol>
 *
 * Nothing else is written: no history, no revision, no sequence number, no published status.
 */
final class TxnPlanner {
  private final Graph graph;
  private final Refresher refresher;
  private final TxnPreparer preparer;
  private final TxnExecutor executor;
  private final SchedulerConfig config;

  TxnPlanner(
      SchedulerConfig config,
      Graph graph,
      Refresher refresher,
      TxnPreparer preparer,
      TxnExecutor executor) {
    this.config = config;
    this.graph = graph;
    this.refresher = refresher;
    this.preparer = preparer;
    this.executor = executor;
  }

  /**
   * The plan of committing {@code values} with {@code options}, as transaction {@code seq} (the
   * number the next transaction would get). Engine thread, between transactions.
   */
  Plan plan(long seq, List<ValueToApply> values, TxnOptions options) {
    Transaction txn = new Transaction(seq, config.clock());
    BatchJournal refreshed = null;
    refresher.writeMetadataMaps(false);
    try {
      preparer.preparePlan(txn, values, options);
      refreshed = graph.endBatch(); // as the commit's: the walk starts from a closed refresh
      if ((options.resync() == ResyncType.FULL || options.resync() == ResyncType.DOWNSTREAM)
          && !refresher.failures().isEmpty()) {
        // what a Retrieve could not read is unknown: a plan over it would claim no drift there
        throw new TransactionException(seq, List.of(), refresher.failures());
      }
      if (txn.skip) {
        return Plan.empty();
      }
      List<ValueToApply> sorted = new ArrayList<>(txn.request.values());
      ValueToApply.sortByKey(sorted);
      executor.plan(txn, executor.order(sorted));
      List<OpRecord> ops = CreateUpdateSteps.compress(txn.ops);
      List<PlannedOperation> out = new ArrayList<>(ops.size());
      for (OpRecord op : ops) {
        out.add(planned(op));
      }
      return new Plan(out);
    } finally {
      graph.rollbackThrough(refreshed);
      refresher.writeMetadataMaps(true);
    }
  }

  /** {@code op} as a planned operation, with the details of its key's state after the walk. */
  private PlannedOperation planned(OpRecord op) {
    List<String> details = List.of();
    if (op.newState == ValueState.PENDING || op.newState == ValueState.INVALID) {
      Node n = graph.get(op.key);
      if (n != null && n.state() == op.newState) {
        details = Readiness.details(graph, n);
      }
    }
    return new PlannedOperation(
        op.op,
        op.key,
        Optional.ofNullable(op.prevValue),
        Optional.ofNullable(op.newValue),
        op.prevState,
        op.newState,
        OpRecord.msg(op.newErr),
        details,
        op.freeze().flags());
  }
}
