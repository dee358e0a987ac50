package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.graph.Node;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Compression of the recorded operations of one transaction (semantics.md §6.6). */
final class Compression {
  private Compression() {}

  /**
   * Drops intermediate pending operations: a CREATE that ended PENDING whose nearest later
   * operation on the same key is a CREATE (which inherits its previous value, error and state),
   * and a DELETE from PENDING whose nearest earlier operation on the same key is a DELETE (which
   * inherits its new value, error and state). Linear: neighbours are found through per-key links,
   * kept in the nodes when {@code nodePerKey} (no node left the graph while the operations were
   * decided, so each key had one node), else in a hash map. Node scratch space is claimed with a
   * fresh token per pass, so it never needs clearing.
   */
  static List<OpRecord> compress(List<OpRecord> ops, boolean nodePerKey) {
    int n = ops.size();
    boolean pendingCreates = false;
    boolean pendingDeletes = false;
    for (OpRecord op : ops) {
      pendingCreates |= op.op == TxnOperation.CREATE && op.newState == ValueState.PENDING;
      pendingDeletes |= op.op == TxnOperation.DELETE && op.prevState == ValueState.PENDING;
    }
    if (!pendingCreates && !pendingDeletes) {
      return new ArrayList<>(ops); // nothing to compress
    }
    if (!pendingCreates) {
      return compressDeletes(new ArrayList<>(ops), nodePerKey);
    }
    int[] next = sameKeyLinks(ops, nodePerKey, false);
    List<OpRecord> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      OpRecord op = ops.get(i);
      int j = next[i];
      if (op.op == TxnOperation.CREATE && op.newState == ValueState.PENDING && j >= 0
          && ops.get(j).op == TxnOperation.CREATE) {
        OpRecord later = ops.get(j);
        later.prevValue = op.prevValue;
        later.prevErr = op.prevErr;
        later.prevState = op.prevState;
        continue;
      }
      out.add(op);
    }
    return pendingDeletes ? compressDeletes(out, nodePerKey) : out;
  }

  /** The second step: DELETEs from PENDING merged into the nearest earlier DELETE. */
  private static List<OpRecord> compressDeletes(List<OpRecord> out, boolean nodePerKey) {
    int m = out.size();
    int[] prev = sameKeyLinks(out, nodePerKey, true);
    boolean[] dropped = new boolean[m];
    for (int i = m - 1; i >= 0; i--) {
      OpRecord op = out.get(i);
      int j = prev[i];
      if (op.op == TxnOperation.DELETE && op.prevState == ValueState.PENDING && j >= 0
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
  private static int[] sameKeyLinks(List<OpRecord> ops, boolean nodePerKey, boolean backwards) {
    int n = ops.size();
    int[] link = new int[n];
    Object token = nodePerKey ? new Object() : null;
    Map<String, Integer> seen = nodePerKey ? null : new HashMap<>(Math.max(16, n * 4 / 3 + 1));
    for (int k = 0; k < n; k++) {
      int i = backwards ? k : n - 1 - k; // visit from the side the link points away from
      OpRecord op = ops.get(i);
      if (nodePerKey) {
        Node nd = op.node;
        link[i] = nd.scratchOwner == token ? nd.scratchIndex : -1;
        nd.scratchOwner = token;
        nd.scratchIndex = i;
      } else {
        Integer j = seen.put(op.key, i);
        link[i] = j == null ? -1 : j;
      }
    }
    return link;
  }
}
