package io.kvscheduler.internal.collect;

import java.util.Arrays;

/**
 * An immutable vector of views indexed by slot number, the views of the published snapshot.
 * Persistent: {@link #set} and {@link #append} return a new vector and leave this one as it is,
 * sharing everything but the path they changed.
 *
 * <p><b>Shape.</b> A 32-way trie of arrays: the leaves hold the elements, each inner array holds up
 * to 32 children, and the slot's bits, five at a time from the top, pick the path. A vector of n
 * elements is about log32(n) arrays deep (five at two million; at most seven for an int slot, which
 * bounds the recursion of the methods that descend it one level per call). Every array has 32
 * entries; the last leaf and the last child of each level may be partly used. Nulls are allowed (a
 * free slot).
 *
 * <ul>
 *   <li>{@link #get} reads one array per level and compares nothing;
 *   <li>{@link #set} and {@link #append} copy one array per level (a new root level when the trie
 *       is full);
 *   <li>{@link #of} builds a vector from an array in one linear pass, level by level;
 *   <li>{@link #copyTo} writes every element to an array in one pass over the leaves.
 * </ul>
 *
 * <p>Only what the publisher needs is here: it changes a slot's view or adds one slot at the end.
 */
public final class SlotVector<T> {
  private static final int BITS = 5;
  private static final int WIDTH = 1 << BITS;
  private static final int MASK = WIDTH - 1;

  private static final SlotVector<?> EMPTY = new SlotVector<>(new Object[WIDTH], 0, 0);

  /** A leaf when {@link #shift} is 0, else an array of child arrays. */
  private final Object[] root;

  /** Bits of the slot below the root's level: 0 for a single leaf, 5 per level above it. */
  private final int shift;

  private final int size;

  private SlotVector(Object[] root, int shift, int size) {
    this.root = root;
    this.shift = shift;
    this.size = size;
  }

  @SuppressWarnings("unchecked")
  public static <T> SlotVector<T> empty() {
    return (SlotVector<T>) EMPTY;
  }

  /** A vector of {@code elements[0, size)}; the array is copied, not kept. */
  public static <T> SlotVector<T> of(T[] elements, int size) {
    if (size < 0 || size > elements.length) {
      throw new IllegalArgumentException(
          "size " + size + " outside the array of length " + elements.length);
    }
    if (size == 0) {
      return empty();
    }
    int count = (size + MASK) >>> BITS; // leaves
    Object[][] level = new Object[count][];
    for (int i = 0; i < count; i++) {
      Object[] leaf = new Object[WIDTH];
      int from = i << BITS;
      System.arraycopy(elements, from, leaf, 0, Math.min(WIDTH, size - from));
      level[i] = leaf;
    }
    int shift = 0;
    while (count > 1) {
      int parents = (count + MASK) >>> BITS;
      Object[][] up = new Object[parents][];
      for (int i = 0; i < parents; i++) {
        Object[] node = new Object[WIDTH];
        int from = i << BITS;
        System.arraycopy(level, from, node, 0, Math.min(WIDTH, count - from));
        up[i] = node;
      }
      level = up;
      count = parents;
      shift += BITS;
    }
    return new SlotVector<>(level[0], shift, size);
  }

  public int size() {
    return size;
  }

  /** The element at {@code index}. */
  @SuppressWarnings("unchecked")
  public T get(int index) {
    checkIndex(index);
    Object[] node = root;
    for (int s = shift; s > 0; s -= BITS) {
      node = (Object[]) node[(index >>> s) & MASK];
    }
    return (T) node[index & MASK];
  }

  /** This vector with {@code element} at {@code index} (which must be below {@link #size()}). */
  public SlotVector<T> set(int index, T element) {
    checkIndex(index);
    return new SlotVector<>(setIn(root, shift, index, element), shift, size);
  }

  private static Object[] setIn(Object[] node, int shift, int index, Object element) {
    Object[] copy = node.clone();
    if (shift == 0) {
      copy[index & MASK] = element;
    } else {
      int i = (index >>> shift) & MASK;
      copy[i] = setIn((Object[]) node[i], shift - BITS, index, element);
    }
    return copy;
  }

  /** This vector with {@code element} added at index {@link #size()}. */
  public SlotVector<T> append(T element) {
    if (size == Integer.MAX_VALUE) {
      throw new IllegalStateException("vector is full");
    }
    long capacity = 1L << (shift + BITS);
    if (size < capacity) {
      return new SlotVector<>(appendIn(root, shift, size, element), shift, size + 1);
    }
    // full: a new root level, the old root its first child
    Object[] up = new Object[WIDTH];
    up[0] = root;
    up[1] = path(shift, element);
    return new SlotVector<>(up, shift + BITS, size + 1);
  }

  private static Object[] appendIn(Object[] node, int shift, int index, Object element) {
    Object[] copy = node.clone();
    if (shift == 0) {
      copy[index & MASK] = element;
    } else {
      int i = (index >>> shift) & MASK;
      Object[] child = (Object[]) node[i];
      copy[i] =
          child == null
              ? path(shift - BITS, element)
              : appendIn(child, shift - BITS, index, element);
    }
    return copy;
  }

  /** A new branch {@code shift} bits high holding only {@code element}, at its first index. */
  private static Object[] path(int shift, Object element) {
    Object[] node = new Object[WIDTH];
    if (shift == 0) {
      node[0] = element;
    } else {
      node[0] = path(shift - BITS, element);
    }
    return node;
  }

  /** Writes the elements, in index order, to {@code out[0, size)}. */
  public void copyTo(Object[] out) {
    if (out.length < size) {
      throw new IllegalArgumentException(
          "array of length " + out.length + " for " + size + " elements");
    }
    copyFrom(root, shift, 0, out);
  }

  private int copyFrom(Object[] node, int shift, int at, Object[] out) {
    if (shift == 0) {
      int n = Math.min(WIDTH, size - at);
      System.arraycopy(node, 0, out, at, n);
      return at + n;
    }
    for (int i = 0; i < WIDTH && at < size; i++) {
      at = copyFrom((Object[]) node[i], shift - BITS, at, out);
    }
    return at;
  }

  private void checkIndex(int index) {
    if (index < 0 || index >= size) {
      throw new IndexOutOfBoundsException("index " + index + " of a vector of " + size);
    }
  }

  @Override
  public String toString() {
    Object[] all = new Object[size];
    copyTo(all);
    return Arrays.toString(all);
  }
}
