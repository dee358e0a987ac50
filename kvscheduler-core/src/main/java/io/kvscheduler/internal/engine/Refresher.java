package io.kvscheduler.internal.engine;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refreshes the graph from the southbound through the descriptors' Retrieve, in retrieve order.
 *
 * <p>For each refreshed descriptor: the correlation input is the resync's NB values at the first
 * resync, the descriptor's available base values (with metadata) otherwise. Retrieved values
 * replace the stored value and metadata and become available, except that an INVALID value keeps
 * its rejected NB value and stays unavailable, the found object remembered as what the southbound
 * holds ({@code Node.held}); unknown keys, and values taken for REMOVED, become OBTAINED (SB
 * origin) or DISCOVERED (NB origin); PENDING becomes CONFIGURED; other states are kept. Unknown
 * origin is resolved from the correlation input, then from the key's last recorded revision, then
 * defaults to SB. Values of a refreshed descriptor that were not returned: OBTAINED and DISCOVERED
 * are dropped, others become unavailable and CONFIGURED turns MISSING (REMOVED when the last
 * request was a delete). Descriptors without Retrieve, or whose Retrieve fails, are skipped and
 * their values kept as they are.
 */
final class Refresher {
  private static final Logger LOG = LoggerFactory.getLogger(Refresher.class);

  private final Graph graph;
  private final Registry registry;
  private final History history;

  /** Incremented per refresh; nodes found get it as their mark (no per-refresh key sets). */
  private long epoch;

  Refresher(Graph graph, Registry registry, History history) {
    this.graph = graph;
    this.registry = registry;
    this.history = history;
  }

  /**
   * Refreshes the given keys ({@code null} = everything).
   *
   * @param firstResyncNb NB values of the first resync (correlation input), or null
   * @return the names of the descriptors whose Retrieve answered (their values were read)
   */
  Set<String> refresh(Set<String> keys, List<ValueToApply> firstResyncNb, boolean verbose) {
    Set<String> refreshedDescriptors = new HashSet<>();
    long mark = ++epoch;
    // a refresh of an empty graph (the first resync) finds every value it has: no pass over the
    // values that were not found is needed
    boolean wasEmpty = graph.size() == 0;
    firstNbByDescriptor = null;
    for (DescriptorHandle h : registry.ordered()) {
      if (keys != null && keys.stream().noneMatch(k -> selects(h, k))) {
        continue;
      }
      if (!h.canRetrieve()) {
        continue;
      }
      List<KVWithMetadata<Object, Object>> correlate = correlate(h, firstResyncNb);
      DescriptorHandle.Result<List<KVWithMetadata<Object, Object>>> r = h.retrieve(correlate);
      if (r.failed()) {
        LOG.error(
            "descriptor {}: Retrieve failed; its values are left as they are", h.name, r.error());
        continue;
      }
      refreshedDescriptors.add(h.name);
      Map<String, KVWithMetadata<Object, Object>> correlated =
          new HashMap<>(correlate.size() * 4 / 3 + 16);
      for (int i = 0; i < correlate.size(); i += Bulk.RANGE) {
        putOrigins(correlate, i, Bulk.end(i, correlate.size()), correlated);
      }
      List<KVWithMetadata<Object, Object>> found = r.value(); // our copy: read by index below
      // at the first resync the correlation input is the NB values h selects: a key found in it
      // needs no second descriptor lookup
      boolean bySelection = firstResyncNb != null;
      for (int i = 0; i < found.size(); i += Bulk.RANGE) {
        refreshRange(h, found, i, Bulk.end(i, found.size()), correlated, bySelection, mark, keys);
      }
      // NB base values of this descriptor not returned lose their metadata
      for (Node n : wasEmpty ? List.<Node>of() : nodesOf(h, keys)) {
        if (n.refreshMark != mark && n.metadata != null && n.state != ValueState.OBTAINED) {
          Node w = graph.write(n.key);
          w.metadata = null;
          if (h.metadataMap != null) {
            h.metadataMap.put(w.label, null);
          }
        }
      }
    }
    firstNbByDescriptor = null;
    if (wasEmpty) {
      vanishedDerived.clear();
    } else {
      markNotFound(keys, refreshedDescriptors, mark);
    }
    if (verbose) {
      LOG.info("refreshed graph: {} values", graph.size());
    }
    return refreshedDescriptors;
  }

  private static void putOrigins(
      List<KVWithMetadata<Object, Object>> correlate,
      int from,
      int to,
      Map<String, KVWithMetadata<Object, Object>> out) {
    for (int i = from; i < to; i++) {
      KVWithMetadata<Object, Object> c = correlate.get(i);
      out.put(c.key(), c);
    }
  }

  private void refreshRange(
      DescriptorHandle h,
      List<KVWithMetadata<Object, Object>> found,
      int from,
      int to,
      Map<String, KVWithMetadata<Object, Object>> correlated,
      boolean bySelection,
      long mark,
      Set<String> keys) {
    for (int i = from; i < to; i++) {
      refreshOne(h, found.get(i), correlated, bySelection, mark, keys);
    }
  }

