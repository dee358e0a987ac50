package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The content of one key at one moment, immutable: both a recorded revision and what readers see of
 * the key.
 *
 * <p><b>Revision.</b> A key's timeline is the chain from its newest revision through {@link #prev}.
 * Appending a revision allocates one object and never touches the older ones: a revision ends where
 * the next begins, unless {@link #until} says otherwise (the key was removed, or trimming dropped
 * what followed).
 *
 * <p><b>Published view.</b> The published snapshot holds one {@code KeyRevision} per key (the
 * accessors below are the read side). When the key's newest recorded revision still shows the
 * node's content, that revision is published itself (no second object per key); otherwise, e.g.
 * after a refresh (which records no revision) or for a PENDING value whose missing dependencies are
 * listed, a {@linkplain #recorded() view-only} {@code KeyRevision} is published whose {@link #prev}
 * is the recorded chain. View-only entries never enter a node's chain.
 */
public final class KeyRevision implements Node.RevisionRef {
  public final String key;
  final String label;
  public final Object value;
  public final Object metadata;
  public final ValueState state;

  /** Descriptor name, or null. */
  public final String descriptor;

  /** Base key of a derived value, or null. */
  public final String derivedFrom;

  final boolean unavailable;
  final String error;

  /** What the last transaction deciding an operation for the key asked for, or null. */
  final Node.LastUpdate lastUpdate;

  final List<Dependency> deps;
  final List<String> derivedKeys;

  /** Status details (PENDING: missing dependency labels; INVALID: invalid fields) or null. */
  private final List<String> details;

  /** False for a view-only entry (published, not part of any recorded timeline). */
  private final boolean recorded;

  final long seq;
  public final Instant since;

  /** Explicit end of validity, or null: ends where the next revision begins (open if none). */
  public final Instant until;

  /** The revision before this one (for a view-only entry: the key's newest one), or null. */
  public final KeyRevision prev;

  private KeyRevision(KeyRevision o, Instant until, KeyRevision prev) {
    this.key = o.key;
    this.label = o.label;
    this.value = o.value;
    this.metadata = o.metadata;
    this.state = o.state;
    this.descriptor = o.descriptor;
    this.derivedFrom = o.derivedFrom;
    this.unavailable = o.unavailable;
    this.error = o.error;
    this.lastUpdate = o.lastUpdate;
    this.deps = o.deps;
    this.derivedKeys = o.derivedKeys;
    this.details = o.details;
    this.recorded = o.recorded;
    this.seq = o.seq;
    this.since = o.since;
    this.until = until;
    this.prev = prev;
  }

  private KeyRevision(
      Node n, long seq, Instant now, KeyRevision prev, List<String> details, boolean recorded) {
    this.key = n.key();
    this.label = n.label();
    this.value = n.value();
    this.metadata = n.metadata();
    this.state = n.state();
    this.descriptor = n.descriptor();
    this.derivedFrom = n.derivedFrom();
    this.unavailable = n.unavailable();
    this.error = sharedError(OpRecord.msg(n.error()), prev);
    this.lastUpdate = n.lastUpdate();
    this.deps = n.deps();
    this.derivedKeys = n.derivedKeys();
    this.details = details;
    this.recorded = recorded;
    this.seq = seq;
    this.since = now;
    this.until = null;
    this.prev = prev;
  }

  /** {@code error}, or the equal text of {@code prev}: one string for an error that stays. */
  private static String sharedError(String error, KeyRevision prev) {
    return prev != null && prev.error.equals(error) ? prev.error : error;
  }

  /** The head of {@code n}'s revision chain, null when none is recorded. */
  public static KeyRevision of(Node n) {
    return (KeyRevision) n.revisions();
  }

  /** The content of {@code n} recorded as a revision of transaction {@code seq} at {@code now}. */
  public static KeyRevision recorded(Node n, long seq, Instant now, KeyRevision prev) {
    return new KeyRevision(n, seq, now, prev, null, true);
  }

  /**
   * What readers may know of {@code n} ({@code details}: its status details): its newest recorded
   * revision when that shows exactly this, else a view-only entry.
   */
  static KeyRevision published(Node n, List<String> details) {
    KeyRevision head = KeyRevision.of(n);
    if (head != null && details.isEmpty() && head.shows(n)) {
      return head;
    }
    return new KeyRevision(n, -1, null, head, details.isEmpty() ? null : details, false);
  }

  /** True when this revision holds everything a reader sees of {@code n} (details aside). */
  private boolean shows(Node n) {
    return value == n.value()
        && metadata == n.metadata()
        && state == n.state()
        && unavailable == n.unavailable()
        && lastUpdate == n.lastUpdate()
        && derivedKeys == n.derivedKeys()
        && Objects.equals(descriptor, n.descriptor())
        && Objects.equals(derivedFrom, n.derivedFrom())
        && error.equals(OpRecord.msg(n.error()));
  }

  /** This revision (the newest of its chain) closed at {@code end}; itself when closed. */
  public KeyRevision closedAt(Instant end) {
    return until != null ? this : new KeyRevision(this, end, prev);
  }

  /** This revision with an explicit end and another predecessor (trimming). */
  public KeyRevision rebased(Instant end, KeyRevision newPrev) {
    return new KeyRevision(this, end, newPrev);
  }

  /** End of validity given the revision that follows this one (null when newest). */
  public Instant end(KeyRevision next) {
    return until != null ? until : next == null ? null : next.since;
  }

  public NodeRevision toApi(Instant end) {
    Map<String, String> d;
    if (deps.isEmpty()) {
      d = Map.of();
    } else if (deps.size() == 1) {
      d = Map.of(deps.get(0).label(), describe(deps.get(0)));
    } else {
      d = new LinkedHashMap<>();
      for (Dependency dep : deps) {
        d.put(dep.label(), describe(dep));
      }
    }
    return new NodeRevision(
        key,
        label,
        Optional.ofNullable(value),
        Optional.ofNullable(metadata),
        state,
        descriptor == null ? "" : descriptor,
        derivedFrom == null ? "" : derivedFrom,
        unavailable,
        error,
        lastUpdate == null ? TxnOperation.UNDEFINED : lastUpdate.op(),
        lastUpdate == null ? -1 : lastUpdate.seq(),
        d,
        derivedKeys,
        seq,
        since,
        Optional.ofNullable(end));
  }

  private static String describe(Dependency d) {
    return d.isAnyOf() ? "anyOf" + d.keyPrefixes() : d.key();
  }

  // ------------------------------------------------------------------ the published view

  /** False for a view-only entry. */
  public boolean recorded() {
    return recorded;
  }

  /** The key's recorded timeline: this entry, or for a view-only one the revision before it. */
  public KeyRevision history() {
    return recorded ? this : prev;
  }

  /** Available: has a value, not marked unavailable, not REMOVED. */
  public boolean available() {
    return Node.available(value, unavailable, state);
  }

  /** The value the northbound asked for (the current value when nothing was asked). */
  public Object intent() {
    return lastUpdate == null ? value : lastUpdate.value();
  }

  /** True when the last request for the key was a delete. */
  public boolean intentDelete() {
    return lastUpdate != null && lastUpdate.value() == null;
  }

  /** Last operation as a status shows it (none for OBTAINED values). */
  TxnOperation lastOperation() {
    return Node.lastOperation(state, lastUpdate);
  }

  List<String> details() {
    return details == null ? List.of() : details;
  }

  ValueStatus status() {
    return new ValueStatus(key, state, error, lastOperation(), details());
  }
}
