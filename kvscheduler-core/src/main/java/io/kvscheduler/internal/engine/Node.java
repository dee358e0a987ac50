package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RetryOptions;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.util.List;
import java.util.Objects;

/**
 * One key of the graph with everything the scheduler keeps for it. Mutable, engine thread only.
 * Obtain a node for writing through {@link Graph#write(String)} so that the change is journaled
 * (simulation rollback and history depend on it); never mutate a node obtained by {@link
 * Graph#get(String)}.
 */
final class Node {
  /** What the last transaction that decided an operation for the key asked for. */
  record LastUpdate(long seq, TxnOperation op, Object value, boolean revert, RetryOptions retry) {}

  final String key;
  String label;

  /** Current value; null while the node is being built or after a refresh lost it. */
  Object value;

  Object metadata;

  /**
   * What the southbound still holds for the key while the value is unavailable, or null: the object
   * a failed Delete left in place, or the content applied before an update that Validate rejected
   * (INVALID). The next operation on the key starts from it — a removal deletes it, a new value
   * updates (or re-creates) it rather than creating a second object — and a refresh replaces it
   * with what Retrieve finds. Null whenever the value is available ({@link #value} is then what the
   * southbound holds, as far as the scheduler knows).
   */
  Object held;

  /** Descriptor name, null for properties and unimplemented values. */
  String descriptor;

  /** Base key of a derived value, null for base values. */
  String derivedFrom;

  ValueState state = ValueState.NONEXISTENT;
  boolean unavailable;
  LastUpdate lastUpdate;
  Throwable error;
  TxnOperation errorOp = TxnOperation.UNDEFINED;
  boolean errorRetriable;

  /** Retry attempt of the last failure (1 for a failure outside a retry). */
  int retryAttempt;

  /** Sequence number of the transaction in which the value first failed (for retry records). */
  long retryOrigin = -1;

  /** Dependencies as last computed; indexed by the graph. */
  List<Dependency> deps = List.of();

  /** Refresh epoch in which the value was last found in the southbound (refresh bookkeeping). */
  long refreshMark;

  /**
   * Mark of the last transaction whose touched keys list this node (engine bookkeeping: a mark
   * instead of a key set per transaction). Copied with the node, so a rolled-back node keeps it.
   */
  long touchMark;

  /**
   * Where the key's view sits in the published views (kept by {@link Published}; a hint the
   * publisher checks before use, -1 when none). Copied with the node (same key).
   */
  int publishedSlot = -1;

  /**
   * The key's recorded revisions (an immutable chain owned by the {@link History}). Copied with the
   * node.
   */
  KeyRevision history;

  /**
   * Scratch space of one engine algorithm run (valid only while {@link #scratchOwner} is that run's
   * token; never copied): saves a map keyed by node.
   */
  Object scratchOwner;

  int scratchIndex;

  /**
   * The descriptor selecting the key, cached by the {@link Registry} and valid while {@link
   * #handleGeneration} is the registry's current generation. Copied with the node (the key, hence
   * the descriptor, is the same).
   */
  DescriptorHandle handle;

  int handleGeneration;

  /** Keys derived from this value, sorted. */
  List<String> derivedKeys = List.of();

  /**
   * The descriptor's last answers for this key (kept by the {@link DescriptorHandle}): the value
   * they were computed for ({@code memoValue}, by descriptor {@code memoHandle}), its dependency
   * list and its derived values (null while not computed). The callbacks are functions of key and
   * value, so the answers hold for any equal value. Copied with the node.
   */
  Object memoValue;

  DescriptorHandle memoHandle;
  List<Dependency> memoDeps;
  List<KeyValuePair> memoDerived;

  /**
   * Journal entry of the current batch (kept by the {@link UndoJournal}): the content before the
   * batch, {@link BatchJournal#ABSENT}, or null when the node was not written in the batch. Never
   * copied.
   */
  Node journaled;

  /** True while the node is the graph's node of its key (graph bookkeeping; never copied). */
  boolean inGraph;

  Node(String key) {
    this.key = key;
    this.label = key;
  }

  Node copy() {
    Node n = new Node(key);
    n.label = label;
    n.value = value;
    n.metadata = metadata;
    n.held = held;
    n.descriptor = descriptor;
    n.derivedFrom = derivedFrom;
    n.state = state;
    n.unavailable = unavailable;
    n.lastUpdate = lastUpdate;
    n.error = error;
    n.errorOp = errorOp;
    n.errorRetriable = errorRetriable;
    n.retryAttempt = retryAttempt;
    n.retryOrigin = retryOrigin;
    n.deps = deps;
    n.derivedKeys = derivedKeys;
    n.refreshMark = refreshMark;
    n.touchMark = touchMark;
    n.publishedSlot = publishedSlot;
    n.history = history;
    n.handle = handle;
    n.handleGeneration = handleGeneration;
    n.memoValue = memoValue;
    n.memoHandle = memoHandle;
    n.memoDeps = memoDeps;
    n.memoDerived = memoDerived;
    return n;
  }

  List<Dependency> deps() {
    return deps;
  }

  boolean isDerived() {
    return derivedFrom != null;
  }

  /** Base key: the key itself for base values. */
  String baseKey() {
    return derivedFrom != null ? derivedFrom : key;
  }

  /** Origin implied by the state: OBTAINED = SB, nonexistent = unknown, anything else = NB. */
  ValueOrigin origin() {
    if (state == ValueState.OBTAINED) {
      return ValueOrigin.FROM_SB;
    }
    if (state == ValueState.NONEXISTENT) {
      return ValueOrigin.UNKNOWN;
    }
    return ValueOrigin.FROM_NB;
  }

  /** Available: has a value, no unavailable flag, not REMOVED. */
  boolean isAvailable() {
    return available(value, unavailable, state);
  }

  /** The availability rule of {@link #isAvailable()} for content held elsewhere (a snapshot). */
  static boolean available(Object value, boolean unavailable, ValueState state) {
    return value != null && !unavailable && state != ValueState.REMOVED;
  }

  TxnOperation lastOperation() {
    return lastOperation(state, lastUpdate);
  }

  /** The rule of {@link #lastOperation()}: none for OBTAINED values or without a last update. */
  static TxnOperation lastOperation(ValueState state, LastUpdate lastUpdate) {
    if (state == ValueState.OBTAINED || lastUpdate == null) {
      return TxnOperation.UNDEFINED;
    }
    return lastUpdate.op();
  }

  /** True when the observable content differs from {@code o} (used for revisions). */
  boolean contentDiffers(Node o) {
    return value != o.value
        || metadata != o.metadata
        || held != o.held
        || state != o.state
        || unavailable != o.unavailable
        || lastUpdate != o.lastUpdate
        || error != o.error
        || !Objects.equals(label, o.label)
        || !Objects.equals(descriptor, o.descriptor)
        || !Objects.equals(derivedFrom, o.derivedFrom)
        || !DependencyIndex.sameDeps(deps, o.deps)
        || !derivedKeys.equals(o.derivedKeys);
  }

  @Override
  public String toString() {
    return "Node[" + key + " " + state + (unavailable ? " unavailable" : "") + "]";
  }
}
