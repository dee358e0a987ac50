package io.kvscheduler.agent.internal.northbound;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The settle time of the file northbound: per file whose change waits, the content seen (null: the
 * file is gone) and when this content was first seen, on the injected clock. A change that removes
 * or replaces values is delivered once every file it touches has read the same for the settle time.
 * Used by the watcher thread only.
 */
final class SettleTimes {
  private record Seen(String content, Instant since) {}

  private final Duration settle;
  private final Clock clock;
  private final Map<Path, Seen> waiting = new HashMap<>();

  SettleTimes(Duration settle, Clock clock) {
    this.settle = settle;
    this.clock = clock;
  }

  /**
   * Whether each of {@code files} has read the same for the settle time: its content in {@code now}
   * (absent: the file is gone). Remembers when each was first seen as it is now.
   */
  boolean stable(Collection<Path> files, Map<Path, String> now) {
    Instant t = clock.instant();
    boolean stable = true;
    for (Path p : files) {
      String content = now.get(p);
      Seen seen = waiting.get(p);
      if (seen == null || !Objects.equals(seen.content(), content)) {
        seen = new Seen(content, t);
        waiting.put(p, seen);
      }
      stable &= Duration.between(seen.since(), t).compareTo(settle) >= 0;
    }
    return stable;
  }

  /** Forgets every file but {@code keep}: a file no scan touches any more waits for nothing. */
  void retainOnly(Set<Path> keep) {
    waiting.keySet().retainAll(keep);
  }

  /** Forgets {@code files}: their change was delivered. */
  void forget(Collection<Path> files) {
    files.forEach(waiting::remove);
  }
}
