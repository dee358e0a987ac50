package io.kvscheduler.internal.collect;

import java.util.Arrays;
import java.util.HashSet;

/**
 * The keys on the walk's current recursion path (the cycle guard). Paths are short, so keys are
 * kept in a stack searched linearly; a long path also keeps a hash set, so a deep dependency chain
 * costs O(1) per step, not O(depth).
 */
public final class RecursionPath {
  private static final int LINEAR = 16;
  private String[] stack = new String[LINEAR];
  private int size;
  private HashSet<String> deep;

  /** Pushes {@code key}; false (and nothing pushed) when it is already on the path. */
  public boolean push(String key) {
    if (deep != null) {
      if (!deep.add(key)) {
        return false;
      }
    } else {
      for (int i = 0; i < size; i++) {
        String k = stack[i];
        if (k == key || k.equals(key)) {
          return false;
        }
      }
      if (size == LINEAR) {
        deep = new HashSet<>();
        for (int i = 0; i < size; i++) {
          deep.add(stack[i]);
        }
        deep.add(key);
      }
    }
    if (size == stack.length) {
      stack = Arrays.copyOf(stack, size * 2);
    }
    stack[size++] = key;
    return true;
  }

  /**
   * Empties the path and returns it (a no-op unless a pass ended abnormally, e.g. an internal error
   * thrown while a key was being pushed).
   */
  public RecursionPath cleared() {
    if (size > 0 || deep != null) {
      Arrays.fill(stack, 0, size, null);
      size = 0;
      deep = null;
    }
    return this;
  }

  /** Pops the key pushed last. */
  public void pop() {
    String key = stack[--size];
    stack[size] = null;
    if (deep != null) {
      deep.remove(key);
      if (size < LINEAR) {
        deep = null;
      }
    }
  }
}