  /**
   * One value retrieved by {@code h}: checked, then stored in the graph. {@code bySelection}: every
   * key of {@code correlated} is known to be selected by {@code h}.
   */
  private void refreshOne(
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
      String key = seen != null ? seen.key : c != null ? c.key() : kv.key();
      applyRetrieved(h, kv, key, resolveOrigin(kv, seen, c == null ? null : c.origin()), mark);
    }
  }

  private boolean selects(DescriptorHandle h, String key) {
    return registry.forKey(key) == h;
  }

  /**
   * The first resync's NB values grouped by the descriptor selecting them (built once per refresh:
   * one descriptor lookup per value instead of one per value and descriptor).
   */
  private IdentityHashMap<DescriptorHandle, List<ValueToApply>> firstNbByDescriptor;

  private List<KVWithMetadata<Object, Object>> correlate(
      DescriptorHandle h, List<ValueToApply> firstNb) {
    List<KVWithMetadata<Object, Object>> out = new ArrayList<>();
    if (firstNb != null) {
      if (firstNbByDescriptor == null) {
        firstNbByDescriptor = new IdentityHashMap<>();
        for (int i = 0; i < firstNb.size(); i += Bulk.RANGE) {
          groupByDescriptor(firstNb, i, Bulk.end(i, firstNb.size()));
        }
      }
      List<ValueToApply> mine = firstNbByDescriptor.getOrDefault(h, List.of());
      ValueToApply.sortByKey(
          mine); // our list (or the empty one), in key order already as firstNb is
      out = new ArrayList<>(mine.size());
      for (int i = 0; i < mine.size(); i += Bulk.RANGE) {
        addNbCorrelation(mine, i, Bulk.end(i, mine.size()), out);
      }
      return out;
    }
    for (Node n : nodesOf(h, null)) {
      if (n.isAvailable()) {
        out.add(new KVWithMetadata<>(n.key, n.value, n.metadata, n.origin()));
      }
    }
    return out;
  }

  private void groupByDescriptor(List<ValueToApply> firstNb, int from, int to) {
    for (int i = from; i < to; i++) {
      ValueToApply kv = firstNb.get(i);
      if (kv.value() != null) {
        DescriptorHandle owner = registry.forKey(kv.key());
        if (owner != null) {
          firstNbByDescriptor.computeIfAbsent(owner, k -> new ArrayList<>()).add(kv);
        }
      }
    }
  }

  private static void addNbCorrelation(
      List<ValueToApply> nb, int from, int to, List<KVWithMetadata<Object, Object>> out) {
    for (int i = from; i < to; i++) {
      ValueToApply kv = nb.get(i);
      out.add(new KVWithMetadata<>(kv.key(), kv.value(), null, ValueOrigin.FROM_NB));
    }
  }

  /** Base nodes handled by descriptor {@code h}, sorted by key. */
  List<Node> nodesOf(DescriptorHandle h, Set<String> keys) {
    List<Node> out = new ArrayList<>();
    if (keys != null) {
      for (String k : new TreeSet<>(keys)) {
        Node n = graph.get(k);
        if (n != null && !n.isDerived() && h.name.equals(n.descriptor) && n.value != null) {
          out.add(n);
        }
      }
      return out;
    }
    for (Node n : graph.range(h.d.nbKeyPrefix()).values()) {
      if (!n.isDerived() && h.name.equals(n.descriptor) && n.value != null) {
        out.add(n);
      }
    }
    return out;
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
    if (seen != null && seen.refreshMark == mark && !seen.isDerived()) {
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
    n.refreshMark = mark;
    refreshNode(n, h, kv.value(), origin, null);
    n.metadata = kv.metadata();
    if (h.metadataMap != null) {
      h.metadataMap.put(n.label, kv.metadata());
    }
    // sorted by key, first occurrence of a key wins
    DescriptorHandle.Result<List<KeyValuePair>> der = h.derivedSorted(n, kv.value());
    List<String> derivedKeys = new ArrayList<>(der.value().size());
    if (!der.failed()) {
      List<KeyValuePair> derived = der.value();
      for (int i = 0; i < derived.size(); i += Bulk.RANGE) {
        refreshDerived(derived, i, Bulk.end(i, derived.size()), n.key, origin, mark, derivedKeys);
      }
    }
    if (!n.derivedKeys.isEmpty()) {
      Set<String> produced = new HashSet<>(derivedKeys);
      boolean kept = false;
      // derived values no longer produced are "not found" (§8); remember them, since the
      // base's derived-key list (the candidates of a keyed refresh) is replaced below
      for (String old : n.derivedKeys) {
        if (!produced.contains(old)) {
          vanishedDerived.add(old);
        }
      }
      // derived values the SB does not show stay derived from this base: those waiting
      // (PENDING), failed (kept FAILED/RETRYING for retry) or gone missing. They still belong to
      // the base's NB intent, so a later change or removal of the base must find them (otherwise
      // a pending binding of a removed base would linger and be created once its dependency
      // appears).
      for (String old : n.derivedKeys) {
        Node dn = graph.get(old);
        if (!produced.contains(old)
            && dn != null
            && dn.value != null
            && n.key.equals(dn.derivedFrom)) {
          derivedKeys.add(old);
          kept = true;
        }
      }
      if (kept) {
        derivedKeys.sort(null);
      }
    }
    n.derivedKeys = derivedKeys.isEmpty() ? List.of() : List.copyOf(derivedKeys);
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
            && (existing.state == ValueState.FAILED || existing.state == ValueState.RETRYING)
            && !listedUnder(baseKey, d.key());
    Node dn = graph.write(d.key());
    if (leftOver) {
      // a failed value its base no longer derives (no retry will come for it), found again:
      // there like a value never seen, not FAILED or RETRYING under a base that does not ask for it
      dn.state = ValueState.NONEXISTENT;
      dn.error = null;
      dn.retryAttempt = 0;
    }
    refreshNode(dn, registry.forNode(dn), d.value(), origin, baseKey);
    dn.refreshMark = mark;
    return true;
  }

  /** True when base {@code baseKey} lists {@code key} among its derived keys (kept sorted). */
  private boolean listedUnder(String baseKey, String key) {
    Node base = graph.get(baseKey);
    return base != null && Collections.binarySearch(base.derivedKeys, key) >= 0;
  }

  private void refreshNode(
      Node n, DescriptorHandle h, Object value, ValueOrigin origin, String base) {
    n.derivedFrom = base;
    n.descriptor = h == null ? null : h.name;
    n.label = h == null ? n.key : h.label(n.key);
    if (n.state == ValueState.INVALID && n.value != null) {
      // the NB value was rejected by Validate: what was found is the older object the southbound
      // still holds, and the value stays unavailable, so that its dependents keep waiting until a
      // valid value is applied (otherwise each resync would create them from the found object and
      // take them down again when the NB value is re-validated)
      n.held = value;
      return;
    }
    n.value = value;
    n.unavailable = false;
    n.held = null; // the southbound holds what was found
    if (n.state == ValueState.NONEXISTENT || n.state == ValueState.REMOVED) {
      // found: a value taken for removed (its last request a delete, not found by an earlier
      // refresh) that shows up again is there, like one never seen
      n.state = origin == ValueOrigin.FROM_SB ? ValueState.OBTAINED : ValueState.DISCOVERED;
    } else if (n.state == ValueState.PENDING) {
      n.state = ValueState.CONFIGURED;
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

  /** Derived keys that a refreshed base no longer produces (cleared by every refresh). */
  private final List<String> vanishedDerived = new ArrayList<>();

  private void markNotFound(Set<String> keys, Set<String> refreshed, long mark) {
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
          for (String dk : n.derivedKeys) {
            Node dn = graph.get(dk);
            if (dn != null) {
              candidates.add(dn);
            }
          }
        }
      }
    }
    for (Node n : candidates) {
      if (n.refreshMark == mark || n.value == null) {
        continue;
      }
      Node base = n.isDerived() ? graph.get(n.derivedFrom) : n;
      if (base == null || base.descriptor == null || !refreshed.contains(base.descriptor)) {
        continue;
      }
      if (n.state == ValueState.OBTAINED || n.state == ValueState.DISCOVERED) {
        graph.remove(n.key);
        continue;
      }
      Node w = graph.write(n.key);
      w.unavailable = true;
      w.held = null; // nothing is left in the southbound
      if (w.state == ValueState.CONFIGURED) {
        // REMOVED only when the northbound asked for the removal: a value taken down because of
        // its dependencies (a DELETE whose intent is still the value) is MISSING, and kept
        w.state =
            w.lastUpdate != null
                    && w.lastUpdate.op() == TxnOperation.DELETE
                    && w.lastUpdate.value() == null
                ? ValueState.REMOVED
                : ValueState.MISSING;
      }
    }
  }

  /**
   * Retrieve for an SB-view dump or a verification: correlation = cached view; the values a refresh
   * would skip are left out.
   */
  List<KVWithMetadata<Object, Object>> retrieveForDump(DescriptorHandle h) {
    DescriptorHandle.Result<List<KVWithMetadata<Object, Object>>> r =
        h.retrieve(correlate(h, null));
    if (r.failed()) {
      throw new IllegalStateException(
          "descriptor " + h.name + ": Retrieve failed: " + OpRecord.msg(r.error()), r.error());
    }
    // what a refresh would take in (it logs what it skips): no foreign or unselected key, each
    // key once (its first listing), no value or metadata of a class the descriptor does not hold
    List<KVWithMetadata<Object, Object>> out = new ArrayList<>(r.value().size());
    Set<String> listed = new HashSet<>();
    for (KVWithMetadata<Object, Object> kv : r.value()) {
      if (kv == null
          || kv.value() == null
          || registry.forKey(kv.key()) != h
          || h.checkFound(kv.key(), kv.value(), kv.metadata(), "Retrieve") != null
          || !listed.add(kv.key())) {
        continue;
      }
      out.add(kv);
    }
    out.sort((a, b) -> a.key().compareTo(b.key()));
    return out;
  }
}
