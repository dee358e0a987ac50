package io.kvscheduler.internal.graph;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;

/**
 * A read-only sorted map over entries already in key order: the input of a sorted-map build from
 * sorted data ({@code new TreeMap<>(sortedMap)}, {@code TreePMap.fromSortedMap}), which then needs
 * no comparisons. Only iteration and the first and last keys are supported.
 */
public final class SortedEntries<V> extends AbstractMap<String, V>
    implements SortedMap<String, V> {
  private final String[] keys;
  private final V[] values;
  private final int size;
  private final List<Map.Entry<String, V>> entries;

  /** {@code entries} must be sorted by key without duplicates. */
  public SortedEntries(List<Map.Entry<String, V>> entries) {
    this.entries = entries;
    this.keys = null;
    this.values = null;
    this.size = entries.size();
  }

  private SortedEntries(String[] keys, V[] values, int size) {
    this.entries = null;
    this.keys = keys;
    this.values = values;
    this.size = size;
  }

  /**
   * The first {@code size} pairs of {@code keys} (sorted, without duplicates) and {@code values}.
   * Iteration hands out <em>one reused entry</em>, so it suits only a consumer that copies the
   * key and value out of each entry before it asks for the next, as the two builds above do.
   */
  public static <V> SortedEntries<V> of(String[] keys, V[] values, int size) {
    return new SortedEntries<>(keys, values, size);
  }

  @Override
  public Set<Map.Entry<String, V>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<String, V>> iterator() {
        return entries != null ? entries.iterator() : new Reused();
      }

      @Override
      public int size() {
        return size;
      }
    };
  }

  /** Iterator over the arrays, one mutable entry for all pairs. */
  private final class Reused implements Iterator<Map.Entry<String, V>>, Map.Entry<String, V> {
    private int next;
    private String key;
    private V value;

    @Override
    public boolean hasNext() {
      return next < size;
    }

    @Override
    public Map.Entry<String, V> next() {
      if (next >= size) {
        throw new java.util.NoSuchElementException();
      }
      key = keys[next];
      value = values[next];
      next++;
      return this;
    }

    @Override
    public String getKey() {
      return key;
    }

    @Override
    public V getValue() {
      return value;
    }

    @Override
    public V setValue(V v) {
      throw new UnsupportedOperationException();
    }
  }

  @Override
  public Comparator<? super String> comparator() {
    return null;
  }

  @Override
  public SortedMap<String, V> subMap(String from, String to) {
    throw new UnsupportedOperationException();
  }

  @Override
  public SortedMap<String, V> headMap(String to) {
    throw new UnsupportedOperationException();
  }

  @Override
  public SortedMap<String, V> tailMap(String from) {
    throw new UnsupportedOperationException();
  }

  @Override
  public String firstKey() {
    return entries != null ? entries.get(0).getKey() : keys[0];
  }

  @Override
  public String lastKey() {
    return entries != null ? entries.get(size - 1).getKey() : keys[size - 1];
  }
}
