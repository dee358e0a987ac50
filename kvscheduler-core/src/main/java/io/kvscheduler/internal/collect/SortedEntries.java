package io.kvscheduler.internal.collect;

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
 * sorted data ({@code new TreeMap<>(sortedMap)}), which then needs no comparisons. Only iteration
 * is supported.
 */
public final class SortedEntries<V> extends AbstractMap<String, V> implements SortedMap<String, V> {
  private final List<Map.Entry<String, V>> entries;

  /** {@code entries} must be sorted by key without duplicates. */
  public SortedEntries(List<Map.Entry<String, V>> entries) {
    this.entries = entries;
  }

  @Override
  public Set<Map.Entry<String, V>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<String, V>> iterator() {
        return entries.iterator();
      }

      @Override
      public int size() {
        return entries.size();
      }
    };
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
    throw new UnsupportedOperationException();
  }

  @Override
  public String lastKey() {
    throw new UnsupportedOperationException();
  }
}
