package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.Explanation;
import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayDeque;
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
public final class Explainer {
  private Explainer() {}

  /** Levels of indentation at most; deeper lines show their depth as {@code (N) }. */
  static final int MAX_INDENT = 32;

  /** The start of a line at {@code depth}. */
  static String pad(int depth) {
    return depth <= MAX_INDENT ? "  ".repeat(depth) : "  ".repeat(MAX_INDENT) + "(" + depth + ") ";
  }

  public static List<String> explain(Graph graph, String key) {
    List<String> out = new ArrayList<>();
    Node n = graph.get(key);
    if (n == null || n.value() == null) {
      return out;
    }
    walk(graph, n, out);
    return out;
  }

  /** The explanation of {@code key} as a tree of causes. */
  public static Explanation tree(Graph graph, String key) {
    Node n = graph.get(key);
    if (n == null || n.value() == null) {
      return Explanation.of(
          key, n == null ? ValueState.NONEXISTENT : n.state(), Explanation.Reason.UNKNOWN_KEY);
    }
    return treeOf(graph, n);
  }

  /**
   * A PENDING value being explained: its dependencies in turn, the targets of the current one in
   * turn. The explanation of a long chain goes as deep as the chain, so the walks below keep these
   * on a stack of their own rather than on the thread's.
   */
  private static final class Pending {
    final Node node;
    final int depth;
    final List<Explanation> causes = new ArrayList<>();
    int depIndex;
    Dependency dep;
    List<Node> targets = List.of();
    int targetIndex;

    Pending(Node node, int depth) {
      this.node = node;
      this.depth = depth;
    }

    /** The next target to explain, moving on to the next unsatisfied dependency; null when done. */
    Node nextTarget(Graph graph, List<String> out) {
      while (targetIndex >= targets.size()) {
        List<Dependency> deps = node.deps();
        if (depIndex >= deps.size()) {
          return null;
        }
        dep = deps.get(depIndex++);
        targetIndex = 0;
        targets = List.of();
        if (graph.anyTarget(dep, Node::isAvailable)) {
          continue;
        }
        List<Node> found = graph.targetsOf(dep);
        if (found.isEmpty()) {
          missing(dep, depth, causes, out);
          continue;
        }
        if (out != null) {
          out.add(pad(depth + 1) + "dependency '" + dep.label() + "': no target is available");
        }
        targets = found;
      }
      return targets.get(targetIndex++);
    }
  }

