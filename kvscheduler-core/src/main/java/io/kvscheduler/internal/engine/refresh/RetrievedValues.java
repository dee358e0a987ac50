package io.kvscheduler.internal.engine.refresh;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.DerivedOrder;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.history.History;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Merges what a descriptor's Retrieve found into the graph: checks each value (foreign key, key
 * listed twice, wrong class), resolves its origin, stores it with its dependencies and derived
 * values, and afterwards marks what was not found. The rules are those of {@link Refresher}.
 */
final class RetrievedValues {
  /** Logs under the refresh's name: what it skips is part of a refresh's log. */
  private static final Logger LOG = LoggerFactory.getLogger(Refresher.class);

  private final Graph graph;
  private final Registry registry;
  private final History history;

  RetrievedValues(Graph graph, Registry registry, History history) {
    this.graph = graph;
    this.registry = registry;
    this.history = history;
  }

  /**
   * False while a plan's refresh runs: the descriptors' metadata maps are left as they are (what
   * their readers see must not change), the metadata is kept in the nodes only.
   */
  boolean writesMetadataMaps = true;

  /** Derived keys that a refreshed base no longer produces (cleared by every refresh). */
  private final List<String> vanishedDerived = new ArrayList<>();

  /**
   * Forgets the derived keys noted as vanished (a refresh that needs no pass over what it missed).
   */
  void forgetVanished() {
    vanishedDerived.clear();
  }

  /**
   * One value retrieved by {@code h}: checked, then stored in the graph. {@code bySelection}: every
   * key of {@code correlated} is known to be selected by {@code h}.
   */
  void merge(
      DescriptorHandle h,
      KVWithMetadata<Object, Object> kv,
      Map<String, KVWithMetadata<Object, Object>> correlated,
      boolean bySelection,
      long mark,
      Set<String> keys) {
    if (kv == null || kv.key().isEmpty() || kv.value() == null) {
      LOG.warn("descriptor {}: Retrieve returned an entry without key or value; skipped", h.name);
      return;
    }
    Node seen = graph.get(kv.key());
    KVWithMetadata<Object, Object> c =
        bySelection || seen == null || kv.origin() == ValueOrigin.UNKNOWN
            ? correlated.get(kv.key())
            : null;
    if (validRetrieved(h, kv, seen, mark, keys, bySelection && c != null)) {
      // a new node takes the key as the correlation input has it (the NB's own string at the
      // first resync): later lookups with that string then match it by identity, and the
      // southbound's copy of the key is not kept
      String key = seen != null ? seen.key() : c != null ? c.key() : kv.key();
      applyRetrieved(h, kv, key, resolveOrigin(kv, seen, c == null ? null : c.origin()), mark);
    }
  }

  /** {@code selected}: {@code h} is known to be the descriptor selecting the key. */
  private boolean validRetrieved(
      DescriptorHandle h,
      KVWithMetadata<Object, Object> kv,
      Node seen,
      long mark,
      Set<String> keys,
      boolean selected) {
    if (!selected && (seen != null ? registry.forNode(seen) : registry.forKey(kv.key())) != h) {
      LOG.warn("descriptor {}: Retrieve returned foreign key {}; skipped", h.name, kv.key());
      return false;
    }
    if (seen != null && seen.refreshMark() == mark && !seen.isDerived()) {
      LOG.warn("descriptor {}: Retrieve returned key {} twice; skipped", h.name, kv.key());
      return false;
    }
    Throwable wrong = h.checkFound(kv.key(), kv.value(), kv.metadata(), "Retrieve");
    if (wrong != null) {
      LOG.warn(
          "descriptor {}: retrieved value of {} skipped: {}", h.name, kv.key(), wrong.getMessage());
      return false;
    }
    return keys == null || keys.contains(kv.key());
  }

