package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies values to the graph and the southbound: the recursive walk of one transaction.
 *
 * <p>{@link #apply} decides the operation for a key (CREATE when the node has no value or is
 * unavailable, UPDATE otherwise, DELETE for a null value; for dependency-driven visits CREATE when
 * an unavailable node became ready and DELETE when an available one is no longer ready), then:
 *
 * <ul>
 *   <li>CREATE: store the value, validate, compute dependencies and derived values; not ready ⇒
 *       PENDING (no call); else call Create, mark CONFIGURED (OBTAINED for SB values), record it,
 *       create the unavailable values that depended on it, then its derived values.
 *   <li>UPDATE: validate; equivalent values cause no call; re-creation (Delete + Create) when the
 *       descriptor demands it; obsolete derived values are deleted first, then Update is called,
 *       then derived values are applied; new dependencies not met ⇒ delete and keep PENDING.
 *   <li>DELETE: mark unavailable (dependents see it gone), delete derived values, un-configure
 *       dependents (they become PENDING), call Delete last and record it last. If a derived value
 *       or dependent fails to be deleted, the value itself is left in place.
 * </ul>
 *
 * In simulation no descriptor CRUD or Validate is called and every call is assumed to succeed; the
 * graph changes are rolled back by the caller.
 *
 * <p>Longer than our usual limit on purpose: it is one recursive algorithm whose steps share the
 * walk's state (recursion path, records, status changes); splitting it would scatter the recursion
 * across classes. Readiness lives in {@link Readiness}.
 */
final class Walker {
  private static final Logger LOG = LoggerFactory.getLogger(Walker.class);

  private final Graph g;
  private final Registry reg;
  private final TxnContext tx;

  /** Descriptor of the node's key (cached in the node by the registry). */
  private DescriptorHandle handle(Node node) {
    return reg.forNode(node);
  }

  Walker(Graph g, Registry reg, TxnContext tx) {
    this.g = g;
    this.reg = reg;
    this.tx = tx;
  }

  /** Arguments of one visit. */
  record Args(
      ValueToApply kv, String baseKey, boolean derived, boolean depUpdate, Set<String> recreating) {
    Args withRecreating(Set<String> r) {
      return new Args(kv, baseKey, derived, depUpdate, r);
    }
  }

  /** Derived values and dependencies computed for a value. */
  private record Relations(
      List<Dependency> deps,
      List<ValueToApply> derived,
      List<String> derivedKeys,
      Throwable error) {
    Relations(List<Dependency> deps, Throwable error) {
      this(deps, List.of(), List.of(), error);
    }

    /** No dependency, no derived value, no error. */
    static final Relations NONE = new Relations(List.of(), null);

    /** Only dependencies (the shared {@link #NONE} when there are none). */
    static Relations of(List<Dependency> deps) {
      return deps.isEmpty() ? NONE : new Relations(deps, null);
    }
  }

  /** Applies a top-level value of the transaction. Returns the error of the value, or null. */
  Throwable applyTop(ValueToApply kv) {
    Node n = g.get(kv.key());
    if (tx.isRetry() && n != null && n.isDerived()) {
      // a derived value retried alone (settled after a late southbound answer for it): applied
      // as a value derived from its base
      return apply(new Args(kv, n.derivedFrom, true, false, null));
    }
    if (changesDerived(kv, n)) {
      if (tx.isNB()) {
        String msg =
            (kv.value() == null ? "removal" : "value")
                + " ignored: the key holds a"
                + " value derived from "
                + n.derivedFrom
                + ", which only its base value sets";
        tx.ignored.add(
            new KeyError(
                kv.key(),
                kv.value() == null ? TxnOperation.DELETE : TxnOperation.UPDATE,
                msg,
                new ContractException(kv.key() + ": " + msg)));
      }
      return null;
    }
    if (tx.isNB() && kv.value() != null) {
      DescriptorHandle h = n != null ? handle(n) : reg.forKey(kv.key());
      if (h != null && h.d.derivedOnly()) {
        // no base value derives the key (else the check above refused it): still, only base
        // values set keys of this descriptor
        String msg =
            "value ignored: descriptor "
                + h.name
                + " describes only derived values,"
                + " which their base values set";
        LOG.warn(
            "value of {} ignored: descriptor {} describes only derived values", kv.key(), h.name);
        tx.ignored.add(
            new KeyError(
                kv.key(),
                n == null || n.value == null ? TxnOperation.CREATE : TxnOperation.UPDATE,
                msg,
                new ContractException(kv.key() + ": " + msg)));
        return null;
      }
    }
    return apply(new Args(kv, kv.key(), false, false, null));
  }

  /**
   * True when {@code kv}, a pair of a transaction or notification, would set or remove a derived
   * value ({@code n}: the key's node now, or null): derived values belong to their base value, so
   * the pair is ignored, with a warning, as the reference does. Checked when the pair is applied: a
   * base removed earlier in the same transaction has taken its derived values with it, and the key
   * is then free for a value of its own.
   */
  private static boolean changesDerived(ValueToApply kv, Node n) {
    if (n == null || !n.isDerived()) {
      return false;
    }
    LOG.warn(
        "{} of {} ignored: it is a value derived from {}, which only its base value sets",
        kv.value() == null ? "removal" : "value",
        kv.key(),
        n.derivedFrom);
    return true;
  }

