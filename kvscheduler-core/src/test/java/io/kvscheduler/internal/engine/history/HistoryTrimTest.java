package io.kvscheduler.internal.engine.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.ValueState;
import io.kvscheduler.internal.engine.config.SchedulerConfig;
import io.kvscheduler.internal.engine.graph.Graph;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.engine.publish.KeyRevision;
import io.kvscheduler.internal.engine.publish.Published;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The history's revision trim, which visits only the keys whose revisions ended before the cutoff,
 * against its rule applied to every chain: after each trim pass, every key's chain (live or
 * removed, also removed and created again) holds exactly the revisions, with their ends, that are
 * not old (ended before the cutoff) or that started in the permanent period; with large batches
 * (the queue grows, wraps and shrinks) and a clock that is sometimes set back (the queue is
 * re-sorted, and the once-a-minute gate does not hold trims back); no key keeps a side chain once
 * it has a node again.
 */
class HistoryTrimTest {

  /** One recorded revision of the model: its value, start and end (null while open). */
  private static final class Revision {
    final Object value;
    final Instant since;
    Instant end;

    Revision(Object value, Instant since) {
      this.value = value;
      this.since = since;
    }
  }

  @Test
  @DisplayName(
      "incremental revision trim leaves what the rule leaves in every chain, after random"
          + " changes, removals, re-creations and clock steps")
  void trimMatchesRuleOnEveryChain() {
    for (long seed = 1; seed <= 25; seed++) {
      Random r = new Random(seed);
      SchedulerConfig.Mutable m = new SchedulerConfig.Mutable();
      m.historyAgeLimit = Duration.ofMinutes(30);
      m.permanentHistoryPeriod = Duration.ofMinutes(5);
      Instant start = Instant.parse("2026-01-01T00:00:00Z");
      History h = new History(m.freeze(), start, new Published());
      Graph g = new Graph();
      Map<String, List<Revision>> model = new TreeMap<>();
      Instant now = start;
      Instant nextPass = start.plusSeconds(60);
      int passes = 0;
      for (int step = 0; step < 400; step++) {
        int kind = r.nextInt(40);
        if (kind == 0) {
          now = now.minusSeconds(60L * r.nextInt(90)); // the clock is set back
        } else {
          now = now.plusSeconds(r.nextInt(4) == 0 ? 60L * r.nextInt(20) : r.nextInt(40));
        }
        List<String> written = new ArrayList<>();
        // now and then a large batch: more revisions end than the queue's first capacity
        for (int c = kind == 1 ? 100 : 1 + r.nextInt(3); c > 0; c--) {
          String key = "k" + r.nextInt(r.nextBoolean() ? 4 : 120); // a few hot keys
          if (written.contains(key)) {
            continue; // one revision per key and batch
          }
          written.add(key);
          List<Revision> revs = model.computeIfAbsent(key, k -> new ArrayList<>());
          Revision open = revs.isEmpty() ? null : revs.get(revs.size() - 1);
          if (open != null && open.end != null) {
            open = null;
          }
          if (g.get(key) != null && r.nextInt(4) == 0) {
            g.remove(key);
            open.end = now;
          } else {
            Node n = g.write(key);
            n.setValue("v" + step + key);
            n.setState(ValueState.CONFIGURED);
            if (open != null) {
              open.end = now;
            }
            revs.add(new Revision(n.value(), now));
          }
        }
        h.addRevisions(g.endBatch(), step, now);
        Instant trimAt = now.plusMillis(r.nextInt(1000));
        h.trimRevisions(trimAt, g);
        h.afterPublish(g, written);
        assertThat(revivedSideChains(h, g)).as("seed %d step %d", seed, step).isEmpty();
        if (!trimAt.isBefore(nextPass) || trimAt.isBefore(nextPass.minusSeconds(60))) {
          passes++;
          nextPass = trimAt.plusSeconds(60);
          Instant cutoff = trimAt.minus(m.historyAgeLimit);
          Instant permanentUntil = start.plus(m.permanentHistoryPeriod);
          for (List<Revision> revs : model.values()) {
            revs.removeIf(
                x -> x.end != null && x.end.isBefore(cutoff) && !x.since.isBefore(permanentUntil));
          }
        }
        for (Map.Entry<String, List<Revision>> e : model.entrySet()) {
          List<Object> expected = new ArrayList<>();
          for (Revision x : e.getValue()) {
            expected.add(x.value + "@" + x.since + ".." + x.end);
          }
          List<Object> actual = new ArrayList<>();
          KeyRevision next = null;
          for (KeyRevision x = chainOf(h, e.getKey(), g); x != null; x = x.prev) {
            actual.add(0, x.value + "@" + x.since + ".." + x.end(next));
            next = x;
          }
          assertThat(actual)
              .as("seed %d step %d key %s", seed, step, e.getKey())
              .isEqualTo(expected);
        }
      }
      assertThat(passes).as("seed %d: trim passes", seed).isGreaterThan(20);
    }
  }

  /** The recorded chain of {@code key}: its node's, else the one kept aside, else null. */
  private static KeyRevision chainOf(History h, String key, Graph graph) {
    Node n = graph.get(key);
    return n != null ? KeyRevision.of(n) : h.removed.get(key);
  }

  /** Keys that have a node and a side chain both (none once a transaction is over). */
  private static List<String> revivedSideChains(History h, Graph graph) {
    List<String> out = new ArrayList<>();
    for (String k : h.removed.keySet()) {
      if (graph.get(k) != null) {
        out.add(k);
      }
    }
    return out;
  }
}
