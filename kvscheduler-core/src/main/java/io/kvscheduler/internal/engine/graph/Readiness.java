package io.kvscheduler.internal.engine.graph;

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
 * as a depth-first search (on a stack of its own: a cycle may be long) returning, for a ready node,
 * how far back on the current path its dependencies reach (-1 = not ready).
 *
 * <p>The search only enters values that can close a cycle through the value asked about: those from
 * which it can be reached along dependencies through unavailable values ({@link #cycleCandidates}).
 * Any other unavailable target cannot help, whatever it depends on. Without this bound, taking down
 * a long PENDING chain searched each link's chain to its end again (quadratic in its length; {@code
 * DeepChainTest} takes down a chain of 100,000 links).
 */
public final class Readiness {
  private Readiness() {}

  /**
   * True when every dependency label of {@code n} has an available target (SB values are always
   * ready); unavailable targets resolved through cycles.
   */
  public static boolean isReady(Graph graph, Node n, boolean fromSB) {
    if (fromSB || n.state() == ValueState.OBTAINED) {
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
        Node t = graph.get(d.key());
        if (t == null || t.value() == null) {
          return false;
        }
        if (t == n || !t.isAvailable()) {
          if (t.state() == ValueState.REMOVED && t != n) {
            return false;
          }
          all = false;
        }
        continue;
      }
      if (!graph.anyTarget(d, t -> t != n && t.isAvailable())) {
        if (!graph.anyTarget(d, t -> t.state() != ValueState.REMOVED || t == n)) {
          return false;
        }
        all = false;
      }
    }
    return all || readyThroughCycles(graph, n);
  }

  /** True when {@code n} is ready, its unavailable dependencies resolved through cycles. */
  static boolean readyThroughCycles(Graph graph, Node n) {
    return readyDepth(graph, n, cycleCandidates(graph, n)) >= 0;
  }

  /**
   * {@code n} and every value that reaches it along dependencies through values that have a value,
   * are not REMOVED and are not available: the only values a cycle through {@code n} can pass
   * (available targets satisfy a label without the search, absent and REMOVED ones never do). Found
   * by a breadth-first walk over the reverse dependency index, so no deep recursion.
   */
  static Set<String> cycleCandidates(Graph graph, Node n) {
    Set<String> found = new HashSet<>();
    found.add(n.key());
    ArrayDeque<String> work = new ArrayDeque<>();
    work.add(n.key());
    while (!work.isEmpty()) {
      for (String dk : graph.dependentsOf(work.poll())) {
        Node d = graph.get(dk);
        if (d != null
            && d.value() != null
            && d.state() != ValueState.REMOVED
            && !d.isAvailable()
            && found.add(dk)) {
          work.add(dk);
        }
      }
    }
    return found;
  }

  /**
   * A value on the search's path: its dependencies in turn and, for a dependency no available
   * target off the path satisfies, the targets that may close a cycle. The path can be as long as a
   * cycle of unavailable values, so it is kept on a stack of its own rather than on the thread's.
   */
  private static final class Visit {
    final Node node;
    final int depth;

    /** How far back on the path the dependencies met so far reach. */
    int cycleDepth;

    int depIndex;

    /** Targets of the current dependency, or null between dependencies. */
    List<Node> targets;

    int targetIndex;
    boolean satisfied;
    int reach;

    Visit(Node node, int depth) {
      this.node = node;
      this.depth = depth;
      this.cycleDepth = depth;
    }
  }

  /**
   * For {@code root} at depth 0: how far back on the path its dependencies reach when it is ready
   * assuming the values on the path exist, -1 when it is not ready. Depth first over the {@code
   * candidates}; a value met again on the path reaches back to its own depth.
   */
  private static int readyDepth(Graph graph, Node root, Set<String> candidates) {
    HashMap<String, Integer> onPath = new HashMap<>();
    ArrayDeque<Visit> stack = new ArrayDeque<>();
    onPath.put(root.key(), 0);
    stack.push(new Visit(root, 0));
    int returned = 0;
    boolean hasReturned = false;
    while (true) {
      Visit v = stack.peek();
      if (hasReturned) {
        hasReturned = false;
        if (returned >= 0 && returned <= v.depth) {
          v.satisfied = true;
          if (returned < v.reach) {
            v.reach = returned;
          }
        }
      }
      Node next = nextTarget(graph, v, onPath, candidates);
      if (next != null) {
        Integer seen = onPath.get(next.key());
        if (seen != null) {
          returned = seen;
          hasReturned = true;
        } else {
          onPath.put(next.key(), v.depth + 1);
          stack.push(new Visit(next, v.depth + 1));
        }
        continue;
      }
      int result = v.targets != null ? -1 : v.cycleDepth; // targets left: a label not satisfied
      stack.pop();
      onPath.remove(v.node.key());
      if (stack.isEmpty()) {
        return result;
      }
      returned = result;
      hasReturned = true;
    }
  }

  /**
   * The next target of {@code v} to search, moving on through its dependencies; null when {@code v}
   * is done: ready when {@link Visit#targets} is null then, not ready (a label that no target
   * satisfies) when it is not.
   */
  private static Node nextTarget(
      Graph graph, Visit v, HashMap<String, Integer> onPath, Set<String> candidates) {
    List<Dependency> deps = v.node.deps();
    while (true) {
      if (v.targets != null) {
        while (v.targetIndex < v.targets.size()) {
          Node t = v.targets.get(v.targetIndex++);
          // values on the path are assumed present, also one being re-created (REMOVED)
          if (t.value() == null
              || (t.state() == ValueState.REMOVED && !onPath.containsKey(t.key()))
              || !candidates.contains(t.key())) {
            continue;
          }
          return t;
        }
        if (!v.satisfied) {
          return null; // v.targets left set: not ready
        }
        v.cycleDepth = v.reach;
        v.targets = null;
      }
      if (v.depIndex >= deps.size()) {
        return null;
      }
      Dependency d = deps.get(v.depIndex++);
      // fast path: an available target off the current path satisfies the label. A target on
      // the path (the value being applied is not flagged unavailable yet) closes a cycle: it
      // must lower the reach, so it goes through the slow path.
      if (graph.anyTarget(d, t -> satisfies(t) && !onPath.containsKey(t.key()))) {
        continue;
      }
      v.satisfied = false;
      v.reach = v.cycleDepth;
      v.targets = graph.targetsOf(d);
      v.targetIndex = 0;
    }
  }

  private static boolean satisfies(Node t) {
    return t.isAvailable();
  }

  /** Labels of the dependencies of {@code n} with no available target, in declaration order. */
  static List<String> unsatisfiedLabels(Graph graph, Node n) {
    List<Dependency> deps = n.deps();
    List<String> out = null;
    for (int i = 0; i < deps.size(); i++) {
      Dependency d = deps.get(i);
      if (!graph.anyTarget(d, Readiness::satisfies)) {
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
  public static List<String> details(Graph graph, Node n) {
    if (n.state() == ValueState.PENDING) {
      return unsatisfiedLabels(graph, n);
    }
    if (n.state() == ValueState.INVALID && n.error() instanceof InvalidValueException iv) {
      return iv.invalidFields();
    }
    return List.of();
  }
}