  /** A dependency of a PENDING value at {@code depth} with no target: a cause or a line. */
  private static void missing(Dependency d, int depth, List<Explanation> causes, List<String> out) {
    if (out != null) {
      out.add(
          pad(depth + 1)
              + "dependency '"
              + d.label()
              + "': "
              + (d.isAnyOf() ? "no key matches " + d : "key " + d.key() + " does not exist"));
      return;
    }
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
            : Explanation.of(d.key(), ValueState.NONEXISTENT, Explanation.Reason.MISSING_DEPENDENCY)
                .via(d.label()));
  }

  /** The keys of {@code path} from {@code key} on, then {@code key} again: a cycle. */
  private static List<String> cycle(LinkedHashSet<String> path, String key) {
    List<String> cycle = new ArrayList<>();
    boolean in = false;
    for (String p : path) {
      in |= p.equals(key);
      if (in) {
        cycle.add(p);
      }
    }
    cycle.add(key);
    return cycle;
  }

  /** The tree of causes of {@code root}, built depth first on an explicit stack. */
  private static Explanation treeOf(Graph graph, Node root) {
    LinkedHashSet<String> path = new LinkedHashSet<>();
    ArrayDeque<Pending> stack = new ArrayDeque<>();
    Explanation done = enterTree(root, path, stack);
    while (!stack.isEmpty()) {
      Pending top = stack.peek();
      if (done != null) {
        top.causes.add(done.via(top.dep.label()));
      }
      Node next = top.nextTarget(graph, null);
      if (next != null) {
        done = enterTree(next, path, stack);
        continue;
      }
      stack.pop();
      path.remove(top.node.key());
      done =
          new Explanation(
              top.node.key(),
              top.node.state(),
              Explanation.Reason.WAITING,
              "",
              List.of(),
              List.of(),
              "",
              TxnOperation.UNDEFINED,
              List.of(),
              top.causes);
    }
    return done;
  }

  /**
   * Enters {@code n}: a PENDING value off the path is pushed (null returned, its explanation comes
   * once its causes are done); any other gives its explanation at once.
   */
  private static Explanation enterTree(
      Node n, LinkedHashSet<String> path, ArrayDeque<Pending> stack) {
    if (path.contains(n.key())) {
      return new Explanation(
          n.key(),
          n.state(),
          Explanation.Reason.CYCLE,
          "",
          List.of(),
          List.of(),
          "",
          TxnOperation.UNDEFINED,
          cycle(path, n.key()),
          List.of());
    }
    String error = OpRecord.msg(n.error());
    return switch (n.state()) {
      case PENDING -> {
        path.add(n.key());
        stack.push(new Pending(n, 0));
        yield null;
      }
      case INVALID ->
          new Explanation(
              n.key(),
              n.state(),
              Explanation.Reason.INVALID,
              "",
              List.of(),
              invalidFields(n.error()),
              error,
              TxnOperation.UNDEFINED,
              List.of(),
              List.of());
      case FAILED, RETRYING ->
          new Explanation(
              n.key(),
              n.state(),
              Explanation.Reason.FAILED,
              "",
              List.of(),
              List.of(),
              error,
              n.errorOp(),
              List.of(),
              List.of());
      case UNIMPLEMENTED -> Explanation.of(n.key(), n.state(), Explanation.Reason.UNIMPLEMENTED);
      case MISSING -> Explanation.of(n.key(), n.state(), Explanation.Reason.MISSING);
      default -> Explanation.of(n.key(), n.state(), Explanation.Reason.APPLIED);
    };
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

  /** The lines explaining {@code root}, depth first on an explicit stack. */
  private static void walk(Graph graph, Node root, List<String> out) {
    LinkedHashSet<String> path = new LinkedHashSet<>();
    ArrayDeque<Pending> stack = new ArrayDeque<>();
    enterLines(root, 0, path, stack, out);
    while (!stack.isEmpty()) {
      Pending top = stack.peek();
      Node next = top.nextTarget(graph, out);
      if (next != null) {
        enterLines(next, top.depth + 2, path, stack, out);
        continue;
      }
      stack.pop();
      path.remove(top.node.key());
    }
  }

  /** Writes the line of {@code n} at {@code depth}; a PENDING value off the path is pushed. */
  private static void enterLines(
      Node n, int depth, LinkedHashSet<String> path, ArrayDeque<Pending> stack, List<String> out) {
    String pad = pad(depth);
    if (path.contains(n.key())) {
      out.add(pad + "dependency cycle: " + String.join(" -> ", cycle(path, n.key())));
      return;
    }
    switch (n.state()) {
      case PENDING -> {
        out.add(pad + n.key() + " is PENDING");
        path.add(n.key());
        stack.push(new Pending(n, depth));
      }
      case INVALID -> out.add(pad + n.key() + " is INVALID: " + OpRecord.msg(n.error()));
      case FAILED, RETRYING ->
          out.add(
              pad
                  + n.key()
                  + " is "
                  + n.state()
                  + " ("
                  + n.errorOp()
                  + "): "
                  + OpRecord.msg(n.error()));
      case UNIMPLEMENTED -> out.add(pad + n.key() + " is UNIMPLEMENTED: no descriptor selects it");
      case MISSING ->
          out.add(
              pad
                  + n.key()
                  + " is MISSING: configured but not found in the"
                  + " southbound by the last refresh");
      default -> out.add(pad + n.key() + " is " + n.state());
    }
  }
}
