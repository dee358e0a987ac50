package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.TxnOperation.DELETE;
import static io.kvscheduler.api.TxnOperation.UPDATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.DISCOVERED;
import static io.kvscheduler.api.ValueState.FAILED;
import static io.kvscheduler.api.ValueState.MISSING;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.PENDING;
import static io.kvscheduler.api.ValueState.REMOVED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.A2;
import static io.kvscheduler.catalogue.CatalogueFixtures.A3;
import static io.kvscheduler.catalogue.CatalogueFixtures.B2;
import static io.kvscheduler.catalogue.CatalogueFixtures.C3;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.catalogue.CatalogueFixtures.s;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueOrigin;
import io.kvscheduler.api.View;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Catalogue §12: metadata. */
class MetadataTest {
  private final MockSouthbound sb = new MockSouthbound();
  private SchedulerFixture env;

  @AfterEach
  void tearDown() {
    if (env != null) {
      env.close();
    }
    assertThat(sb.inconsistencies()).isEmpty();
  }

  private NamedMapping<Object> map(String descriptor) {
    return env.kvs().metadataMap(descriptor, Object.class);
  }

  /** The 3-descriptor setup of TestDataChangeTransactions (catalogue §6). */
  private void dataChangeSetup() {
    env = CatalogueFixtures.env(true);
    CatalogueFixtures.registerDataChangeDescriptors(env.kvs(), sb);
  }

  @Test
  @DisplayName(
      "(ours) metadata of another class than the descriptor declares (an unchecked cast"
          + " in user code) fails the Create, naming the key and both classes, not retried, and is"
          + " not kept")
  @SuppressWarnings({"unchecked", "rawtypes"})
  void metadataOfTheWrongClassFailsTheOperation() {
    env = CatalogueFixtures.env(true);
    KVDescriptor.Creator<CatalogueFixtures.StringValue, Integer> lying =
        (KVDescriptor.Creator)
            (KVDescriptor.Creator<CatalogueFixtures.StringValue, Object>) (k, v) -> "text";
    env.kvs()
        .registerDescriptors(
            KVDescriptor.builder("counted", CatalogueFixtures.StringValue.class)
                .nbKeyPrefix("/counted/")
                .withMetadata(Integer.class)
                .create(lying)
                .delete((k, v, m) -> {})
                .build());
    // not retriable: calling Create again would not change its answer
    assertThatThrownBy(
            () ->
                env.commit(TxnOptions.builder().retryWithDefaults().build(), "/counted/x", s("x")))
        .isInstanceOf(TransactionException.class)
        .hasMessageContaining("/counted/x")
        .hasMessageContaining(
            "descriptor counted: Create gave metadata of class java.lang.String"
                + " for key /counted/x, but the descriptor declares metadata of class"
                + " java.lang.Integer");
    assertThat(env.kvs().valueStatus("/counted/x").state()).isEqualTo(FAILED);
    assertThat(env.kvs().metadataMap("counted", Integer.class).lookup("/counted/x")).isEmpty();
  }

