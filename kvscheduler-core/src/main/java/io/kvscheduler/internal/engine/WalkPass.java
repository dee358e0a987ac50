package io.kvscheduler.internal.engine;

import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.internal.engine.calls.CallPlan;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.ParallelCalls;
import io.kvscheduler.internal.engine.calls.PlannedCall;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.SbCallChain;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import java.time.Clock;

/**
 * What kind of pass a walk is, and what that kind does differently: a walk's steps ask their pass
 * instead of testing flags. Three kinds, one walk each:
 *
 * <table>
 *   <caption>The passes of a transaction</caption>
 *   <tr><th>pass</th><th>validates ({@link #invalid})</th><th>its calls ({@link #calls})</th>
 *       <th>graph afterwards</th></tr>
 *   <tr><td>{@link #SIMULATION}</td><td>no</td><td>assumed to succeed</td>
 *       <td>rolled back (kept when it planned nothing)</td></tr>
 *   <tr><td>{@link Planning}</td><td>yes</td><td>written in a plan ({@link CallPlan})</td>
 *       <td>rolled back</td></tr>
 *   <tr><td>{@link Execution}</td><td>yes</td><td>made, or taken from those that ran ahead</td>
 *       <td>kept</td></tr>
 * </table>
 *
 * <p>A pass is started by {@link TxnExecutor}; the state a pass fills in (its operations, the
 * statuses it changed) is still kept in {@link Transaction} and emptied by {@link
 * Transaction#startPass}.
 *
 * <p>The steps never ask which kind of pass they are in; they ask the pass: how the calls are made
 * (its chain of links, {@link SbCallChain}: the steps hand every call to it, whatever the pass),
 * whether a value is invalid ({@link #invalid}), whether a call must fail because what the
 * southbound holds is unknown ({@link #unknownState}), the visit hooks and the calls that ran
 * ahead. Whether a transaction is simulated first and whether it has anything to execute are
 * properties of the request ({@link Transaction#simulateFirst}, {@link Transaction#skip}), not of a
 * pass.
 */
public abstract sealed class WalkPass
    permits WalkPass.Simulation, WalkPass.Planning, WalkPass.Execution {
  /** The simulation of a transaction before its execution: nothing validated, nothing called. */
  static final WalkPass SIMULATION = new Simulation();

  private WalkPass() {}

  /**
   * Why {@code value} of {@code key} is invalid, or null: a key two descriptors select, or the
   * descriptor's Validate. The simulation validates nothing.
   */
  Throwable invalid(Registry registry, DescriptorHandle handle, String key, Object value) {
    Throwable ambiguous = registry.ambiguity(key);
    return ambiguous != null ? ambiguous : handle.validate(key, value);
  }

  /**
   * The error a call for {@code node} fails with, without being made, while what the southbound
   * holds for its base is unknown (F7, {@link FailurePolicy#unknownState}); null otherwise. The
   * simulation assumes every call succeeds.
   */
  Throwable unknownState(Transaction txn, Node node) {
    return FailurePolicy.unknownState(txn, node);
  }

  /**
   * The chain the walk's Create, Update and Delete go through ({@link SbCallChain}): to the
   * southbound (or to the outcome of the call that ran ahead), into a plan, or nowhere.
   */
  abstract SbCallChain calls();

  /** The walk entered a visit (planning: a call's position in the walk). */
  void enterVisit() {}

  /** The walk left a visit. */
  void exitVisit() {}

  /** A visit starts a sequence of children: siblings that do not wait for each other. */
  void startGroup() {}

  /** The sequence of children ended. */
  void endGroup() {}

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
    Throwable invalid(Registry registry, DescriptorHandle handle, String key, Object value) {
      return null;
    }

    @Override
    Throwable unknownState(Transaction txn, Node node) {
      return null;
    }

    @Override
    SbCallChain calls() {
      return SbCallChain.SIMULATION;
    }
  }

  /**
   * A planning pass: a simulation that validates and writes down each southbound call the walk
   * would make, to run them ahead in parallel ({@link ParallelCalls}).
   */
  static final class Planning extends WalkPass {
    final CallPlan plan;
    private final SbCallChain calls;

    /** {@code graph}: the graph walked (a planned Delete looks at the value's dependents). */
    Planning(CallPlan plan, Graph graph) {
      this.plan = plan;
      this.calls = SbCallChain.planning(plan, graph);
    }

    @Override
    SbCallChain calls() {
      return calls;
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
  }

  /**
   * The execution: calls are made, or taken from those that ran ahead of the walk in parallel
   * ({@link ParallelCalls}) until {@link #endRunAhead}.
   */
  static final class Execution extends WalkPass {
    /** What the calls that ran ahead returned, handed to the walk call by call; or null. */
    private CallPlan ranAhead;

    private final SbCallChain calls;

    /**
     * {@code ranAhead}: the calls that ran ahead of this execution, or null when none did; {@code
     * clock}: the times of the calls.
     */
    Execution(CallPlan ranAhead, Clock clock) {
      this.ranAhead = ranAhead;
      this.calls = SbCallChain.execution(this::takeRanAhead, clock);
    }

    @Override
    SbCallChain calls() {
      return calls;
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
