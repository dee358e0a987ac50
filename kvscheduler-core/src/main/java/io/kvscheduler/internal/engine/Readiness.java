package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.ValueState;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Readiness of values and the details shown in their status.
 *
 * <p>A dependency label is satisfied when one of its targets is available and not REMOVED. A value
 * is ready when all its labels are satisfied. Cycles: an unavailable target still satisfies a label
 * when it is itself ready assuming the values on the current path exist, i.e. a strongly connected
 * group of values is ready as a whole once all its external dependencies are available. Implemented
 * as a depth-first search returning, for a ready node, how far back on the current path its
 * dependencies reach (-1 = not ready).
 *
 * <p>The search only enters values that can close a cycle through the value asked about: those from
 * which it can be reached along dependencies through unavailable values ({@link #cycleCandidates}).
 * Any other unavailable target cannot help, whatever it depends on. Without this bound, taking down
 * a long PENDING chain searched each link's chain to its end again (quadratic in its length; {@code
 * DeepChainTest} takes down a chain of 100,000 links).
 */
final class Readiness {
  private Readiness() {}

  /**
   * True when every dependency label of {@code n} has an available target (SB values are always
   * ready); unavailable targets resolved through cycles.
   */
  static boolean isReady(Graph g, Node n, boolean fromSB) {
    if (fromSB || n.state == ValueState.OBTAINED) {
      return true;
    }
    if (n.deps().isEmpty()) {
      return true;
    }
    // fast paths: every label has an available target other than the value itself (ready), or
    // some label has no target at all (not ready: no cycle can help a missing key)
    boolean all = true;
    List<Dependency> deps = n.deps();
    for (int i = 0; i < deps.size(); i++) {
      Dependency d = deps.get(i);
      if (!d.isAnyOf()) {
        // one target: looked up once, no predicate (the common case)
        Node t = g.get(d.key());
        if (t == null || t.value == null) {
          return false;
        }
        if (t == n || !t.isAvailable()) {
          if (t.state == ValueState.REMOVED && t != n) {
            return false;
          }
          all = false;
        }
        continue;
      }
      if (!g.anyTarget(d, t -> t != n && t.isAvailable())) {
        if (!g.anyTarget(d, t -> t.state != ValueState.REMOVED || t == n)) {
          return false;
        }
        all = false;
      }
    }
    return all || readyThroughCycles(g, n);
  }

  /** True when {@code n} is ready, its unavailable dependencies resolved through cycles. */
  static boolean readyThroughCycles(Graph g, Node n) {
    return readyDepth(g, n, 0, new HashMap<>(), cycleCandidates(g, n)) >= 0;
  }

  /**
   * {@code n} and every value that reaches it along dependencies through values that have a value,
   * are not REMOVED and are not available: the only values a cycle through {@code n} can pass
   * (available targets satisfy a label without the search, absent and REMOVED ones never do). Found
   * by a breadth-first walk over the reverse dependency index, so no deep recursion.
   */
  static Set<String> cycleCandidates(Graph g, Node n) {
    Set<String> found = new HashSet<>();
    found.add(n.key);
    ArrayDeque<String> work = new ArrayDeque<>();
    work.add(n.key);
    while (!work.isEmpty()) {
      for (String dk : g.dependentsOf(work.poll())) {
        Node d = g.get(dk);
        if (d != null
            && d.value != null
            && d.state != ValueState.REMOVED
            && !d.isAvailable()
            && found.add(dk)) {
          work.add(dk);
        }
      }
    }
    return found;
  }

  private static int readyDepth(
      Graph g, Node n, int depth, HashMap<String, Integer> onPath, Set<String> candidates) {
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
                  || (t.state == ValueState.REMOVED && !onPath.containsKey(t.key))
                  || !candidates.contains(t.key)) {
                return false;
              }
              int r = readyDepth(g, t, depth + 1, onPath, candidates);
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
