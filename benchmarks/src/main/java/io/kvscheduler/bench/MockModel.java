package io.kvscheduler.bench;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.Txn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * The mock model shared by the scale harness and the JMH benchmarks: interfaces, one bridge domain
 * listing interfaces, and one derived binding per listed interface that depends on its interface.
 * The southbound is a no-op (every Create/Update/Delete does nothing), so the figures measure the
 * engine only.
 */
public final class MockModel {
  private MockModel() {}

  public static final String IF_PREFIX = "config/mock/v1/interfaces/";
  public static final String BD_PREFIX = "config/mock/v1/bridge-domain/";
  public static final String BINDING_PREFIX = "mock/bd/";
  public static final String BD_NAME = "bd1";
  public static final String BD_KEY = BD_PREFIX + BD_NAME;

  /**
   * Name of the scheduler's engine thread (the harness measures its CPU time). Shorter than the 15
   * characters the kernel keeps of a thread's name, so that the scheduler's other threads, named
   * after it with a suffix, keep names of their own there.
   */
  public static final String ENGINE_THREAD = "kvs-bench";

  /** An interface (NB value). */
  public record Interface(String name, String type, boolean enabled) {}

  /** A bridge domain (NB value) listing its interfaces. */
  public record BridgeDomain(String name, List<String> interfaces) {}

  /** Derived from a bridge domain: one interface bound to it. */
  public record Binding(String bridgeDomain, String iface) {}

  public static String ifName(int i) {
    return "if" + i;
  }

  public static String ifKey(int i) {
    return IF_PREFIX + ifName(i);
  }

  public static String bindingKey(String bd, String iface) {
    return BINDING_PREFIX + bd + "/interface/" + iface;
  }

  public static Interface iface(int i, boolean enabled) {
    return new Interface(ifName(i), "SOFTWARE_LOOPBACK", enabled);
  }

  /** A scheduler with the three mock descriptors registered; no transaction log. */
  public static KVScheduler newScheduler() {
    return newScheduler(true);
  }

  /**
   * A scheduler with the three mock descriptors registered, no transaction log, and history
   * (transaction records and graph revisions) kept or not.
   */
  public static KVScheduler newScheduler(boolean recordHistory) {
    KVScheduler kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .recordHistory(recordHistory)
            .threadName(ENGINE_THREAD)
            .build();
    kvs.registerDescriptors(interfaceDescriptor(), bridgeDomainDescriptor(), bindingDescriptor());
    return kvs;
  }

  /**
   * A scheduler running up to {@code parallelism} calls at once, with the three mock descriptors
   * registered as a slow southbound ({@link SlowCalls}): every Create/Update/Delete sleeps for the
   * southbound's latency and counts itself; each descriptor accepts as many concurrent calls as the
   * scheduler may make. No transaction log; history recorded (W6 compares the records).
   */
  public static KVScheduler newSlowScheduler(int parallelism, SlowCalls sb) {
    return newSlowScheduler(parallelism, sb, false);
  }

  /** {@code revertInParallel}: see {@code KVSchedulerBuilder.revertInParallel}. */
  public static KVScheduler newSlowScheduler(
      int parallelism, SlowCalls sb, boolean revertInParallel) {
    KVScheduler kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .parallelism(parallelism)
            .revertInParallel(revertInParallel)
            .threadName(ENGINE_THREAD)
            .build();
    kvs.registerDescriptors(
        slow(KVDescriptor.builder("mock-interface", Interface.class).nbKeyPrefix(IF_PREFIX), sb)
            .maxConcurrency(parallelism)
            .build(),
        slow(
                KVDescriptor.builder("mock-bridge-domain", BridgeDomain.class)
                    .nbKeyPrefix(BD_PREFIX),
                sb)
            .derivedValues(bridgeDomainDescriptor().derivedValues().orElseThrow())
            .maxConcurrency(parallelism)
            .build(),
        slow(
                KVDescriptor.builder("mock-bd-interface", Binding.class)
                    .keySelector(KeySelector.prefix(BINDING_PREFIX)),
                sb)
            .dependencies(bindingDescriptor().dependencies().orElseThrow())
            .maxConcurrency(parallelism)
            .build());
    return kvs;
  }

  /**
   * A southbound whose every call takes a fixed latency (a real sleep of the calling thread, as a
   * blocking netlink or API call would) and does nothing else; it counts the calls made.
   */
  public static final class SlowCalls {
    private final Duration latency;
    private final LongAdder calls = new LongAdder();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();

    public SlowCalls(Duration latency) {
      this.latency = latency;
    }

    public Duration latency() {
      return latency;
    }

    /** Calls made so far. */
    public long calls() {
      return calls.sum();
    }

    /** The highest number of calls seen running at the same time. */
    public int peakConcurrency() {
      return peak.get();
    }

    void call() throws InterruptedException {
      calls.increment();
      peak.accumulateAndGet(running.incrementAndGet(), Math::max);
      try {
        Thread.sleep(latency.toMillis(), latency.toNanosPart() % 1_000_000);
      } finally {
        running.decrementAndGet();
      }
    }
  }

  private static <V> KVDescriptor.Builder<V, Void> slow(
      KVDescriptor.Builder<V, Void> b, SlowCalls sb) {
    return b.create(
            (key, v) -> {
              sb.call();
              return null;
            })
        .update(
            (key, oldV, newV, meta) -> {
              sb.call();
              return meta;
            })
        .delete((key, v, meta) -> sb.call());
  }

