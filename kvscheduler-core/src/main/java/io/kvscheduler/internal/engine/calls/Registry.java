package io.kvscheduler.internal.engine.calls;

import io.kvscheduler.api.InvalidValueException;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.internal.engine.graph.Node;
import io.kvscheduler.internal.util.UserCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * Registered descriptors: lookup by name, by key (cached, bounded), and the retrieve order
 * (topological over RetrieveDependencies, smallest name first among the eligible). Registration
 * happens under the scheduler's lock; lookups by key run on the engine thread.
 */
public final class Registry {
  private static final int KEY_CACHE_SIZE = 1 << 12;

  /** Up to this many descriptors, lookups scan them instead of using the cache. */
  private static final int DIRECT_SCAN = 8;

  private final Map<String, DescriptorHandle> byName = new HashMap<>();
  private volatile List<DescriptorHandle> ordered = List.of();

  /**
   * Incremented by every registration (never 0): a descriptor cached in a node is valid while the
   * node's copy of this number is current.
   */
  private volatile int generation = 1;

  private final CopyOnWriteArrayList<DescriptorHandle> all = new CopyOnWriteArrayList<>();

  /** Key → descriptor cache; cleared when full (cheap, lock-free, bounded). */
  private final ConcurrentHashMap<String, DescriptorHandle> keyCache = new ConcurrentHashMap<>();

  /** Limit of southbound calls of descriptors that set none (null: none). */
  private final Duration defaultTimeout;

  private final SbCalls calls;

  /** Told of the descriptors' southbound calls. */
  private final Observer observer;

  /**
   * @param defaultTimeout limit of southbound calls of descriptors that set none, or null
   * @param calls where limited calls run
   * @param observer told of the descriptors' southbound calls
   */
  public Registry(Duration defaultTimeout, SbCalls calls, Observer observer) {
    this.defaultTimeout = defaultTimeout;
    this.calls = calls;
    this.observer = observer;
  }

  /**
   * Registers a group of descriptors atomically.
   *
   * @throws IllegalArgumentException for duplicate names, unknown retrieve dependencies or NB key
   *     prefixes that overlap (see {@link #checkPrefixes})
   * @throws IllegalStateException for cycles among retrieve dependencies
   */
  public synchronized List<DescriptorHandle> register(Collection<KVDescriptor<?, ?>> group) {
    Map<String, DescriptorHandle> added = new LinkedHashMap<>();
    for (KVDescriptor<?, ?> d : group) {
      if (byName.containsKey(d.name()) || added.containsKey(d.name())) {
        throw new IllegalArgumentException(
            "descriptor " + d.name() + " is already registered (descriptor names must be unique)");
      }
      added.put(d.name(), new DescriptorHandle(d, defaultTimeout, calls, observer));
    }
    for (DescriptorHandle h : added.values()) {
      for (String dep : h.descriptor.retrieveDependencies()) {
        if (!byName.containsKey(dep) && !added.containsKey(dep)) {
          throw new IllegalArgumentException(
              "descriptor "
                  + h.name
                  + " names unknown retrieve dependency "
                  + dep
                  + " (register descriptors that depend on each other in one registerDescriptors"
                  + " call)");
        }
      }
    }
    checkPrefixes(added.values());
    Map<String, DescriptorHandle> merged = new HashMap<>(byName);
    merged.putAll(added);
    List<DescriptorHandle> order = topoOrder(merged);
    byName.putAll(added);
    all.addAll(added.values());
    ordered = order;
    keyCache.clear();
    generation = generation == Integer.MAX_VALUE ? 1 : generation + 1;
    return List.copyOf(added.values());
  }