  /** {@code c}: the key's origin in the correlation input, or null. */
  private ValueOrigin resolveOrigin(KVWithMetadata<Object, Object> kv, Node seen, ValueOrigin c) {
    if (kv.origin() != ValueOrigin.UNKNOWN) {
      return kv.origin();
    }
    if (c != null && c != ValueOrigin.UNKNOWN) {
      return c;
    }
    // the revision before a removal: an SB value that a notification removed stays SB-owned
    // when it shows up again (the reference reads REMOVED as NB, and deletes it)
    ValueState last = history.lastPresentState(kv.key(), seen);
    if (last != null) {
      return last == ValueState.OBTAINED ? ValueOrigin.FROM_SB : ValueOrigin.FROM_NB;
    }
    return ValueOrigin.FROM_SB;
  }

  private void applyRetrieved(
      DescriptorHandle h,
      KVWithMetadata<Object, Object> kv,
      String key,
      ValueOrigin origin,
      long mark) {
    Node n = graph.write(key);
    registry.remember(n, h); // validRetrieved found h selecting the key
    n.setRefreshMark(mark);
    refreshNode(n, h, kv.value(), origin, null);
    n.setMetadata(kv.metadata());
    if (h.metadataMap != null && writesMetadataMaps) {
      h.metadataMap.put(n.label(), kv.metadata());
    }
    // sorted by key, first occurrence of a key wins
    DescriptorHandle.Result<List<KeyValuePair>> der = h.derivedSorted(n, kv.value());
    List<String> derivedKeys = new ArrayList<>(der.value().size());
    if (!der.failed()) {
      List<KeyValuePair> derived = der.value();
      for (int i = 0; i < derived.size(); i += Bulk.RANGE) {
        refreshDerived(derived, i, Bulk.end(i, derived.size()), n.key(), origin, mark, derivedKeys);
      }
    }
    if (!n.derivedKeys().isEmpty()) {
      Set<String> produced = new HashSet<>(derivedKeys);
      boolean kept = false;
      // derived values no longer produced are "not found" (§8); remember them, since the
      // base's derived-key list (the candidates of a keyed refresh) is replaced below
      for (String old : n.derivedKeys()) {
        if (!produced.contains(old)) {
          vanishedDerived.add(old);
        }
      }
      // derived values the SB does not show stay derived from this base: those waiting
      // (PENDING), failed (kept FAILED/RETRYING for retry) or gone missing. They still belong to
      // the base's NB intent, so a later change or removal of the base must find them (otherwise
      // a pending binding of a removed base would linger and be created once its dependency
      // appears).
      for (String old : n.derivedKeys()) {
        Node dn = graph.get(old);
        if (!produced.contains(old)
            && dn != null
            && dn.value() != null
            && n.key().equals(dn.derivedFrom())) {
          derivedKeys.add(old);
          kept = true;
        }
      }
      if (kept) {
        derivedKeys.sort(null);
      }
    }
    n.setDerivedKeys(derivedKeys.isEmpty() ? List.of() : List.copyOf(derivedKeys));
  }

  /**
   * {@link #refreshDerived(KeyValuePair, String, ValueOrigin, long)} of {@code derived[from, to)};
   * the keys stored go to {@code storedKeys}.
   */
  private void refreshDerived(
      List<KeyValuePair> derived,
      int from,
      int to,
      String baseKey,
      ValueOrigin origin,
      long mark,
      List<String> storedKeys) {
    for (int i = from; i < to; i++) {
      KeyValuePair d = derived.get(i);
      if (refreshDerived(d, baseKey, origin, mark)) {
        storedKeys.add(d.key());
      }
    }
  }

  /**
   * Stores derived value {@code d} of {@code baseKey} unless its key holds a value not derived from
   * that base; true when stored.
   */
  private boolean refreshDerived(KeyValuePair d, String baseKey, ValueOrigin origin, long mark) {
    Node existing = graph.get(d.key());
    if (DerivedOrder.collides(existing, baseKey)) {
      return false;
    }
    boolean leftOver =
        existing != null
            && (existing.state() == ValueState.FAILED || existing.state() == ValueState.RETRYING)
            && !listedUnder(baseKey, d.key());
    Node dn = graph.write(d.key());
    if (leftOver) {
      // a failed value its base no longer derives (no retry will come for it), found again:
      // there like a value never seen, not FAILED or RETRYING under a base that does not ask for it
      dn.setState(ValueState.NONEXISTENT);
      dn.setError(null);
      dn.setRetryAttempt(0);
    }
    refreshNode(dn, registry.forNode(dn), d.value(), origin, baseKey);
    dn.setRefreshMark(mark);
    return true;
  }