  Throwable apply(Args a) {
    String key = a.kv.key();
    if (!tx.branch.push(key)) {
      return null; // already on the recursion path: a dependency cycle
    }
    if (tx.plan != null) {
      tx.plan.enterVisit();
    }
    try {
      return applyOnPath(a);
    } finally {
      tx.branch.pop();
      if (tx.plan != null) {
        tx.plan.exitVisit();
      }
    }
  }

  private Throwable applyOnPath(Args a) {
    // a visit other than a dependency update always gives the node a last update of this
    // transaction, which a node created by this transaction's refresh has not yet: its content
    // changes (see Graph.writeChanging)
    Node node = a.depUpdate ? g.write(a.kv.key()) : g.writeChanging(a.kv.key());
    return visit(a, node, preRecord(a, node));
  }

  /** The visit of {@code node} with its operation record {@code op} (taken before any change). */
  private Throwable visit(Args a, Node node, OpRecord op) {
    String key = a.kv.key();
    ValueState prevState = node.state;
    TxnOperation prevOp = node.lastOperation();
    String prevErr = OpRecord.msg(node.error);
    List<String> prevDetails = details(node);
    Node.LastUpdate prevUpdate = node.lastUpdate;

    if (a.depUpdate) {
      op.op = depUpdateOperation(node);
      if (op.op == TxnOperation.UNDEFINED) {
        return null;
      }
    } else if (a.kv.value() == null) {
      op.op = TxnOperation.DELETE;
    } else if (node.value == null || !node.isAvailable()) {
      op.op = TxnOperation.CREATE;
    } else {
      op.op = TxnOperation.UPDATE;
    }
    if (node.held != null
        && prevUpdate != null
        && prevUpdate.seq() == tx.seq
        && (prevState == ValueState.FAILED || prevState == ValueState.RETRYING)) {
      // its call failed earlier in this transaction: what the southbound holds is unknown until
      // the refresh after the transaction (the failure may have left anything), so the walk goes
      // on as if nothing were there, as the reference does
      node.held = null;
    }
    if (node.held != null) {
      // the southbound still holds an object for the key: it is updated (or re-created), never
      // created a second time, and the operation starts from it
      if (op.op == TxnOperation.CREATE) {
        op.op = TxnOperation.UPDATE;
      }
      op.prevValue = node.held;
    }

    RetryOptions retry = null;
    if (tx.isNB() && !tx.inheritRetry) {
      retry = tx.nbRetry;
    } else if (prevUpdate != null) {
      retry = prevUpdate.retry();
    } else if (a.derived) {
      Node base = g.get(a.baseKey);
      if (base != null && base.lastUpdate != null) {
        retry = base.lastUpdate.retry();
      }
    }
    node.lastUpdate = lastUpdate(prevUpdate, op.op, a.kv, retry);
    if (node.state == ValueState.RETRYING && retry == null) {
      // the pending retry is obsolete now (new last-update) and no new one can be
      // scheduled: a RETRYING state would never be retried (e.g. kept by an inherited failure)
      node.state = ValueState.FAILED;
    }

    // a value already broken by this transaction is not touched again, except by the revert
    // once a refresh has read it: until then what the southbound holds for it is unknown (even
    // whether a failed Create left an object that a removal would have to delete)
    if ((prevState == ValueState.FAILED || prevState == ValueState.RETRYING)
        && prevUpdate != null
        && prevUpdate.seq() == tx.seq
        && (!a.kv.revert() || tx.unread.contains(key))) {
      return node.error;
    }

    Throwable unknown = unknownState(node);
    if (unknown != null) {
      // what the southbound holds is unknown: no call, and no status that would claim it
      op.newErr = unknown;
      op.newState = markFailed(node, a, unknown, true, op.op);
      record(op);
      tx.statusChanged(a.baseKey);
      return unknown;
    }

    if (prevState == ValueState.RETRYING) {
      tx.sawRetrying = true;
    }
    Throwable err =
        switch (op.op) {
          case DELETE -> applyDelete(node, op, a, a.depUpdate, false, null);
          case CREATE -> applyCreate(node, op, a);
          case UPDATE -> applyUpdate(node, op, a);
          default -> null;
        };

    if (!a.derived) {
      settleObsoleteRetries(g.get(key), a.baseKey);
    }
    {
      Node now = g.get(key);
      boolean neverThere =
          prevState == ValueState.NONEXISTENT
              && prevUpdate == null
              && (now == null || now.value == null); // e.g. the removal of an unknown key
      if (neverThere) {
        return err;
      }
      if (prevUpdate == null
          || now == null
          || now.value == null
          || prevState != now.state
          || prevOp != now.lastOperation()
          || !prevErr.equals(OpRecord.msg(now.error))
          || !prevDetails.equals(details(now))) {
        tx.statusChanged(a.baseKey);
      }
    }
    return err;
  }

  /**
   * The error a call for {@code node} fails with, without being made, while what the southbound
   * holds for its base is unknown ({@link TxnContext#unreadBefore}); null otherwise.
   */
  private Throwable unknownState(Node node) {
    if (tx.unreadBefore.isEmpty() || tx.simulate && tx.plan == null) {
      return null;
    }
    String base = node.baseKey();
    return tx.unreadBefore.contains(base) ? new UnreadStateException(base) : null;
  }