  /**
   * Refuses descriptors {@code added} whose NB key prefix overlaps another's (one prefix starts
   * with the other, e.g. {@code x/} and {@code x/y/}) when both select a key under the longer
   * prefix: the longer prefix itself, or that prefix followed by a character. Keys under it would
   * belong to either. With custom key selectors that split such keys between them, neither probe is
   * taken by both and the registration goes ahead; a key both still take fails as INVALID at run
   * time ({@link #ambiguity}).
   */
  private void checkPrefixes(Collection<DescriptorHandle> added) {
    List<DescriptorHandle> seen = new ArrayList<>(all);
    for (DescriptorHandle h : added) {
      for (DescriptorHandle o : seen) {
        String overlap = overlap(h, o);
        if (overlap != null) {
          DescriptorHandle shorter =
              h.descriptor.nbKeyPrefix().length() <= o.descriptor.nbKeyPrefix().length() ? h : o;
          DescriptorHandle longer = shorter == h ? o : h;
          throw new IllegalArgumentException(
              "descriptors "
                  + shorter.name
                  + " (NB key prefix '"
                  + shorter.descriptor.nbKeyPrefix()
                  + "') and "
                  + longer.name
                  + " (NB key prefix '"
                  + longer.descriptor.nbKeyPrefix()
                  + "') both select key "
                  + overlap
                  + ": NB key prefixes must not overlap (or key selectors must split the keys"
                  + " between them)");
        }
      }
      seen.add(h);
    }
  }

  /** A key under the longer NB key prefix of {@code a} and {@code b} both select, or null. */
  private String overlap(DescriptorHandle a, DescriptorHandle b) {
    String pa = a.descriptor.nbKeyPrefix();
    String pb = b.descriptor.nbKeyPrefix();
    if (pa.isEmpty() || pb.isEmpty() || !pa.startsWith(pb) && !pb.startsWith(pa)) {
      return null;
    }
    String longer = pa.length() >= pb.length() ? pa : pb;
    for (String probe : List.of(longer, longer + "0")) {
      if (selects(a, probe) && selects(b, probe)) {
        return probe;
      }
    }
    return null;
  }

  private static List<DescriptorHandle> topoOrder(Map<String, DescriptorHandle> ds) {
    Map<String, Integer> missing = new HashMap<>();
    Map<String, List<String>> dependents = new HashMap<>();
    for (DescriptorHandle h : ds.values()) {
      missing.put(h.name, h.descriptor.retrieveDependencies().size());
      for (String dep : h.descriptor.retrieveDependencies()) {
        dependents.computeIfAbsent(dep, k -> new ArrayList<>()).add(h.name);
      }
    }
    TreeSet<String> ready = new TreeSet<>();
    missing.forEach(
        (n, c) -> {
          if (c == 0) ready.add(n);
        });
    List<DescriptorHandle> out = new ArrayList<>();
    while (!ready.isEmpty()) {
      String n = ready.pollFirst();
      out.add(ds.get(n));
      for (String dep : dependents.getOrDefault(n, List.of())) {
        if (missing.merge(dep, -1, Integer::sum) == 0) {
          ready.add(dep);
        }
      }
    }
    if (out.size() != ds.size()) {
      TreeSet<String> inCycle = new TreeSet<>();
      missing.forEach(
          (n, c) -> {
            if (c > 0) inCycle.add(n);
          });
      throw new IllegalStateException(
          "retrieve dependencies form a cycle among descriptors " + describeCycle(ds, inCycle));
    }
    return List.copyOf(out);
  }

  private static String describeCycle(Map<String, DescriptorHandle> ds, Set<String> rest) {
    // walk from the smallest name along dependencies that are still unresolved until a repeat
    List<String> path = new ArrayList<>();
    String cur = rest.iterator().next();
    while (!path.contains(cur)) {
      path.add(cur);
      String next = null;
      for (String dep : ds.get(cur).descriptor.retrieveDependencies()) {
        if (rest.contains(dep)) {
          next = dep;
          break;
        }
      }
      if (next == null) {
        break;
      }
      cur = next;
    }
    int start = path.indexOf(cur);
    List<String> cycle = new ArrayList<>(path.subList(Math.max(start, 0), path.size()));
    cycle.add(cur);
    return String.join(" -> ", cycle);
  }

  public synchronized DescriptorHandle byName(String name) {
    return byName.get(name);
  }

  /** Descriptors in retrieve order. */
  public List<DescriptorHandle> ordered() {
    return ordered;
  }

  /**
   * The descriptor selecting {@code key}, or null. When several select it, the first in retrieve
   * order is returned and an error is logged once per key (the reference panics); a value of such a
   * key is INVALID ({@link #ambiguity}).
   */
  public DescriptorHandle forKey(String key) {
    List<DescriptorHandle> all = ordered;
    if (all.size() <= DIRECT_SCAN) {
      return scan(all, key); // a few selector calls are cheaper than any cache
    }
    DescriptorHandle cached = keyCache.get(key);
    if (cached != null) {
      return cached;
    }
    DescriptorHandle found = scan(all, key);
    if (found != null) {
      if (keyCache.size() >= KEY_CACHE_SIZE) {
        keyCache.clear();
      }
      keyCache.put(key, found);
    }
    return found;
  }