  /** True when base {@code baseKey} lists {@code key} among its derived keys (kept sorted). */
  private boolean listedUnder(String baseKey, String key) {
    Node base = graph.get(baseKey);
    return base != null && Collections.binarySearch(base.derivedKeys(), key) >= 0;
  }

  private void refreshNode(
      Node n, DescriptorHandle h, Object value, ValueOrigin origin, String base) {
    n.setDerivedFrom(base);
    n.setDescriptor(h == null ? null : h.name);
    n.setLabel(h == null ? n.key() : h.label(n.key()));
    if (n.state() == ValueState.INVALID && n.value() != null) {
      // the NB value was rejected by Validate: what was found is the older object the southbound
      // still holds, and the value stays unavailable, so that its dependents keep waiting until a
      // valid value is applied (otherwise each resync would create them from the found object and
      // take them down again when the NB value is re-validated)
      n.setHeld(value);
      return;
    }
    n.setValue(value);
    n.setUnavailable(false);
    n.setHeld(null); // the southbound holds what was found
    if (n.state() == ValueState.NONEXISTENT || n.state() == ValueState.REMOVED) {
      // found: a value taken for removed (its last request a delete, not found by an earlier
      // refresh) that shows up again is there, like one never seen
      n.setState(origin == ValueOrigin.FROM_SB ? ValueState.OBTAINED : ValueState.DISCOVERED);
    } else if (n.state() == ValueState.PENDING) {
      n.setState(ValueState.CONFIGURED);
    }
    List<Dependency> deps = List.of();
    if (h != null) {
      DescriptorHandle.Result<List<Dependency>> r = h.dependencies(n, value);
      if (!r.failed()) {
        deps = r.value();
      }
    }
    graph.setDeps(n, deps);
  }

  /**
   * After a refresh that found every value of the graph (not the first): values of the {@code
   * refreshed} descriptors among {@code keys} ({@code null} = everything) that were not found
   * ({@code refreshMark} not {@code mark}) are dropped (OBTAINED, DISCOVERED) or become unavailable
   * (CONFIGURED turns MISSING, REMOVED when the last request was a delete).
   */
  void markNotFound(Set<String> keys, Set<String> refreshed, long mark) {
    List<Node> candidates = new ArrayList<>();
    for (String dk : vanishedDerived) {
      Node dn = graph.get(dk);
      if (dn != null) {
        candidates.add(dn);
      }
    }
    vanishedDerived.clear();
    if (keys == null) {
      candidates.addAll(graph.all().values());
    } else {
      for (String k : keys) {
        Node n = graph.get(k);
        if (n != null) {
          candidates.add(n);
          for (String dk : n.derivedKeys()) {
            Node dn = graph.get(dk);
            if (dn != null) {
              candidates.add(dn);
            }
          }
        }
      }
    }
    for (Node n : candidates) {
      if (n.refreshMark() == mark || n.value() == null) {
        continue;
      }
      Node base = n.isDerived() ? graph.get(n.derivedFrom()) : n;
      if (base == null || base.descriptor() == null || !refreshed.contains(base.descriptor())) {
        continue;
      }
      if (n.state() == ValueState.OBTAINED || n.state() == ValueState.DISCOVERED) {
        graph.remove(n.key());
        continue;
      }
      Node w = graph.write(n.key());
      w.setUnavailable(true);
      w.setHeld(null); // nothing is left in the southbound
      if (w.state() == ValueState.CONFIGURED) {
        // REMOVED only when the northbound asked for the removal: a value taken down because of
        // its dependencies (a DELETE whose intent is still the value) is MISSING, and kept
        w.setState(
            w.lastUpdate() != null
                    && w.lastUpdate().op() == TxnOperation.DELETE
                    && w.lastUpdate().value() == null
                ? ValueState.REMOVED
                : ValueState.MISSING);
      }
    }
  }
}