  /**
   * True when a refresh can read {@code node}: its descriptor (of a derived value: its base's) can
   * Retrieve. What the southbound holds for a value nothing can read stays the scheduler's best
   * guess.
   */
  private boolean readable(Node node) {
    Node base = node.isDerived() ? g.get(node.derivedFrom) : node;
    DescriptorHandle h = base == null ? null : handle(base);
    return h != null && h.canRetrieve();
  }

  /**
   * A retry is planned per base value and dropped as obsolete once the base has a newer last
   * update. {@code base} now has one from this transaction, so a RETRYING derived value that this
   * visit did not apply again (an INVALID or PENDING base, a failed Create or Delete, an abandoned
   * removal) will never be retried: it is FAILED, keeping its error. Values this transaction
   * applied are planned again after it (or failed) by {@link RetryPlanner}.
   */
  private void settleObsoleteRetries(Node base, String baseKey) {
    if (base == null
        || base.derivedKeys.isEmpty()
        || base.lastUpdate == null
        || base.lastUpdate.seq() != tx.seq) {
      return;
    }
    for (String dk : base.derivedKeys) {
      Node dn = g.get(dk);
      if (dn != null
          && dn.state == ValueState.RETRYING
          && baseKey.equals(dn.derivedFrom)
          && (dn.lastUpdate == null || dn.lastUpdate.seq() != tx.seq)) {
        g.write(dk).state = ValueState.FAILED;
        tx.statusChanged(baseKey);
      }
    }
  }

  /**
   * The key's last update after this visit: {@code prev} itself when this transaction already asked
   * the same (a value visited again, e.g. created once its dependency appeared), so a second visit
   * allocates nothing.
   */
  private Node.LastUpdate lastUpdate(
      Node.LastUpdate prev, TxnOperation op, ValueToApply kv, RetryOptions retry) {
    if (prev != null
        && prev.seq() == tx.seq
        && prev.op() == op
        && prev.value() == kv.value()
        && prev.revert() == kv.revert()
        && prev.retry() == retry) {
      return prev;
    }
    return new Node.LastUpdate(tx.seq, op, kv.value(), kv.revert(), retry);
  }

  private TxnOperation depUpdateOperation(Node node) {
    if (!node.isAvailable()) {
      return isReady(node, false) ? TxnOperation.CREATE : TxnOperation.UNDEFINED;
    }
    return isReady(node, false) ? TxnOperation.UNDEFINED : TxnOperation.DELETE;
  }

  private OpRecord preRecord(Args a, Node node) {
    OpRecord op = new OpRecord();
    op.node = node;
    op.key = a.kv.key();
    op.baseKey = a.baseKey;
    op.prevValue = node.state != ValueState.REMOVED ? node.value : null;
    op.newValue = a.kv.value();
    op.prevState = node.state;
    op.prevErr = node.error;
    op.derived = a.derived;
    op.property = a.derived && handle(node) == null;
    op.revert = a.kv.revert();
    op.retry = tx.isRetry() || tx.type == TxnType.RETRY_UNIMPL_OPS;
    op.recreate = a.recreating != null && a.recreating.contains(a.kv.key());
    return op;
  }

  // ---------------------------------------------------------------- CREATE

  private Throwable applyCreate(Node node, OpRecord op, Args a) {
    String key = a.kv.key();
    node.value = a.kv.value();
    DescriptorHandle h = handle(node);
    if (h != null) {
      node.descriptor = h.name;
      node.label = h.label(key);
    } else {
      node.descriptor = null;
      node.label = key;
    }
    if (a.derived) {
      node.derivedFrom = a.baseKey;
    }

    if (!a.kv.fromSB() && !a.derived && h == null) {
      if (node.state == ValueState.UNIMPLEMENTED) {
        return null; // already known: nothing to record
      }
      node.unavailable = true;
      clearError(node);
      op.noop = true;
      setState(node, op, ValueState.UNIMPLEMENTED);
      record(op);
      return null;
    }
    if (a.derived && h == null) {
      op.property = true;
    }

    if ((!tx.simulate || tx.plan != null) && !a.kv.fromSB() && h != null) {
      Throwable invalid = h.validate(key, node.value);
      if (invalid != null) {
        return markInvalid(node, op, invalid);
      }
    }

    Relations rel = relations(node, h, a);
    if (rel.error != null) {
      return markInvalid(node, op, rel.error);
    }
    g.setDeps(node, rel.deps);
    node.derivedKeys = rel.derivedKeys;

    if (!isReady(node, a.kv.fromSB())) {
      node.unavailable = true;
      clearError(node);
      op.noop = true;
      setState(node, op, ValueState.PENDING);
      record(op);
      return null;
    }

    if (tx.plan != null && !op.property && !a.kv.fromSB()) {
      tx.plan.add(
          TxnOperation.CREATE,
          node,
          h,
          node.label,
          keepsMetadata(node, h),
          node.value,
          null,
          null,
          node.deps(),
          List.of());
    }
    if (!tx.simulate && !op.property) {
      Object metadata;
      if (!a.kv.fromSB()) {
        DescriptorHandle.Result<Object> r = callCreate(op, h, key, node.value);
        if (r.failed()) {
          node.unavailable = true;
          op.newErr = r.error();
          op.newState =
              markFailed(node, a, r.error(), h.isRetriable(r.error()), TxnOperation.CREATE);
          record(op);
          return r.error();
        }
        metadata = r.value();
      } else {
        metadata = a.kv.metadata();
      }
      if (!node.isDerived() && h != null && h.metadataMap != null) {
        setMetadata(node, h, metadata);
      } else if (!node.isDerived() && h == null) {
        node.metadata = metadata; // an SB value no descriptor selects: kept as reported
      }
    }

    clearError(node);
    node.unavailable = false;
    node.held = null;
    setState(node, op, a.kv.fromSB() ? ValueState.OBTAINED : ValueState.CONFIGURED);
    record(op);

    // errors of dependents are theirs, not this value's
    runDepUpdates(node, a, true);
    return applyDerived(rel.derived, a, true);
  }

