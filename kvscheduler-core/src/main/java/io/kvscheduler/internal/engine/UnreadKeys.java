package io.kvscheduler.internal.engine;

import io.kvscheduler.internal.engine.calls.DescriptorHandle;
import io.kvscheduler.internal.engine.calls.Registry;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.refresh.Refresher;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

/**
 * Base keys whose southbound state is unknown across transactions: a call for the key (or one of
 * its derived values) failed, or a resync's Retrieve of its descriptor did, and every Retrieve of
 * its descriptor since failed too. Each transaction first tries to read them ({@link #readAgain});
 * until one is read, the walk makes no call for it or its derived values ({@link
 * Transaction#unreadBefore}, from {@link #snapshot}).
 */
final class UnreadKeys {
  private final Graph graph;
  private final Registry registry;
  private final Refresher refresher;
  private final Set<String> bases = new TreeSet<>();

  UnreadKeys(Graph graph, Registry registry, Refresher refresher) {
    this.graph = graph;
    this.registry = registry;
    this.refresher = refresher;
  }

  /**
   * Reads the keys earlier transactions left unread. Those a Retrieve now answers for are known
   * again and returned (the transaction lets their dependents follow what was found: {@link
   * Transaction#readFirst}); the others stay unknown.
   */
  Set<String> readAgain() {
    if (bases.isEmpty()) {
      return Set.of();
    }
    Set<String> keys = new TreeSet<>(bases);
    dropAnswered(keys, refresher.refresh(keys, null, false));
    keys.removeAll(bases);
    return keys;
  }

  /**
   * After a refresh of {@code keys} ({@code null}: all) that read the descriptors {@code read}: the
   * unread keys among them whose descriptor answered are known again.
   */
  void dropAnswered(Set<String> keys, Set<String> read) {
    if (bases.isEmpty()) {
      return;
    }
    bases.removeIf(
        k -> {
          DescriptorHandle h = registry.forKey(k);
          return (keys == null || keys.contains(k)) && (h == null || read.contains(h.name));
        });
  }

  /**
   * Keeps base key {@code key}, which the graph holds no node for, unknown until a later
   * transaction reads it: a call for a value the walk never reached ran ahead and failed, or its
   * undo did (see {@link CallsNotTaken}), and the Retrieve after it failed too. When the key is
   * read, what the southbound holds gets a node as any value a refresh finds; until then the walk
   * makes no call for the key.
   */
  void addWithoutNode(String key) {
    bases.add(key);
  }

  /**
   * Keeps base keys {@code keys} unknown until a later transaction reads them: a resync's Retrieve
   * of their descriptor failed ({@link TxnPreparer#prepareNb}). Keys the graph holds no node for
   * (values the resync lists) are kept as by {@link #addWithoutNode}.
   */
  void addUnreadable(Collection<String> keys) {
    bases.addAll(keys);
  }

  /**
   * Keeps the base keys of {@code keys} (a failed call whose key no Retrieve could read) unknown
   * until a later transaction reads them.
   */
  void addBasesOf(Collection<String> keys) {
    for (String key : keys) {
      Node n = graph.get(key);
      if (n != null) {
        bases.add(n.isDerived() ? n.derivedFrom() : key);
      }
    }
  }

  /**
   * Forgets base key {@code key}: the user said the southbound holds nothing for it ({@link
   * AssumedAbsence}). True when it was unread.
   */
  boolean forget(String key) {
    return bases.remove(key);
  }

  /** The keys unread now, for a transaction starting (an immutable copy). */
  Set<String> snapshot() {
    return bases.isEmpty() ? Set.of() : Set.copyOf(bases);
  }
}
