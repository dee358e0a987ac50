package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.internal.engine.graph.Node;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The southbound calls a transaction's walk will make if every call succeeds, in the walk's order,
 * with the order that must hold between them: made by a planning pass of the walk (a simulation
 * that validates, {@code WalkPass.Planning}), run ahead of the walk by {@link ParallelCalls}, then
 * handed to the walk call by call ({@link #take}).
 *
 * <p>Call B waits for an earlier call A (in the walk's order) when:
 *
 * <ul>
 *   <li>both are for the same key (the calls of one value never overlap, and its metadata passes
 *       from one call to the next);
 *   <li>one is for a base value and the other for a value derived from it (a derived value is
 *       created after its base and deleted before it; derived values of one base do not wait for
 *       each other);
 *   <li>B's value depends on A's key or on A's base, or A's value on B's key or B's base (a value
 *       is created after what it needs and deleted before it; a value without calls of its own,
 *       such as a property derived without descriptor, stands for its base's calls);
 *   <li>A's or B's value has an any-of dependency, or a value depending on it has one (for a
 *       Delete): such a call waits for every earlier call and every later call waits for it (which
 *       keys it matches, or which other values satisfy the dependent, may change as calls run);
 *   <li>both are calls of a descriptor that did not opt in to concurrent calls.
 * </ul>
 *
 * <p>Besides, a call waits for every earlier call whose outcome decides whether the walk makes it:
 * the walk visits values inside other visits (a value's derived values, the values depending on
 * it), and a visit goes on according to what its nested visits did (a Delete is not made when a
 * derived value or a dependent could not be removed). So the planning pass tells the plan where
 * each visit starts and ends ({@link #enterVisit}, {@link #exitVisit}) and which nested visits form
 * a group of siblings ({@link #startGroup}, {@link #endGroup}: the derived values of a value, its
 * dependents), whose outcomes the visit reads only once all have run. A call then waits for every
 * call made before it in its enclosing visits, except for those of its group's siblings. Such waits
 * go through join points (a {@link PlannedCall} without operation), so their number stays linear in
 * the number of calls. Transaction-level values (visits without an enclosing one) do not wait for
 * each other this way: the walk visits each whatever the others did.
 *
 * <p>Waiting is transitive, so each call is linked only to the latest earlier call of each kind.
 */
public final class CallPlan {
  private final List<PlannedCall> calls = new ArrayList<>();
  private final Function<String, String> baseOf;
  private final Map<String, PlannedCall> lastOfKey = new HashMap<>();

  /** Calls of values derived from a base, since the base's last call. */
  private final Map<String, List<PlannedCall>> derivedSince = new HashMap<>();

  private final Map<String, PlannedCall> lastOfSerialDescriptor = new HashMap<>();

  /** Calls whose value depends on a key (or on a value derived from it), since its last call. */
  private final Map<String, List<PlannedCall>> dependentsSince = new HashMap<>();

  /** The latest call with an any-of dependency, and the calls since it. */
  private PlannedCall barrier;

  private final List<PlannedCall> sinceBarrier = new ArrayList<>();

  /** The latest Create or Update of a key: the metadata a later call for the key is passed. */
  private final Map<String, PlannedCall> metadataOf = new HashMap<>();

  /** The open visits of the planning pass, innermost last. */
  private final ArrayList<Frame> visits = new ArrayList<>();

  /** Frames of closed visits, reused. */
  private final ArrayList<Frame> spare = new ArrayList<>();

  /** Join points made so far (waiting points without a call). */
  private int joins;

  /**
   * One open visit: what anything in it from now on waits for ({@code after}: a call or a join
   * point, or null), and the calls made in it since (its own, its nested visits').
   */
  private static final class Frame {
    PlannedCall after;
    final ArrayList<PlannedCall> made = new ArrayList<>();
    boolean inGroup;
  }

  /** The calls not yet handed to the walk, per key, in the walk's order. */
  private Map<String, ArrayDeque<PlannedCall>> byKey;

  /** {@code baseOf}: the base key of a key (itself for a base value or an unknown key). */
  public CallPlan(Function<String, String> baseOf) {
    this.baseOf = baseOf;
  }

  List<PlannedCall> calls() {
    return calls;
  }

  public int size() {
    return calls.size();
  }

  /** A visit of the planning pass starts (inside the innermost open one, if any). */
  public void enterVisit() {
    Frame f = spare.isEmpty() ? new Frame() : spare.remove(spare.size() - 1);
    f.after = visits.isEmpty() ? null : visits.get(visits.size() - 1).after;
    visits.add(f);
  }

  /** The innermost visit ends: its calls count as made in the visit around it. */
  public void exitVisit() {
    Frame f = visits.remove(visits.size() - 1);
    if (!visits.isEmpty()) {
      Frame outer = visits.get(visits.size() - 1);
      if (f.after != outer.after && f.after != null) {
        outer.made.add(f.after);
      }
      outer.made.addAll(f.made);
      if (!outer.inGroup) {
        close(outer);
      }
    }
    f.made.clear();
    f.after = null;
    f.inGroup = false;
    spare.add(f);
  }

  /** The innermost visit starts visiting a group of siblings (which do not wait for each other). */
  public void startGroup() {
    if (!visits.isEmpty()) {
      visits.get(visits.size() - 1).inGroup = true;
    }
  }

  /** The group ends: what the visit does next waits for everything the group did. */
  public void endGroup() {
    if (!visits.isEmpty()) {
      Frame f = visits.get(visits.size() - 1);
      f.inGroup = false;
      close(f);
    }
  }

  /** From now on, what happens in visit {@code f} waits for the calls made in it so far. */
  private void close(Frame f) {
    if (f.made.isEmpty()) {
      return;
    }
    if (f.made.size() == 1 && f.after == null) {
      f.after = f.made.get(0);
    } else {
      PlannedCall join = PlannedCall.join(joins++);
      link(f.after, join);
      for (PlannedCall c : f.made) {
        c.before(join);
      }
      f.after = join;
    }
    f.made.clear();
  }

  /**
   * Adds the next call of the walk.
   *
   * @param node the value's node when the call is decided
   * @param deps the dependencies of the values the call is about (for an Update: the old value's
   *     and the new value's)
   */
  void add(
      TxnOperation op,
      Node node,
      DescriptorHandle handle,
      String label,
      boolean keepsMetadata,
      Object value,
      Object oldValue,
      Object metadata,
      List<Dependency> deps,
      List<Dependency> moreDeps) {
    String key = node.key();
    PlannedCall metaFrom = op == TxnOperation.CREATE ? null : metadataOf.get(key);
    PlannedCall c =
        new PlannedCall(
            calls.size(),
            op,
            handle,
            key,
            node.baseKey(),
            label,
            keepsMetadata,
            value,
            oldValue,
            metadata,
            metaFrom);
    if (op == TxnOperation.DELETE) {
      metadataOf.remove(key);
    } else {
      metadataOf.put(key, c);
    }
    if (!visits.isEmpty()) {
      // the visit's own call: after what the visit did so far; what it does next, after the call
      Frame f = visits.get(visits.size() - 1);
      close(f);
      link(f.after, c);
      f.after = c;
    }
    link(lastOfKey.put(key, c), c);
    String base = node.baseKey();
    if (!base.equals(key)) {
      link(lastOfKey.get(base), c); // a derived value: after its base's last call
      derivedSince.computeIfAbsent(base, k -> new ArrayList<>(2)).add(c);
    } else {
      List<PlannedCall> derived = derivedSince.remove(key);
      if (derived != null) {
        for (PlannedCall d : derived) {
          d.before(c); // a base value: after its derived values' calls
        }
      }
    }
    if (handle.descriptor.maxConcurrency() <= 1) {
      link(lastOfSerialDescriptor.put(handle.name, c), c);
    }
    List<PlannedCall> waiting = dependentsSince.remove(key);
    if (waiting != null) {
      for (PlannedCall w : waiting) {
        w.before(c);
      }
    }
    boolean anyOf = dependOn(c, deps) | dependOn(c, moreDeps);
    if (anyOf) {
      for (PlannedCall earlier : sinceBarrier) {
        earlier.before(c);
      }
      link(barrier, c);
      barrier = c;
      sinceBarrier.clear();
    } else {
      link(barrier, c);
      sinceBarrier.add(c);
    }
    calls.add(c);
  }

  /** Links {@code c} to the calls for the keys it depends on; true when one is any-of. */
  private boolean dependOn(PlannedCall c, List<Dependency> deps) {
    boolean anyOf = false;
    for (int i = 0; i < deps.size(); i++) {
      Dependency d = deps.get(i);
      if (d.isAnyOf()) {
        anyOf = true;
        continue;
      }
      String target = d.key();
      link(lastOfKey.get(target), c);
      dependentsSince.computeIfAbsent(target, k -> new ArrayList<>(2)).add(c);
      String base = baseOf.apply(target);
      if (!base.equals(target)) {
        link(lastOfKey.get(base), c);
        dependentsSince.computeIfAbsent(base, k -> new ArrayList<>(2)).add(c);
      }
    }
    return anyOf;
  }

  private static void link(PlannedCall earlier, PlannedCall later) {
    if (earlier != null) {
      earlier.before(later);
    }
  }

  /**
   * The call the walk asks now for {@code key} when one was run ahead for it: the next call planned
   * for the key, if it is a {@code op} that returned; null otherwise (the walk calls the southbound
   * itself). A planned call passed over this way is dropped.
   */
  public PlannedCall take(String key, TxnOperation op) {
    if (byKey == null) {
      byKey = new HashMap<>();
      for (PlannedCall c : calls) {
        byKey.computeIfAbsent(c.key, k -> new ArrayDeque<>(2)).addLast(c);
      }
    }
    ArrayDeque<PlannedCall> q = byKey.get(key);
    if (q == null || q.isEmpty()) {
      return null;
    }
    PlannedCall c = q.peekFirst();
    if (c.op != op) {
      return null; // the walk went another way than planned (after a failure): not this call
    }
    q.pollFirst();
    if (q.isEmpty()) {
      byKey.remove(key);
    }
    return c.status == PlannedCall.Status.DONE ? c : null;
  }

  /** Calls that ran but that the walk never asked for (their effects are unknown to the graph). */
  public List<PlannedCall> notTaken() {
    List<PlannedCall> out = new ArrayList<>();
    if (byKey == null) {
      for (PlannedCall c : calls) {
        if (c.status == PlannedCall.Status.DONE) {
          out.add(c);
        }
      }
      return out;
    }
    for (ArrayDeque<PlannedCall> q : byKey.values()) {
      for (PlannedCall c : q) {
        if (c.status == PlannedCall.Status.DONE) {
          out.add(c);
        }
      }
    }
    out.sort((a, b) -> Integer.compare(a.index, b.index));
    return out;
  }
}