  // ---------------------------------------------------------------- UPDATE

  private Throwable applyUpdate(Node node, OpRecord op, Args a) {
    String key = a.kv.key();
    DescriptorHandle h = handle(node);
    List<Dependency> depsBefore = node.deps();
    if (node.held != null) {
      node.value = node.held; // what the southbound holds: the update starts from it
    }
    if ((!tx.simulate || tx.plan != null) && !a.kv.fromSB() && h != null) {
      Throwable invalid = h.validate(key, a.kv.value());
      if (invalid != null) {
        // nothing is called: the southbound keeps what it holds, remembered for the next
        // operation (a removal deletes it, a valid value updates it)
        node.held = node.value;
        node.value = a.kv.value();
        return markInvalid(node, op, invalid);
      }
    }
    boolean equivalent =
        h != null
            ? h.equivalent(key, node.value, a.kv.value())
            : DescriptorHandle.equalValues(key, node.value, a.kv.value());
    if (equivalent && h != null) {
      h.rememberEqual(node, node.value, a.kv.value());
    }
    boolean recreate =
        !equivalent
            && !a.kv.fromSB()
            && h != null
            && h.updateWithRecreate(key, node.value, a.kv.value(), node.metadata);

    if (recreate) {
      Set<String> recreating = new HashSet<>(node.derivedKeys);
      recreating.add(key);
      Args ra = a.withRecreating(recreating);
      OpRecord del = preRecord(ra, node);
      del.op = TxnOperation.DELETE;
      del.newValue = null;
      Throwable delErr = applyDelete(node, del, ra, false, true, null);
      if (delErr != null) {
        return delErr;
      }
      node = g.write(key);
      OpRecord create = preRecord(ra, node);
      create.op = TxnOperation.CREATE;
      create.prevValue = null;
      return applyCreate(node, create, ra);
    }

    Object prevValue = node.value;
    // an unavailable value whose object the southbound holds: once updated it is available
    // again, and what waits for it goes ahead, as after a Create
    boolean wasUnavailable = node.unavailable;
    Relations rel = relations(node, h, a);
    if (rel.error != null) {
      node.held = node.value;
      node.value = a.kv.value();
      return markInvalid(node, op, rel.error);
    }
    boolean derivedChanged = !sameKeys(rel.derivedKeys, node.derivedKeys);
    if (!equivalent || derivedChanged) {
      List<String> oldDerived = node.derivedKeys;
      List<Dependency> oldDeps = node.deps();
      g.setDeps(node, rel.deps);
      node.derivedKeys = rel.derivedKeys;
      List<ValueToApply> obsolete = new ArrayList<>();
      // membership by hash when the lists are long (a base with thousands of derived values)
      Collection<String> kept =
          rel.derivedKeys.size() > 16 ? new HashSet<>(rel.derivedKeys) : rel.derivedKeys;
      for (String dk : oldDerived) {
        if (!kept.contains(dk)) {
          obsolete.add(new ValueToApply(dk, null, a.kv.origin(), a.kv.revert(), null));
        }
      }
      Throwable obsErr = applyDerived(obsolete, a, false);
      if (obsErr != null) {
        // the Update was not called: keep the value that is in the SB
        g.setDeps(node, oldDeps);
        node.derivedKeys = oldDerived;
        return obsErr;
      }
    }

    // a failed value the southbound holds as asked after all (a refresh found it) is settled
    // here: with dependencies unmet it is taken down, as any value that loses them
    boolean settles =
        equivalent && (op.prevState == ValueState.FAILED || op.prevState == ValueState.RETRYING);
    if ((!equivalent || node.unavailable || settles) && !isReady(node, a.kv.fromSB())) {
      // the new value waits for its dependencies: take the old one down, keep the new as PENDING
      // (also an equal value whose object a failed Delete left behind: it goes now)
      return applyDelete(node, op, a, true, false, a.kv.value());
    }
    node.value = a.kv.value();

    if (tx.plan != null && !equivalent && h != null && !a.kv.fromSB()) {
      tx.plan.add(
          TxnOperation.UPDATE,
          node,
          h,
          node.label,
          keepsMetadata(node, h),
          node.value,
          prevValue,
          node.metadata,
          node.deps(),
          depsBefore);
    }
    if (!tx.simulate && !equivalent && h != null) {
      Object metadata;
      if (!a.kv.fromSB()) {
        DescriptorHandle.Result<Object> r =
            callUpdate(op, h, key, prevValue, node.value, node.metadata);
        if (r.failed()) {
          if (node.unavailable) {
            node.held = prevValue; // still there (an available value keeps its own value)
          }
          op.newErr = r.error();
          op.newState =
              markFailed(node, a, r.error(), h.isRetriable(r.error()), TxnOperation.UPDATE);
          record(op);
          return r.error();
        }
        metadata = r.value();
      } else {
        metadata = a.kv.metadata();
      }
      if (!node.isDerived() && h.metadataMap != null) {
        setMetadata(node, h, metadata);
      }
    }

    clearError(node);
    node.unavailable = false;
    node.held = null;
    setState(node, op, a.kv.fromSB() ? ValueState.OBTAINED : ValueState.CONFIGURED);
    if (!equivalent) {
      record(op);
    } else if (op.prevState != op.newState
        && !(op.prevState == ValueState.DISCOVERED && op.newState == ValueState.CONFIGURED)) {
      op.noop = true;
      record(op);
    }
    if (wasUnavailable
        || equivalent
            && (op.prevState == ValueState.FAILED || op.prevState == ValueState.RETRYING)) {
      // a failed operation that the southbound carried out after all (the refresh after the
      // failure found the value): nothing was created in this walk, yet the value is available
      // again, so what waits for it goes ahead now, as after a Create (their errors are theirs)
      runDepUpdates(node, a, true);
    }
    return applyDerived(rel.derived, a, true);
  }

