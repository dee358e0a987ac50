package io.kvscheduler.internal.engine.refresh;

import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a refresh asks the southbound: the correlation input handed to a descriptor's Retrieve (the
 * first resync's NB values, else the descriptor's available values with their metadata), and the
 * values a descriptor's Retrieve lists for a dump or a verification, filtered as a refresh filters
 * them. Reads the graph, never writes it.
 */
final class SouthboundReader {
  private final Graph graph;
  private final Registry registry;

  SouthboundReader(Graph graph, Registry registry) {
    this.graph = graph;
    this.registry = registry;
  }

  /**
   * The first resync's NB values grouped by the descriptor selecting them (built once per refresh:
   * one descriptor lookup per value instead of one per value and descriptor).
   */
  private IdentityHashMap<DescriptorHandle, List<ValueToApply>> firstNbByDescriptor;

  /** Forgets the grouping of the first resync's NB values (at the start and end of a refresh). */
  void startOver() {
    firstNbByDescriptor = null;
  }

  /**
   * The correlation input of {@code h}'s Retrieve: the first resync's NB values it selects (in key
   * order) when {@code firstNb} is given, else its available base values with their metadata.
   */
  List<KVWithMetadata<Object, Object>> correlate(DescriptorHandle h, List<ValueToApply> firstNb) {
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
        out.add(new KVWithMetadata<>(n.key(), n.value(), n.metadata(), n.origin()));
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
        if (n != null && !n.isDerived() && h.name.equals(n.descriptor()) && n.value() != null) {
          out.add(n);
        }
      }
      return out;
    }
    for (Node n : graph.range(h.descriptor.nbKeyPrefix()).values()) {
      if (!n.isDerived() && h.name.equals(n.descriptor()) && n.value() != null) {
        out.add(n);
      }
    }
    return out;
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
