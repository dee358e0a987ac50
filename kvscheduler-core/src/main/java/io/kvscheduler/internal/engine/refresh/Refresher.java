package io.kvscheduler.internal.engine.refresh;

import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.RetrieveError;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.collect.Bulk;
import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.graph.ValueToApply;
import io.kvscheduler.internal.engine.history.History;
import io.kvscheduler.internal.engine.record.OpRecord;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * their values kept as they are; the failures of the last refresh are kept ({@link #failures}) for
 * a resync to report them and leave those values unread.
 *
 * <p>This class runs a refresh, descriptor after descriptor; {@link SouthboundReader} builds what
 * Retrieve is asked with, and {@link RetrievedValues} merges what it answers into the graph.
 */
public final class Refresher {
  private static final Logger LOG = LoggerFactory.getLogger(Refresher.class);

  private final Graph graph;
  private final Registry registry;
  private final SouthboundReader reader;
  private final RetrievedValues merger;

  /** Incremented per refresh; nodes found get it as their mark (no per-refresh key sets). */
  private long epoch;

  /** The descriptors whose Retrieve failed in the last refresh, in retrieve order. */
  private List<RetrieveError> failures = List.of();

  public Refresher(Graph graph, Registry registry, History history) {
    this.graph = graph;
    this.registry = registry;
    this.reader = new SouthboundReader(graph, registry);
    this.merger = new RetrievedValues(graph, registry, history);
  }

  /**
   * Whether the refreshes write the descriptors' metadata maps (the default); off while a plan
   * reads the southbound, whose refresh is rolled back.
   */
  public void writeMetadataMaps(boolean on) {
    merger.writesMetadataMaps = on;
  }

  /**
   * Refreshes the given keys ({@code null} = everything).
   *
   * @param firstResyncNb NB values of the first resync (correlation input), or null
   * @return the names of the descriptors whose Retrieve answered (their values were read)
   */
  public Set<String> refresh(Set<String> keys, List<ValueToApply> firstResyncNb, boolean verbose) {
    Set<String> refreshedDescriptors = new HashSet<>();
    failures = List.of();
    long mark = ++epoch;
    // a refresh of an empty graph (the first resync) finds every value it has: no pass over the
    // values that were not found is needed
    boolean wasEmpty = graph.size() == 0;
    reader.startOver();
    for (DescriptorHandle h : registry.ordered()) {
      if (keys != null && keys.stream().noneMatch(k -> registry.forKey(k) == h)) {
        continue;
      }
      if (!h.canRetrieve()) {
        continue;
      }
      List<KVWithMetadata<Object, Object>> correlate = reader.correlate(h, firstResyncNb);
      DescriptorHandle.Result<List<KVWithMetadata<Object, Object>>> r = h.retrieve(correlate);
      if (r.failed()) {
        LOG.error(
            "descriptor {}: Retrieve failed; what the southbound holds for its values is unknown",
            h.name,
            r.error());
        if (failures.isEmpty()) {
          failures = new ArrayList<>();
        }
        failures.add(new RetrieveError(h.name, OpRecord.msg(r.error())));
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
      for (Node n : wasEmpty ? List.<Node>of() : reader.nodesOf(h, keys)) {
        if (n.refreshMark() != mark && n.metadata() != null && n.state() != ValueState.OBTAINED) {
          Node w = graph.write(n.key());
          w.setMetadata(null);
          if (h.metadataMap != null && merger.writesMetadataMaps) {
            h.metadataMap.put(w.label(), null);
          }
        }
      }
    }
    reader.startOver();
    if (wasEmpty) {
      merger.forgetVanished();
    } else {
      merger.markNotFound(keys, refreshedDescriptors, mark);
    }
    if (verbose) {
      LOG.info("refreshed graph: {} values", graph.size());
    }
    return refreshedDescriptors;
  }

  /** The descriptors whose Retrieve failed in the last refresh, in retrieve order. */
  public List<RetrieveError> failures() {
    return failures;
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
      merger.merge(h, found.get(i), correlated, bySelection, mark, keys);
    }
  }

  /**
   * Retrieve for an SB-view dump or a verification: correlation = cached view; the values a refresh
   * would skip are left out.
   *
   * @throws IllegalStateException if the descriptor's Retrieve fails
   */
  public List<KVWithMetadata<Object, Object>> retrieveForDump(DescriptorHandle h) {
    return reader.retrieveForDump(h);
  }
}
