package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.OperationTimeoutException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import io.kvscheduler.internal.util.UserCode;
import java.time.Clock;
import java.util.List;
import java.util.function.Supplier;

/**
 * The one path of every southbound call ({@link SbCall}): a chain of links, each doing one thing,
 * the way an HTTP client passes a request through interceptors. A link handles the call itself or
 * hands it to the next link and looks at what comes back. The pass of the walk ({@code WalkPass})
 * supplies its chain; a new kind of call handling is one more link.
 *
 * <table>
 *   <caption>The chains, outermost link first</caption>
 *   <tr><th>chain</th><th>links</th></tr>
 *   <tr><td>execution ({@link #execution})</td>
 *       <td>{@link KeepMetadata} → {@link Found} → {@link RanAhead} → {@link Timed} → {@link
 *       Observed} → {@link Guarded} → {@link Limited} → {@link Descriptor}</td></tr>
 *   <tr><td>planning ({@link #planning})</td><td>{@link Found} → {@link Planned}</td></tr>
 *   <tr><td>simulation ({@link #SIMULATION})</td><td>{@link Assumed}</td></tr>
 *   <tr><td>a call ahead of the walk, or its undo ({@link #DIRECT})</td>
 *       <td>{@link Observed} → {@link Guarded} → {@link Limited} → {@link Descriptor}</td></tr>
 * </table>
 *
 * <p>The links are built once per pass (the execution's and the planning's) or once for good (the
 * others): on its way through them a call allocates only its own description ({@link SbCall}),
 * plus, as before the chain, the error of a failure and the task of a call with a time limit.
 */
public abstract class SbCallChain {
  /** A successful call that gave no metadata (a Delete, most Creates and Updates). */
  private static final DescriptorHandle.Result<Object> DONE =
      DescriptorHandle.Result.ofMetadata(null);

  /** A simulation: every call succeeds without reaching the southbound. */
  public static final SbCallChain SIMULATION = new Assumed();

  /** The calls run ahead of the walk and their undo: observed, guarded, limited, made. */
  static final SbCallChain DIRECT = new Observed(new Guarded(new Limited(new Descriptor())));

  /**
   * The execution's chain: calls taken from {@code ranAhead} while the pass has calls that ran
   * ahead, else made with their times noted by {@code clock}.
   */
  public static SbCallChain execution(RanAheadCalls ranAhead, Clock clock) {
    return new KeepMetadata(new Found(new RanAhead(ranAhead, new Timed(clock, DIRECT))));
  }

  /** Where an execution takes the calls that ran ahead of it in parallel. */
  @FunctionalInterface
  public interface RanAheadCalls {
    /** The call {@code op} of {@code key} that ran ahead of the walk, or null: the walk calls. */
    PlannedCall take(String key, TxnOperation op);
  }

  /** The planning pass's chain: each call written down in {@code plan}, none made. */
  public static SbCallChain planning(CallPlan plan, Graph graph) {
    return new Found(new Planned(plan, graph));
  }

  /**
   * Makes {@code call} through the chain; returns its outcome: the metadata it gave, or its error.
   * Every chain ends guarded ({@link Guarded}) or in a link without user code: what user code
   * throws never gets here.
   */
  public final DescriptorHandle.Result<Object> call(SbCall call) {
    try {
      return proceed(call);
    } catch (Exception e) {
      throw new IllegalStateException("a southbound call's failure escaped its guard", e);
    }
  }

  /**
   * Passes {@code call} on; returns its outcome. May throw only below {@link Guarded}: what the
   * descriptor's callback threw.
   */
  abstract DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception;

  /**
   * After a successful call: the metadata it gave is kept in the node of a base value and in the
   * descriptor's metadata map (a Delete: none any more). A value found in the southbound that no
   * descriptor selects keeps the metadata it was reported with.
   */
  static final class KeepMetadata extends SbCallChain {
    private final SbCallChain next;

    KeepMetadata(SbCallChain next) {
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      DescriptorHandle.Result<Object> r = next.proceed(call);
      Node node = call.node();
      if (r.failed() || node.isDerived()) {
        return r;
      }
      DescriptorHandle handle = call.handle();
      if (handle == null) {
        node.setMetadata(r.value());
      } else if (handle.metadataMap != null) {
        node.setMetadata(r.value());
        handle.metadataMap.put(node.label(), r.value());
      }
      return r;
    }
  }

  /**
   * A value found in the southbound (a retrieved or notified one): nothing is called, the call
   * succeeds with the metadata found.
   */
  static final class Found extends SbCallChain {
    private final SbCallChain next;

    Found(SbCallChain next) {
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      if (call.found()) {
        return call.op() == TxnOperation.DELETE
            ? DONE
            : DescriptorHandle.Result.ofMetadata(call.metadata());
      }
      return next.proceed(call);
    }
  }

  /**
   * Takes the outcome of the call that ran ahead of the walk in parallel ({@link ParallelCalls}),
   * its times noted in the call's record; passes the call on when none did.
   */
  static final class RanAhead extends SbCallChain {
    private final RanAheadCalls ranAhead;
    private final SbCallChain next;

    RanAhead(RanAheadCalls ranAhead, SbCallChain next) {
      this.ranAhead = ranAhead;
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      PlannedCall ran = ranAhead.take(call.key(), call.op());
      if (ran == null) {
        return next.proceed(call);
      }
      call.record().callStarted = ran.started;
      call.record().callEnded = ran.ended;
      return ran.result();
    }
  }

  /** Notes when the call started and ended in its operation record. */
  static final class Timed extends SbCallChain {
    private final Clock clock;
    private final SbCallChain next;

