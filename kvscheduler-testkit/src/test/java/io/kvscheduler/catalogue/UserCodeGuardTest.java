package io.kvscheduler.catalogue;

import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_A;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_B;
import static io.kvscheduler.catalogue.CatalogueFixtures.PREFIX_C;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.ManualClock;
import io.kvscheduler.testkit.ManualDelayScheduler;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * User code other than the descriptor callbacks (those: {@link CallbackGuardTest}) cannot abort a
 * transaction, hang a caller or break the engine: key selectors of any-of dependencies and of
 * descriptors, metadata index extractors and watchers, status listeners, values' {@code toString}
 * in the transaction log, exceptions whose {@code getMessage} throws, the injected clock and delay
 * scheduler. Errors ({@code AssertionError}, as a test's listener throws) count as user failures
 * too. (Ours; no catalogue entry.)
 */
@KVSchedulerTest(printTxnSummary = true)
class UserCodeGuardTest {
  private SchedulerFixture env;
  private MockSouthbound sb;

  /** Schedulers a test built by hand, closed after it (before the southbound is checked). */
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  private static ValueState state(KVScheduler kvs, String key) {
    return kvs.valueStatus(key).value().state();
  }

  /** A further transaction of an unrelated value is processed normally. */
  private void engineStillWorks(KVScheduler kvs, String key) {
    sb.clearCalls();
    kvs.startNBTransaction().setValue(key, s("later")).commit();
    assertThat(sb.callLog()).containsExactly("CREATE " + key);
    assertThat(state(kvs, key)).isEqualTo(CONFIGURED);
  }

  private static final String B_BAD = PREFIX_B + "bad";

  @Test
  @DisplayName(
      "an any-of selector throwing for a key: that key does not satisfy the dependency, the transaction is applied")
  void anyOfSelectorThrows() {
    KVScheduler kvs = env.kvs();
    KeySelector sel =
        key -> {
          if (key.endsWith("bad")) {
            throw new IllegalStateException("selector exploded");
          }
          return true;
        };
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withoutRetrieve()
            .dependencies((k, v) -> List.of(Dependency.anyOf("dep", List.of(PREFIX_B), sel)))
            .build(),
        sb.descriptor("d2", Object.class).nbKeyPrefix(PREFIX_B).withoutRetrieve().build());
    env.commit(A1, s("a"));
    assertThat(state(kvs, A1)).isEqualTo(PENDING);

    sb.clearCalls();
    env.commit(B_BAD, s("b"));
    assertThat(sb.callLog()).containsExactly("CREATE " + B_BAD);
    assertThat(state(kvs, B_BAD)).isEqualTo(CONFIGURED);
    assertThat(state(kvs, A1)).isEqualTo(PENDING);
    assertThat(kvs.valueStatus(A1).value().details()).containsExactly("dep");
    assertThat(kvs.explain(A1)).isNotEmpty();

    sb.clearCalls();
    env.commit(B2, s("b2")); // accepted: A1's dependency is satisfied now
    assertThat(sb.callLog()).containsExactly("CREATE " + B2, "CREATE " + A1);
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
    engineStillWorks(kvs, A2);
  }

  @Test
  @DisplayName(
      "an any-of selector without prefixes that throws for every key does not poison later transactions or explain")
  void anyOfSelectorWithoutPrefixesThrows() {
    KVScheduler kvs = env.kvs();
    AtomicBoolean armed = new AtomicBoolean();
    KeySelector sel =
        key -> {
          if (armed.get()) {
            throw new IllegalStateException("selector exploded");
          }
          return key.equals(B2);
        };
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withoutRetrieve()
            .dependencies(
                (k, v) ->
                    k.equals(A1) ? List.of(Dependency.anyOf("dep", List.of(), sel)) : List.of())
            .build());
    env.commit(A1, s("a"));
    assertThat(state(kvs, A1)).isEqualTo(PENDING);
    armed.set(true);
    assertThat(kvs.explain(A1)).isNotEmpty();
    engineStillWorks(kvs, A2);
    engineStillWorks(kvs, A3);
    assertThat(state(kvs, A1)).isEqualTo(PENDING);
  }

  @Test
  @DisplayName(
      "a descriptor's key selector throwing an Error for a key: other descriptors still select it, the transaction is applied")
  void descriptorSelectorThrowsError() {
    KVScheduler kvs = env.kvs();
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build(),
        sb.descriptor("d2", Object.class)
            .nbKeyPrefix(PREFIX_B)
            .withoutRetrieve()
            .keySelector(
                k -> {
                  if (k.contains("bad")) {
                    throw new AssertionError("selector error");
                  }
                  return k.startsWith(PREFIX_B);
                })
            .build());
    env.commit(A1, s("a"), PREFIX_A + "bad", s("b"), B2, s("b2"));
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
    assertThat(state(kvs, PREFIX_A + "bad")).isEqualTo(CONFIGURED); // d1 selects it
    assertThat(state(kvs, B2)).isEqualTo(CONFIGURED);
    engineStillWorks(kvs, A2);
  }

  @Test
  @DisplayName(
      "DerivedValues returning null entries among 40: the null entries are skipped, every other value derived")
  void derivedValuesWithNullEntries() {
    KVScheduler kvs = env.kvs();
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .withoutRetrieve()
            .derivedValues(
                (key, value) -> {
                  List<KeyValuePair> out = new ArrayList<>();
                  for (int i = 0; i < 40; i++) {
                    out.add(
                        i % 3 == 0
                            ? null
                            : KeyValuePair.of(CatalogueFixtures.d(key, i), s("item" + i)));
                  }
                  return out;
                })
            .build());
    env.commit(A1, s("a"));
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      if (i % 3 != 0) {
        expected.add(CatalogueFixtures.d(A1, i));
      }
    }
    assertThat(kvs.valueStatus(A1).derived())
        .extracting(st -> st.key())
        .containsExactlyInAnyOrderElementsOf(expected);
    assertThat(kvs.valueStatus(A1).derived())
        .allSatisfy(st -> assertThat(st.state()).isEqualTo(CONFIGURED));
  }

  @Test
  @DisplayName(
      "metadata index extractors returning null entries or throwing, and watchers throwing Errors: values CONFIGURED, metadata kept")
  void metadataIndexAndWatchersThrow() {
    KVScheduler kvs = env.kvs();
    KVDescriptor<Object, String> withIndexes =
        KVDescriptor.builder("meta", Object.class)
            .withMetadata(String.class)
            .nbKeyPrefix(PREFIX_C)
            .metadataIndex("nulls", m -> Arrays.asList(null, "x"))
            .metadataIndex(
                "broken",
                m -> {
                  throw new IllegalStateException("extractor exploded");
                })
            .create((k, v) -> "m-" + k)
            .delete((k, v, m) -> {})
            .build();
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build(),
        withIndexes);
    kvs.metadataMap("meta", String.class)
        .watch(
            (label, m) -> {
              throw new AssertionError("metadata watcher");
            });
    env.commit(A1, s("a"), C3, s("c"));
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
    assertThat(state(kvs, C3)).isEqualTo(CONFIGURED);
    var map = kvs.metadataMap("meta", String.class);
    assertThat(map.lookup(C3)).contains("m-" + C3);
    assertThat(map.lookupByIndex("nulls", "x")).containsExactly(C3);
    assertThat(map.lookupByIndex("broken", "x")).isEmpty();

    env.commit(C3, null); // removal: the index entries go, the watcher's Error again contained
    assertThat(map.lookup(C3)).isEmpty();
    assertThat(map.lookupByIndex("nulls", "x")).isEmpty();
    engineStillWorks(kvs, A2);
  }

  @Test
  @DisplayName(
      "a status listener and its selector throwing Errors (direct status executor): the commit returns, values CONFIGURED")
  void statusListenerThrowsError() {
    KVScheduler kvs = env.kvs();
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build());
    kvs.watchValueStatus(
        KeySelector.any(),
        st -> {
          throw new AssertionError("status listener");
        });
    kvs.watchValueStatus(
        k -> {
          throw new AssertionError("listener's selector");
        },
        st -> {});
    List<String> seen = new ArrayList<>();
    kvs.watchValueStatus(KeySelector.any(), st -> seen.add(st.value().key()));
    env.commit(A1, s("a"));
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
    assertThat(seen).containsExactly(A1); // a later listener still gets the status
    engineStillWorks(kvs, A2);
  }

  /** A value whose {@code toString} throws. */
  private record Unprintable(String v) {
    @Override
    public String toString() {
      throw new IllegalStateException("toString exploded");
    }
  }

  @Test
  @DisplayName(
      "a value whose toString throws, with the transaction log on: applied, the log shows the value by its class")
  void valueToStringThrows() {
    try (TxnLogCapture log = new TxnLogCapture()) {
      KVScheduler kvs = env.kvs();
      kvs.registerDescriptors(
          sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build());
      env.commit(A1, s("a"), A2, new Unprintable("u"));
      assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
      assertThat(state(kvs, A2)).isEqualTo(CONFIGURED);
      assertThat(log.events()).hasSize(2); // the pre-record and the final record
      assertThat(log.events().get(1).getFormattedMessage())
          .contains(
              "<"
                  + Unprintable.class.getName()
                  + ": text failed with "
                  + IllegalStateException.class.getName()
                  + ">");
    }
  }

  /** An exception whose {@code getMessage} throws. */
  private static final class Unreadable extends RuntimeException {
    @Override
    public String getMessage() {
      throw new IllegalStateException("getMessage exploded");
    }
  }

  @Test
  @DisplayName(
      "a Create failing with an exception whose getMessage throws: that value FAILED, the error names the exception's class")
  void exceptionMessageThrows() {
    KVScheduler kvs = env.kvs();
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build());
    sb.planError(A2, new Unreadable());
    assertThatThrownBy(() -> env.commit(A1, s("a"), A2, s("b")))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e -> assertThat(e.keyErrors()).extracting(KeyError::key).containsExactly(A2));
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
    assertThat(state(kvs, A2)).isEqualTo(FAILED);
    assertThat(kvs.valueStatus(A2).value().error())
        .isEqualTo(Unreadable.class.getName() + " (its message or cause could not be read)");
    engineStillWorks(kvs, A3);
  }

  /**
   * Registers descriptor d1 over {@code PREFIX_A} keeping its values in the returned map, with
   * {@code retriever} as its Retrieve.
   */
  private static Map<String, Object> registerRetrieving(
      KVScheduler kvs, KVDescriptor.Retriever<Object, Void> retriever) {
    Map<String, Object> device = new ConcurrentHashMap<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("d1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .create(
                (k, v) -> {
                  device.put(k, v);
                  return null;
                })
            .delete((k, v, m) -> device.remove(k))
            .retrieve(retriever)
            .build());
    return device;
  }

  /** A list that can be iterated but fails when read by index (e.g. a lazy view gone stale). */
  private static final class ReadFailingList<T> extends AbstractList<T> {
    private final List<T> items;

    ReadFailingList(List<T> items) {
      this.items = items;
    }

    @Override
    public T get(int index) {
      throw new IllegalStateException("list exploded");
    }

    @Override
    public int size() {
      return items.size();
    }

    @Override
    public Iterator<T> iterator() {
      return items.iterator();
    }

    @Override
    public Object[] toArray() {
      throw new IllegalStateException("list exploded");
    }
  }

  @Test
  @DisplayName(
      "a Retrieve returning a list that fails when read: taken as a failed Retrieve, the resync"
          + " fails naming it (D58), nothing of the list is taken in")
  void retrievedListFailsWhenRead() {
    KVScheduler kvs = env.kvs();
    Map<String, Object> device =
        registerRetrieving(
            kvs,
            correlate -> new ReadFailingList<>(List.of(KVWithMetadata.of(A2, (Object) s("x")))));
    TransactionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            TransactionException.class,
            () ->
                kvs.startNBTransaction()
                    .setValue(A1, s("a"))
                    .commit(TxnOptions.builder().resync(ResyncType.FULL).build()));
    assertThat(e.retrieveErrors())
        .singleElement()
        .satisfies(r -> assertThat(r.message()).contains("list exploded"));
    assertThat(state(kvs, A1)).isNotEqualTo(CONFIGURED);
    assertThat(device).doesNotContainKey(A1);
    assertThat(kvs.valueStatus(A2).value().state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  @DisplayName(
      "a Retrieve returning null instead of a list: taken as a failed Retrieve (the resync"
          + " fails naming it, D58), no second Create of a value the southbound holds")
  void retrieveReturnsNull() {
    KVScheduler kvs = env.kvs();
    AtomicBoolean answerNull = new AtomicBoolean();
    AtomicInteger creates = new AtomicInteger();
    Map<String, Object> device = new ConcurrentHashMap<>();
    kvs.registerDescriptors(
        KVDescriptor.builder("d1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .create(
                (k, v) -> {
                  creates.incrementAndGet();
                  device.put(k, v);
                  return null;
                })
            .delete((k, v, m) -> device.remove(k))
            .retrieve(
                correlate -> {
                  if (answerNull.get()) {
                    return null;
                  }
                  List<KVWithMetadata<Object, Void>> out = new ArrayList<>();
                  device.forEach((k, v) -> out.add(KVWithMetadata.of(k, v)));
                  return out;
                })
            .build());
    env.commit(A1, s("a"));
    answerNull.set(true);
    TransactionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            TransactionException.class,
            () ->
                kvs.startNBTransaction()
                    .setValue(A1, s("a"))
                    .commit(TxnOptions.builder().resync(ResyncType.FULL).build()));
    assertThat(e.retrieveErrors())
        .singleElement()
        .satisfies(r -> assertThat(r.message()).contains("null instead of a list"));
    assertThat(creates).hasValue(1);
    assertThat(device).containsOnlyKeys(A1);
    // once Retrieve answers, a resync confirms the value without creating it again
    answerNull.set(false);
    kvs.startNBTransaction()
        .setValue(A1, s("a"))
        .commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    assertThat(creates).hasValue(1);
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
  }

  @Test
  @DisplayName(
      "the SB view of a dump leaves out what a refresh skips: a key listed twice (the"
          + " first listing is kept), a key no descriptor selects, a null entry")
  void sbDumpSkipsWhatTheRefreshSkips() {
    KVScheduler kvs = env.kvs();
    registerRetrieving(
        kvs,
        correlate ->
            Arrays.asList(
                KVWithMetadata.of(A1, (Object) s("first")),
                KVWithMetadata.of(A1, (Object) s("second")),
                KVWithMetadata.of("/nobody/selects/this", (Object) s("x")),
                null));
    assertThat(kvs.dumpValues("d1", View.SB))
        .extracting(kv -> kv.key() + "=" + kv.value())
        .containsExactly(A1 + "=" + s("first"));
  }

  @Test
  @DisplayName(
      "the SB view of a dump leaves out a retrieved value of another class than the"
          + " descriptor's, as the refresh does")
  @SuppressWarnings({"unchecked", "rawtypes"})
  void sbDumpSkipsValuesOfAnotherClass() {
    KVScheduler kvs = env.kvs();
    KVDescriptor.Retriever<String, Void> retriever =
        correlate ->
            (List)
                List.of(
                    KVWithMetadata.of(CatalogueFixtures.PREFIX_B + "text", "a string"),
                    KVWithMetadata.of(CatalogueFixtures.PREFIX_B + "number", 42));
    kvs.registerDescriptors(
        KVDescriptor.builder("strings", String.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
            .create((k, v) -> null)
            .delete((k, v, m) -> {})
            .retrieve(retriever)
            .build());
    assertThat(kvs.dumpValues("strings", View.SB))
        .extracting(kv -> kv.key() + "=" + kv.value())
        .containsExactly(CatalogueFixtures.PREFIX_B + "text=a string");
  }

  @Test
  @DisplayName(
      "a Retrieve failing with an exception whose getMessage throws: logged, the resync fails"
          + " naming the descriptor (D58) and makes no call for the values it could not read")
  void retrieveFailsWithUnreadableException() {
    KVScheduler kvs = env.kvs();
    Map<String, Object> device =
        registerRetrieving(
            kvs,
            correlate -> {
              throw new Unreadable();
            });
    TransactionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            TransactionException.class,
            () ->
                kvs.startNBTransaction()
                    .setValue(A1, s("a"))
                    .commit(TxnOptions.builder().resync(ResyncType.FULL).build()));
    assertThat(e.retrieveErrors()).hasSize(1);
    assertThat(state(kvs, A1)).isNotEqualTo(CONFIGURED);
    assertThat(device).doesNotContainKey(A1);
  }

  @Test
  @DisplayName(
      "an injected clock that throws: the commit completes, the record keeps the last good time")
  void clockThrows() throws Exception {
    AtomicBoolean broken = new AtomicBoolean();
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    Clock clock =
        new Clock() {
          @Override
          public ZoneId getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            if (broken.get()) {
              throw new IllegalStateException("clock exploded");
            }
            return t0;
          }
        };
    KVScheduler kvs = KVScheduler.builder().clock(clock).statusExecutor(Runnable::run).build();
    toClose.add(kvs);
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build());
    kvs.startNBTransaction().setValue(A1, s("a")).commit();
    broken.set(true);
    long seq =
        kvs.startNBTransaction()
            .setValue(A2, s("b"))
            .commitAsync(TxnOptions.defaults())
            .get(10, TimeUnit.SECONDS);
    assertThat(state(kvs, A2)).isEqualTo(CONFIGURED);
    assertThat(kvs.recordedTransaction(seq).orElseThrow().start()).isEqualTo(t0);
    broken.set(false);
    engineStillWorks(kvs, A3);
  }

  @Test
  @DisplayName(
      "a first resync aborted by an internal error (an Error thrown by user code) is"
          + " undone, its refresh included: nothing is published, and the next resync is a first"
          + " resync again that takes the southbound's values over without a call")
  void abortedFirstResyncIsUndone() {
    AtomicBoolean explode = new AtomicBoolean(true);
    KVScheduler kvs = env.kvs();
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class)
            .nbKeyPrefix(PREFIX_A)
            .validate(
                (key, v) -> {
                  if (key.equals(A2) && explode.getAndSet(false)) {
                    throw new InternalError(
                        "validator broken"); // an Error: not contained as a failure
                  }
                })
            .build());
    for (String k : List.of(A1, A2, A3)) {
      sb.setValue(k, s(k), null, ValueOrigin.UNKNOWN, false);
    }
    TxnOptions full = TxnOptions.builder().resync(ResyncType.FULL).build();
    assertThatThrownBy(
            () ->
                kvs.startNBTransaction()
                    .setValue(A1, s(A1))
                    .setValue(A2, s(A2))
                    .setValue(A3, s(A3))
                    .commit(full))
        .satisfies(e -> assertThat(chain(e)).anyMatch(InternalError.class::isInstance));
    for (String k : List.of(A1, A2, A3)) {
      assertThat(state(kvs, k)).as(k).isEqualTo(ValueState.NONEXISTENT);
    }
    long seq =
        kvs.startNBTransaction()
            .setValue(A1, s(A1))
            .setValue(A2, s(A2))
            .setValue(A3, s(A3))
            .commit(full);
    for (String k : List.of(A1, A2, A3)) {
      assertThat(state(kvs, k)).as(k).isEqualTo(CONFIGURED);
    }
    assertThat(sb.callLog())
        .as("no southbound operation but the two refreshes")
        .containsExactly("RETRIEVE d1", "RETRIEVE d1");
    assertThat(kvs.recordedTransaction(seq).orElseThrow().executed())
        .as("taken over as DISCOVERED values (a first resync's correlation), not as OBTAINED")
        .isEmpty();
  }

  private static List<Throwable> chain(Throwable e) {
    List<Throwable> out = new ArrayList<>();
    for (Throwable t = e; t != null && !out.contains(t); t = t.getCause()) {
      out.add(t);
    }
    return out;
  }

  @Test
  @DisplayName(
      "a periodic resync the delay scheduler could not arm is armed again after the next transaction")
  void periodicResyncRearmedAfterFailedArming() {
    ManualClock clock = new ManualClock();
    ManualDelayScheduler timers = new ManualDelayScheduler(clock);
    AtomicInteger failuresLeft = new AtomicInteger(1);
    KVScheduler kvs =
        KVScheduler.builder()
            .clock(clock)
            .statusExecutor(Runnable::run)
            .delayScheduler(
                (delay, task) -> {
                  if (failuresLeft.getAndDecrement() > 0) {
                    throw new IllegalStateException("timer exploded");
                  }
                  return timers.schedule(delay, task);
                })
            .periodicDownstreamResync(Duration.ofMinutes(5), Duration.ZERO)
            .build();
    toClose.add(kvs);
    // the first arming (at build) failed; checked before anything is queued: the engine arms
    // again after the next item it processes (registering descriptors queues one)
    assertThat(timers.pending()).isEmpty();
    kvs.registerDescriptors(sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).build());
    kvs.startNBTransaction().setValue(A1, s("a")).commit();
    kvs.transactionBarrier();
    assertThat(timers.pending()).hasSize(1); // armed again, once
    timers.advance(Duration.ofMinutes(5));
    kvs.transactionBarrier();
    assertThat(kvs.transactionHistory())
        .extracting(RecordedTxn::description)
        .contains("periodic downstream resync");
  }

  @Test
  @DisplayName(
      "an injected delay scheduler that throws: the failed value is FAILED, not RETRYING (no retry will come; logged), the transaction is applied")
  void delaySchedulerThrows() {
    KVScheduler kvs =
        KVScheduler.builder()
            .statusExecutor(Runnable::run)
            .delayScheduler(
                (delay, task) -> {
                  throw new IllegalStateException("timer exploded");
                })
            .build();
    toClose.add(kvs);
    kvs.registerDescriptors(
        sb.descriptor("d1", Object.class).nbKeyPrefix(PREFIX_A).withoutRetrieve().build());
    sb.planError(A2, new RuntimeException("southbound busy"));
    assertThatThrownBy(
            () ->
                kvs.startNBTransaction()
                    .setValue(A1, s("a"))
                    .setValue(A2, s("b"))
                    .commit(TxnOptions.builder().retryWithDefaults().build()))
        .isInstanceOfSatisfying(
            TransactionException.class,
            e -> assertThat(e.keyErrors()).extracting(KeyError::key).containsExactly(A2));
    assertThat(state(kvs, A1)).isEqualTo(CONFIGURED);
    assertThat(state(kvs, A2)).isEqualTo(FAILED); // its retry could not be armed: none will come
    engineStillWorks(kvs, A3);
  }
}
