package io.kvscheduler.internal.engine.graph;

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
public final class Node {
  /** What the last transaction that decided an operation for the key asked for. */
  public record LastUpdate(
      long seq, TxnOperation op, Object value, boolean revert, RetryOptions retry) {}

  /**
   * A descriptor handle as a node keeps it for the calls side (the registry's cache, the memo of
   * the descriptor's answers): the node stores it and compares it, never looks inside, so it does
   * not depend on the calls side's type.
   */
  public interface HandleRef {}

  /**
   * The head of the key's revision chain as a node keeps it for the history: stored and copied,
   * never looked into.
   */
  public interface RevisionRef {}

  private final String key;
  private String label;

  /** Current value; null while the node is being built or after a refresh lost it. */
  private Object value;

  private Object metadata;

  /**
   * What the southbound still holds for the key while the value is unavailable, or null: the object
   * a failed Delete left in place, or the content applied before an update that Validate rejected
   * (INVALID). The next operation on the key starts from it — a removal deletes it, a new value
   * updates (or re-creates) it rather than creating a second object — and a refresh replaces it
   * with what Retrieve finds. Null whenever the value is available ({@link #value} is then what the
   * southbound holds, as far as the scheduler knows).
   */
  private Object held;

  /** Descriptor name, null for properties and unimplemented values. */
  private String descriptor;

  /** Base key of a derived value, null for base values. */
  private String derivedFrom;

  private ValueState state = ValueState.NONEXISTENT;
  private boolean unavailable;
  private LastUpdate lastUpdate;
  private Throwable error;
  private TxnOperation errorOp = TxnOperation.UNDEFINED;
  private boolean errorRetriable;

  /** Retry attempt of the last failure (1 for a failure outside a retry). */
  private int retryAttempt;

  /** Sequence number of the transaction in which the value first failed (for retry records). */
  long retryOrigin = -1;

  /** Dependencies as last computed; indexed by the graph. */
  private List<Dependency> deps = List.of();

  /** Refresh epoch in which the value was last found in the southbound (refresh bookkeeping). */
  private long refreshMark;

  /**
   * Mark of the last transaction whose touched keys list this node (engine bookkeeping: a mark
   * instead of a key set per transaction). Copied with the node, so a rolled-back node keeps it.
   */
  long touchMark;

  /**
   * Where the key's view sits in the published views (kept by the publisher; a hint the publisher
   * checks before use, -1 when none). Copied with the node (same key).
   */
  private int publishedSlot = -1;

  /**
   * The key's recorded revisions (an immutable chain owned by the history, which keeps it here so
   * that a lookup by key finds it with the node). Copied with the node.
   */
  private RevisionRef revisions;

  /**
   * The descriptor selecting the key, cached by the registry and valid while {@code
   * handleGeneration} is the registry's current generation. Copied with the node (the key, hence
   * the descriptor, is the same).
   */
  private HandleRef handle;

  private int handleGeneration;

  /** Keys derived from this value, sorted. */
  private List<String> derivedKeys = List.of();

  /**
   * The descriptor's last answers for this key (kept by the descriptor's handle): the value they
   * were computed for ({@code memoValue}, by descriptor {@code memoHandle}), its dependency list
   * and its derived values (null while not computed). The callbacks are functions of key and value,
   * so the answers hold for any equal value. Copied with the node.
   */
  private Object memoValue;

  private HandleRef memoHandle;
  private List<Dependency> memoDeps;
  private List<KeyValuePair> memoDerived;

  /**
   * Journal entry of the current batch (kept by the {@link UndoJournal}): the content before the
   * batch, {@link BatchJournal#ABSENT}, or null when the node was not written in the batch. Never
   * copied.
   */
  Node journaled;

  /** True while the node is the graph's node of its key (graph bookkeeping; never copied). */
  boolean inGraph;

  public Node(String key) {
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
    n.revisions = revisions;
    n.handle = handle;
    n.handleGeneration = handleGeneration;
    n.memoValue = memoValue;
    n.memoHandle = memoHandle;
    n.memoDeps = memoDeps;
    n.memoDerived = memoDerived;
    return n;
  }

  // ------------------------------------------------------------------ content

  public String key() {
    return key;
  }

  public String label() {
    return label;
  }

  public void setLabel(String label) {
    this.label = label;
  }

  public Object value() {
    return value;
  }

  public void setValue(Object value) {
    this.value = value;
  }

  public Object metadata() {
    return metadata;
  }

  public void setMetadata(Object metadata) {
    this.metadata = metadata;
  }

  public Object held() {
    return held;
  }

  public void setHeld(Object held) {
    this.held = held;
  }

  public String descriptor() {
    return descriptor;
  }

  public void setDescriptor(String descriptor) {
    this.descriptor = descriptor;
  }

  public String derivedFrom() {
    return derivedFrom;
  }

  public void setDerivedFrom(String derivedFrom) {
    this.derivedFrom = derivedFrom;
  }

  public ValueState state() {
    return state;
  }

  public void setState(ValueState state) {
    this.state = state;
  }

