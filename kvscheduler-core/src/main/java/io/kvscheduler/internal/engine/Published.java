package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.internal.graph.Graph;
import io.kvscheduler.internal.graph.Node;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.pcollections.TreePMap;

/**
 * The read side: an immutable sorted map key → {@link View} replaced after every transaction.
 * Only touched keys are rebuilt (O(touched × log n)); readers take the current map and see a
 * consistent state without locks.
 */
final class Published {
  /** What readers may know of one node. */
  record View(String key, String descriptor, String derivedFrom, Object value, Object metadata,
      ValueState state, boolean available, Object intent, boolean intentDelete,
      ValueStatus status, List<String> derivedKeys) {}

  private volatile TreePMap<String, View> views = TreePMap.empty();

  TreePMap<String, View> current() {
    return views;
  }

  void update(Collection<String> keys, Graph g) {
    TreePMap<String, View> v = views;
    if (keys.size() > 1024 && keys.size() > v.size() / 4) {
      // a large change: one linear rebuild is cheaper than path-copying insertions
      java.util.TreeMap<String, View> all = new java.util.TreeMap<>(v);
      for (String key : keys) {
        Node n = g.get(key);
        if (n == null || n.value == null) {
          all.remove(key);
        } else {
          all.put(key, viewOf(g, n));
        }
      }
      views = TreePMap.fromSortedMap(all);
      return;
    }
    for (String key : keys) {
      Node n = g.get(key);
      if (n == null || n.value == null) {
        v = v.minus(key);
      } else {
        v = v.plus(key, viewOf(g, n));
      }
    }
    views = v;
  }

  static View viewOf(Graph g, Node n) {
    return new View(n.key, n.descriptor, n.derivedFrom, n.value, n.metadata, n.state,
        n.isAvailable(), n.lastUpdate == null ? n.value : n.lastUpdate.value(),
        n.lastUpdate != null && n.lastUpdate.value() == null, statusOf(g, n),
        n.derivedKeys);
  }

  static ValueStatus statusOf(Graph g, Node n) {
    return new ValueStatus(n.key, n.state, OpRecord.msg(n.error), n.lastOperation(),
        Readiness.details(g, n));
  }

  /** Status of a base value from the live graph (engine thread). */
  static BaseValueStatus baseStatus(Graph g, String key) {
    Node n = g.get(key);
    if (n == null || n.value == null) {
      return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
    }
    List<ValueStatus> derived = new ArrayList<>();
    for (String dk : n.derivedKeys) {
      Node dn = g.get(dk);
      if (dn != null && dn.value != null) {
        derived.add(statusOf(g, dn));
      }
    }
    return new BaseValueStatus(statusOf(g, n), derived);
  }

  /** Status of a key from the published map (any thread). */
  BaseValueStatus status(String key) {
    TreePMap<String, View> v = views;
    View view = v.get(key);
    if (view == null) {
      return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
    }
    List<ValueStatus> derived = new ArrayList<>();
    for (String dk : view.derivedKeys()) {
      View dv = v.get(dk);
      if (dv != null) {
        derived.add(dv.status());
      }
    }
    return new BaseValueStatus(view.status(), derived);
  }
}