  // ---------------------------------------------------------------- DELETE

  /**
   * Deletes the value of {@code node}.
   *
   * @param pending the value is taken down because of its dependencies (ends PENDING)
   * @param recreate the Delete half of a re-creation (derived node stays in the graph)
   * @param pendingValue for an update waiting on new dependencies: the new value to keep
   */
  private Throwable applyDelete(
      Node node, OpRecord op, Args a, boolean pending, boolean recreate, Object pendingValue) {
    String key = node.key;
    if (node.value == null) {
      g.remove(key);
      return null;
    }
    if (!node.isAvailable() && node.held == null) {
      op.noop = true;
      return finishDelete(node, op, a, pending, recreate, null, pendingValue);
    }
    // an available value, or an unavailable one whose object the southbound still holds
    Object object = node.held != null ? node.held : node.value;
    ValueState before = node.state;
    boolean wasUnavailable = node.unavailable;
    node.unavailable = true;
    if (!pending) {
      node.state = ValueState.REMOVED;
    }
    Throwable inherited = null;
    if (!node.isDerived()) {
      List<ValueToApply> dels = new ArrayList<>();
      for (String dk : node.derivedKeys) {
        Node dn = g.get(dk);
        if (dn != null && dn.value != null) {
          dels.add(new ValueToApply(dk, null, a.kv.origin(), a.kv.revert(), null));
        }
      }
      inherited = applyDerived(dels, a, false);
    }
    if (inherited == null) {
      inherited = runDepUpdates(node, a, false);
    }
    if (inherited != null) {
      // a derived value or a dependent could not be removed: keep this one as it was
      node.unavailable = wasUnavailable;
      node.state = before;
      return inherited;
    }
    Throwable err = null;
    DescriptorHandle h = node.descriptor == null ? null : handle(node);
    if (tx.plan != null && h != null && !a.kv.fromSB()) {
      tx.plan.add(
          TxnOperation.DELETE,
          node,
          h,
          node.label,
          keepsMetadata(node, h),
          object,
          null,
          node.metadata,
          node.deps(),
          dependentsWithAnyOf(node) ? ANY_OF : List.of());
    }
    if (!tx.simulate && h != null) {
      if (!a.kv.fromSB()) {
        err = callDelete(op, h, key, object, node.metadata);
      }
      if (err == null && !node.isDerived() && h.metadataMap != null) {
        setMetadata(node, h, null);
      }
    }
    return finishDelete(node, op, a, pending, recreate, err, pendingValue);
  }

  private Throwable finishDelete(
      Node node,
      OpRecord op,
      Args a,
      boolean pending,
      boolean recreate,
      Throwable err,
      Object pendingValue) {
    if (err == null) {
      clearError(node);
      node.held = null;
      if (pendingValue != null) {
        node.value = pendingValue;
      }
      if (pending) {
        setState(node, op, ValueState.PENDING);
      } else if (a.derived && !recreate) {
        op.newState = ValueState.REMOVED;
        g.remove(node.key);
      } else {
        setState(node, op, ValueState.REMOVED);
      }
    } else {
      // the object is still in the southbound: the next operation on the key starts from it
      node.held = node.held != null ? node.held : node.value;
      DescriptorHandle h = handle(node);
      op.newErr = err;
      op.newState = markFailed(node, a, err, h == null || h.isRetriable(err), TxnOperation.DELETE);
    }
    record(op);
    return err;
  }

  // ------------------------------------------------------------ relations

  /**
   * After a refresh found {@code node} available (a failed removal that left the object in place, a
   * failed call the southbound carried out after all): the values waiting for it are visited and
   * created when ready, as after a Create. Found unavailable (a removal the southbound carried out
   * after all): the available values depending on it are taken down. Their errors are theirs.
   */
  void reevaluateDependents(Node node) {
    if (!tx.branch.push(node.key)) {
      return;
    }
    if (tx.plan != null) {
      tx.plan.enterVisit();
    }
    try {
      ValueToApply kv = new ValueToApply(node.key, node.value, node.origin(), false, null);
      runDepUpdates(
          node, new Args(kv, node.baseKey(), node.isDerived(), true, null), node.isAvailable());
    } finally {
      tx.branch.pop();
      if (tx.plan != null) {
        tx.plan.exitVisit();
      }
    }
  }