    Timed(Clock clock, SbCallChain next) {
      this.clock = clock;
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      OpRecord op = call.record();
      op.callStarted = clock.instant();
      DescriptorHandle.Result<Object> r = next.proceed(call);
      op.callEnded = clock.instant();
      return r;
    }
  }

  /**
   * Tells the scheduler's operation listener ({@link Observer}) of a call the descriptor can make,
   * once it returned, failed or overran its limit (a call of an operation the descriptor lacks is
   * not made, so not told). Without a listener the call only passes through.
   */
  static final class Observed extends SbCallChain {
    private final SbCallChain next;

    Observed(SbCallChain next) {
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      DescriptorHandle h = call.handle();
      Observer observer = h.observer;
      if (!observer.active() || !h.canCall(call.op())) {
        return next.proceed(call);
      }
      long started = observer.now();
      DescriptorHandle.Result<Object> r = next.proceed(call);
      observer.callEnded(h.name, Observer.call(call.op()), call.key(), started, r.error());
      return r;
    }
  }

  /**
   * Guards the user code: a callback the descriptor lacks, an exception it throws (a timeout among
   * them) and metadata of a class it did not declare become a failed outcome; nothing escapes to
   * the engine. Once the scheduler was closed without waiting for the engine thread (a callback
   * that ignored the interrupt), no call is made any more: each fails at once.
   */
  static final class Guarded extends SbCallChain {
    private final SbCallChain next;

    Guarded(SbCallChain next) {
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      DescriptorHandle h = call.handle();
      if (!h.canCall(call.op())) {
        return new DescriptorHandle.Result<>(
            null,
            new DescriptorHandle.NotImplementedException(
                "descriptor "
                    + h.name
                    + ": operation "
                    + call.operationName()
                    + " is not implemented (key "
                    + call.key()
                    + ")"));
      }
      if (h.closed()) {
        return new DescriptorHandle.Result<>(null, DescriptorHandle.closedError(h.name));
      }
      DescriptorHandle.Result<Object> r;
      try {
        r = next.proceed(call);
      } catch (Throwable t) {
        return new DescriptorHandle.Result<>(null, UserCode.contained(t));
      }
      if (r.value() != null) {
        Throwable wrong = h.checkMetadata(call.key(), r.value(), call.operationName());
        if (wrong != null) {
          return new DescriptorHandle.Result<>(null, wrong);
        }
      }
      return r;
    }
  }

  /**
   * Applies the descriptor's operation timeout: the call runs on a call thread ({@link SbCalls})
   * while the engine waits at most the limit; an overrun fails with an {@link
   * OperationTimeoutException}. Without a limit the call runs on the calling thread.
   */
  public static final class Limited extends SbCallChain {
    private final SbCallChain next;

    Limited(SbCallChain next) {
      this.next = next;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      DescriptorHandle h = call.handle();
      if (h.timeout == null) {
        return next.proceed(call);
      }
      Supplier<RuntimeException> overrun =
          () -> new OperationTimeoutException(h.name, call.operationName(), call.key(), h.timeout);
      return h.calls.call(() -> next.proceed(call), h.timeout, overrun, call.key());
    }
  }

  /** The end of the chain: the descriptor's Create, Update or Delete, user code unguarded. */
  static final class Descriptor extends SbCallChain {
    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      DescriptorHandle h = call.handle();
      return switch (call.op()) {
        case CREATE ->
            DescriptorHandle.Result.ofMetadata(h.creator.create(call.key(), call.value()));
        case UPDATE ->
            DescriptorHandle.Result.ofMetadata(
                h.updater.update(call.key(), call.oldValue(), call.value(), call.metadata()));
        case DELETE -> {
          h.deleter.delete(call.key(), call.value(), call.metadata());
          yield DONE;
        }
        default -> throw new IllegalStateException("not a southbound call: " + call.op());
      };
    }
  }

  /**
   * The end of the planning pass's chain: the call is written down in the plan ({@link
   * CallPlan#add}) to run ahead of the execution, and assumed to succeed.
   */
  static final class Planned extends SbCallChain {
    /** Stands for "a dependent may be satisfied by other values" in a planned call's links. */
    private static final List<Dependency> ANY_OF =
        List.of(Dependency.anyOfPrefixes("a dependent's alternatives", ""));

    private final CallPlan plan;
    private final Graph graph;

    Planned(CallPlan plan, Graph graph) {
      this.plan = plan;
      this.graph = graph;
    }

    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      Node node = call.node();
      DescriptorHandle handle = call.handle();
      TxnOperation op = call.op();
      List<Dependency> moreDeps =
          switch (op) {
            case UPDATE -> call.oldDeps();
            case DELETE -> dependentsWithAnyOf(graph, node) ? ANY_OF : List.of();
            default -> List.of();
          };
      plan.add(
          op,
          node,
          handle,
          node.label(),
          !node.isDerived() && handle.metadataMap != null,
          call.value(),
          call.oldValue(),
          op == TxnOperation.CREATE ? null : call.metadata(),
          node.deps(),
          moreDeps);
      return DONE;
    }

    /**
     * True when a value depending on {@code node} has an any-of dependency: whether a Delete of it
     * happens then depends on the other values that satisfy the dependent, so the planned Delete
     * waits for every earlier call ({@link CallPlan}).
     */
    private static boolean dependentsWithAnyOf(Graph graph, Node node) {
      for (String d : graph.dependentsOf(node.key())) {
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

  /** The end of the simulation's chain: the call is assumed to succeed; nothing is called. */
  static final class Assumed extends SbCallChain {
    @Override
    DescriptorHandle.Result<Object> proceed(SbCall call) throws Exception {
      return DONE;
    }
  }
}