  @Test
  @DisplayName(
      "(ours) a notified or retrieved value whose metadata is of another class than"
          + " declared is ignored, like one whose value is")
  @SuppressWarnings({"unchecked", "rawtypes"})
  void notifiedOrRetrievedMetadataOfTheWrongClassIgnored() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            KVDescriptor.builder("counted", CatalogueFixtures.StringValue.class)
                .nbKeyPrefix("/counted/")
                .withMetadata(Integer.class)
                .create((k, v) -> 1)
                .delete((k, v, m) -> {})
                .retrieve(
                    correlate ->
                        (List)
                            List.of( // raw: metadata of the wrong class
                                new KVWithMetadata<Object, Object>(
                                    "/counted/r", s("r"), "text", ValueOrigin.FROM_SB),
                                new KVWithMetadata<Object, Object>(
                                    "/counted/ok", s("ok"), 7, ValueOrigin.FROM_SB)))
                .build());
    env.kvs()
        .pushSBNotification(
            List.<KVWithMetadata<?, ?>>of(
                new KVWithMetadata<>("/counted/n", s("n"), "text", ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
    assertThat(env.kvs().valueStatus("/counted/n").state()).isEqualTo(NONEXISTENT);
    env.commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    assertThat(env.kvs().valueStatus("/counted/r").state()).isEqualTo(NONEXISTENT);
    assertThat(env.kvs().metadataMap("counted", Integer.class).lookup("/counted/ok")).contains(7);
  }

  @Test
  @DisplayName(
      "B123 metadata of a created base value is published under its label; derived values have none")
  void createPublishesMetadata() {
    dataChangeSetup();
    env.commit(TxnOptions.defaults(), B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    assertThat(map("descriptor1").labels()).containsExactly("base-value1");
    assertThat(map("descriptor1").lookup("base-value1")).contains(0);
    assertThat(map("descriptor2").labels()).containsExactly("base-value2");
    assertThat(map("descriptor2").lookup("base-value2")).contains(0);
    assertThat(map("descriptor3").labels()).containsExactly("base-value3");
    assertThat(map("descriptor3").lookup("base-value3")).contains(0);
    // stored with the value
    assertThat(sb.get(A1).orElseThrow().metadata()).isEqualTo(0);
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(new KVWithMetadata<>(A1, arr(2), 0, ValueOrigin.FROM_NB));
    assertThat(last(env.kvs().keyTimeline(A1)).metadata()).contains(0);
    // derived values never carry metadata
    assertThat(sb.get(d(A1, 2)).orElseThrow().metadata()).isNull();
    assertThat(last(env.kvs().keyTimeline(d(A1, 2))).metadata()).isEmpty();
    assertThat(last(env.kvs().keyTimeline(d(C3, 1))).metadata()).isEmpty();
    assertThat(map("descriptor1").lookup(d(A1, 2))).isEmpty();
    assertThat(map("descriptor1").lookup("base-value1/item2")).isEmpty();
  }

  @Test
  @DisplayName(
      "B123 without KeyLabel the key is the label; a descriptor without metadata stores none")
  void labelDefaultsToKeyAndNoMetadataDescriptor() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            KVDescriptor.builder("descriptor1", Object.class)
                .withMetadata(Integer.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .create((k, v) -> 42)
                .delete((k, v, m) -> {})
                .build(),
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .build());
    env.commit(TxnOptions.defaults(), A1, arr(1), B2, arr(1));
    NamedMapping<Integer> m1 = env.kvs().metadataMap("descriptor1", Integer.class);
    assertThat(m1.labels()).containsExactly(A1);
    assertThat(m1.lookup(A1)).contains(42);
    assertThat(env.kvs().dumpValues("descriptor2", View.CACHED))
        .containsExactly(new KVWithMetadata<>(B2, arr(1), null, ValueOrigin.FROM_NB));
    assertThat(last(env.kvs().keyTimeline(B2)).metadata()).isEmpty();
    assertThatThrownBy(() -> env.kvs().metadataMap("descriptor2", Object.class))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName(
      "(ours) the metadata map and the dump of a descriptor held in hand are typed by its"
          + " classes; a descriptor not registered (or another of the same name) is refused")
  void typedMetadataMapAndDump() {
    env = CatalogueFixtures.env(true);
    KVDescriptor<String, Integer> counted =
        KVDescriptor.builder("counted", String.class)
            .withMetadata(Integer.class)
            .nbKeyPrefix("/counted/")
            .create((k, v) -> v.length())
            .delete((k, v, m) -> {})
            .build();
    KVDescriptor<String, Void> plain =
        KVDescriptor.builder("plain", String.class)
            .nbKeyPrefix("/plain/")
            .create((k, v) -> null)
            .delete((k, v, m) -> {})
            .build();
    env.kvs().registerDescriptors(counted, plain);
    assertThatThrownBy(
            () ->
                env.commit(
                    TxnOptions.defaults(),
                    "/counted/x",
                    "four",
                    "/counted/bad",
                    7,
                    "/plain/p",
                    "v"))
        .isInstanceOf(TransactionException.class)
        .hasMessageContaining("/counted/bad");

    NamedMapping<Integer> lengths = env.kvs().metadataMap(counted);
    Integer length = lengths.lookup("/counted/x").orElseThrow();
    assertThat(length).isEqualTo(4);
    List<KVWithMetadata<String, Integer>> nb = env.kvs().dumpValues(counted, View.NB);
    assertThat(nb)
        .as("the INVALID value of another class is left out")
        .containsExactly(new KVWithMetadata<>("/counted/x", "four", 4, ValueOrigin.FROM_NB));
    String value = env.kvs().dumpValues(plain, View.CACHED).get(0).value();
    assertThat(value).isEqualTo("v");

    assertThatThrownBy(() -> env.kvs().metadataMap(plain))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("descriptor plain has no metadata");
    KVDescriptor<String, Integer> twin =
        KVDescriptor.builder("counted", String.class)
            .withMetadata(Integer.class)
            .nbKeyPrefix("/counted/")
            .create((k, v) -> 0)
            .delete((k, v, m) -> {})
            .build();
    assertThat(env.kvs().metadataMap(twin).lookup("/counted/x"))
        .as("same name and classes")
        .contains(4);
    KVDescriptor<String, Long> sameName =
        KVDescriptor.builder("counted", String.class)
            .withMetadata(Long.class)
            .nbKeyPrefix("/other/")
            .create((k, v) -> 0L)
            .delete((k, v, m) -> {})
            .build();
    assertThatThrownBy(() -> env.kvs().metadataMap(sameName))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "descriptor counted is not registered: another descriptor of that name is,"
                + " for java.lang.String values with java.lang.Integer metadata");
    KVDescriptor<String, Void> unknown =
        KVDescriptor.builder("unknown", String.class)
            .nbKeyPrefix("/unknown/")
            .create((k, v) -> null)
            .delete((k, v, m) -> {})
            .build();
    assertThatThrownBy(() -> env.kvs().dumpValues(unknown, View.NB))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("descriptor unknown is not registered");
  }

  @Test
  @DisplayName(
      "B124 B87 an in-place Update keeps the metadata returned by Update; re-creation gets fresh metadata")
  void updateKeepsReturnedMetadata() {
    dataChangeSetup();
    env.commit(TxnOptions.defaults(), B2, arr(1, 2), A1, arr(2), C3, arr(1, 2));
    env.commit(TxnOptions.defaults(), C3, arr(1), A1, arr(1));
    assertThat(map("descriptor1").lookup("base-value1")).contains(0);
    assertThat(map("descriptor3").lookup("base-value3")).contains(1);
    assertThat(map("descriptor3").labels()).containsExactly("base-value3");
    assertThat(sb.get(C3).orElseThrow().metadata()).isEqualTo(1);
    assertThat(env.kvs().dumpValues("descriptor3", View.CACHED))
        .containsExactly(new KVWithMetadata<>(C3, arr(1), 1, ValueOrigin.FROM_NB));
  }

  @Test
  @DisplayName("B124 the metadata returned by Update replaces the old one")
  void updateReturnsNewMetadata() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            KVDescriptor.builder("descriptor1", Object.class)
                .withMetadata(Integer.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .keyLabel(k -> k.substring(CatalogueFixtures.PREFIX_A.length()))
                .create((k, v) -> 1)
                .update((k, o, n, m) -> m + 100)
                .delete((k, v, m) -> {})
                .build());
    env.commit(TxnOptions.defaults(), A1, arr(1));
    NamedMapping<Integer> m1 = env.kvs().metadataMap("descriptor1", Integer.class);
    assertThat(m1.lookup("base-value1")).contains(1);
    env.commit(TxnOptions.defaults(), A1, arr(2));
    assertThat(m1.lookup("base-value1")).contains(101);
    TxnAssert.assertThat(env.txn(1))
        .executed(op(UPDATE, A1).states(CONFIGURED, CONFIGURED).prevValue(arr(1)).newValue(arr(2)));
  }

  /** TestResyncWithEmptySB: A2 depends on A1/i1, A1/i2 depends on A2/i1. */
  private void resyncWithEmptySbSetup() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .derivedValues(CatalogueFixtures.derivedItems())
                .dependencies(
                    (key, value) -> {
                      if (key.equals(A2)) return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                      if (key.equals(d(A1, 2)))
                        return List.of(Dependency.onKey(d(A2, 1), d(A2, 1)));
                      return List.of();
                    })
                .build());
  }

  @Test
  @DisplayName("B125 a full resync without values deletes A1 and A2 and empties the metadata map")
  void deleteRemovesMetadata() {
    resyncWithEmptySbSetup();
    TxnOptions full = TxnOptions.builder().resync(ResyncType.FULL).build();
    env.commit(full, A2, arr(1), A1, arr(1, 2));
    assertThat(map("descriptor1").lookup("base-value1")).contains(0);
    assertThat(map("descriptor1").lookup("base-value2")).contains(1);
    env.commit(full);
    assertThat(sb.values()).isEmpty();
    assertThat(map("descriptor1").labels()).isEmpty();
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED)).isEmpty();
  }

  /**
   * TestNotifications: D1 (/prefixA/, only keys without a further '/', no Retrieve, metadata), D2
   * (/prefixB/, B2 depends on A1, B2/i2 on A1/i2, metadata, retrieved after D1); simulation on; a
   * full resync sets B2=[i1,i2] (PENDING).
   */
  private void notificationsSetup() {
    env = CatalogueFixtures.env(true);
    CatalogueFixtures.registerNotificationDescriptors(env.kvs(), sb);
    env.commit(TxnOptions.builder().resync(ResyncType.FULL).build(), B2, arr(1, 2));
  }

  private void notify(String key, Object value, Object metadata) {
    env.kvs()
        .pushSBNotification(
            List.of(new KVWithMetadata<>(key, value, metadata, ValueOrigin.FROM_SB)));
    env.kvs().transactionBarrier();
  }

  @Test
  @DisplayName("B125 a successful Delete removes the metadata even though the value stays PENDING")
  void unconfiguredPendingLosesMetadata() {
    notificationsSetup();
    assertThat(map("descriptor2").labels()).isEmpty();
    notify(A1, arr(1), 10);
    assertThat(map("descriptor2").lookup("base-value2")).contains(0);
    notify(A1, null, null);
    assertThat(sb.callLog()).endsWith("DELETE " + d(B2, 1), "DELETE " + B2);
    assertThat(env.kvs().valueStatus(B2).state()).isEqualTo(PENDING);
    assertThat(map("descriptor2").labels()).isEmpty();
    assertThat(map("descriptor2").lookup("base-value2")).isEmpty();
    assertThat(last(env.kvs().keyTimeline(B2)).metadata()).isEmpty();
    // the NB view still lists the pending value, without metadata
    assertThat(env.kvs().dumpValues("descriptor2", View.NB))
        .containsExactly(new KVWithMetadata<>(B2, arr(1, 2), null, ValueOrigin.FROM_NB));
  }

  @Test
  @DisplayName(
      "B126 metadata retrieved from SB is adopted: startup resync leaves the map with 0, 1 and 3")
  void retrievedMetadataAdopted() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .firstFreeIndex(3)
                .derivedValues(CatalogueFixtures.derivedItems())
                .updateWithRecreate((key, o, n, m) -> key.equals(A3))
                .dependencies(
                    (key, value) -> {
                      if (key.equals(d(A2, 1))) return List.of(Dependency.onKey(A1, A1));
                      if (key.equals(d(A2, 2)))
                        return List.of(Dependency.onKey(d(A1, 1), d(A1, 1)));
                      return List.of();
                    })
                .build());
    int meta = 0;
    for (String k : List.of(A1, A2, A3)) {
      sb.setValue(k, arr(1), meta++, ValueOrigin.FROM_NB, false);
      sb.setValue(d(k, 1), s("item1"), null, ValueOrigin.FROM_NB, true);
    }
    env.commit(
        TxnOptions.builder().resync(ResyncType.FULL).build(),
        A1,
        arr(2),
        A2,
        arr(1, 2),
        A3,
        arr(1, 2));
    assertThat(sb.callLog())
        .containsExactly(
            "RETRIEVE descriptor1",
            "DELETE " + d(A3, 1),
            "DELETE " + A3,
            "CREATE " + A3,
            "CREATE " + d(A3, 1),
            "CREATE " + d(A3, 2),
            "DELETE " + d(A1, 1),
            "UPDATE " + A1,
            "CREATE " + d(A1, 2),
            "UPDATE " + A2);
    TxnAssert.assertThat(env.txn(0))
        .executed(
            op(DELETE, d(A3, 1)).states(DISCOVERED, REMOVED).flags("DERIVED", "RECREATE"),
            op(DELETE, A3).states(DISCOVERED, REMOVED).flags("RECREATE"),
            op(CREATE, A3).states(REMOVED, CONFIGURED).flags("RECREATE"),
            op(CREATE, d(A3, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED", "RECREATE"),
            op(CREATE, d(A3, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(DELETE, d(A1, 1)).states(DISCOVERED, REMOVED).flags("DERIVED"),
            op(UPDATE, A1).states(DISCOVERED, CONFIGURED),
            op(CREATE, d(A1, 2)).states(NONEXISTENT, CONFIGURED).flags("DERIVED"),
            op(UPDATE, A2).states(DISCOVERED, CONFIGURED),
            op(CREATE, d(A2, 2)).states(NONEXISTENT, PENDING).flags("DERIVED", "NOOP"));
    NamedMapping<Object> m = map("descriptor1");
    assertThat(m.labels()).containsExactly("base-value1", "base-value2", "base-value3");
    assertThat(m.lookup("base-value1")).contains(0);
    assertThat(m.lookup("base-value2")).contains(1);
    assertThat(m.lookup("base-value3")).contains(3);
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(
            new KVWithMetadata<>(A1, arr(2), 0, ValueOrigin.FROM_NB),
            new KVWithMetadata<>(A2, arr(1, 2), 1, ValueOrigin.FROM_NB),
            new KVWithMetadata<>(A3, arr(1, 2), 3, ValueOrigin.FROM_NB));
  }

  @Test
  @DisplayName(
      "B127 metadata of SB notifications is stored (10, then 11) and shown by the cached dump")
  void notificationMetadataStored() {
    notificationsSetup();
    notify(A1, arr(1), 10);
    assertThat(map("descriptor1").lookup("base-value1")).contains(10);
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(new KVWithMetadata<>(A1, arr(1), 10, ValueOrigin.FROM_SB));
    notify(A1, arr(1, 2), 11);
    assertThat(map("descriptor1").lookup("base-value1")).contains(11);
    assertThat(map("descriptor1").labels()).containsExactly("base-value1");
    assertThat(env.kvs().dumpValues("descriptor1", View.CACHED))
        .containsExactly(new KVWithMetadata<>(A1, arr(1, 2), 11, ValueOrigin.FROM_SB));
    // the mock SB never saw A1: metadata came only from the notification
    assertThat(sb.get(A1)).isEmpty();
  }

  @Test
  @DisplayName("B128 an NB base value that a refresh does not find loses its metadata")
  void refreshClearsMetadataOfMissingValue() {
    env = CatalogueFixtures.env(true);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .build());
    env.commit(TxnOptions.defaults(), A1, arr(1), A2, arr(2));
    assertThat(map("descriptor1").lookup("base-value1")).contains(0);
    assertThat(map("descriptor1").lookup("base-value2")).contains(1);
    // A1 disappears from SB behind the scheduler's back; its re-creation fails
    sb.setValue(A1, null, null, ValueOrigin.FROM_NB, false);
    sb.planError(A1, new RuntimeException("failed to add value"));
    sb.clearCalls();
    assertThatThrownBy(
            () ->
                env.commit(
                    TxnOptions.builder().resync(ResyncType.FULL).build(), A1, arr(1), A2, arr(2)))
        .isInstanceOf(TransactionException.class);
    assertThat(sb.callLog())
        .containsExactly("RETRIEVE descriptor1", "CREATE " + A1 + " ✗", "RETRIEVE descriptor1");
    TxnAssert.assertThat(env.txn(1))
        .executed(op(CREATE, A1).states(MISSING, FAILED).error("failed to add value"));
    assertThat(map("descriptor1").lookup("base-value1")).isEmpty();
    assertThat(map("descriptor1").labels()).containsExactly("base-value2");
    assertThat(map("descriptor1").lookup("base-value2")).contains(1);
    assertThat(last(env.kvs().keyTimeline(A1)).metadata()).isEmpty();
    assertThat(env.kvs().dumpValues("descriptor1", View.NB))
        .containsExactly(
            new KVWithMetadata<>(A1, arr(1), null, ValueOrigin.FROM_NB),
            new KVWithMetadata<>(A2, arr(2), 1, ValueOrigin.FROM_NB));
    assertThat(env.kvs().valueStatus(A1).value().lastOperation()).isEqualTo(CREATE);
    assertThat(Set.copyOf(sb.keys())).containsExactly(A2);
  }

  private static <T> T last(List<T> l) {
    assertThat(l).isNotEmpty();
    return l.get(l.size() - 1);
  }
}
