package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * Explains why a value is not applied: one line per cause, indented by depth, following unsatisfied
 * dependencies down to their roots (missing key, invalid value, failed value, unimplemented value)
 * and naming dependency cycles in full. Indentation stops growing at {@link #MAX_INDENT} levels,
 * deeper lines start with their depth instead: a chain of thousands of PENDING values then explains
 * in lines of bounded length, not in lines as long as the chain.
 */
final class Explainer {
  private Explainer() {}

  /** Levels of indentation at most; deeper lines show their depth as {@code (N) }. */
  static final int MAX_INDENT = 32;

  /** The start of a line at {@code depth}. */
  static String pad(int depth) {
    return depth <= MAX_INDENT ? "  ".repeat(depth) : "  ".repeat(MAX_INDENT) + "(" + depth + ") ";
  }

  static List<String> explain(Graph graph, String key) {
    List<String> out = new ArrayList<>();
    Node n = graph.get(key);
    if (n == null || n.value == null) {
      return out;
    }
    walk(graph, n, 0, new LinkedHashSet<>(), out);
    return out;
  }

  /** The explanation of {@code key} as a tree of causes. */
  static Explanation tree(Graph graph, String key) {
    Node n = graph.get(key);
    if (n == null || n.value == null) {
      return Explanation.of(
          key, n == null ? ValueState.NONEXISTENT : n.state, Explanation.Reason.UNKNOWN_KEY);
    }
    return node(graph, n, new LinkedHashSet<>());
  }

  private static Explanation node(Graph graph, Node n, LinkedHashSet<String> path) {
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
      return new Explanation(
          n.key,
          n.state,
          Explanation.Reason.CYCLE,
          "",
          List.of(),
          List.of(),
          "",
          TxnOperation.UNDEFINED,
          cycle,
          List.of());
    }
    path.add(n.key);
    try {
      String error = OpRecord.msg(n.error);
      return switch (n.state) {
        case PENDING -> {
          List<Explanation> causes = new ArrayList<>();
          for (Dependency d : n.deps()) {
            if (graph.anyTarget(d, Node::isAvailable)) {
              continue;
            }
            List<Node> targets = graph.targetsOf(d);
            if (targets.isEmpty()) {
              causes.add(
                  d.isAnyOf()
                      ? new Explanation(
                          "",
                          ValueState.NONEXISTENT,
                          Explanation.Reason.NO_MATCHING_KEY,
                          d.label(),
                          d.keyPrefixes(),
                          List.of(),
                          "",
                          TxnOperation.UNDEFINED,
                          List.of(),
                          List.of())
                      : Explanation.of(
                              d.key(),
                              ValueState.NONEXISTENT,
                              Explanation.Reason.MISSING_DEPENDENCY)
                          .via(d.label()));
              continue;
            }
            for (Node t : targets) {
              causes.add(node(graph, t, path).via(d.label()));
            }
          }
          yield new Explanation(
              n.key,
              n.state,
              Explanation.Reason.WAITING,
              "",
              List.of(),
              List.of(),
              "",
              TxnOperation.UNDEFINED,
              List.of(),
              causes);
        }
        case INVALID ->
            new Explanation(
                n.key,
                n.state,
                Explanation.Reason.INVALID,
                "",
                List.of(),
                invalidFields(n.error),
                error,
                TxnOperation.UNDEFINED,
                List.of(),
                List.of());
        case FAILED, RETRYING ->
            new Explanation(
                n.key,
                n.state,
                Explanation.Reason.FAILED,
                "",
                List.of(),
                List.of(),
                error,
                n.errorOp,
                List.of(),
                List.of());
        case UNIMPLEMENTED -> Explanation.of(n.key, n.state, Explanation.Reason.UNIMPLEMENTED);
        case MISSING -> Explanation.of(n.key, n.state, Explanation.Reason.MISSING);
        default -> Explanation.of(n.key, n.state, Explanation.Reason.APPLIED);
      };
    } finally {
      path.remove(n.key);
    }
  }

  /** The fields an {@link InvalidValueException} in {@code t}'s causes names, else none. */
  private static List<String> invalidFields(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof InvalidValueException iv) {
        return iv.invalidFields();
      }
    }
    return List.of();
  }

  private static void walk(
      Graph graph, Node n, int depth, LinkedHashSet<String> path, List<String> out) {
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
            if (graph.anyTarget(d, Node::isAvailable)) {
              continue;
            }
            List<Node> targets = graph.targetsOf(d);
            if (targets.isEmpty()) {
              out.add(
                  pad(depth + 1)
                      + "dependency '"
                      + d.label()
                      + "': "
                      + (d.isAnyOf()
                          ? "no key matches " + d
                          : "key " + d.key() + " does not exist"));
              continue;
            }
            out.add(pad(depth + 1) + "dependency '" + d.label() + "': no target is available");
            for (Node t : targets) {
              walk(graph, t, depth + 2, path, out);
            }
          }
        }
        case INVALID -> out.add(pad + n.key + " is INVALID: " + OpRecord.msg(n.error));
        case FAILED, RETRYING ->
            out.add(
                pad + n.key + " is " + n.state + " (" + n.errorOp + "): " + OpRecord.msg(n.error));
        case UNIMPLEMENTED -> out.add(pad + n.key + " is UNIMPLEMENTED: no descriptor selects it");
        case MISSING ->
            out.add(
                pad
                    + n.key
                    + " is MISSING: configured but not found in the"
                    + " southbound by the last refresh");
        default -> out.add(pad + n.key + " is " + n.state);
      }
    } finally {
      path.remove(n.key);
    }
  }
}
