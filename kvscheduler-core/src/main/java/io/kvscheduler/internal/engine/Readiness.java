package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.graph.Graph;
import io.kvscheduler.internal.graph.Node;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * Readiness of values and the details shown in their status.
 *
 * <p>A dependency label is satisfied when one of its targets is available and not REMOVED. A value
 * is ready when all its labels are satisfied. Cycles: an unavailable target still satisfies a label
 * when it is itself ready assuming the values on the current path exist, i.e. a strongly connected
 * group of values is ready as a whole once all its external dependencies are available. Implemented
 * as a depth-first search returning, for a ready node, how far back on the current path its
 * dependencies reach (-1 = not ready).
 */
final class Readiness {
  private Readiness() {}

  static int readyDepth(Graph g, Node n, int depth, HashMap<String, Integer> onPath) {
    Integer seen = onPath.get(n.key);
    if (seen != null) {
      return seen;
    }
    int cycleDepth = depth;
    onPath.put(n.key, depth);
    try {
      for (Dependency d : n.deps()) {
        boolean[] satisfied = {false};
        int[] reach = {cycleDepth};
        // fast path: an available target off the current path satisfies the label. A target on
        // the path (the value being applied is not flagged unavailable yet) closes a cycle: it
        // must lower the reach, so it goes through the slow path.
        if (g.anyTarget(d, t -> satisfies(t) && !onPath.containsKey(t.key))) {
          continue;
        }
        g.anyTarget(
            d,
            t -> {
              // values on the path are assumed present, also one being re-created (REMOVED)
              if (t.value == null
                  || (t.state == ValueState.REMOVED && !onPath.containsKey(t.key))) {
                return false;
              }
              int r = readyDepth(g, t, depth + 1, onPath);
              if (r >= 0 && r <= depth) {
                satisfied[0] = true;
                if (r < reach[0]) {
                  reach[0] = r;
                }
              }
              return false;
            });
        if (!satisfied[0]) {
          return -1;
        }
        cycleDepth = reach[0];
      }
      return cycleDepth;
    } finally {
      onPath.remove(n.key);
    }
  }

  private static boolean satisfies(Node t) {
    return t.isAvailable();
  }

  /** Labels of the dependencies of {@code n} with no available target, in declaration order. */
  static List<String> unsatisfiedLabels(Graph g, Node n) {
    List<Dependency> deps = n.deps();
    List<String> out = null;
    for (int i = 0; i < deps.size(); i++) {
      Dependency d = deps.get(i);
      if (!g.anyTarget(d, Readiness::satisfies)) {
        if (deps.size() == 1) {
          return List.of(d.label()); // the usual single dependency: no list to grow
        }
        if (out == null) {
          out = new ArrayList<>(deps.size());
        }
        out.add(d.label());
      }
    }
    return out == null ? List.of() : out;
  }

  /** Status details: PENDING ⇒ unsatisfied labels, INVALID ⇒ invalid fields, else empty. */
  static List<String> details(Graph g, Node n) {
    if (n.state == ValueState.PENDING) {
      return unsatisfiedLabels(g, n);
    }
    if (n.state == ValueState.INVALID && n.error instanceof InvalidValueException iv) {
      return iv.invalidFields();
    }
    return List.of();
  }
}
