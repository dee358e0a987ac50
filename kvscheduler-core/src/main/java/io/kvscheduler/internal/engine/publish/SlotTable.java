package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.internal.collect.SlotIndex;
import io.kvscheduler.internal.engine.graph.Node;
import java.util.Arrays;

/**
 * The engine side of the published views' slots (engine thread only): which key each slot holds,
 * and the freed slots, reused before new ones are added at the end. A published key keeps its slot
 * while it is published; its node remembers it ({@link Node#publishedSlot}) so that a change of its
 * value finds the slot without a key lookup.
 */
final class SlotTable {
  /** The key published in each slot, null for a free slot. */
  private String[] slotKeys = new String[64];

  /** Number of slots in use or freed (the length of the views vector). */
  private int slotCount;

  /** Freed slots, reused before new ones (a stack). */
  private int[] free = new int[16];

  private int freeCount;

  /**
   * The slot of {@code key} (whose node is {@code n}, or null), or -1 when it is not published: the
   * node's remembered slot when that slot still holds the key, else a lookup.
   */
  int slotOf(String key, Node n, SlotIndex slots) {
    if (n != null) {
      int hint = n.publishedSlot();
      if (hint >= 0 && hint < slotCount && key.equals(slotKeys[hint])) {
        return hint;
      }
    }
    return slots.get(key);
  }

  /** A slot for a newly published key: a freed one, else a new one at the end. */
  int acquire(String key) {
    int slot;
    if (freeCount > 0) {
      slot = free[--freeCount];
    } else {
      slot = slotCount++;
      if (slot == slotKeys.length) {
        slotKeys = Arrays.copyOf(slotKeys, slot * 2);
      }
    }
    slotKeys[slot] = key;
    return slot;
  }

  /** Gives {@code slot} back: it holds no key now. */
  void release(int slot) {
    slotKeys[slot] = null;
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, freeCount * 2);
    }
    free[freeCount++] = slot;
  }

  /** Number of slots in use or freed: the length the views vector must have. */
  int slotCount() {
    return slotCount;
  }

  /** Makes room for {@code extra} new slots. */
  void reserve(int extra) {
    if (slotKeys.length < slotCount + extra) {
      slotKeys = Arrays.copyOf(slotKeys, slotCount + extra);
    }
  }

  /** The slots as {@code s} has them: its keys in their slots, every other slot free. */
  void resetTo(PublishedSnapshot s) {
    slotCount = s.views.size();
    slotKeys = new String[Math.max(64, slotCount)];
    for (SlotIndex.Cursor c = s.slots.cursor(null, null); c.next(); ) {
      slotKeys[c.slot()] = c.key();
    }
    freeCount = 0;
    for (int i = slotCount - 1; i >= 0; i--) {
      if (slotKeys[i] == null) {
        if (freeCount == free.length) {
          free = Arrays.copyOf(free, freeCount * 2);
        }
        free[freeCount++] = i;
      }
    }
  }
}