  /**
   * {@link #forKey} for the key of {@code n}, cached in the node until the next registration (a
   * key's descriptor changes only when descriptors are added). Engine thread only.
   */
  public DescriptorHandle forNode(Node n) {
    int gen = generation;
    if (n.handleCachedIn(gen)) {
      return (DescriptorHandle) n.handle();
    }
    DescriptorHandle h = forKey(n.key());
    n.cacheHandle(h, gen);
    return h;
  }

  /** Caches in {@code n} the descriptor selecting its key, as just found by {@link #forKey}. */
  public void remember(Node n, DescriptorHandle h) {
    n.cacheHandle(h, generation);
  }

  /** Keys already reported as ambiguous (bounded: the report is about the configuration). */
  private final Set<String> reported = ConcurrentHashMap.newKeySet();

  /**
   * The descriptor selecting {@code key}: the first in retrieve order; ambiguity is logged once.
   */
  private DescriptorHandle scan(List<DescriptorHandle> all, String key) {
    DescriptorHandle found = null;
    for (int i = 0; i < all.size(); i++) { // indexed: no iterator per lookup
      DescriptorHandle h = all.get(i);
      if (selects(h, key)) {
        if (found != null) {
          ambiguous = true;
          if (reported.size() < 10_000 && reported.add(key)) {
            LoggerFactory.getLogger(Registry.class)
                .error(
                    "key {} is selected by descriptors {}: its values fail as INVALID",
                    key,
                    String.join(", ", selecting(all, key)));
          }
          break;
        }
        found = h;
      }
    }
    return found;
  }

  /** Names of every descriptor of {@code all} selecting {@code key} (for the ambiguity report). */
  private List<String> selecting(List<DescriptorHandle> all, String key) {
    List<String> out = new ArrayList<>();
    for (DescriptorHandle h : all) {
      if (selects(h, key)) {
        out.add(h.name);
      }
    }
    return out;
  }

  /** Set once a key was found selected by two descriptors (until then no key is ambiguous). */
  private volatile boolean ambiguous;

  /**
   * The error of a value of {@code key} when more than one descriptor selects it (custom key
   * selectors that overlap, which registration could not tell): the value is INVALID, as nothing
   * says which descriptor it is for. Null when at most one selects it.
   */
  public Throwable ambiguity(String key) {
    if (!ambiguous) {
      return null;
    }
    List<String> names = selecting(ordered, key);
    if (names.size() < 2) {
      return null;
    }
    return new InvalidValueException(
        "key "
            + key
            + " is selected by descriptors "
            + String.join(" and ", names)
            + ": which one it belongs to is undecided (key selectors must not overlap)");
  }

  /** Descriptors whose key selector failure was logged (bounded: one report per descriptor). */
  private final Set<String> selectorFailures = ConcurrentHashMap.newKeySet();

  /**
   * True when {@code h}'s key selector, which is user code, selects {@code key}; a selector that
   * throws selects nothing. Its first failure is logged as an error with its stack trace, later
   * ones at debug level.
   */
  private boolean selects(DescriptorHandle h, String key) {
    try {
      return h.descriptor.selects(key);
    } catch (Throwable e) { // user code
      Throwable t = UserCode.contained(e);
      if (selectorFailures.size() < 1000 && selectorFailures.add(h.name)) {
        LoggerFactory.getLogger(Registry.class)
            .error(
                "descriptor {}: key selector failed for key {}; the key is taken as not selected"
                    + " by it (later failures of this selector are logged at debug level)",
                h.name,
                key,
                t);
      } else {
        LoggerFactory.getLogger(Registry.class)
            .debug("descriptor {}: key selector failed for key {}: {}", h.name, key, t.toString());
      }
      return false;
    }
  }

  public Set<String> nbKeyPrefixes() {
    Set<String> out = new TreeSet<>();
    for (DescriptorHandle h : all) {
      if (!h.descriptor.nbKeyPrefix().isEmpty()) {
        out.add(h.descriptor.nbKeyPrefix());
      }
    }
    return out;
  }
}
