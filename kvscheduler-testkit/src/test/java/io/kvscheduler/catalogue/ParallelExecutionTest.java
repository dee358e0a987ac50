package io.kvscheduler.catalogue;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVSchedulerBuilder;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testkit.MockSouthbound;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Parallel southbound calls ({@link KVSchedulerBuilder#parallelism}): independent values' calls
 * overlap, dependent ones keep their order, a descriptor that did not opt in is never called
 * concurrently with itself, and the outcome — states, errors, the recorded operations in their
 * order — is the sequential run's. The device below checks the ordering on every call (a binding is
 * created only while its interface and bridge domain exist, an interface is deleted only once no
 * binding uses it, the calls of one bridge domain and its bindings never overlap) and counts the
 * calls running at once.
 */
@Timeout(60)
class ParallelExecutionTest {
  private static final String BD = "bd/1";

  private final List<KVScheduler> schedulers = new ArrayList<>();

  @AfterEach
  void close() {
    schedulers.forEach(KVScheduler::close);
  }

  /** A southbound of interfaces, one bridge domain and its bindings, with a delay per call. */
  static final class Device {
    final Map<String, Object> held = new ConcurrentHashMap<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    final AtomicInteger running = new AtomicInteger();
    final AtomicInteger maxRunning = new AtomicInteger();
    final Map<String, AtomicInteger> runningOf = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> maxRunningOf = new ConcurrentHashMap<>();
    final AtomicInteger bdFamilyRunning = new AtomicInteger();
    final Map<String, String> runningKeys = new ConcurrentHashMap<>();
    final Set<String> failing = ConcurrentHashMap.newKeySet();
    final Set<String> hanging = ConcurrentHashMap.newKeySet();
    final Map<String, Long> slow = new ConcurrentHashMap<>();
    final CountDownLatch release = new CountDownLatch(1);
    volatile long delayMillis = 20;

    void call(String descriptor, String op, String key, Runnable change) {
      // a value's calls never overlap, nor the bridge domain's with its bindings' (the bindings of
      // one bridge domain may overlap each other)
      boolean bdFamily = key.startsWith(BD);
      if (runningKeys.putIfAbsent(key, op) != null) {
        violations.add(op + " " + key + " overlaps another call for the same key");
      }
      if (bdFamily && (key.equals(BD) ? bdFamilyRunning.get() > 0 : runningKeys.containsKey(BD))) {
        violations.add(op + " " + key + " overlaps a call of the bridge domain or its bindings");
      }
      if (bdFamily) {
        bdFamilyRunning.incrementAndGet();
      }
      int now = running.incrementAndGet();
      maxRunning.accumulateAndGet(now, Math::max);
      int mine = runningOf.computeIfAbsent(descriptor, d -> new AtomicInteger()).incrementAndGet();
      maxRunningOf
          .computeIfAbsent(descriptor, d -> new AtomicInteger())
          .accumulateAndGet(mine, Math::max);
      try {
        if (hanging.contains(key)) {
          release.await(20, TimeUnit.SECONDS);
          throw new IllegalStateException(key + " returned late");
        }
        Thread.sleep(slow.getOrDefault(key, delayMillis));
        if (failing.contains(key)) {
          throw new IllegalStateException("device refused " + op + " of " + key);
        }
        change.run();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      } finally {
        running.decrementAndGet();
        runningOf.get(descriptor).decrementAndGet();
        if (bdFamily) {
          bdFamilyRunning.decrementAndGet();
        }
        runningKeys.remove(key);
      }
    }

    int maxOf(String descriptor) {
      AtomicInteger m = maxRunningOf.get(descriptor);
      return m == null ? 0 : m.get();
    }
  }

  private static String iface(int i) {
    return "if/" + i;
  }

  private static String binding(int i) {
    return BD + "/if/" + i;
  }

  /** Interfaces (opted in up to {@code ifaceLimit}), the bridge domain and its bindings. */
  private KVScheduler scheduler(Device dev, int parallelism, int ifaceLimit, Duration timeout) {
    return scheduler(dev, parallelism, ifaceLimit, timeout, false);
  }

  private KVScheduler scheduler(
      Device dev, int parallelism, int ifaceLimit, Duration timeout, boolean revertInParallel) {
    KVSchedulerBuilder b =
        KVScheduler.builder()
            .parallelism(parallelism)
            .revertInParallel(revertInParallel)
            .printTxnSummary(false)
            .threadName("kvs-par");
    if (timeout != null) {
      b.operationTimeout(timeout);
    }
    KVScheduler kvs = b.build();
    schedulers.add(kvs);
    kvs.registerDescriptors(
        KVDescriptor.builder("iface", String.class)
            .nbKeyPrefix("if/")
            .maxConcurrency(ifaceLimit)
            .createWithoutMetadata(
                (key, value) -> dev.call("iface", "CREATE", key, () -> dev.held.put(key, value)))
            .updateWithoutMetadata(
                (key, o, n) -> dev.call("iface", "UPDATE", key, () -> dev.held.put(key, n)))
            .delete(
                (key, value, m) ->
                    dev.call(
                        "iface",
                        "DELETE",
                        key,
                        () -> {
                          String user = BD + "/" + key;
                          if (dev.held.containsKey(user)) {
                            dev.violations.add("DELETE " + key + " while " + user + " holds it");
                          }
                          boolean lastInterface =
                              dev.held.keySet().stream()
                                  .noneMatch(k -> k.startsWith("if/") && !k.equals(key));
                          if (lastInterface
                              && dev.held.keySet().stream().anyMatch(k -> k.startsWith("group/"))) {
                            dev.violations.add(
                                "DELETE " + key + ", the last interface, under a group");
                          }
                          dev.held.remove(key);
                        }))
            .build(),
        KVDescriptor.builder("bd", List.class)
            .nbKeyPrefix("bd/")
            .keySelector(k -> k.startsWith("bd/") && k.indexOf('/', 3) < 0)
            .createWithoutMetadata(
                (key, value) -> dev.call("bd", "CREATE", key, () -> dev.held.put(key, value)))
            .updateWithoutMetadata(
                (key, o, n) -> dev.call("bd", "UPDATE", key, () -> dev.held.put(key, n)))
            .delete(
                (key, value, m) ->
                    dev.call(
                        "bd",
                        "DELETE",
                        key,
                        () -> {
                          if (dev.held.keySet().stream().anyMatch(k -> k.startsWith(key + "/"))) {
                            dev.violations.add("DELETE " + key + " while bindings remain");
                          }
                          dev.held.remove(key);
                        }))
            .derivedValues(
                (key, value) -> {
                  List<KeyValuePair> out = new ArrayList<>();
                  for (Object member : value) {
                    out.add(KeyValuePair.of(key + "/" + member, member.toString()));
                  }
                  return out;
                })
            .build(),
        KVDescriptor.builder("group", String.class)
            .nbKeyPrefix("group/")
            .maxConcurrency(64)
            .dependencies(
                (key, value) -> List.of(Dependency.anyOfPrefixes("some interface", "if/")))
            .createWithoutMetadata(
                (key, value) ->
                    dev.call(
                        "group",
                        "CREATE",
                        key,
                        () -> {
                          if (dev.held.keySet().stream().noneMatch(k -> k.startsWith("if/"))) {
                            dev.violations.add("CREATE " + key + " while no interface exists");
                          }
                          dev.held.put(key, value);
                        }))
            .delete((key, value, m) -> dev.call("group", "DELETE", key, () -> dev.held.remove(key)))
            .build(),
        KVDescriptor.builder("binding", String.class)
            .keySelector(k -> k.startsWith(BD + "/"))
            .derivedOnly()
            .maxConcurrency(64)
            .dependencies((key, value) -> List.of(Dependency.onKey("interface", value.toString())))
            .createWithoutMetadata(
                (key, value) ->
                    dev.call(
                        "binding",
                        "CREATE",
                        key,
                        () -> {
                          if (!dev.held.containsKey(value) || !dev.held.containsKey(BD)) {
                            dev.violations.add("CREATE " + key + " before " + value + " or " + BD);
                          }
                          dev.held.put(key, value);
                        }))
            .delete(
                (key, value, m) -> dev.call("binding", "DELETE", key, () -> dev.held.remove(key)))
            .build());
    return kvs;
  }

  private static List<String> members(int... ifaces) {
    List<String> out = new ArrayList<>();
    for (int i : ifaces) {
      out.add(iface(i));
    }
    return out;
  }

  private static int[] range(int from, int to) {
    int[] out = new int[to - from];
    for (int i = from; i < to; i++) {
      out[i - from] = i;
    }
    return out;
  }

  /**
   * Commits {@code values} (null = delete); the failure of some values is not an exception here.
   */
  private static RecordedTxn commit(KVScheduler kvs, Map<String, Object> values, boolean revert) {
    var txn = kvs.startNBTransaction();
    values.forEach(txn::setValue);
    long seq;
    try {
      seq = txn.commit(TxnOptions.builder().revert(revert).build());
    } catch (TransactionException e) {
      seq = e.seqNum();
    }
    return kvs.recordedTransaction(seq).orElseThrow();
  }

  private static Map<String, Object> values(Object... kv) {
    Map<String, Object> m = new TreeMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static Map<String, Object> ifaces(int from, int to, String value) {
    Map<String, Object> m = new TreeMap<>();
    for (int i = from; i < to; i++) {
      m.put(iface(i), value);
    }
    return m;
  }

  /** Every value's state and error, by key. */
  private static Map<String, String> states(KVScheduler kvs) {
    Map<String, String> out = new TreeMap<>();
    for (BaseValueStatus s : kvs.valueStatuses()) {
      out.put(s.value().key(), s.value().state() + " " + s.value().error());
      s.derived().forEach(d -> out.put(d.key(), d.state() + " " + d.error()));
    }
    return out;
  }

  /** The same steps under parallelism 1 and {@code parallelism}: equal records and states. */
  private void assertSameAsSequential(int parallelism, Consumer<Device> setUp, List<Step> steps) {
    List<List<RecordedTxnOp>> records = new ArrayList<>();
    List<Map<String, String>> finalStates = new ArrayList<>();
    List<Map<String, Object>> deviceContent = new ArrayList<>();
    for (int p : new int[] {1, parallelism}) {
      Device dev = new Device();
      setUp.accept(dev);
      KVScheduler kvs = scheduler(dev, p, 64, null);
      List<RecordedTxnOp> ops = new ArrayList<>();
      for (Step s : steps) {
        ops.addAll(commit(kvs, s.values, s.revert).executed());
      }
      assertThat(dev.violations).as("device checks at parallelism %d", p).isEmpty();
      records.add(ops);
      finalStates.add(states(kvs));
      deviceContent.add(new TreeMap<>(dev.held));
    }
    assertThat(records.get(1)).isEqualTo(records.get(0));
    assertThat(finalStates.get(1)).isEqualTo(finalStates.get(0));
    assertThat(deviceContent.get(1)).isEqualTo(deviceContent.get(0));
  }

  record Step(Map<String, Object> values, boolean revert) {
    static Step of(Map<String, Object> values) {
      return new Step(values, false);
    }
  }

  @Test
  void independentInterfacesAreCreatedConcurrentlyUpToTheLimits() {
    Device dev = new Device();
    dev.delayMillis = 50;
    KVScheduler kvs = scheduler(dev, 4, 64, null);
    RecordedTxn txn = commit(kvs, ifaces(0, 12, "up"), false);

    assertThat(txn.executed()).hasSize(12).allMatch(op -> op.newState() == ValueState.CONFIGURED);
    assertThat(dev.maxRunning.get()).isEqualTo(4); // the scheduler's limit, reached
    assertThat(dev.held).hasSize(12);
    // recorded in the walk's order (keys sorted), each with its call's times
    assertThat(txn.executed()).extracting(RecordedTxnOp::key).isSorted();
    assertThat(txn.executed())
        .allSatisfy(
            op -> {
              assertThat(op.callStarted()).isPresent();
              assertThat(op.callEnded().get()).isAfterOrEqualTo(op.callStarted().get());
            });
  }

  @Test
  void aDescriptorThatDidNotOptInIsNeverCalledConcurrentlyWithItself() {
    Device dev = new Device();
    KVScheduler kvs = scheduler(dev, 8, 1, null);
    commit(kvs, ifaces(0, 6, "up"), false);

    assertThat(dev.maxOf("iface")).isEqualTo(1);
    assertThat(dev.held).hasSize(6);
  }

  @Test
  void bindingsWaitForTheirInterfaceAndBridgeDomainAndGoBeforeThem() {
    Device dev = new Device();
    KVScheduler kvs = scheduler(dev, 16, 64, null);
    Map<String, Object> all = ifaces(0, 8, "up");
    all.put(BD, members(range(0, 8)));
    RecordedTxn created = commit(kvs, all, false);

    assertThat(dev.violations).isEmpty();
    assertThat(dev.maxOf("iface")).isGreaterThan(1);
    Map<String, RecordedTxnOp> byKey = new HashMap<>();
    created.executed().stream()
        .filter(op -> op.callStarted().isPresent())
        .forEach(op -> byKey.put(op.key(), op));
    for (int i = 0; i < 8; i++) {
      Instant bindingStart = byKey.get(binding(i)).callStarted().orElseThrow();
      assertThat(bindingStart)
          .isAfterOrEqualTo(byKey.get(iface(i)).callEnded().orElseThrow())
          .isAfterOrEqualTo(byKey.get(BD).callEnded().orElseThrow());
    }

    Map<String, Object> none = new TreeMap<>();
    all.keySet().forEach(k -> none.put(k, null));
    RecordedTxn deleted = commit(kvs, none, false);
    assertThat(dev.violations).isEmpty();
    assertThat(dev.held).isEmpty();
    assertThat(deleted.executed()).allMatch(op -> op.operation() == TxnOperation.DELETE);
  }

  @Test
  void recordsAndStatesAreTheSequentialRunsAcrossChanges() {
    Map<String, Object> first = ifaces(0, 10, "up");
    first.put(BD, members(range(0, 10)));
    Map<String, Object> second = ifaces(3, 6, null); // three interfaces go: their bindings wait
    second.put(BD, members(0, 1, 2, 3, 4, 10, 11));
    second.putAll(ifaces(10, 12, "up"));
    second.put(iface(7), "down");
    Map<String, Object> third = ifaces(3, 5, "up"); // two come back: their bindings follow
    assertSameAsSequential(8, dev -> {}, List.of(Step.of(first), Step.of(second), Step.of(third)));
  }

  @Test
  void valuesWithAnAnyOfDependencyWaitForTheirTargetsAndGoBeforeTheLast() {
    Map<String, Object> first = values("group/1", "g", "group/2", "g");
    first.putAll(ifaces(0, 3, "up"));
    Map<String, Object> second = ifaces(0, 2, null); // one interface is left: the groups stay
    second.put("group/3", "g");
    Map<String, Object> third = ifaces(2, 3, null); // the last goes: the groups wait again
    third.putAll(ifaces(5, 8, "up")); // ... until these come
    Map<String, Object> fourth = ifaces(5, 8, null);
    assertSameAsSequential(
        8,
        dev -> dev.failing.add(iface(6)),
        List.of(Step.of(first), Step.of(second), Step.of(third), Step.of(fourth)));
  }

  // FailurePolicy rule F14, F2
  @Test
  void aFailedCallStopsOnlyWhatDependsOnIt() {
    Map<String, Object> all = ifaces(0, 8, "up");
    all.put(BD, members(range(0, 8)));
    assertSameAsSequential(
        8, dev -> dev.failing.addAll(List.of(iface(3), binding(5))), List.of(Step.of(all)));

    Device dev = new Device();
    dev.failing.add(iface(3));
    KVScheduler kvs = scheduler(dev, 8, 64, null);
    commit(kvs, all, false);
    assertThat(kvs.valueStatus(iface(3)).value().state()).isEqualTo(ValueState.FAILED);
    assertThat(states(kvs).get(binding(3))).startsWith("PENDING");
    assertThat(states(kvs).get(binding(4))).startsWith("CONFIGURED");
    assertThat(dev.held)
        .doesNotContainKeys(iface(3), binding(3))
        .containsKeys(iface(4), binding(4));
  }

  // FailurePolicy rule F6
  @Test
  void aRevertedTransactionLeavesTheDeviceAsItWas() {
    Map<String, Object> before = ifaces(0, 2, "up");
    Map<String, Object> failing = ifaces(2, 12, "up");
    failing.put(BD, members(range(0, 12)));
    assertSameAsSequential(
        8, dev -> dev.failing.add(iface(6)), List.of(Step.of(before), new Step(failing, true)));

    Device dev = new Device();
    dev.failing.add(iface(6));
    KVScheduler kvs = scheduler(dev, 8, 64, null);
    commit(kvs, before, false);
    commit(kvs, failing, true);
    assertThat(dev.violations).isEmpty();
    assertThat(dev.held).containsOnlyKeys(iface(0), iface(1));
  }

  /** A transaction reverted on failure, after {@code before}: its records, states and device. */
  private record Reverted(
      List<RecordedTxnOp> ops, Map<String, String> states, Map<String, Object> held, Device dev) {}

  private Reverted revert(
      int parallelism,
      boolean inParallel,
      Consumer<Device> setUp,
      Map<String, Object> before,
      Map<String, Object> failing) {
    Device dev = new Device();
    setUp.accept(dev);
    KVScheduler kvs = scheduler(dev, parallelism, 64, null, inParallel);
    commit(kvs, before, false);
    dev.maxRunning.set(0); // counted for the reverted transaction only
    List<RecordedTxnOp> ops = commit(kvs, failing, true).executed();
    return new Reverted(ops, states(kvs), new TreeMap<>(dev.held), dev);
  }

  /** The device fails every call for {@code key}, each after {@code millis}. */
  private static Consumer<Device> failsAfter(String key, long millis) {
    return dev -> {
      dev.failing.add(key);
      dev.slow.put(key, millis);
    };
  }

  // FailurePolicy rule F14, F6
  @Test
  void aRevertInParallelWaitsForRunningCallsThenUndoesThoseBeyondTheFailureFirst() {
    Map<String, Object> before = ifaces(0, 2, "up");
    Map<String, Object> failing = ifaces(2, 12, "up");
    failing.put(BD, members(range(0, 12)));
    // the failing call is slow: the interfaces after it in the walk's order (and their bindings)
    // run and return meanwhile
    Consumer<Device> setUp = failsAfter(iface(6), 500);
    Reverted sequential = revert(8, false, setUp, before, failing);
    Reverted parallel = revert(8, true, setUp, before, failing);

    assertThat(sequential.dev().maxRunning.get()).isEqualTo(1);
    assertThat(parallel.dev().maxRunning.get()).isGreaterThan(1);
    assertThat(parallel.dev().violations).isEmpty();
    assertThat(parallel.held()).isEqualTo(sequential.held()).containsOnlyKeys(iface(0), iface(1));
    assertThat(parallel.states()).isEqualTo(sequential.states());

    // the walk's operations up to the failure are the sequential walk's; then come the calls that
    // ran beyond the failure, in the walk's order, each started while the failing call ran
    List<RecordedTxnOp> seq = sequential.ops();
    List<RecordedTxnOp> par = parallel.ops();
    int seqFailure = indexOfFailure(seq);
    int failure = indexOfFailure(par);
    RecordedTxnOp failed = par.get(failure);
    assertThat(failed.key()).isEqualTo(iface(6));
    List<RecordedTxnOp> beyond = new ArrayList<>();
    int i = failure + 1;
    while (!par.get(i).is(RecordedTxnOp.Flag.REVERT)) {
      beyond.add(par.get(i++));
    }
    Set<String> beyondKeys = new HashSet<>(beyond.stream().map(RecordedTxnOp::key).toList());
    assertThat(beyondKeys) // if/10 and if/11 come before if/6 in the walk's order (keys sorted)
        .containsExactlyInAnyOrder(
            iface(7), iface(8), iface(9), binding(7), binding(8), binding(9));
    Instant failedAt = failed.callEnded().orElseThrow();
    assertThat(beyond)
        .allSatisfy(
            op -> {
              assertThat(op.operation()).isEqualTo(TxnOperation.CREATE);
              assertThat(op.newState()).isEqualTo(ValueState.CONFIGURED);
              assertThat(op.flags()).contains(RecordedTxnOp.Flag.RAN_AHEAD);
              assertThat(op.callStarted().orElseThrow()).isBefore(failedAt);
            });
    // (a binding the walk found pending before the failure is recorded once: its Create beyond
    // the failure takes the pending one's place, as it would in a walk that got that far)
    assertThat(par.subList(0, failure + 1))
        .isEqualTo(without(beyondKeys, seq.subList(0, seqFailure + 1)));

    // then their undos, newest first, once every call that ran returned
    List<RecordedTxnOp> undos = par.subList(i, i + beyond.size());
    List<String> reversed = new ArrayList<>(beyond.stream().map(RecordedTxnOp::key).toList());
    Collections.reverse(reversed);
    assertThat(undos).extracting(RecordedTxnOp::key).isEqualTo(reversed);
    Instant lastReturned =
        par.subList(0, i).stream()
            .map(op -> op.callEnded().orElse(Instant.MIN))
            .max(Comparator.naturalOrder())
            .orElseThrow();
    assertThat(undos)
        .allSatisfy(
            op -> {
              assertThat(op.operation()).isEqualTo(TxnOperation.DELETE);
              assertThat(op.flags())
                  .contains(RecordedTxnOp.Flag.REVERT, RecordedTxnOp.Flag.RAN_AHEAD);
              assertThat(op.newState()).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
              assertThat(op.callStarted().orElseThrow()).isAfterOrEqualTo(lastReturned);
            });

    // and last the revert of what the walk applied, as in the sequential run
    assertThat(par.subList(i + undos.size(), par.size()))
        .isEqualTo(without(beyondKeys, seq.subList(seqFailure + 1, seq.size())));
  }

  // FailurePolicy rule F6, F14
  @Test
  void aFailedCallOfAValueDerivedFromAnOwnValueEndsTheRunToo() {
    Map<String, Object> before = ifaces(0, 12, "up");
    Map<String, Object> failing = ifaces(12, 24, "up");
    failing.put(BD, members(range(0, 12)));
    // the binding's failure reverts the transaction (it is derived from one of its own values):
    // no call may start after it, as after a failure of one of its own values' calls
    Consumer<Device> setUp = failsAfter(binding(6), 100);
    Reverted sequential = revert(1, false, setUp, before, failing);
    Reverted parallel = revert(2, true, setUp, before, failing);
    List<RecordedTxnOp> par = parallel.ops();
    RecordedTxnOp failed = par.get(indexOfFailure(par));
    assertThat(failed.key()).isEqualTo(binding(6));
    // while the failing binding takes 100 ms, the other of the two calls at a time makes about
    // five 20 ms calls (the remaining bindings first, in the walk's order): only a few of the
    // twelve new interfaces can have run beyond the failure, not all of them as when the run went
    // on after it
    List<String> newInterfacesRanAhead =
        par.stream()
            .filter(op -> op.is(RecordedTxnOp.Flag.RAN_AHEAD) && !op.is(RecordedTxnOp.Flag.REVERT))
            .map(RecordedTxnOp::key)
            .filter(failing::containsKey)
            .toList();
    assertThat(newInterfacesRanAhead).hasSizeLessThanOrEqualTo(6);
    assertThat(parallel.dev().violations).isEmpty();
    assertThat(parallel.held()).isEqualTo(sequential.held()).isEqualTo(ifaces(0, 12, "up"));
    assertThat(parallel.states()).isEqualTo(sequential.states());
  }

  private static List<RecordedTxnOp> without(Set<String> keys, List<RecordedTxnOp> ops) {
    return ops.stream().filter(op -> !keys.contains(op.key())).toList();
  }

  private static int indexOfFailure(List<RecordedTxnOp> ops) {
    for (int i = 0; i < ops.size(); i++) {
      if (!ops.get(i).newError().isEmpty()) {
        return i;
      }
    }
    throw new AssertionError("no operation failed: " + ops);
  }

  @Test
  void aMetadataWatcherRunsAsInsideACallbackAndMayOnlyCommitAsynchronously() {
    KVScheduler kvs =
        KVScheduler.builder().parallelism(8).printTxnSummary(false).threadName("kvs-par").build();
    schedulers.add(kvs);
    Map<String, Object> held = new ConcurrentHashMap<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("tunnel", String.class)
            .nbKeyPrefix("tunnel/")
            .withMetadata(Integer.class)
            .maxConcurrency(8)
            .create(
                (key, value) -> {
                  held.put(key, value);
                  return key.length();
                })
            .delete((key, value, m) -> held.remove(key))
            .build(),
        KVDescriptor.builder("note", String.class)
            .nbKeyPrefix("note/")
            .createWithoutMetadata((key, value) -> held.put(key, value))
            .delete((key, value, m) -> held.remove(key))
            .build());
    List<String> refused = new CopyOnWriteArrayList<>();
    List<String> watchedOn = new CopyOnWriteArrayList<>();
    kvs.metadataMap("tunnel", Integer.class)
        .watch(
            (label, m) -> {
              watchedOn.add(Thread.currentThread().getName());
              var note = kvs.startNBTransaction().setValue("note/" + label, "seen");
              try {
                note.commit(TxnOptions.defaults()); // would wait for the run it is part of
              } catch (IllegalStateException e) {
                refused.add(label);
                kvs.startNBTransaction()
                    .setValue("note/" + label, "seen")
                    .commitAsync(TxnOptions.defaults());
              }
            });

    commit(kvs, values("tunnel/1", "a", "tunnel/2", "b", "tunnel/3", "c"), false);

    // the watcher ran on the calls' threads, as inside a callback: its commits were refused
    // instead of waiting for ever, and the asynchronous ones are applied after the transaction
    assertThat(watchedOn).hasSize(3).allMatch(name -> name.contains("-sb-parallel-"));
    assertThat(refused).containsExactlyInAnyOrder("tunnel/1", "tunnel/2", "tunnel/3");
    commit(kvs, values("tunnel/4", "d"), false); // queued behind the notes
    assertThat(held).containsKeys("note/tunnel/1", "note/tunnel/2", "note/tunnel/3");
  }

  /** A scheduler of up to 8 calls at once, transactions reverted on failure included. */
  private KVScheduler revertingInParallel() {
    KVScheduler kvs =
        KVScheduler.builder()
            .parallelism(8)
            .revertInParallel(true)
            .printTxnSummary(false)
            .threadName("kvs-par")
            .build();
    schedulers.add(kvs);
    return kvs;
  }

  // FailurePolicy rule F14, F7
  @Test
  void aNewValueWhoseCallBeyondTheFailureLeftItUnreadIsReadBeforeItIsCreated() {
    MockSouthbound sb = new MockSouthbound().latency(Duration.ofMillis(100));
    KVScheduler kvs = revertingInParallel();
    kvs.registerDescriptors(
        sb.descriptor("values", Object.class).nbKeyPrefix("/q/").maxConcurrency(8).build());
    String first = "/q/k0";
    String beyond = "/q/k1";
    // both Creates run at once; the first fails, the one beyond it is carried out and reported
    // failed, and the Retrieve the revert reads them with fails: the scheduler has no node for the
    // value beyond the failure, and does not know what the southbound holds for it
    sb.planError(first, new IllegalStateException("refused"));
    sb.planError(
        beyond,
        new IllegalStateException("answer lost"),
        () -> sb.setValue(beyond, CatalogueFixtures.s("v1"), null, ValueOrigin.FROM_NB, false));
    sb.planRetrieveError("values", new IllegalStateException("device busy"));
    RecordedTxn reverted =
        commit(
            kvs, values(first, CatalogueFixtures.s("v0"), beyond, CatalogueFixtures.s("v1")), true);
    assertThat(reverted.executed())
        .filteredOn(op -> op.key().equals(beyond))
        .singleElement()
        .satisfies(
            op -> {
              assertThat(op.operation()).isEqualTo(TxnOperation.CREATE);
              assertThat(op.flags()).contains(RecordedTxnOp.Flag.RAN_AHEAD);
              assertThat(op.newError()).contains("answer lost");
            });
    assertThat(sb.keys()).containsExactly(beyond);
    assertThat(kvs.valueStatus(beyond).state()).isEqualTo(ValueState.NONEXISTENT);

    // the next transaction reads the key first and finds the value: it is not created again
    sb.clearCalls();
    commit(kvs, values(beyond, CatalogueFixtures.s("v1")), false);
    assertThat(sb.callLog()).first().isEqualTo("RETRIEVE values");
    assertThat(sb.callLog()).doesNotContain("CREATE " + beyond);
    assertThat(kvs.valueStatus(beyond).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(sb.inconsistencies()).isEmpty();
  }

  private static final String DISCOVERED_DEP = "/p/k0";
  private static final String DISCOVERED_KEY = "/q/k1";

  /**
   * A scheduler reverting in parallel, with {@link #DISCOVERED_KEY} in the southbound although no
   * NB transaction asked for it (DISCOVERED): its Create ran beyond the failure of a reverted
   * transaction, carried out yet reported failed, and was read back. It depends on {@link
   * #DISCOVERED_DEP}, which is configured.
   */
  private KVScheduler discoveredValueWithADependency(MockSouthbound sb) {
    KVScheduler kvs = revertingInParallel();
    String first = "/q/k0";
    kvs.registerDescriptors(
        sb.descriptor("plain", Object.class).nbKeyPrefix("/p/").withoutRetrieve().build(),
        sb.descriptor("values", Object.class)
            .nbKeyPrefix("/q/")
            .maxConcurrency(8)
            .dependencies(
                (k, v) ->
                    k.equals(DISCOVERED_KEY)
                        ? List.of(Dependency.onKey("p", DISCOVERED_DEP))
                        : List.of())
            .build());
    commit(kvs, values(DISCOVERED_DEP, CatalogueFixtures.s("p")), false);
    sb.planError(first, new IllegalStateException("refused"));
    sb.planError(
        DISCOVERED_KEY,
        new IllegalStateException("answer lost"),
        () ->
            sb.setValue(
                DISCOVERED_KEY, CatalogueFixtures.s("v1"), null, ValueOrigin.FROM_NB, false));
    commit(
        kvs,
        values(first, CatalogueFixtures.s("v0"), DISCOVERED_KEY, CatalogueFixtures.s("v1")),
        true);
    assertThat(kvs.valueStatus(DISCOVERED_KEY).state()).isEqualTo(ValueState.DISCOVERED);
    return kvs;
  }

  // FailurePolicy rule F20
  @Test
  void aDiscoveredValueWhoseDeleteFailedIsNeverCreated() {
    MockSouthbound sb = new MockSouthbound().latency(Duration.ofMillis(100));
    KVScheduler kvs = discoveredValueWithADependency(sb);
    // its dependency goes: it is taken down, and that Delete is carried out yet reported failed
    sb.planError(
        DISCOVERED_KEY,
        new IllegalStateException("answer lost"),
        () -> sb.setValue(DISCOVERED_KEY, null, null, ValueOrigin.FROM_NB, false));
    commit(kvs, values(DISCOVERED_DEP, null), false);
    assertThat(sb.keys()).doesNotContain(DISCOVERED_KEY);

    // the dependency is asked for again, then a downstream resync: the value nobody asked for is
    // never created (it has no intent: the value found is not one)
    sb.clearCalls();
    commit(kvs, values(DISCOVERED_DEP, CatalogueFixtures.s("p")), false);
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(sb.callLog()).doesNotContain("CREATE " + DISCOVERED_KEY);
    assertThat(sb.keys()).containsExactly(DISCOVERED_DEP);
    assertThat(kvs.valueStatus(DISCOVERED_KEY).state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(sb.inconsistencies()).isEmpty();
  }

  // FailurePolicy rule F20
  @Test
  void aDiscoveredValueWhoseDeleteFailedIsDeletedByAResync() {
    MockSouthbound sb = new MockSouthbound().latency(Duration.ofMillis(100));
    KVScheduler kvs = discoveredValueWithADependency(sb);
    // its dependency goes: it is taken down, and that Delete fails (the object stays)
    sb.planError(DISCOVERED_KEY, new IllegalStateException("busy"));
    commit(kvs, values(DISCOVERED_DEP, null), false);
    assertThat(sb.keys()).contains(DISCOVERED_KEY);

    // the dependency is asked for again, then a downstream resync: the value found is not an
    // intent to keep; the resync deletes it, as any value in the southbound no NB transaction
    // asked for
    sb.clearCalls();
    commit(kvs, values(DISCOVERED_DEP, CatalogueFixtures.s("p")), false);
    kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(sb.callLog()).doesNotContain("CREATE " + DISCOVERED_KEY);
    assertThat(sb.keys()).containsExactly(DISCOVERED_DEP);
    assertThat(kvs.valueStatus(DISCOVERED_KEY).state()).isEqualTo(ValueState.NONEXISTENT);
    assertThat(sb.inconsistencies()).isEmpty();
  }

  // FailurePolicy rule F14, F7
  @Test
  void aBaseWhoseDerivedValuesCallBeyondTheFailureFailedIsReadBeforeItIsCalledAgain() {
    MockSouthbound sb = new MockSouthbound().latency(Duration.ofMillis(100));
    KVScheduler kvs = revertingInParallel();
    kvs.registerDescriptors(
        sb.descriptor("plain", Object.class)
            .nbKeyPrefix("/p/")
            .withoutRetrieve()
            .latency(Duration.ofMillis(400))
            .build(),
        sb.descriptor("items", Object.class)
            .keySelector(k -> k.startsWith("/q/") && k.indexOf('/', 3) > 0)
            .derivedOnly()
            .withoutRetrieve()
            .maxConcurrency(8)
            .build(),
        sb.descriptor("bases", Object.class)
            .nbKeyPrefix("/q/")
            .keySelector(k -> k.startsWith("/q/") && k.indexOf('/', 3) < 0)
            .derivedValues(CatalogueFixtures.derivedItems())
            .maxConcurrency(8)
            .build());
    String first = "/p/k0";
    String base = "/q/k0";
    String item2 = CatalogueFixtures.d(base, 2);
    commit(kvs, values(base, CatalogueFixtures.arr(1)), false);
    // the base's Update and then its new derived value's Create run while the slow first value's
    // Create runs and fails; the derived value's Create is carried out and reported failed, and
    // the Retrieve the revert reads the base with fails: the graph has no node for the derived
    // value, and what the southbound holds for the base is unknown
    sb.planError(first, new IllegalStateException("refused"));
    sb.planError(
        item2,
        new IllegalStateException("answer lost"),
        () -> sb.setValue(item2, CatalogueFixtures.s("item2"), null, ValueOrigin.FROM_NB, true));
    sb.planRetrieveError("bases", new IllegalStateException("device busy"));
    sb.clearCalls();
    RecordedTxn reverted =
        commit(
            kvs, values(first, CatalogueFixtures.s("x"), base, CatalogueFixtures.arr(1, 2)), true);
    assertThat(reverted.executed())
        .filteredOn(op -> op.key().equals(item2))
        .singleElement()
        .satisfies(
            op -> {
              assertThat(op.flags()).contains(RecordedTxnOp.Flag.RAN_AHEAD);
              assertThat(op.newError()).contains("answer lost");
            });
    assertThat(sb.keys()).contains(base, item2);

    // the next transaction reads the base first and finds the derived value: it is not created
    // again
    sb.clearCalls();
    commit(kvs, values(base, CatalogueFixtures.arr(1, 2)), false);
    assertThat(sb.callLog()).first().isEqualTo("RETRIEVE bases");
    assertThat(sb.callLog()).doesNotContain("CREATE " + item2);
    assertThat(kvs.valueStatus(base).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(base).derived())
        .filteredOn(d -> d.key().equals(item2))
        .singleElement()
        .satisfies(d -> assertThat(d.state()).isEqualTo(ValueState.CONFIGURED));
    assertThat(sb.inconsistencies()).isEmpty();
  }

  // FailurePolicy rule F15, F14
  @Test
  void aHangingCallInATransactionRevertedInParallelTimesOutAndTheRevertLeavesNothing() {
    Device dev = new Device();
    dev.hanging.add(iface(2));
    KVScheduler kvs = scheduler(dev, 8, 64, Duration.ofMillis(300), true);
    try {
      long start = System.nanoTime();
      RecordedTxn txn = commit(kvs, ifaces(0, 8, "up"), true);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
      RecordedTxnOp timedOut =
          txn.executed().stream().filter(op -> op.key().equals(iface(2))).findFirst().orElseThrow();
      assertThat(timedOut.newError()).contains("did not return within");
      assertThat(txn.executed()).anyMatch(op -> op.is(RecordedTxnOp.Flag.REVERT));
      // every interface the transaction created, before or beyond the timeout, is gone again
      assertThat(dev.held).isEmpty();
      assertThat(dev.violations).isEmpty();
      assertThat(kvs.valueStatuses())
          .allSatisfy(s -> assertThat(s.value().state()).isNotEqualTo(ValueState.CONFIGURED));
    } finally {
      dev.release.countDown();
    }
  }

  // FailurePolicy rule F15
  @Test
  void aHangingCallTimesOutWhileTheOthersComplete() {
    Device dev = new Device();
    dev.hanging.add(iface(2));
    KVScheduler kvs = scheduler(dev, 8, 64, Duration.ofMillis(300));
    try {
      long start = System.nanoTime();
      RecordedTxn txn = commit(kvs, ifaces(0, 8, "up"), false);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
      assertThat(txn.executed()).hasSize(8);
      assertThat(kvs.valueStatus(iface(2)).value().state()).isEqualTo(ValueState.FAILED);
      assertThat(kvs.valueStatus(iface(2)).value().error()).contains("did not return within");
      assertThat(dev.held).hasSize(7).doesNotContainKey(iface(2));
    } finally {
      dev.release.countDown();
    }
  }
}