  /**
   * Visits the values depending on {@code node} whose availability may change (in a planning pass:
   * as one group of visits that do not wait for each other, {@link CallPlan#startGroup}).
   */
  private Throwable runDepUpdates(Node node, Args a, boolean forUnavailable) {
    if (tx.plan == null) {
      return visitDependents(node, a, forUnavailable);
    }
    tx.plan.startGroup();
    try {
      return visitDependents(node, a, forUnavailable);
    } finally {
      tx.plan.endGroup();
    }
  }

  private Throwable visitDependents(Node node, Args a, boolean forUnavailable) {
    // dependentsOf is sorted by key and has no duplicates: visited in that order
    Collection<String> dependents = g.dependentsOf(node.key);
    if (dependents.isEmpty()) {
      return null;
    }
    if (dependents.size() == 1 && dependents instanceof List<String> single) {
      // the usual single dependent, in an immutable list: no collection of visits
      Node dn = g.get(single.get(0));
      return needsDepUpdate(dn, forUnavailable) ? depUpdate(dn, a, forUnavailable) : null;
    }
    List<Node> visits = null;
    for (String dk : dependents) {
      Node dn = g.get(dk);
      if (!needsDepUpdate(dn, forUnavailable)) {
        continue;
      }
      if (visits == null) {
        visits = new ArrayList<>(dependents.size());
      }
      visits.add(dn);
    }
    if (visits == null) {
      return null;
    }
    Throwable first = null;
    for (int i = 0; i < visits.size(); i++) {
      Throwable err = depUpdate(visits.get(i), a, forUnavailable);
      if (err != null && first == null) {
        first = err;
      }
    }
    return first;
  }

  /** True when dependent {@code dn} may change availability with its dependency. */
  private static boolean needsDepUpdate(Node dn, boolean forUnavailable) {
    if (dn == null || dn.value == null || dn.origin() != ValueOrigin.FROM_NB) {
      return false;
    }
    if (forUnavailable == dn.isAvailable()) {
      return false;
    }
    // INVALID and UNIMPLEMENTED: only a new NB value can fix these
    return dn.state != ValueState.INVALID && dn.state != ValueState.UNIMPLEMENTED;
  }

  /** Visits dependent {@code dn} after its dependency changed availability; its error or null. */
  private Throwable depUpdate(Node dn, Args a, boolean forUnavailable) {
    Object value = dn.lastUpdate != null ? dn.lastUpdate.value() : dn.value;
    if (value == null) {
      // its deletion was requested but did not happen (a derived value failed to go): while
      // it is still available it must be taken down when what it needs goes; never re-created
      // (visited with its null intent: the walk deletes it in pending mode)
      Node cur = g.get(dn.key);
      if (forUnavailable || cur == null || cur.value == null || !cur.isAvailable()) {
        return null;
      }
    }
    ValueToApply kv = new ValueToApply(dn.key, value, dn.origin(), a.kv.revert(), null);
    return apply(new Args(kv, dn.baseKey(), dn.isDerived(), true, a.recreating));
  }

  /**
   * Applies derived values of {@code a}'s base, given in key order (every caller builds the list
   * from a sorted one: the descriptor's derived values as {@link DescriptorHandle#derivedSorted}
   * returns them, or a node's derived keys, which are kept sorted).
   */
  private Throwable applyDerived(List<ValueToApply> sorted, Args a, boolean check) {
    if (tx.plan == null) {
      return applyDerivedInOrder(sorted, a, check);
    }
    tx.plan.startGroup(); // in a planning pass: siblings that do not wait for each other
    try {
      return applyDerivedInOrder(sorted, a, check);
    } finally {
      tx.plan.endGroup();
    }
  }

  private Throwable applyDerivedInOrder(List<ValueToApply> sorted, Args a, boolean check) {
    assert ValueToApply.isSorted(sorted) : "derived values out of key order";
    Throwable was = null;
    for (int i = 0; i < sorted.size(); i += Bulk.RANGE) {
      Throwable err = applyDerivedRange(sorted, i, Bulk.end(i, sorted.size()), a, check);
      if (err != null) {
        was = err;
      }
    }
    return was;
  }

  /** {@link #applyDerived} of {@code sorted[from, to)}: the error of the last that failed. */
  private Throwable applyDerivedRange(
      List<ValueToApply> sorted, int from, int to, Args a, boolean check) {
    Throwable was = null;
    for (int i = from; i < to; i++) {
      Throwable err = applyOneDerived(sorted.get(i), a, check);
      if (err != null) {
        was = err;
      }
    }
    return was;
  }

  /** One derived value of {@link #applyDerived}. */
  private Throwable applyOneDerived(ValueToApply kv, Args a, boolean check) {
    Node n = g.get(kv.key());
    if (check && !validDerived(kv, n, a.baseKey)) {
      return null;
    }
    if (unchanged(kv, n, a)) {
      return null; // W5: a base with thousands of derived values costs what changed in them
    }
    return apply(new Args(kv, a.baseKey, true, false, a.recreating));
  }

