package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.TxnOperation;
import java.util.List;

/**
 * What kind of pass a walk is, and what that kind does differently: a walk's steps ask their pass
 * instead of testing flags. Three kinds, one walk each:
 *
 * <table>
 *   <caption>The passes of a transaction</caption>
 *   <tr><th>pass</th><th>validates</th><th>calls the southbound</th><th>writes a plan</th>
 *       <th>graph afterwards</th></tr>
 *   <tr><td>{@link #SIMULATION}</td><td>no</td><td>no</td><td>no</td>
 *       <td>rolled back (kept when it planned nothing)</td></tr>
 *   <tr><td>{@link Planning}</td><td>yes</td><td>no</td><td>yes ({@link CallPlan})</td>
 *       <td>rolled back</td></tr>
 *   <tr><td>{@link Execution}</td><td>yes</td><td>yes, or takes the call that ran ahead</td>
 *       <td>no</td><td>kept</td></tr>
 * </table>
 *
 * <p>A pass is started by {@link TxnExecutor}; the state a pass fills in (its operations, the
 * statuses it changed) is still kept in {@link Transaction} and emptied by {@link
 * Transaction#startPass}.
 *
 * <p>What is a type and what is still asked: the planning hooks and the calls that ran ahead are
 * behaviour of the pass (no step tests for them). Two questions remain, asked by the steps: {@link
 * #validates} (Create and Update steps, and {@link StatusMarks#unknownState}) and {@link
 * #callsSouthbound} (the Create, Update and Delete steps and the metadata map in {@link
 * WalkCalls}). Whether a transaction is simulated first and whether it has anything to execute are
 * properties of the request ({@link Transaction#simulateFirst}, {@link Transaction#skip}), not of a
 * pass.
 */
abstract sealed class WalkPass permits WalkPass.Simulation, WalkPass.Planning, WalkPass.Execution {
  /** The simulation of a transaction before its execution: nothing validated, nothing called. */
  static final WalkPass SIMULATION = new Simulation();

  private WalkPass() {}

  /** True when the descriptor's Validate is called for values. */
  abstract boolean validates();

  /**
   * True when the walk's Create, Update and Delete reach the southbound (or take the outcome of the
   * call that ran ahead) and the descriptor's metadata map is written.
   */
  abstract boolean callsSouthbound();

  /** The walk entered a visit (planning: a call's position in the walk). */
  void enterVisit() {}

  /** The walk left a visit. */
  void exitVisit() {}

  /** A visit starts a sequence of children: siblings that do not wait for each other. */
  void startGroup() {}

  /** The sequence of children ended. */
  void endGroup() {}

  /**
   * The walk would make call {@code op} now for {@code node} (see {@link CallPlan#add}), with the
   * node's dependencies and {@code moreDeps} (an Update's old ones). Only a planning pass writes it
   * down.
   */
  void plan(
      TxnOperation op,
      Node node,
      DescriptorHandle handle,
      Object value,
      Object oldValue,
      List<Dependency> moreDeps) {}

  /**
   * The walk would delete {@code object}, the value of {@code node}, now. Only a planning pass
   * writes it down, with what the dependents of the node wait for.
   */
  void planDelete(Graph graph, Node node, DescriptorHandle handle, Object object) {}

  /**
   * The calls that ran ahead of this pass (or null), handed over once: from now on the walks of the
   * pass (after the refresh) call for themselves.
   */
  CallPlan endRunAhead() {
    return null;
  }

  /** The call {@code op} of {@code key} that ran ahead of the walk, or null: the walk calls. */
  PlannedCall takeRanAhead(String key, TxnOperation op) {
    return null;
  }

  /** A simulation: every call is assumed to succeed. */
  static final class Simulation extends WalkPass {
    private Simulation() {}

    @Override
    boolean validates() {
      return false;
    }

    @Override
    boolean callsSouthbound() {
      return false;
    }
  }

  /**
   * A planning pass: a simulation that validates and writes down each southbound call the walk
   * would make, to run them ahead in parallel ({@link ParallelCalls}).
   */
  static final class Planning extends WalkPass {
    final CallPlan plan;

    Planning(CallPlan plan) {
      this.plan = plan;
    }

    @Override
    boolean validates() {
      return true;
    }

    @Override
    boolean callsSouthbound() {
      return false;
    }

    @Override
    void enterVisit() {
      plan.enterVisit();
    }

    @Override
    void exitVisit() {
      plan.exitVisit();
    }

    @Override
    void startGroup() {
      plan.startGroup();
    }

    @Override
    void endGroup() {
      plan.endGroup();
    }

    @Override
    void plan(
        TxnOperation op,
        Node node,
        DescriptorHandle handle,
        Object value,
        Object oldValue,
        List<Dependency> moreDeps) {
      plan.add(
          op,
          node,
          handle,
          node.label,
          !node.isDerived() && handle.metadataMap != null,
          value,
          oldValue,
          op == TxnOperation.CREATE ? null : node.metadata,
          node.deps(),
          moreDeps);
    }

    @Override
    void planDelete(Graph graph, Node node, DescriptorHandle handle, Object object) {
      plan(
          TxnOperation.DELETE,
          node,
          handle,
          object,
          null,
          dependentsWithAnyOf(graph, node) ? ANY_OF : List.of());
    }

    /** Stands for "a dependent may be satisfied by other values" in a planned call's links. */
    private static final List<Dependency> ANY_OF =
        List.of(Dependency.anyOfPrefixes("a dependent's alternatives", ""));

    /**
     * True when a value depending on {@code node} has an any-of dependency: whether a Delete of it
     * happens then depends on the other values that satisfy the dependent, so the planned Delete
     * waits for every earlier call ({@link CallPlan}).
     */
    private static boolean dependentsWithAnyOf(Graph graph, Node node) {
      for (String d : graph.dependentsOf(node.key)) {
        Node dn = graph.get(d);
        if (dn != null) {
          for (Dependency dep : dn.deps()) {
            if (dep.isAnyOf()) {
              return true;
            }
          }
        }
      }
      return false;
    }
  }

  /**
   * The execution: calls are made, or taken from those that ran ahead of the walk in parallel
   * ({@link ParallelCalls}) until {@link #endRunAhead}.
   */
  static final class Execution extends WalkPass {
    /** What the calls that ran ahead returned, handed to the walk call by call; or null. */
    private CallPlan ranAhead;

    /** {@code ranAhead}: the calls that ran ahead of this execution, or null when none did. */
    Execution(CallPlan ranAhead) {
      this.ranAhead = ranAhead;
    }

    @Override
    boolean validates() {
      return true;
    }

    @Override
    boolean callsSouthbound() {
      return true;
    }

    @Override
    PlannedCall takeRanAhead(String key, TxnOperation op) {
      return ranAhead == null ? null : ranAhead.take(key, op);
    }

    @Override
    CallPlan endRunAhead() {
      CallPlan out = ranAhead;
      ranAhead = null;
      return out;
    }
  }
}
