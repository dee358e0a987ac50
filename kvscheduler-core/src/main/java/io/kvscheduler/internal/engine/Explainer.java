package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.internal.graph.Graph;
import io.kvscheduler.internal.graph.Node;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Explains why a value is not applied: one line per cause, indented by depth, following
 * unsatisfied dependencies down to their roots (missing key, invalid value, failed value,
 * unimplemented value) and naming dependency cycles in full. Indentation stops growing at {@link
 * #MAX_INDENT} levels, deeper lines start with their depth instead: a chain of thousands of
 * PENDING values then explains in lines of bounded length, not in lines as long as the chain.
 */
final class Explainer {
  private Explainer() {}

  /** Levels of indentation at most; deeper lines show their depth as {@code (N) }. */
  static final int MAX_INDENT = 32;

  /** The start of a line at {@code depth}. */
  static String pad(int depth) {
    return depth <= MAX_INDENT ? "  ".repeat(depth) : "  ".repeat(MAX_INDENT) + "(" + depth + ") ";
  }

  static List<String> explain(Graph g, String key) {
    List<String> out = new ArrayList<>();
    Node n = g.get(key);
    if (n == null || n.value == null) {
      return out;
    }
    walk(g, n, 0, new LinkedHashSet<>(), out);
    return out;
  }

  private static void walk(Graph g, Node n, int depth, LinkedHashSet<String> path,
      List<String> out) {
    String pad = pad(depth);
    if (path.contains(n.key)) {
      List<String> cycle = new ArrayList<>();
      boolean in = false;
      for (String p : path) {
        in |= p.equals(n.key);
        if (in) {
          cycle.add(p);
        }
      }
      cycle.add(n.key);
      out.add(pad + "dependency cycle: " + String.join(" -> ", cycle));
      return;
    }
    path.add(n.key);
    try {
      switch (n.state) {
        case PENDING -> {
          out.add(pad + n.key + " is PENDING");
          for (Dependency d : n.deps()) {
            if (g.anyTarget(d, Node::isAvailable)) {
              continue;
            }
            List<Node> targets = g.targetsOf(d);
            if (targets.isEmpty()) {
              out.add(pad(depth + 1) + "dependency '" + d.label() + "': "
                  + (d.isAnyOf() ? "no key matches " + d : "key " + d.key() + " does not exist"));
              continue;
            }
            out.add(pad(depth + 1) + "dependency '" + d.label() + "': no target is available");
            for (Node t : targets) {
              walk(g, t, depth + 2, path, out);
            }
          }
        }
        case INVALID -> out.add(pad + n.key + " is INVALID: " + OpRecord.msg(n.error));
        case FAILED, RETRYING -> out.add(pad + n.key + " is " + n.state + " (" + n.errorOp
            + "): " + OpRecord.msg(n.error));
        case UNIMPLEMENTED -> out.add(pad + n.key + " is UNIMPLEMENTED: no descriptor selects it");
        case MISSING -> out.add(pad + n.key + " is MISSING: configured but not found in the"
            + " southbound by the last refresh");
        default -> out.add(pad + n.key + " is " + n.state);
      }
    } finally {
      path.remove(n.key);
    }
  }
}