  /**
   * True when visiting derived value {@code kv} of {@code a}'s base would change nothing: the node
   * holds an equal value, CONFIGURED by an earlier update with the same retry and revert settings,
   * with nothing left over from a failure. Such a visit would make no call, record nothing and
   * change no status; skipping it keeps the node, its revision and its published entry as they are.
   */
  private boolean unchanged(ValueToApply kv, Node n, Args a) {
    if (n == null
        || n.state != ValueState.CONFIGURED
        || a.recreating != null
        || kv.fromSB()
        || kv.revert()
        || n.held != null
        || n.error != null
        || !a.baseKey.equals(n.derivedFrom)) {
      return false;
    }
    Node.LastUpdate last = n.lastUpdate;
    if (last == null
        || last.op() != TxnOperation.UPDATE
        || last.revert()
        || last.seq() == tx.seq
        || tx.isNB() && !tx.inheritRetry && !java.util.Objects.equals(last.retry(), tx.nbRetry)
        || !tx.unreadBefore.isEmpty() && tx.unreadBefore.contains(a.baseKey)) {
      return false;
    }
    Object v = kv.value();
    return v == n.value || v != null && v.equals(n.value);
  }

  /**
   * {@code a.equals(b)} for two lists of keys, compared in ranges ({@link Bulk}: a base value may
   * derive thousands) and by identity first (keys derived from one remembered answer are the same
   * strings).
   */
  static boolean sameKeys(List<String> a, List<String> b) {
    if (a == b) {
      return true;
    }
    int size = a.size();
    if (size != b.size()) {
      return false;
    }
    for (int i = 0; i < size; i += Bulk.RANGE) {
      if (!sameKeys(a, b, i, Bulk.end(i, size))) {
        return false;
      }
    }
    return true;
  }

  private static boolean sameKeys(List<String> a, List<String> b, int from, int to) {
    for (int i = from; i < to; i++) {
      String x = a.get(i);
      String y = b.get(i);
      if (x != y && !x.equals(y)) {
        return false;
      }
    }
    return true;
  }

  private boolean validDerived(ValueToApply kv, Node n, String baseKey) {
    if (kv.value() == null) {
      LOG.warn("derived value {} of {} is null; skipped", kv.key(), baseKey);
      return false;
    }
    if (DerivedOrder.collides(n, baseKey)) {
      LOG.warn(
          "derived value {} of {} collides with an existing value; skipped", kv.key(), baseKey);
      return false;
    }
    return true;
  }

  private Relations relations(Node node, DescriptorHandle h, Args a) {
    if (h == null) {
      return Relations.NONE;
    }
    Object value = a.kv.value();
    DescriptorHandle.Result<List<Dependency>> deps = h.dependencies(node, value);
    if (deps.failed()) {
      return new Relations(List.of(), deps.error());
    }
    if (a.derived) {
      return Relations.of(deps.value());
    }
    // sorted by key, first occurrence of a key wins
    DescriptorHandle.Result<List<KeyValuePair>> der = h.derivedSorted(node, value);
    if (der.failed()) {
      return new Relations(List.of(), der.error());
    }
    if (der.value().isEmpty()) {
      return Relations.of(deps.value());
    }
    // a key colliding with a value that is not derived from this one is skipped
    List<KeyValuePair> unique = der.value();
    List<ValueToApply> derived = new ArrayList<>(unique.size());
    String[] keys = new String[unique.size()];
    int n = 0;
    for (int i = 0; i < unique.size(); i += Bulk.RANGE) {
      n = addDerived(unique, i, Bulk.end(i, unique.size()), node, a, derived, keys, n);
    }
    List<String> derivedKeys = n == keys.length ? List.of(keys) : List.of(Arrays.copyOf(keys, n));
    return new Relations(deps.value(), derived, derivedKeys, null);
  }

  /**
   * {@link #addDerived(KeyValuePair, Node, Args, List)} for {@code unique[from, to)}; the keys
   * added go to {@code keys} from index {@code n}. Returns the new count of keys.
   */
  private int addDerived(
      List<KeyValuePair> unique,
      int from,
      int to,
      Node base,
      Args a,
      List<ValueToApply> derived,
      String[] keys,
      int n) {
    for (int i = from; i < to; i++) {
      KeyValuePair kv = unique.get(i);
      if (addDerived(kv, base, a, derived)) {
        keys[n++] = kv.key();
      }
    }
    return n;
  }

  /**
   * Adds derived value {@code kv} of {@code base} to {@code derived} unless its key holds a value
   * not derived from the base. True when added.
   */
  private boolean addDerived(KeyValuePair kv, Node base, Args a, List<ValueToApply> derived) {
    if (DerivedOrder.collides(g.get(kv.key()), base.key)) {
      return false;
    }
    derived.add(new ValueToApply(kv.key(), kv.value(), a.kv.origin(), a.kv.revert(), null));
    return true;
  }

  // ------------------------------------------------------------ readiness

  /** True when every dependency label has an available target (SB values are always ready). */
  boolean isReady(Node n, boolean fromSB) {
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
    return all || Readiness.readyThroughCycles(g, n);
  }

  /** PENDING: unsatisfied labels; INVALID: invalid fields; else empty. */
  List<String> details(Node n) {
    return Readiness.details(g, n);
  }

  // ------------------------------------------------------------ node state

