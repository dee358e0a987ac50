package io.kvscheduler.internal.engine.record;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Compression of the recorded operations of one transaction (catalogue entry B166,
 * docs/behaviors.md).
 */
public final class Compression {
  private Compression() {}

  /**
   * Drops intermediate pending operations: a CREATE that ended PENDING whose nearest later
   * operation on the same key is a CREATE (which inherits its previous value, error and state), and
   * a DELETE from PENDING whose nearest earlier operation on the same key is a DELETE (which
   * inherits its new value, error and state). Linear: neighbours are found through per-key links,
   * from a hash map of each key's last position.
   */
  public static List<OpRecord> compress(List<OpRecord> ops) {
    int n = ops.size();
    int kinds = 0; // loops in ranges: see Bulk
    for (int i = 0; i < n; i += Bulk.RANGE) {
      kinds |= pendingKinds(ops, i, Bulk.end(i, n));
    }
    boolean pendingCreates = (kinds & PENDING_CREATE) != 0;
    boolean pendingDeletes = (kinds & PENDING_DELETE) != 0;
    if (!pendingCreates && !pendingDeletes) {
      return new ArrayList<>(ops); // nothing to compress
    }
    if (!pendingCreates) {
      return compressDeletes(new ArrayList<>(ops));
    }
    int[] next = sameKeyLinks(ops, false);
    List<OpRecord> out = new ArrayList<>(n);
    for (int i = 0; i < n; i += Bulk.RANGE) {
      dropPendingCreates(ops, next, i, Bulk.end(i, n), out);
    }
    return pendingDeletes ? compressDeletes(out) : out;
  }

  private static final int PENDING_CREATE = 1;
  private static final int PENDING_DELETE = 2;

  /** Which of a CREATE ending PENDING and a DELETE from PENDING {@code ops[from, to)} hold. */
  private static int pendingKinds(List<OpRecord> ops, int from, int to) {
    int kinds = 0;
    for (int i = from; i < to; i++) {
      OpRecord op = ops.get(i);
      if (op.op == TxnOperation.CREATE && op.newState == ValueState.PENDING) {
        kinds |= PENDING_CREATE;
      } else if (op.op == TxnOperation.DELETE && op.prevState == ValueState.PENDING) {
        kinds |= PENDING_DELETE;
      }
    }
    return kinds;
  }

  /**
   * Of {@code ops[from, to)}, adds to {@code out} all but the CREATEs ending PENDING that a later
   * CREATE of the same key replaces (which inherits their previous value, error and state).
   */
  private static void dropPendingCreates(
      List<OpRecord> ops, int[] next, int from, int to, List<OpRecord> out) {
    for (int i = from; i < to; i++) {
      OpRecord op = ops.get(i);
      int j = next[i];
      if (op.op == TxnOperation.CREATE
          && op.newState == ValueState.PENDING
          && j >= 0
          && ops.get(j).op == TxnOperation.CREATE) {
        OpRecord later = ops.get(j);
        later.prevValue = op.prevValue;
        later.prevErr = op.prevErr;
        later.prevState = op.prevState;
        continue;
      }
      out.add(op);
    }
  }

  /** The second step: DELETEs from PENDING merged into the nearest earlier DELETE. */
  private static List<OpRecord> compressDeletes(List<OpRecord> out) {
    int m = out.size();
    int[] prev = sameKeyLinks(out, true);
    boolean[] dropped = new boolean[m];
    for (int i = m - 1; i >= 0; i--) {
      OpRecord op = out.get(i);
      int j = prev[i];
      if (op.op == TxnOperation.DELETE
          && op.prevState == ValueState.PENDING
          && j >= 0
          && out.get(j).op == TxnOperation.DELETE) {
        OpRecord earlier = out.get(j);
        earlier.newValue = op.newValue;
        earlier.newErr = op.newErr;
        earlier.newState = op.newState;
        dropped[i] = true;
      }
    }
    List<OpRecord> result = new ArrayList<>(m);
    for (int i = 0; i < m; i++) {
      if (!dropped[i]) {
        result.add(out.get(i));
      }
    }
    return result;
  }

  /**
   * For each operation, the index of the nearest operation on the same key after it ({@code
   * backwards} false) or before it ({@code backwards} true), or -1.
   */
  private static int[] sameKeyLinks(List<OpRecord> ops, boolean backwards) {
    int n = ops.size();
    int[] link = new int[n];
    Map<String, Integer> seen = new HashMap<>(Math.max(16, n * 4 / 3 + 1));
    for (int k = 0; k < n; k += Bulk.RANGE) {
      link(ops, link, k, Bulk.end(k, n), backwards, seen);
    }
    return link;
  }

  /** {@link #sameKeyLinks} of the visits {@code [from, to)} (visit k is operation i). */
  private static void link(
      List<OpRecord> ops,
      int[] link,
      int from,
      int to,
      boolean backwards,
      Map<String, Integer> seen) {
    int n = ops.size();
    for (int k = from; k < to; k++) {
      int i = backwards ? k : n - 1 - k; // visit from the side the link points away from
      OpRecord op = ops.get(i);
      Integer j = seen.put(op.key, i);
      link[i] = j == null ? -1 : j;
    }
  }
}
