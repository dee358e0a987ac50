package io.kvscheduler.internal.engine.graph;

import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RetryOptions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;

/**
 * What the walk knows about a base value's derived values without reading their nodes: which of
 * them were found <em>settled</em> — CONFIGURED by a create or an update of an equal value, equal
 * to the value the base derived, with no error, nothing held and no revert — and have not been
 * written since. A base value with thousands of derived values (a bridge domain listing its
 * members) is updated for one added member; the walk then visits, checks and looks up only the
 * members that changed or were written since the base's last walk, not all of them (benchmark W5,
 * {@code bin/kvs-bench W5 --n 10000}: the last 100 updates of a domain growing to 10,000 members;
 * see BENCHMARKS.md).
 *
 * <p>One {@link Entry} per base that derived at least {@link #MIN_DERIVED} values, made when the
 * walk applies the base's derived values ({@link #begin}). Every write of a derived node goes
 * through the {@link Graph}, which reports it here ({@link #touched}): the node's key is then no
 * longer known settled, until a walk checks it again; so is every derived node a rollback replaces
 * or puts back (the knowledge gathered by a simulated walk holds for the nodes it did not write).
 * An entry finds a key by binary search in its sorted keys, so neither a write nor a check hashes a
 * key.
 *
 * <p>The knowledge is per key and never depends on the base's current value: a key is known settled
 * when its entry found it settled with a value equal to the entry's value for it, and no write
 * touched it since. Engine thread only.
 */
public final class SettledDerived {
  /**
   * Fewest derived values for which a base gets an entry: with one derived value, reading its node
   * costs no more than the bookkeeping.
   */
  static final int MIN_DERIVED = 2;

  private final HashMap<String, Entry> byBase = new HashMap<>();

  /** The entry of a base: its derived values as last applied and which of them are settled. */
  public static final class Entry {
    /** Receives the writes of the base's derived nodes. */
    private static final int LIVE = 0;

    /** Replaced by a newer entry, which receives the writes from then on. */
    private static final int RETIRED = 1;

    /** Forgotten: no entry receives the writes any more. */
    private static final int DEAD = 2;

    /** The derived values as the walk applied them, sorted by key. */
    final List<ValueToApply> values;

    /** The keys of {@link #values}, in the same order (the base's derived keys then). */
    public final List<String> keys;

    /**
     * {@code settled[i]}: {@code values[i]}'s node was found settled with that value and not
     * written since.
     */
    private final boolean[] settled;

    /** {@code touched[i]}: {@code values[i]}'s node was written since the entry was made. */
    private final boolean[] touched;

    /** The retry options of the settled nodes' last update. */
    public final RetryOptions retry;

    private int state = LIVE;

    private Entry(List<ValueToApply> values, List<String> keys, RetryOptions retry) {
      this.values = values;
      this.keys = keys;
      this.settled = new boolean[values.size()];
      this.touched = new boolean[values.size()];
      this.retry = retry;
    }

    /** True when the key at {@code i} of {@link #keys} is known settled now. */
    public boolean knownSettled(int i) {
      return state == LIVE && settled[i];
    }

    private void touch(String key) {
      int i = Collections.binarySearch(keys, key);
      if (i >= 0) {
        settled[i] = false;
        touched[i] = true;
      }
    }
  }

  /**
   * Finds, for each derived value of a base's new answer (sorted by key), where its key is known
   * settled with an equal value in the base's entry, and which of the entry's keys the new answer
   * keeps: one pass over both sorted lists, no lookup.
   */
  public static final class Matcher {
    private final Entry entry;
    private final int[] settledAt;
    private final boolean[] kept;
    private int next;
    private int matched = -1;
    private int count;

    private Matcher(Entry entry, int size) {
      this.entry = entry;
      this.settledAt = new int[size];
      this.kept = new boolean[entry.values.size()];
    }

    /**
     * True when {@code kv}'s key is known settled in the entry with a value equal to {@code kv}'s.
     * Called with the derived values in ascending key order, each followed by {@link #added} when
     * the base keeps it.
     */
    public boolean settled(KeyValuePair kv) {
      matched = -1;
      List<ValueToApply> old = entry.values;
      String key = kv.key();
      while (next < old.size()) {
        ValueToApply o = old.get(next);
        int c = o.key().compareTo(key);
        if (c > 0) {
          return false;
        }
        int at = next++;
        if (c == 0) {
          matched = at;
          Object v = kv.value();
          return entry.knownSettled(at) && (v == o.value() || v != null && v.equals(o.value()));
        }
      }
      return false;
    }

    /** The entry's string of the key last given to {@link #settled}, when the entry has it. */
    public String matchedKey() {
      return matched >= 0 ? entry.values.get(matched).key() : null;
    }

    /** The value last given to {@link #settled} is the base's next derived value. */
    public void added(boolean settled) {
      settledAt[count++] = settled ? matched : -1;
      if (matched >= 0) {
        kept[matched] = true;
      }
    }

    /** What was found. */
    public Match match() {
      return new Match(entry, settledAt, kept);
    }
  }