  public boolean unavailable() {
    return unavailable;
  }

  public void setUnavailable(boolean unavailable) {
    this.unavailable = unavailable;
  }

  public LastUpdate lastUpdate() {
    return lastUpdate;
  }

  public void setLastUpdate(LastUpdate lastUpdate) {
    this.lastUpdate = lastUpdate;
  }

  public Throwable error() {
    return error;
  }

  public void setError(Throwable error) {
    this.error = error;
  }

  public TxnOperation errorOp() {
    return errorOp;
  }

  public void setErrorOp(TxnOperation errorOp) {
    this.errorOp = errorOp;
  }

  public boolean errorRetriable() {
    return errorRetriable;
  }

  public void setErrorRetriable(boolean errorRetriable) {
    this.errorRetriable = errorRetriable;
  }

  public int retryAttempt() {
    return retryAttempt;
  }

  public void setRetryAttempt(int retryAttempt) {
    this.retryAttempt = retryAttempt;
  }

  void setDeps(List<Dependency> deps) {
    this.deps = deps;
  }

  public long refreshMark() {
    return refreshMark;
  }

  public void setRefreshMark(long refreshMark) {
    this.refreshMark = refreshMark;
  }

  public List<String> derivedKeys() {
    return derivedKeys;
  }

  public void setDerivedKeys(List<String> derivedKeys) {
    this.derivedKeys = derivedKeys;
  }

  public List<Dependency> deps() {
    return deps;
  }

  // ------------------------------------------------------------------ kept for the publisher

  /** Where the key's view sat in the published views when last published (a hint), or -1. */
  public int publishedSlot() {
    return publishedSlot;
  }

  public void setPublishedSlot(int slot) {
    publishedSlot = slot;
  }

  // ------------------------------------------------------------------ kept for the history

  /** The head of the key's revision chain (the history's type), null when none is recorded. */
  public RevisionRef revisions() {
    return revisions;
  }

  public void setRevisions(RevisionRef head) {
    revisions = head;
  }

  // ------------------------------------------------------------------ kept for the calls side

  /** True when {@link #handle()} was cached in registry generation {@code generation}. */
  public boolean handleCachedIn(int generation) {
    return handleGeneration == generation;
  }

  /** The cached descriptor handle (null: no descriptor selects the key, or nothing cached). */
  public HandleRef handle() {
    return handle;
  }

  public void cacheHandle(HandleRef h, int generation) {
    handle = h;
    handleGeneration = generation;
  }

  /** The handle whose answers are memoised, or null. */
  public HandleRef memoHandle() {
    return memoHandle;
  }

  /** The value the memoised answers were given for. */
  public Object memoValue() {
    return memoValue;
  }

  /** Keeps the memoised answers for {@code value}, an equal value. */
  public void setMemoValue(Object value) {
    memoValue = value;
  }

  /** Starts a memo of {@code h}'s answers for {@code value}, with no answer yet. */
  public void restartMemo(HandleRef h, Object value) {
    memoHandle = h;
    memoValue = value;
    memoDeps = null;
    memoDerived = null;
  }

  /** The memoised dependency list, null while not computed. */
  public List<Dependency> memoDeps() {
    return memoDeps;
  }

  public void setMemoDeps(List<Dependency> deps) {
    memoDeps = deps;
  }

  /** The memoised derived values, null while not computed. */
  public List<KeyValuePair> memoDerived() {
    return memoDerived;
  }

  public void setMemoDerived(List<KeyValuePair> derived) {
    memoDerived = derived;
  }

  public boolean isDerived() {
    return derivedFrom != null;
  }

  /** Base key: the key itself for base values. */
  public String baseKey() {
    return derivedFrom != null ? derivedFrom : key;
  }

  /** Origin implied by the state: OBTAINED = SB, nonexistent = unknown, anything else = NB. */
  public ValueOrigin origin() {
    if (state == ValueState.OBTAINED) {
      return ValueOrigin.FROM_SB;
    }
    if (state == ValueState.NONEXISTENT) {
      return ValueOrigin.UNKNOWN;
    }
    return ValueOrigin.FROM_NB;
  }

  /** Available: has a value, no unavailable flag, not REMOVED. */
  public boolean isAvailable() {
    return available(value, unavailable, state);
  }

  /** The availability rule of {@link #isAvailable()} for content held elsewhere (a snapshot). */
  public static boolean available(Object value, boolean unavailable, ValueState state) {
    return value != null && !unavailable && state != ValueState.REMOVED;
  }

  public TxnOperation lastOperation() {
    return lastOperation(state, lastUpdate);
  }

  /** The rule of {@link #lastOperation()}: none for OBTAINED values or without a last update. */
  public static TxnOperation lastOperation(ValueState state, LastUpdate lastUpdate) {
    if (state == ValueState.OBTAINED || lastUpdate == null) {
      return TxnOperation.UNDEFINED;
    }
    return lastUpdate.op();
  }

  /** True when the observable content differs from {@code o} (used for revisions). */
  public boolean contentDiffers(Node o) {
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