  static KVDescriptor<Interface, Void> interfaceDescriptor() {
    return KVDescriptor.builder("mock-interface", Interface.class)
        .nbKeyPrefix(IF_PREFIX)
        .create((key, v) -> null)
        .update((key, oldV, newV, meta) -> meta)
        .delete((key, v, meta) -> {})
        .build();
  }

  static KVDescriptor<BridgeDomain, Void> bridgeDomainDescriptor() {
    return KVDescriptor.builder("mock-bridge-domain", BridgeDomain.class)
        .nbKeyPrefix(BD_PREFIX)
        .create((key, v) -> null)
        .update((key, oldV, newV, meta) -> meta)
        .delete((key, v, meta) -> {})
        .derivedValues(
            (key, bd) -> {
              List<KeyValuePair> out = new ArrayList<>(bd.interfaces().size());
              for (String ifName : bd.interfaces()) {
                out.add(
                    KeyValuePair.of(bindingKey(bd.name(), ifName), new Binding(bd.name(), ifName)));
              }
              return out;
            })
        .build();
  }

  static KVDescriptor<Binding, Void> bindingDescriptor() {
    return KVDescriptor.builder("mock-bd-interface", Binding.class)
        .keySelector(KeySelector.prefix(BINDING_PREFIX))
        .create((key, v) -> null)
        .delete((key, v, meta) -> {})
        .dependencies((key, b) -> List.of(Dependency.onKey("interface", IF_PREFIX + b.iface())))
        .build();
  }

  /**
   * A southbound that holds values: one table per kind of value, as a real southbound lists each
   * kind with a call of its own (Retrieve of a descriptor reads only its kind).
   */
  public static final class Southbound {
    final Map<String, Interface> interfaces = new ConcurrentHashMap<>();
    final Map<String, BridgeDomain> bridgeDomains = new ConcurrentHashMap<>();

    /** Number of values held. */
    public int size() {
      return interfaces.size() + bridgeDomains.size();
    }
  }

  /** Puts what W1 would create into {@code sb}: {@code n} interfaces and the bridge domain. */
  public static void fillSouthbound(Southbound sb, int n) {
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      sb.interfaces.put(ifKey(i), iface(i, true));
      names.add(ifName(i));
    }
    sb.bridgeDomains.put(BD_KEY, new BridgeDomain(BD_NAME, List.copyOf(names)));
  }

  /**
   * A scheduler whose interface and bridge-domain descriptors keep their values in {@code sb} and
   * retrieve them from it (origin unknown: resolved by correlation with the NB values).
   */
  public static KVScheduler newRetrievingScheduler(Southbound sb) {
    KVScheduler kvs =
        KVScheduler.builder().printTxnSummary(false).threadName(ENGINE_THREAD).build();
    kvs.registerDescriptors(
        retrieving(
            KVDescriptor.builder("mock-interface", Interface.class).nbKeyPrefix(IF_PREFIX),
            sb.interfaces),
        retrieving(
            KVDescriptor.builder("mock-bridge-domain", BridgeDomain.class)
                .nbKeyPrefix(BD_PREFIX)
                .derivedValues(bridgeDomainDescriptor().derivedValues().orElseThrow()),
            sb.bridgeDomains),
        bindingDescriptor());
    return kvs;
  }

  private static <V> KVDescriptor<V, Void> retrieving(
      KVDescriptor.Builder<V, Void> b, Map<String, V> table) {
    return b.create(
            (key, v) -> {
              table.put(key, v);
              return null;
            })
        .update(
            (key, oldV, newV, meta) -> {
              table.put(key, newV);
              return null;
            })
        .delete((key, v, meta) -> table.remove(key))
        .retrieve(
            correlate -> {
              List<KVWithMetadata<V, Void>> out = new ArrayList<>(table.size());
              table.forEach((key, v) -> out.add(KVWithMetadata.of(key, v)));
              return out;
            })
        .build();
  }

  /** The W1 transaction: {@code n} interfaces (enabled) plus the bridge domain listing them all. */
  public static Txn populateTxn(KVScheduler kvs, int n) {
    Txn txn = kvs.startNBTransaction();
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      txn.setValue(ifKey(i), iface(i, true));
      names.add(ifName(i));
    }
    txn.setValue(BD_KEY, new BridgeDomain(BD_NAME, List.copyOf(names)));
    return txn;
  }

  /** Only the {@code n} interfaces (enabled). */
  public static Txn populateInterfacesTxn(KVScheduler kvs, int n) {
    Txn txn = kvs.startNBTransaction();
    for (int i = 0; i < n; i++) {
      txn.setValue(ifKey(i), iface(i, true));
    }
    return txn;
  }

  /** The names of the first {@code n} interfaces, {@code if0} to {@code if<n-1>}. */
  public static List<String> ifNames(int n) {
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      names.add(ifName(i));
    }
    return names;
  }

  /** Only the bridge domain listing the {@code n} interfaces. */
  public static Txn populateBridgeDomainTxn(KVScheduler kvs, int n) {
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      names.add(ifName(i));
    }
    return kvs.startNBTransaction().setValue(BD_KEY, new BridgeDomain(BD_NAME, List.copyOf(names)));
  }
}