  private Throwable markInvalid(Node node, OpRecord op, Throwable err) {
    noteOwnFailure(node, op.revert);
    node.unavailable = true;
    op.newErr = err;
    op.noop = true;
    setState(node, op, ValueState.INVALID);
    node.error = err;
    node.errorRetriable = false;
    node.errorOp = op.op;
    record(op);
    return err;
  }

  private void noteOwnFailure(Node node, boolean revert) {
    if (!revert && tx.revertOnFailure && tx.ownKeys.contains(node.baseKey())) {
      tx.ownFailed = true;
    }
  }

  private ValueState markFailed(
      Node node, Args a, Throwable err, boolean retriable, TxnOperation failedOp) {
    return markFailed(node, a, err, retriable, failedOp, true);
  }

  private ValueState markFailed(
      Node node,
      Args a,
      Throwable err,
      boolean retriable,
      TxnOperation failedOp,
      boolean ownError) {
    if (ownError) {
      noteOwnFailure(node, a.kv.revert());
    }
    if (readable(node)) {
      tx.unread.add(node.key); // a call failed: the southbound may hold anything for the key
    }
    ValueState state = ValueState.FAILED;
    boolean toBeReverted = tx.isNB() && tx.revertOnFailure && !a.kv.revert();
    int attempt = 1;
    if (tx.isRetry() && tx.retryKeys.contains(node.baseKey())) {
      attempt = tx.retryAttempt + 1;
    }
    if (retriable && !toBeReverted) {
      Node.LastUpdate lu = node.lastUpdate;
      if (lu != null
          && lu.retry() != null
          && (lu.retry().maxCount() == 0 || attempt <= lu.retry().maxCount())) {
        state = ValueState.RETRYING;
      }
    }
    if (state == ValueState.RETRYING) {
      tx.sawRetrying = true;
    }
    node.state = state;
    node.error = err;
    node.errorRetriable = retriable;
    node.errorOp = failedOp;
    node.retryAttempt = attempt;
    return state;
  }

  private static void clearError(Node node) {
    node.error = null;
    node.errorRetriable = false;
    node.errorOp = TxnOperation.UNDEFINED;
  }

  private void setState(Node node, OpRecord op, ValueState s) {
    if (s == ValueState.UNIMPLEMENTED) {
      tx.sawUnimplemented = true;
    }
    node.state = s;
    op.newState = s;
  }

  private void setMetadata(Node node, DescriptorHandle h, Object metadata) {
    node.metadata = metadata;
    if (!tx.simulate && h.metadataMap != null) {
      h.metadataMap.put(node.label, metadata);
    }
  }

  // ------------------------------------------------------------ southbound calls

  /** Stands for "a dependent may be satisfied by other values" in a planned call's links. */
  private static final List<Dependency> ANY_OF =
      List.of(Dependency.anyOfPrefixes("a dependent's alternatives", ""));

  /**
   * True when a value depending on {@code node} has an any-of dependency: whether a Delete of it
   * happens then depends on the other values that satisfy the dependent, so the planned Delete
   * waits for every earlier call ({@link CallPlan}).
   */
  private boolean dependentsWithAnyOf(Node node) {
    for (String d : g.dependentsOf(node.key)) {
      Node dn = g.get(d);
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

  /** True when a call for {@code node} changes its descriptor's metadata map (base values). */
  private static boolean keepsMetadata(Node node, DescriptorHandle h) {
    return !node.isDerived() && h.metadataMap != null;
  }

  /**
   * The call that ran ahead of the walk for {@code key} ({@link TxnContext#ranAhead}), its times
   * noted in {@code op}; null when the walk calls the southbound itself.
   */
  private PlannedCall ranAhead(OpRecord op, String key, TxnOperation call) {
    PlannedCall ran = tx.ranAhead == null ? null : tx.ranAhead.take(key, call);
    if (ran != null) {
      op.callStarted = ran.started;
      op.callEnded = ran.ended;
    }
    return ran;
  }

  private DescriptorHandle.Result<Object> callCreate(
      OpRecord op, DescriptorHandle h, String key, Object value) {
    PlannedCall ran = ranAhead(op, key, TxnOperation.CREATE);
    if (ran != null) {
      return ran.result();
    }
    op.callStarted = tx.clock.instant();
    DescriptorHandle.Result<Object> r = h.create(key, value);
    op.callEnded = tx.clock.instant();
    return r;
  }

  private DescriptorHandle.Result<Object> callUpdate(
      OpRecord op,
      DescriptorHandle h,
      String key,
      Object oldValue,
      Object newValue,
      Object metadata) {
    PlannedCall ran = ranAhead(op, key, TxnOperation.UPDATE);
    if (ran != null) {
      return ran.result();
    }
    op.callStarted = tx.clock.instant();
    DescriptorHandle.Result<Object> r = h.update(key, oldValue, newValue, metadata);
    op.callEnded = tx.clock.instant();
    return r;
  }

  private Throwable callDelete(
      OpRecord op, DescriptorHandle h, String key, Object object, Object metadata) {
    PlannedCall ran = ranAhead(op, key, TxnOperation.DELETE);
    if (ran != null) {
      return ran.error;
    }
    op.callStarted = tx.clock.instant();
    Throwable err = h.delete(key, object, metadata);
    op.callEnded = tx.clock.instant();
    return err;
  }

  private void record(OpRecord op) {
    tx.ops.add(op);
  }
}
