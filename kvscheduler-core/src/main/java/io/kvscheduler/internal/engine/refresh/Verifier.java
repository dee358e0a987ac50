package io.kvscheduler.internal.engine.refresh;

import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.VerificationException;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Verification mode: after a transaction, the base values it touched are read back through Retrieve
 * (descriptors without Retrieve are skipped) and compared with what the scheduler believes: a
 * CONFIGURED value must be in the southbound with an equivalent value; a value that was deleted or
 * is PENDING must be absent. Every disagreement becomes a key error. Values in other states
 * (failed, invalid, ...) already carry their own error and are not checked.
 */
public final class Verifier {
  private Verifier() {}

  public static List<KeyError> verify(
      Graph graph, Registry registry, Refresher refresher, List<OpRecord> executed) {
    Map<String, TxnOperation> lastOp = new LinkedHashMap<>();
    for (OpRecord op : executed) {
      lastOp.put(op.baseKey, op.op);
    }
    Map<DescriptorHandle, TreeMap<String, TxnOperation>> byDescriptor = new LinkedHashMap<>();
    for (Map.Entry<String, TxnOperation> e : lastOp.entrySet()) {
      DescriptorHandle h = registry.forKey(e.getKey());
      if (h != null && h.canRetrieve()) {
        byDescriptor.computeIfAbsent(h, k -> new TreeMap<>()).put(e.getKey(), e.getValue());
      }
    }
    List<KeyError> errors = new ArrayList<>();
    for (DescriptorHandle h : registry.ordered()) {
      TreeMap<String, TxnOperation> keys = byDescriptor.get(h);
      if (keys == null) {
        continue;
      }
      List<KVWithMetadata<Object, Object>> found;
      try {
        found = refresher.retrieveForDump(h);
      } catch (IllegalStateException e) {
        for (Map.Entry<String, TxnOperation> k : keys.entrySet()) {
          errors.add(error(k.getKey(), k.getValue(), "verification failed: " + OpRecord.msg(e)));
        }
        continue;
      }
      Map<String, Object> sb = new HashMap<>();
      for (KVWithMetadata<Object, Object> kv : found) {
        sb.put(kv.key(), kv.value());
      }
      for (Map.Entry<String, TxnOperation> k : keys.entrySet()) {
        String key = k.getKey();
        Node n = graph.get(key);
        Object actual = sb.get(key);
        if (n != null && n.value() != null && n.state() == ValueState.CONFIGURED) {
          if (actual == null) {
            errors.add(
                error(
                    key,
                    k.getValue(),
                    "verification failed: the southbound does not hold the applied value"));
          } else if (!h.equivalent(key, n.value(), actual)) {
            errors.add(
                error(
                    key,
                    k.getValue(),
                    "verification failed: the southbound holds "
                        + OpRecord.text(actual)
                        + " instead of the applied "
                        + OpRecord.text(n.value())));
          }
        } else if ((n == null
                || n.value() == null
                || n.state() == ValueState.PENDING
                || n.state() == ValueState.REMOVED)
            && actual != null) {
          // PENDING: the value waits for its dependencies, so nothing of it should be there
          errors.add(
              error(
                  key,
                  k.getValue(),
                  n != null && n.state() == ValueState.PENDING
                      ? "verification failed: the southbound holds "
                          + OpRecord.text(actual)
                          + " although the value is PENDING (not applied: waiting for dependencies)"
                      : "verification failed: the southbound still holds removed value "
                          + OpRecord.text(actual)));
        }
      }
    }
    return errors;
  }

  private static KeyError error(String key, TxnOperation op, String msg) {
    return new KeyError(key, op, msg, new VerificationException(msg), KeyError.Kind.VERIFICATION);
  }
}
