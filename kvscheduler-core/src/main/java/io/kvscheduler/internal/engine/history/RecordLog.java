package io.kvscheduler.internal.engine.history;

import io.kvscheduler.internal.engine.record.TxnRecord;
import java.util.function.Predicate;

/**
 * The transaction records kept by the history, oldest first: a ring of records in increasing
 * sequence number. The engine thread appends one record per transaction; any thread may read.
 *
 * <p>Every method holds this object's monitor, which is uncontended in practice (readers are rare
 * and copy what they need before converting it). Appending is an array store, and dropping the
 * oldest record when the count limit is reached is another: no map entry, no boxed key, no walk of
 * a sorted index. Lookup by sequence number is a binary search. Removing records by age (once a
 * minute at most) compacts the ring in one pass. The estimated bytes of the records held ({@link
 * TxnRecord#bytes}) are summed as they come and go, for the history's byte budget.
 */
final class RecordLog {
  private TxnRecord[] ring = new TxnRecord[64];

  /** Index of the oldest record. */
  private int head;

  private int size;

  /** The sum of {@link TxnRecord#bytes} of the records held. */
  private long bytes;

  /**
   * Adds {@code r} (normally newer than every record: an append), then drops the oldest records
   * beyond {@code max}. A record of a sequence number already held replaces it.
   */
  synchronized void append(TxnRecord r, int max) {
    append(r, max, Long.MAX_VALUE);
  }

  /**
   * {@link #append(TxnRecord, int)}, then drops the oldest records while those held take more than
   * {@code maxBytes}, keeping the newest one in any case.
   */
  synchronized void append(TxnRecord r, int max, long maxBytes) {
    if (size > 0 && r.seq <= at(size - 1).seq) {
      insertInOrder(r); // not expected: the engine numbers its transactions in order
    } else {
      while (size > 0 && size >= max) {
        dropOldest(); // first, so that a ring holding max records does not grow
      }
      if (size == ring.length) {
        grow();
      }
      ring[(head + size) & (ring.length - 1)] = r;
      size++;
      bytes += r.bytes;
    }
    while (size > max || (size > 1 && bytes > maxBytes)) {
      dropOldest();
    }
  }

  /** The estimated bytes of the records held. */
  synchronized long bytes() {
    return bytes;
  }

  private void dropOldest() {
    bytes -= ring[head].bytes;
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    size--;
  }

  /** The record of transaction {@code seq}, or null. */
  synchronized TxnRecord get(long seq) {
    int lo = 0;
    int hi = size - 1;
    while (lo <= hi) {
      int mid = (lo + hi) >>> 1;
      long s = at(mid).seq;
      if (s < seq) {
        lo = mid + 1;
      } else if (s > seq) {
        hi = mid - 1;
      } else {
        return at(mid);
      }
    }
    return null;
  }

  /** Every record, oldest first (a copy: the caller reads it without the lock). */
  synchronized TxnRecord[] toArray() {
    TxnRecord[] out = new TxnRecord[size];
    for (int i = 0; i < size; i++) {
      out[i] = at(i);
    }
    return out;
  }

  synchronized int size() {
    return size;
  }

  /** Removes the records {@code drop} accepts, keeping the order of the others. */
  synchronized void removeIf(Predicate<TxnRecord> drop) {
    int kept = 0;
    for (int i = 0; i < size; i++) {
      TxnRecord r = at(i);
      if (!drop.test(r)) {
        ring[(head + kept) & (ring.length - 1)] = r;
        kept++;
      } else {
        bytes -= r.bytes;
      }
    }
    for (int i = kept; i < size; i++) {
      ring[(head + i) & (ring.length - 1)] = null;
    }
    size = kept;
  }

  private void insertInOrder(TxnRecord r) {
    TxnRecord[] all = toArray();
    int i = 0;
    while (i < all.length && all[i].seq < r.seq) {
      i++;
    }
    boolean replace = i < all.length && all[i].seq == r.seq;
    bytes += r.bytes - (replace ? all[i].bytes : 0);
    // a power of two that holds one more record than now (size <= ring.length)
    TxnRecord[] bigger = new TxnRecord[all.length < ring.length ? ring.length : ring.length * 2];
    System.arraycopy(all, 0, bigger, 0, i);
    bigger[i] = r;
    int rest = replace ? i + 1 : i;
    System.arraycopy(all, rest, bigger, i + 1, all.length - rest);
    ring = bigger;
    head = 0;
    size = i + 1 + all.length - rest;
  }

  private TxnRecord at(int i) {
    return ring[(head + i) & (ring.length - 1)];
  }

  private void grow() {
    TxnRecord[] bigger = new TxnRecord[ring.length * 2];
    for (int i = 0; i < size; i++) {
      bigger[i] = at(i);
    }
    ring = bigger;
    head = 0;
  }
}
