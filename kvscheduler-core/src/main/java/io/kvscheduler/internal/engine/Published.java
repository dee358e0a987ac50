package io.kvscheduler.internal.engine;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.internal.graph.Graph;
import io.kvscheduler.internal.graph.Node;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.pcollections.TreePMap;

/**
 * The read side: an immutable sorted map key → {@link Rev} (what readers see of the key)
 * replaced after every transaction.
 * Only touched keys are rebuilt (O(touched × log n)); readers take the current map and see a
 * consistent state without locks.
 */
final class Published {
  private volatile TreePMap<String, Rev> views = TreePMap.empty();
  /** Keys whose published state is PENDING (engine thread only). */
  private java.util.HashSet<String> pending = new java.util.HashSet<>();

  /** Keys whose published state is PENDING (engine thread only; read only). */
  Collection<String> pendingKeys() {
    return pending;
  }

  TreePMap<String, Rev> current() {
    return views;
  }

  /**
   * Re-publishes the touched keys (those whose node changed, was created or removed; a key may
   * be listed more than once).
   */
  void update(Touched touched, Graph g) {
    List<String> keys = touched.keys();
    TreePMap<String, Rev> v = views;
    if (keys.size() > 1024 && keys.size() > v.size() / 4) {
      views = rebuild(v, touched, g);
      return;
    }
    for (String key : keys) {
      Node n = g.get(key);
      if (n == null || n.value == null) {
        v = v.minus(key);
        pending.remove(key);
      } else {
        Rev view = viewOf(g, n);
        v = v.plus(key, view);
        if (view.state() == ValueState.PENDING) {
          pending.add(key);
        } else {
          pending.remove(key);
        }
      }
    }
    views = v;
  }

  /** Sort order of the touched entries in a rebuild: a node or, for a key without one, the key. */
  private static String keyOf(Object o) {
    return o instanceof Node n ? n.key : (String) o;
  }

  /**
   * A large change: the touched keys, sorted, merged with the previous snapshot (views of
   * untouched keys are reused) into a new map built in one linear pass. Needs no ordered view
   * of the graph, and no lookup for a touched node that is still in the graph.
   */
  private TreePMap<String, Rev> rebuild(TreePMap<String, Rev> old, Touched t, Graph g) {
    List<String> keys = t.keys();
    Object[] touched = new Object[keys.size()];
    for (int i = 0; i < touched.length; i++) {
      Node n = t.node(i);
      touched[i] = n != null ? n : keys.get(i);
    }
    java.util.Arrays.sort(touched, (a, b) -> keyOf(a).compareTo(keyOf(b)));
    Merge m = new Merge(old, g, touched.length);
    for (Object o : touched) {
      m.add(o);
    }
    m.finish();
    pending = m.nowPending;
    return TreePMap.fromSortedMap(new io.kvscheduler.internal.graph.SortedEntries<>(m.entries));
  }

  /**
   * The merge of a rebuild: the previous snapshot's views of untouched keys and new views of the
   * touched keys (given in key order, possibly repeated), in key order. One touched key per call,
   * so the per-key step is a method the JIT compiles early.
   */
  private static final class Merge {
    final java.util.HashSet<String> nowPending = new java.util.HashSet<>();
    final List<Map.Entry<String, Rev>> entries;
    private final java.util.Iterator<Map.Entry<String, Rev>> prev;
    private final Graph g;
    private Map.Entry<String, Rev> p;
    private String last;

    Merge(TreePMap<String, Rev> old, Graph g, int touched) {
      this.entries = new ArrayList<>(old.size() + touched);
      this.prev = old.entrySet().iterator();
      this.g = g;
      this.p = prev.hasNext() ? prev.next() : null;
    }

    /** A touched node, or the key of one that has none. */
    void add(Object o) {
      String key = keyOf(o);
      if (key.equals(last)) {
        return; // listed twice
      }
      last = key;
      int c;
      while (p != null && (c = p.getKey().compareTo(key)) <= 0) {
        if (c < 0) {
          keep(p); // untouched: kept as it was
        }
        p = prev.hasNext() ? prev.next() : null;
      }
      Node n = o instanceof Node listed && listed.inGraph() ? listed : g.get(key);
      if (n == null || n.value == null) {
        return;
      }
      Rev view = viewOf(g, n);
      if (view.state() == ValueState.PENDING) {
        nowPending.add(key);
      }
      entries.add(view);
    }

    /** Keeps the untouched views after the last touched key. */
    void finish() {
      while (p != null) {
        keep(p);
        p = prev.hasNext() ? prev.next() : null;
      }
    }

    private void keep(Map.Entry<String, Rev> e) {
      entries.add(e);
      if (e.getValue().state() == ValueState.PENDING) {
        nowPending.add(e.getKey());
      }
    }
  }

  /** What readers see of {@code n}: its newest revision when that shows it exactly. */
  static Rev viewOf(Graph g, Node n) {
    return Rev.published(n, Readiness.details(g, n));
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
    TreePMap<String, Rev> v = views;
    Rev view = v.get(key);
    if (view == null) {
      return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
    }
    List<ValueStatus> derived = new ArrayList<>();
    for (String dk : view.derivedKeys()) {
      Rev dv = v.get(dk);
      if (dv != null) {
        derived.add(dv.status());
      }
    }
    return new BaseValueStatus(view.status(), derived);
  }
}