  /**
   * What a {@link Matcher} found: {@code settledAt[i]}, where the base's {@code i}th derived value
   * was known settled in {@code entry} with an equal value, or -1; {@code kept[j]}, whether the
   * entry's {@code j}th key is among the base's derived keys again.
   */
  public record Match(Entry entry, int[] settledAt, boolean[] kept) {
    /**
     * The keys of {@code old} (the base's derived keys before, sorted) not among {@code now} (its
     * derived keys now, sorted), in order: read from {@link #kept} when {@code old} is the entry's
     * key list, else found in one pass over both lists.
     */
    public static List<String> dropped(Match m, List<String> old, List<String> now) {
      List<String> out = new ArrayList<>();
      if (m != null && m.entry.keys == old) {
        for (int i = 0; i < old.size(); i++) {
          if (!m.kept[i]) {
            out.add(old.get(i));
          }
        }
        return out;
      }
      int k = 0;
      for (String dk : old) {
        int c = -1;
        while (k < now.size() && (c = now.get(k).compareTo(dk)) < 0) {
          k++;
        }
        if (c != 0) {
          out.add(dk);
        }
      }
      return out;
    }
  }

  /**
   * The derived values of one walk of a base ({@code Walker}): which of them are known settled, and
   * the base's new entry, if one is made, in which the walk notes those it finds settled.
   */
  public static final class Pass {
    private final Entry before;
    private final int[] settledAt;
    private final Entry after;

    private Pass(Entry before, int[] settledAt, Entry after) {
      this.before = before;
      this.settledAt = settledAt;
      this.after = after;
    }

    /**
     * True when the {@code i}th derived value is still known settled, with the value the walk is
     * applying: it was when the walk computed the derived values, and its node was not written
     * since. The entry that receives the writes must still be live.
     */
    public boolean settled(int i) {
      if (settledAt == null || settledAt[i] < 0) {
        return false;
      }
      if (after != null) {
        return after.state == Entry.LIVE && !after.touched[i] && before.settled[settledAt[i]];
      }
      return before.knownSettled(settledAt[i]);
    }

    /** The retry options of the nodes known settled. */
    public RetryOptions retry() {
      return before.retry;
    }

    /** The walk found the {@code i}th derived value settled (or skipped it as known settled). */
    public void foundSettled(int i) {
      if (after != null) {
        after.settled[i] = true;
      }
    }
  }

  /** True while some base has an entry. */
  boolean any() {
    return !byBase.isEmpty();
  }

  /** The live entry of {@code baseKey}, or null. */
  public Entry live(String baseKey) {
    if (byBase.isEmpty()) {
      return null;
    }
    Entry e = byBase.get(baseKey);
    return e != null && e.state == Entry.LIVE ? e : null;
  }

  /**
   * A matcher of {@code size} derived values over the live entry of {@code baseKey}, or null when
   * it has none.
   */
  public Matcher matcher(String baseKey, int size) {
    Entry e = live(baseKey);
    return e == null ? null : new Matcher(e, size);
  }

  /**
   * Starts applying the derived values of {@code baseKey} ({@code derived} with their keys {@code
   * derivedKeys}, and what a {@link Matcher} found of them in the base's entry then, or null).
   * {@code renew}: the walk checks retry options ({@code retry}) and may find values settled, so a
   * new entry replaces the base's; else the base's entry is only read. Null when there is nothing
   * to know.
   */
  public Pass begin(
      String baseKey,
      Match match,
      List<ValueToApply> derived,
      List<String> derivedKeys,
      boolean renew,
      RetryOptions retry) {
    Entry before = match == null ? null : match.entry();
    int[] settledAt = match == null ? null : match.settledAt();
    if (before == null || before.state != Entry.LIVE) {
      before = null;
      settledAt = null;
    }
    if (derived.size() < MIN_DERIVED) {
      forget(baseKey);
      return null;
    }
    if (!renew) {
      return before == null ? null : new Pass(before, settledAt, null);
    }
    if (before != null && !Objects.equals(before.retry, retry)) {
      settledAt = null; // settled under other retry options: each is checked
    }
    Entry after = new Entry(derived, derivedKeys, retry);
    Entry replaced = byBase.put(baseKey, after);
    if (replaced != null && replaced.state == Entry.LIVE) {
      replaced.state = Entry.RETIRED;
    }
    return new Pass(before == null ? after : before, settledAt, after);
  }

  /**
   * A derived node is being written (through the {@link Graph}; {@code n.derivedFrom} is not null):
   * its key is no longer known settled.
   */
  void touched(Node n) {
    Entry e = byBase.get(n.derivedFrom());
    if (e != null) {
      e.touch(n.key());
    }
  }

  /** Drops the entry of {@code baseKey} (a base that left the graph, or derives too few). */
  void forget(String baseKey) {
    if (byBase.isEmpty()) {
      return;
    }
    Entry e = byBase.remove(baseKey);
    if (e != null) {
      e.state = Entry.DEAD;
    }
  }
}
