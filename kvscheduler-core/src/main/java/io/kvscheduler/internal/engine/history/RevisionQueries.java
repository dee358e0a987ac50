package io.kvscheduler.internal.engine.history;

import io.kvscheduler.api.FlagStats;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NodeRevision;
import io.kvscheduler.internal.engine.publish.KeyRevision;
import io.kvscheduler.internal.engine.publish.Published;
import io.kvscheduler.internal.engine.publish.PublishedSnapshot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The read side of the revision history, safe from any thread: a key's timeline, the graph as it
 * was at a moment, and counts of a flag's values. Chains of live keys are found in the published
 * views, those of removed keys in the map the history keeps them aside in.
 */
final class RevisionQueries {
  private static final String KNOWN_FLAGS =
      "value-state, unavailable, error, last-update, descriptor, derived";

  private final Published published;
  private final Map<String, KeyRevision> removed;

  /** {@code removed}: key → newest revision (closed) of keys that have no node. */
  RevisionQueries(Published published, Map<String, KeyRevision> removed) {
    this.published = published;
    this.removed = removed;
  }

  /** Every revision of {@code key}, oldest first; empty when it has none. */
  List<NodeRevision> timeline(String key) {
    return toApi(head(key));
  }

  /** The revision of every key that was valid at {@code t}, in key order. */
  List<NodeRevision> snapshot(Instant t) {
    TreeMap<String, NodeRevision> out = new TreeMap<>();
    forEachChain(
        (key, head) -> {
          KeyRevision next = null;
          for (KeyRevision r = head; r != null; r = r.prev) {
            Instant end = r.end(next);
            if (!r.since.isAfter(t) && (end == null || end.isAfter(t))) {
              out.put(key, r.toApi(end));
              break;
            }
            next = r;
          }
        });
    return List.copyOf(out.values());
  }

  /**
   * How many revisions of the selected keys have {@code flag}, in total and per value of the flag.
   *
   * @throws IllegalArgumentException if {@code flag} is not a known flag
   */
  FlagStats flagStats(String flag, KeySelector selector) {
    long[] total = {0};
    Map<String, Long> per = new TreeMap<>();
    flagValue(flag, null); // rejects an unknown flag even when there is no revision
    forEachChain(
        (key, head) -> {
          if (!selector.test(key)) {
            return;
          }
          for (NodeRevision r : toApi(head)) {
            String v = flagValue(flag, r);
            if (v != null) {
              total[0]++;
              per.merge(v, 1L, Long::sum);
            }
          }
        });
    return new FlagStats(total[0], per);
  }

  /** Newest revision of {@code key} as readers see it. */
  private KeyRevision head(String key) {
    KeyRevision v = published.current().get(key);
    if (v != null && v.history() != null) {
      return v.history();
    }
    return removed.get(key);
  }

  /** The chain from {@code head}, oldest first. */
  private static List<NodeRevision> toApi(KeyRevision head) {
    List<NodeRevision> out = new ArrayList<>();
    KeyRevision next = null;
    for (KeyRevision r = head; r != null; r = r.prev) {
      out.add(r.toApi(r.end(next)));
      next = r;
    }
    Collections.reverse(out);
    return out;
  }

  /** Every chain readers can see: live keys from the views, removed keys from the side map. */
  private void forEachChain(BiConsumer<String, KeyRevision> action) {
    PublishedSnapshot views = published.current();
    for (KeyRevision v : views.values()) {
      if (v.history() != null) {
        action.accept(v.key, v.history());
      }
    }
    removed.forEach(
        (k, r) -> {
          if (!views.containsKey(k)) {
            action.accept(k, r);
          }
        });
  }

  /** The value of {@code flag} in {@code r} (null: not set); with no revision, only checks. */
  private static String flagValue(String flag, NodeRevision r) {
    if (r == null) {
      return switch (flag) {
        case "value-state", "unavailable", "error", "last-update", "descriptor", "derived" -> null;
        default -> throw unknownFlag(flag);
      };
    }
    return switch (flag) {
      case "value-state" -> r.state().name();
      case "unavailable" -> r.unavailable() ? "" : null;
      case "error" -> r.error().isEmpty() ? null : "";
      case "last-update" -> r.lastUpdateSeq() < 0 ? null : r.lastOperation().name();
      case "descriptor" -> r.descriptor().isEmpty() ? null : r.descriptor();
      case "derived" -> r.derivedFrom().isEmpty() ? null : r.derivedFrom();
      default -> throw unknownFlag(flag);
    };
  }

  private static IllegalArgumentException unknownFlag(String flag) {
    return new IllegalArgumentException("unknown flag '" + flag + "' (known: " + KNOWN_FLAGS + ")");
  }
}
