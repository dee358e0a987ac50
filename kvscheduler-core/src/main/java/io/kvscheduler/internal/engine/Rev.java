package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.graph.Node;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One recorded revision of a key, linked to the one before it: a key's timeline is the chain
 * from its newest revision. Immutable, so a chain is shared safely by the engine (in the key's
 * node) and readers (in the published view). Appending a revision allocates one object and never
 * touches the older ones: a revision ends where the next begins, unless {@link #until} says
 * otherwise (the key was removed, or trimming dropped what followed).
 */
final class Rev {
  final String key;
  final String label;
  final Object value;
  final Object metadata;
  final ValueState state;
  final String descriptor;
  final String derivedFrom;
  final boolean unavailable;
  final String error;
  final TxnOperation lastOperation;
  final long lastUpdateSeq;
  final List<Dependency> deps;
  final List<String> derivedKeys;
  final long seq;
  final Instant since;
  /** Explicit end of validity, or null: ends where the next revision begins (open if none). */
  final Instant until;
  /** The revision before this one, or null. */
  final Rev prev;

  private Rev(Rev o, Instant until, Rev prev) {
    this.key = o.key;
    this.label = o.label;
    this.value = o.value;
    this.metadata = o.metadata;
    this.state = o.state;
    this.descriptor = o.descriptor;
    this.derivedFrom = o.derivedFrom;
    this.unavailable = o.unavailable;
    this.error = o.error;
    this.lastOperation = o.lastOperation;
    this.lastUpdateSeq = o.lastUpdateSeq;
    this.deps = o.deps;
    this.derivedKeys = o.derivedKeys;
    this.seq = o.seq;
    this.since = o.since;
    this.until = until;
    this.prev = prev;
  }

  /** The content of {@code n} written by transaction {@code seq} at {@code now}. */
  Rev(Node n, long seq, Instant now, Rev prev) {
    this.key = n.key;
    this.label = n.label;
    this.value = n.value;
    this.metadata = n.metadata;
    this.state = n.state;
    this.descriptor = n.descriptor == null ? "" : n.descriptor;
    this.derivedFrom = n.derivedFrom == null ? "" : n.derivedFrom;
    this.unavailable = n.unavailable;
    this.error = OpRecord.msg(n.error);
    this.lastOperation = n.lastUpdate == null ? TxnOperation.UNDEFINED : n.lastUpdate.op();
    this.lastUpdateSeq = n.lastUpdate == null ? -1 : n.lastUpdate.seq();
    this.deps = n.deps();
    this.derivedKeys = n.derivedKeys;
    this.seq = seq;
    this.since = now;
    this.until = null;
    this.prev = prev;
  }

  /** This revision (the newest of its chain) closed at {@code end}; itself when closed. */
  Rev closedAt(Instant end) {
    return until != null ? this : new Rev(this, end, prev);
  }

  /** This revision with an explicit end and another predecessor (trimming). */
  Rev rebased(Instant end, Rev newPrev) {
    return new Rev(this, end, newPrev);
  }

  /** End of validity given the revision that follows this one (null when newest). */
  Instant end(Rev next) {
    return until != null ? until : next == null ? null : next.since;
  }

  NodeRevision toApi(Instant end) {
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
    return new NodeRevision(key, label, Optional.ofNullable(value), Optional.ofNullable(metadata),
        state, descriptor, derivedFrom, unavailable, error, lastOperation, lastUpdateSeq, d,
        derivedKeys, seq, since, Optional.ofNullable(end));
  }

  private static String describe(Dependency d) {
    return d.isAnyOf() ? "anyOf" + d.keyPrefixes() : d.key();
  }
}
