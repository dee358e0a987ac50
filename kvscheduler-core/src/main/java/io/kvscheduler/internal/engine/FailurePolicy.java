package io.kvscheduler.internal.engine;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.calls.ContractException;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.calls.SbCallChain;
import io.kvscheduler.internal.engine.calls.SbCalls;
import io.kvscheduler.internal.engine.calls.UnreadStateException;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.SettledDerived;
import io.kvscheduler.internal.engine.refresh.Refresher;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * What a failed southbound call means: for the value, for the values around it, for its retry, and
 * for whether its key must be read before the next call. The rules, numbered (tests name their row;
 * B-numbers are docs/behaviors.md, D-numbers docs/differences-from-reference.md):
 *
 * <table>
 *   <caption>Fault rules</caption>
 *   <tr><th>row</th><th>when</th><th>then</th><th>decided in</th></tr>
 *   <tr><td>F1</td><td>a call failed</td><td>the error is retriable unless the operation is not
 *       implemented, the value is invalid or a contract was broken; otherwise the descriptor's
 *       {@code isRetriableFailure} decides (retriable without one; not retriable when it throws).
 *       A call not made because the key is unread (F7) is retriable: its retry reads first</td>
 *       <td>{@link #isRetriable}</td></tr>
 *   <tr><td>F2</td><td>a call failed</td><td>the value is RETRYING when the error is retriable,
 *       no revert follows (B105), its last update asks for retries and attempts remain (B106; the
 *       attempt counts on in a retry of its base); else FAILED. The error and the failed
 *       operation are kept in the value</td><td>{@link #markFailed}</td></tr>
 *   <tr><td>F3</td><td>a Create failed</td><td>the value is unavailable; what the southbound
 *       holds is unknown until a refresh reads it (F5, F6)</td><td>{@link CreateUpdateSteps}</td>
 *       </tr>
 *   <tr><td>F4</td><td>an Update failed</td><td>an available value stays available (B95); an
 *       unavailable one keeps the old object as what the southbound holds</td>
 *       <td>{@link CreateUpdateSteps}</td></tr>
 *   <tr><td>F5</td><td>a Delete failed</td><td>the object is still held: the value is
 *       unavailable, the next operation on the key starts from that object (B96). A derived
 *       value's failed Delete stops its base's Delete (B83); a dependent's stops the Delete of
 *       what it depends on (§6.3)</td><td>{@link DeleteSteps}</td></tr>
 *   <tr><td>F6</td><td>a call failed in a transaction reverted on failure, for one of its own
 *       values (or one derived from them), not during the revert</td><td>the walk stops and the
 *       transaction is reverted (B101); the failed value is FAILED (F2)</td>
 *       <td>{@link #noteOwnFailure}</td></tr>
 *   <tr><td>F7</td><td>a call failed</td><td>its key (a derived one: its base) is read again
 *       after the transaction when its descriptor can Retrieve (B97; B98 without Retrieve). When
 *       that read fails too, the base stays unread across transactions (D53): each transaction
 *       reads it first, and until one can, a call for it or its derived values is not made: it
 *       fails as unknown, retriable (F1). A derived value is read through its base: what the
 *       read base derives is what the southbound holds of it (present with that content, or not
 *       found: a CONFIGURED one turns MISSING), so its status after the transaction tells the
 *       truth as a base value's does, provided the base's Retrieve reports the derived objects as
 *       the southbound holds them</td><td>{@link #mustBeRead}, {@link #unknownState},
 *       {@link UnreadKeys}, {@link TxnExecutor#refreshFailed}</td></tr>
 *   <tr><td>F8</td><td>a value's call failed earlier in this transaction</td><td>it gets no
 *       further call in the transaction until a refresh reads it; only the revert calls it once
 *       the revert's refresh read it (D50). The object it held is forgotten meanwhile: the walk
 *       goes on as if nothing were there</td><td>{@link #failedEarlier}, {@link
 *       #noCallAfterFailure}</td></tr>
 *   <tr><td>F9</td><td>the refresh after a failure finds the value (a removal that failed, a call
 *       the southbound carried out after all)</td><td>what waits for it goes ahead in the same
 *       transaction (D49); a failed value found held as asked is settled as applied (D51)</td>
 *       <td>{@link TxnExecutor#refreshFailed}</td></tr>
 *   <tr><td>F10</td><td>a RETRYING value gets a new last update that asks for no retry</td>
 *       <td>its pending retry is obsolete and none can be planned: it is FAILED</td>
 *       <td>{@link #retryLost}</td></tr>
 *   <tr><td>F11</td><td>a base value got a new last update and its visit ended; a RETRYING
 *       derived value of it was not applied again (an INVALID or PENDING base, a failed call, an
 *       abandoned removal)</td><td>the derived value's retry (planned per base) is obsolete: it
 *       is FAILED, keeping its error</td><td>{@link #settleObsoleteRetries}</td></tr>
 *   <tr><td>F12</td><td>after a transaction, a RETRYING value under a base decided by it whose
 *       retry could not be planned</td><td>the value and the RETRYING values of its subtree are
 *       FAILED: nothing will retry them</td><td>{@link #failUnplanned}</td></tr>
 *   <tr><td>F13</td><td>a base value's visit ended without a call because what the southbound
 *       holds for it is unknown (F7), after it got a new last update</td><td>as F11: a RETRYING
 *       derived value of it is FAILED (its retry is obsolete, the base's new value has none
 *       planned unless the base itself is RETRYING, F12)</td>
 *       <td>{@link #settleObsoleteRetries}</td></tr>
 *   <tr><td>F14</td><td>a call that ran ahead of the walk in parallel was not taken by the walk,
 *       or ran beyond the failure of a transaction reverted on failure (D54)</td><td>it is undone,
 *       newest first; a key whose call or undo failed is read again (F7); beyond a failure, both
 *       are recorded (RAN_AHEAD) and a failed one marks its value as F2 (as part of a revert)</td>
 *       <td>{@link CallsNotTaken}</td></tr>
 *   <tr><td>F15</td><td>a call did not return within the operation timeout</td><td>it fails with
 *       an {@code OperationTimeoutException} (retriable by F1); when it returns at last, its key
 *       is read again in a transaction of its own, recorded as a retry (D51)</td>
 *       <td>{@link SbCallChain.Limited}, {@link SbCalls#onLateReturn}</td></tr>
 *   <tr><td>F16</td><td>a value is rejected by Validate (INVALID, not retriable by F1)</td>
 *       <td>nothing is called: the object the southbound holds is kept (B120), a removal deletes
 *       it, a valid value updates it; a refresh finding it leaves the value unavailable, its
 *       dependents waiting (D52)</td><td>{@link CreateUpdateSteps}, {@link Refresher}</td></tr>
 *   <tr><td>F17</td><td>a refresh (after a failure, or a read first) does not find a value, or
 *       finds one it had taken for removed</td><td>a value taken down for its dependencies keeps
 *       its NB value (MISSING); one found again is found (DISCOVERED or OBTAINED), never created a
 *       second time; a key a read first found gone leaves the graph, even when the transaction's
 *       rolled-back simulation created it</td><td>{@link Refresher}, {@link TxnExecutor}</td>
 *       </tr>
 *   <tr><td>F18</td><td>the northbound sets a key of a descriptor of derived values only</td>
 *       <td>refused before any call with a contract error (not retriable, F1)</td>
 *       <td>{@link Walker}</td></tr>
 *   <tr><td>F19</td><td>a transaction reverted on failure took away the object an INVALID value
 *       held before it (F16: a removal deleted it, a valid value replaced it)</td><td>the revert
 *       applies that object again first (Create or Update; its derived values and the values that
 *       depended on it follow), then gives the key back its invalid value, which calls nothing:
 *       the value is INVALID again, the object held, the southbound as before the transaction
 *       (B101)</td><td>{@link TxnExecutor#executeWithRevert}</td></tr>
 *   <tr><td>F20</td><td>a value in the southbound that no transaction asked for (DISCOVERED, e.g.
 *       what a failed Create beyond a reverted failure left, read back) is taken down because a
 *       dependency goes, and its Delete fails (or is carried out yet reported failed)</td><td>its
 *       intent stays none: it is never created (nor re-created when the dependency comes back),
 *       and a resync deletes it as any value nobody asked for. A dependent visit re-applies a
 *       value's last update; without one, only an OBTAINED value (its own) or a derived value of a
 *       base with an intent has one (D64)</td><td>{@link Walker} (the dependent visit)</td></tr>
 * </table>
 *
 * <p>Engine thread only; no state of its own: each decision reads the node, the graph and the
 * transaction it is given.
 */
public final class FailurePolicy {
  private FailurePolicy() {}

  /** F1: whether a call of {@code handle} (null: none) that failed with {@code err} is retried. */
  static boolean isRetriable(DescriptorHandle handle, Throwable err) {
    if (err instanceof UnreadStateException) {
      return true; // the retry reads the key first
    }
    if (err instanceof DescriptorHandle.NotImplementedException
        || err instanceof InvalidValueException
        || err instanceof ContractException) {
      return false;
    }
    return handle == null || handle.retriableByDescriptor(err);
  }

  /**
   * F2: marks {@code node} FAILED or RETRYING after its call {@code failedOp} failed with {@code
   * err} (F6 and F7 noted too). {@code revert}: the failed operation is itself part of a revert.
   * Returns the state set.
   */
  static ValueState markFailed(
      Graph graph,
      Registry registry,
      Transaction txn,
      Node node,
      boolean revert,
      Throwable err,
      boolean retriable,
      TxnOperation failedOp) {
    noteOwnFailure(txn, node, revert);
    if (mustBeRead(graph, registry, node)) {
      txn.unread.add(node.key()); // a call failed: the southbound may hold anything for the key
    }
    ValueState state = ValueState.FAILED;
    boolean toBeReverted = txn.isNB() && txn.revertOnFailure() && !revert;
    int attempt = 1;
    if (txn.isRetry() && txn.request.retryKeys().contains(node.baseKey())) {
      attempt = txn.request.retryAttempt() + 1;
    }
    if (retriable && !toBeReverted) {
      Node.LastUpdate lu = node.lastUpdate();
      if (lu != null
          && lu.retry() != null
          && (lu.retry().maxCount() == 0 || attempt <= lu.retry().maxCount())) {
        state = ValueState.RETRYING;
      }
    }
    if (state == ValueState.RETRYING) {
      txn.sawRetrying = true;
    }
    node.setState(state);
    node.setError(err);
    node.setErrorRetriable(retriable);
    node.setErrorOp(failedOp);
    node.setRetryAttempt(attempt);
    return state;
  }

  /**
   * F6: a failure (of a call, or an invalid value) of one of the transaction's own values, not
   * during its revert, in a transaction reverted on failure: the walk stops, the revert follows.
   */
  static void noteOwnFailure(Transaction txn, Node node, boolean revert) {
    if (!revert && txn.revertOnFailure() && txn.ownKeys.contains(node.baseKey())) {
      txn.ownFailed = true;
    }
  }

  /**
   * F7: true when a refresh can read {@code node} after its call failed: its descriptor (of a
   * derived value: its base's) can Retrieve. What the southbound holds for a value nothing can read
   * stays the scheduler's best guess.
   */
  static boolean mustBeRead(Graph graph, Registry registry, Node node) {
    Node base = node.isDerived() ? graph.get(node.derivedFrom()) : node;
    DescriptorHandle handle = base == null ? null : registry.forNode(base);
    return handle != null && handle.canRetrieve();
  }

  /**
   * F7: the error a call for {@code node} fails with, without being made, while what the southbound
   * holds for its base is unknown ({@link Transaction#unreadBefore}); null otherwise. Asked through
   * the pass ({@link WalkPass#unknownState}): the simulation assumes every call succeeds.
   */
  static Throwable unknownState(Transaction txn, Node node) {
    if (txn.unreadBefore.isEmpty()) {
      return null;
    }
    String base = node.baseKey();
    return txn.unreadBefore.contains(base) ? new UnreadStateException(base) : null;
  }

  /**
   * F8: true when the value entering a visit with {@code prevState} and {@code prevUpdate} failed
   * earlier in this transaction.
   */
  static boolean failedEarlier(Transaction txn, Node.LastUpdate prevUpdate, ValueState prevState) {
    return prevUpdate != null
        && prevUpdate.seq() == txn.seq
        && (prevState == ValueState.FAILED || prevState == ValueState.RETRYING);
  }

  /**
   * F8: true when a value that failed earlier in this transaction gets no call now: always, except
   * in the revert once a refresh has read it (until then what the southbound holds for it is
   * unknown, even whether a failed Create left an object that a removal would have to delete).
   */
  static boolean noCallAfterFailure(Transaction txn, boolean revert, String key) {
    return !revert || txn.unread.contains(key);
  }

  /** F10: true when a RETRYING value whose new last update asks for no retry is FAILED now. */
  static boolean retryLost(Node node, Node.LastUpdate newUpdate) {
    return node.state() == ValueState.RETRYING && newUpdate.retry() == null;
  }

  /**
   * F11, F13: {@code base} got a new last update in this transaction and its visit ended: a
   * RETRYING derived value that the visit did not apply again will never be retried (a retry is
   * planned per base value and dropped as obsolete once the base has a newer last update), so it is
   * FAILED, keeping its error. Values this transaction applied are planned again after it (or
   * failed) by {@link RetryPlanner} (F12).
   */
  static void settleObsoleteRetries(Graph graph, Transaction txn, Node base, String baseKey) {
    if (base == null
        || base.derivedKeys().isEmpty()
        || base.lastUpdate() == null
        || base.lastUpdate().seq() != txn.seq) {
      return;
    }
    // the keys known settled (CONFIGURED) are not RETRYING: their nodes are not read (W5)
    SettledDerived.Entry settled = graph.settled.live(baseKey);
    if (settled != null && !Derivation.sameKeys(settled.keys, base.derivedKeys())) {
      settled = null;
    }
    List<String> keys = base.derivedKeys();
    for (int i = 0; i < keys.size(); i++) {
      if (settled != null && settled.knownSettled(i)) {
        continue;
      }
      String dk = keys.get(i);
      Node dn = graph.get(dk);
      if (dn != null
          && dn.state() == ValueState.RETRYING
          && baseKey.equals(dn.derivedFrom())
          && (dn.lastUpdate() == null || dn.lastUpdate().seq() != txn.seq)) {
        graph.write(dk).setState(ValueState.FAILED);
        txn.statusChanged(baseKey);
      }
    }
  }

  /**
   * F12: after transaction {@code seq} planned the retries of {@code scheduled} base keys, the
   * RETRYING values among {@code retrying} under a base it decided (new last update: any earlier
   * retry is obsolete) that is not among them will never be retried: they, and the RETRYING values
   * of their base's subtree, are FAILED.
   */
  static void failUnplanned(Graph graph, long seq, Collection<Node> retrying, Set<String> planned) {
    Set<String> bases = new HashSet<>();
    for (Node t : retrying) {
      bases.add(t.baseKey());
    }
    for (String b : bases) {
      Node n = graph.get(b);
      if (n == null
          || planned.contains(b)
          || n.lastUpdate() == null
          || n.lastUpdate().seq() != seq) {
        continue;
      }
      List<String> subtree = new ArrayList<>(n.derivedKeys());
      subtree.add(b);
      for (String k : subtree) {
        Node x = graph.get(k);
        if (x != null && x.state() == ValueState.RETRYING) {
          graph.write(k).setState(ValueState.FAILED);
        }
      }
    }
  }
}
