package io.kvscheduler.internal.engine.publish;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.internal.collect.SlotIndex;
import io.kvscheduler.internal.collect.SlotVector;
import io.kvscheduler.internal.engine.graph.NodeStore;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * What readers see of the graph at one moment, immutable: the views by slot ({@link SlotVector})
 * and the sorted key index key → slot ({@link SlotIndex}). Built by {@link Published}; read from
 * any thread without locks.
 */
public final class PublishedSnapshot {
  static final PublishedSnapshot EMPTY = new PublishedSnapshot(SlotIndex.EMPTY, SlotVector.empty());

  /** Key → slot of its view, in key order. */
  final SlotIndex slots;

  /** Views by slot; a free slot holds null. */
  final SlotVector<KeyRevision> views;

  PublishedSnapshot(SlotIndex slots, SlotVector<KeyRevision> views) {
    this.slots = slots;
    this.views = views;
  }

  /** The view of {@code key}, or null when the key has no value. */
  public KeyRevision get(String key) {
    int slot = slots.get(key);
    return slot < 0 ? null : views.get(slot);
  }

  public boolean containsKey(String key) {
    return slots.get(key) >= 0;
  }

  int size() {
    return slots.size();
  }

  /** Every view, in key order. */
  public Iterable<KeyRevision> values() {
    return viewsOf(null, null);
  }

  /** The views of the keys starting with {@code prefix}, in key order. */
  public Iterable<KeyRevision> withPrefix(String prefix) {
    return prefix.isEmpty() ? values() : viewsOf(prefix, NodeStore.prefixEnd(prefix));
  }

  /** The views of the keys in [{@code from}, {@code to}) (null: open), in key order. */
  private Iterable<KeyRevision> viewsOf(String from, String to) {
    return () ->
        new Iterator<>() {
          private final SlotIndex.Cursor c = slots.cursor(from, to);
          private boolean ahead = c.next();

          @Override
          public boolean hasNext() {
            return ahead;
          }

          @Override
          public KeyRevision next() {
            if (!ahead) {
              throw new NoSuchElementException();
            }
            KeyRevision r = views.get(c.slot());
            ahead = c.next();
            return r;
          }
        };
  }

  /** Status of {@code key} with its derived values, all from this snapshot. */
  public BaseValueStatus status(String key) {
    KeyRevision view = get(key);
    if (view == null) {
      return new BaseValueStatus(ValueStatus.nonexistent(key), List.of());
    }
    return status(view);
  }

  /** Status of the value {@code view} of this snapshot shows, with its derived values. */
  public BaseValueStatus status(KeyRevision view) {
    if (view.derivedKeys.isEmpty()) {
      return new BaseValueStatus(view.status(), List.of());
    }
    List<ValueStatus> derived = new ArrayList<>(view.derivedKeys.size());
    for (String dk : view.derivedKeys) {
      KeyRevision dv = get(dk);
      if (dv != null) {
        derived.add(dv.status());
      }
    }
    return new BaseValueStatus(view.status(), derived);
  }
}
