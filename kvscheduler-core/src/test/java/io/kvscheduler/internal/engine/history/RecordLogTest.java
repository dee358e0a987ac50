package io.kvscheduler.internal.engine.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.internal.engine.record.TxnRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The history's record ring against a sorted map: appends with a count limit, lookups by sequence
 * number including gaps, removals by predicate in the middle of the ring (random rounds); the ring
 * wrapping, growing while wrapped and taking an out-of-order record when full (fixed cases); the
 * rare out-of-order add.
 */
class RecordLogTest {

  private static TxnRecord rec(long seq) {
    Instant t = Instant.ofEpochSecond(1_000_000 + seq);
    return new TxnRecord(
        seq,
        TxnType.NB_TRANSACTION,
        ResyncType.NOT_RESYNC,
        "",
        -1,
        0,
        t,
        t,
        List.of(),
        false,
        List.of(),
        List.of(),
        List.of());
  }

  @Test
  @DisplayName("ring equals a sorted map after random appends, count limits and removals")
  void matchesSortedMap() {
    for (long seed = 1; seed <= 30; seed++) {
      Random r = new Random(seed);
      RecordLog log = new RecordLog();
      TreeMap<Long, TxnRecord> model = new TreeMap<>();
      long seq = 0;
      for (int round = 0; round < 400; round++) {
        int what = r.nextInt(20);
        if (what == 0) {
          long lo = seq - r.nextInt(200);
          long hi = lo + r.nextInt(100);
          log.removeIf(x -> x.seq >= lo && x.seq < hi);
          model.keySet().removeIf(s -> s >= lo && s < hi);
        } else {
          int max = 1 + r.nextInt(300);
          seq += 1 + r.nextInt(3); // gaps: aborted transactions leave no record
          TxnRecord t = rec(seq);
          log.append(t, max);
          model.put(seq, t);
          while (model.size() > max) {
            model.pollFirstEntry();
          }
        }
        assertThat(log.size()).isEqualTo(model.size());
        assertThat(log.toArray()).containsExactlyElementsOf(model.values());
        for (int probe = 0; probe < 5; probe++) {
          long s = seq - r.nextInt(400);
          assertThat(log.get(s)).isSameAs(model.get(s));
        }
      }
    }
  }

  @Test
  @DisplayName(
      "the ring wraps at its count limit, grows while wrapped, and takes an out-of-order record when full")
  void wrapsGrowsAndInsertsWhenFull() {
    RecordLog log = new RecordLog();
    TreeMap<Long, TxnRecord> model = new TreeMap<>();
    long seq = 0;
    for (int i = 0; i < 100; i++) { // 64 slots, 50 kept: the oldest slot moves round the ring
      seq += 2;
      add(log, model, rec(seq), 50);
    }
    check(log, model);
    for (int i = 0; i < 200; i++) { // a higher limit: grows with the oldest record mid-ring
      seq += 2;
      add(log, model, rec(seq), 150);
    }
    check(log, model);
    RecordLog full = new RecordLog();
    TreeMap<Long, TxnRecord> fullModel = new TreeMap<>();
    for (long s = 2; s <= 2 * 90; s += 2) { // wrapped, then exactly 64 records in 64 slots
      add(full, fullModel, rec(s), 64);
    }
    check(full, fullModel);
    add(full, fullModel, rec(2 * 90 - 3), 65); // older than the newest, into a full ring
    check(full, fullModel);
    add(full, fullModel, rec(2 * 90 - 1), 65); // and once more, now over the limit again
    check(full, fullModel);
  }

  private static void add(RecordLog log, TreeMap<Long, TxnRecord> model, TxnRecord t, int max) {
    log.append(t, max);
    model.put(t.seq, t);
    while (model.size() > max) {
      model.pollFirstEntry();
    }
  }

  private static void check(RecordLog log, TreeMap<Long, TxnRecord> model) {
    assertThat(log.toArray()).containsExactlyElementsOf(model.values());
    for (long s = model.firstKey() - 2; s <= model.lastKey() + 2; s++) {
      assertThat(log.get(s)).isSameAs(model.get(s));
    }
  }

  @Test
  @DisplayName("a record older than the newest is put in order, one of the same number replaces it")
  void outOfOrderAddKeepsOrder() {
    RecordLog log = new RecordLog();
    for (long s : new long[] {2, 4, 6}) {
      log.append(rec(s), 100);
    }
    TxnRecord three = rec(3);
    TxnRecord four = rec(4);
    log.append(three, 100);
    log.append(four, 100);
    log.append(rec(1), 100);
    List<Long> seqs = new ArrayList<>();
    for (TxnRecord t : log.toArray()) {
      seqs.add(t.seq);
    }
    assertThat(seqs).containsExactly(1L, 2L, 3L, 4L, 6L);
    assertThat(log.get(3)).isSameAs(three);
    assertThat(log.get(4)).isSameAs(four);
    log.append(rec(7), 2);
    assertThat(log.toArray()).extracting(t -> t.seq).containsExactly(6L, 7L);
    assertThat(log.size()).isEqualTo(2);
  }
}
