package io.kvscheduler.catalogue;

import static io.kvscheduler.api.TxnOperation.CREATE;
import static io.kvscheduler.api.ValueState.CONFIGURED;
import static io.kvscheduler.api.ValueState.NONEXISTENT;
import static io.kvscheduler.api.ValueState.UNIMPLEMENTED;
import static io.kvscheduler.catalogue.CatalogueFixtures.A1;
import static io.kvscheduler.catalogue.CatalogueFixtures.arr;
import static io.kvscheduler.catalogue.CatalogueFixtures.d;
import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KeyError;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.NamedMapping;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.testkit.KVSchedulerTest;
import io.kvscheduler.testkit.MockSouthbound;
import io.kvscheduler.testkit.SchedulerFixture;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Catalogue §1 (enum serialisation) and §3 (descriptor registration and the registry). */
@KVSchedulerTest(simulation = true, printTxnSummary = true)
class CatalogueApiTest {
  private MockSouthbound sb;
  private SchedulerFixture env;

  @BeforeEach
  void setUp(SchedulerFixture fx) {
    env = fx;
    sb = fx.southbound();
  }

  // ------------------------------------------------------------------ §1 enums

  @Test
  @DisplayName("B1 TxnType is serialised by its symbolic name (codes 0..3)")
  void txnTypeEncode() {
    assertThat(TxnType.SB_NOTIFICATION.jsonName()).isEqualTo("SBNotification");
    assertThat(TxnType.NB_TRANSACTION.jsonName()).isEqualTo("NBTransaction");
    assertThat(TxnType.RETRY_FAILED_OPS.jsonName()).isEqualTo("RetryFailedOps");
    assertThat(TxnType.RETRY_UNIMPL_OPS.jsonName()).isEqualTo("RetryUnimplOps");
    assertThat(TxnType.NB_TRANSACTION).hasToString("NBTransaction");
    assertThat(TxnType.RETRY_UNIMPL_OPS).hasToString("RetryUnimplOps");
    assertThat(
            List.of(
                TxnType.SB_NOTIFICATION.code(),
                TxnType.NB_TRANSACTION.code(),
                TxnType.RETRY_FAILED_OPS.code(),
                TxnType.RETRY_UNIMPL_OPS.code()))
        .containsExactly(0, 1, 2, 3);
  }

  @Test
  @DisplayName(
      "B2 TxnType deserialisation is lenient: name or integer; unknown name -> -1 (UndefinedTxnType), no error")
  void txnTypeDecode() {
    assertThat(TxnType.fromJson("1")).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(TxnType.fromJson("0")).isEqualTo(TxnType.SB_NOTIFICATION);
    assertThat(TxnType.fromJson("2")).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(TxnType.fromJson("3")).isEqualTo(TxnType.RETRY_UNIMPL_OPS);
    assertThat(TxnType.fromJson("\"NBTransaction\"")).isEqualTo(TxnType.NB_TRANSACTION);
    assertThat(TxnType.fromJson("\"RetryUnimplOps\"")).isEqualTo(TxnType.RETRY_UNIMPL_OPS);
    TxnType invalid = TxnType.fromJson("\"INVALID\"");
    assertThat(invalid).isEqualTo(TxnType.UNDEFINED);
    assertThat(invalid.code()).isEqualTo(-1);
    assertThat(invalid).hasToString("UndefinedTxnType");
    assertThat(TxnType.fromJson("INVALID")).isEqualTo(TxnType.UNDEFINED);
    assertThat(TxnType.fromJson("42")).isEqualTo(TxnType.UNDEFINED);
    // round trip of every defined value
    for (TxnType t :
        List.of(
            TxnType.SB_NOTIFICATION,
            TxnType.NB_TRANSACTION,
            TxnType.RETRY_FAILED_OPS,
            TxnType.RETRY_UNIMPL_OPS)) {
      assertThat(TxnType.fromJson("\"" + t.jsonName() + "\"")).isEqualTo(t);
      assertThat(TxnType.fromJson(Integer.toString(t.code()))).isEqualTo(t);
    }
  }

  @Test
  @DisplayName("B3 ResyncType is serialised by its symbolic name (codes 0..3)")
  void resyncTypeEncode() {
    assertThat(ResyncType.NOT_RESYNC.jsonName()).isEqualTo("NotResync");
    assertThat(ResyncType.FULL.jsonName()).isEqualTo("FullResync");
    assertThat(ResyncType.UPSTREAM.jsonName()).isEqualTo("UpstreamResync");
    assertThat(ResyncType.DOWNSTREAM.jsonName()).isEqualTo("DownstreamResync");
    assertThat(ResyncType.DOWNSTREAM).hasToString("DownstreamResync");
    assertThat(
            List.of(
                ResyncType.NOT_RESYNC.code(),
                ResyncType.FULL.code(),
                ResyncType.UPSTREAM.code(),
                ResyncType.DOWNSTREAM.code()))
        .containsExactly(0, 1, 2, 3);
  }

  @Test
  @DisplayName(
      "B4 ResyncType deserialisation is lenient: name or integer; unknown name -> NotResync, no error")
  void resyncTypeDecode() {
    assertThat(ResyncType.fromJson("3")).isEqualTo(ResyncType.DOWNSTREAM);
    assertThat(ResyncType.fromJson("1")).isEqualTo(ResyncType.FULL);
    assertThat(ResyncType.fromJson("\"UpstreamResync\"")).isEqualTo(ResyncType.UPSTREAM);
    assertThat(ResyncType.fromJson("\"INVALID\"")).isEqualTo(ResyncType.NOT_RESYNC);
    assertThat(ResyncType.fromJson("INVALID")).isEqualTo(ResyncType.NOT_RESYNC);
    for (ResyncType r : ResyncType.values()) {
      assertThat(ResyncType.fromJson("\"" + r.jsonName() + "\"")).isEqualTo(r);
      assertThat(ResyncType.fromJson(Integer.toString(r.code()))).isEqualTo(r);
    }
  }

  // ------------------------------------------------------------------ §3 registry

  /** d1 needs d2, d2 needs d3, d3 needs d4 (exact key "randomKey"), as in registry_test.go. */
  private List<KVDescriptor<?, ?>> registryDescriptors() {
    return List.of(
        sb.descriptor("descriptor3", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
            .retrieveDependencies("descriptor4")
            .build(),
        sb.descriptor("descriptor2", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
            .retrieveDependencies("descriptor3")
            .build(),
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .retrieveDependencies("descriptor2")
            .build(),
        sb.descriptor("descriptor4", Object.class)
            .keySelector(KeySelector.exact("randomKey"))
            .build());
  }

  private static List<String> names(List<KVDescriptor<?, ?>> ds) {
    List<String> out = new ArrayList<>();
    for (KVDescriptor<?, ?> d : ds) {
      out.add(d.name());
    }
    return out;
  }

  @Test
  @DisplayName(
      "B11 descriptors() follows retrieve dependencies: registered d3,d2,d1,d4 -> [d4,d3,d2,d1]")
  void retrieveOrder() {
    assertThat(env.kvs().descriptors()).isEmpty();
    env.kvs().registerDescriptors(registryDescriptors().toArray(KVDescriptor[]::new));
    assertThat(names(env.kvs().descriptors()))
        .containsExactly("descriptor4", "descriptor3", "descriptor2", "descriptor1");
  }

  @Test
  @DisplayName("B11 among eligible descriptors the alphabetically smallest name comes first")
  void retrieveOrderTieBreak() {
    // x has no deps, a needs x, m has no deps: eligible {m, x} -> m, x; then a.
    env.kvs()
        .registerDescriptors(
            sb.descriptor("x", Object.class).nbKeyPrefix("/x/").build(),
            sb.descriptor("a", Object.class).nbKeyPrefix("/a/").retrieveDependencies("x").build(),
            sb.descriptor("m", Object.class).nbKeyPrefix("/m/").build());
    assertThat(names(env.kvs().descriptors())).containsExactly("m", "x", "a");
    // a later group is merged into the same order
    env.kvs()
        .registerDescriptors(
            sb.descriptor("b", Object.class).nbKeyPrefix("/b/").retrieveDependencies("a").build(),
            sb.descriptor("c", Object.class).nbKeyPrefix("/c/").build());
    assertThat(names(env.kvs().descriptors())).containsExactly("c", "m", "x", "a", "b");
  }

  @Test
  @DisplayName(
      "B12 descriptor(name) returns the registered descriptor with its selector, empty for an unknown name")
  void lookupByName() {
    List<KVDescriptor<?, ?>> ds = registryDescriptors();
    env.kvs().registerDescriptors(ds.toArray(KVDescriptor[]::new));
    KVDescriptor<?, ?> d2 = env.kvs().descriptor("descriptor2").orElseThrow();
    assertThat(d2).isSameAs(ds.get(1));
    assertThat(d2.selects("/prefixB/randomSuffix")).isTrue();
    assertThat(d2.selects("/prefixA/randomSuffix")).isFalse();
    assertThat(env.kvs().descriptor("descriptorX")).isEmpty();
  }

  @Test
  @DisplayName(
      "B13 (ours, D3: key->descriptor cache) descriptorForKey stays correct across many lookups; unknown keys not pinned")
  void lookupByKey() {
    env.kvs().registerDescriptors(registryDescriptors().toArray(KVDescriptor[]::new));
    var kvs = env.kvs();
    assertThat(kvs.descriptorForKey("/prefixC/randomSuffix").orElseThrow().name())
        .isEqualTo("descriptor3");
    assertThat(kvs.descriptorForKey("randomKey").orElseThrow().name()).isEqualTo("descriptor4");
    assertThat(kvs.descriptorForKey("/prefixA/randomSuffix").orElseThrow().name())
        .isEqualTo("descriptor1");
    assertThat(kvs.descriptorForKey("/prefixD/randomSuffix")).isEmpty();
    // far more distinct lookups than any cache bound
    String[] prefixes = {
      CatalogueFixtures.PREFIX_A,
      CatalogueFixtures.PREFIX_B,
      CatalogueFixtures.PREFIX_C,
      "/prefixD/"
    };
    String[] expected = {"descriptor1", "descriptor2", "descriptor3", null};
    for (int i = 0; i < 20_000; i++) {
      var got = kvs.descriptorForKey(prefixes[i % 4] + i);
      if (expected[i % 4] == null) {
        assertThat(got).isEmpty();
      } else {
        assertThat(got.orElseThrow().name()).isEqualTo(expected[i % 4]);
      }
    }
    assertThat(kvs.descriptorForKey("/prefixC/randomSuffix").orElseThrow().name())
        .isEqualTo("descriptor3");
    assertThat(kvs.descriptorForKey("randomKey").orElseThrow().name()).isEqualTo("descriptor4");
    assertThat(kvs.descriptorForKey("/prefixA/randomSuffix").orElseThrow().name())
        .isEqualTo("descriptor1");
    assertThat(kvs.descriptorForKey("/prefixD/randomSuffix")).isEmpty();
    // a key without descriptor is answered afresh once a descriptor for it is registered
    kvs.registerDescriptors(
        sb.descriptor("descriptor5", Object.class).nbKeyPrefix("/prefixD/").build());
    assertThat(kvs.descriptorForKey("/prefixD/randomSuffix").orElseThrow().name())
        .isEqualTo("descriptor5");
    assertThat(kvs.descriptorForKey("/prefixD/3").orElseThrow().name()).isEqualTo("descriptor5");
  }

  @Test
  @DisplayName(
      "B14 (ours, deliberate difference D1: no panic) two descriptors selecting one key: error"
          + " logged naming them all, the key's values INVALID naming them, no call")
  void ambiguousSelection() {
    MockSouthbound sbAlpha = new MockSouthbound();
    MockSouthbound sbBeta = new MockSouthbound();
    Logger registryLog = CatalogueFixtures.engineLogger("Registry");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    registryLog.addAppender(appender);
    try {
      // overlapping NB key prefixes are refused at registration (D1)...
      assertThatThrownBy(
              () ->
                  env.kvs()
                      .registerDescriptors(
                          new MockSouthbound()
                              .descriptor("beta", Object.class)
                              .nbKeyPrefix("/prefixA/base")
                              .build(),
                          new MockSouthbound()
                              .descriptor("alpha", Object.class)
                              .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                              .build()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("alpha")
          .hasMessageContaining("beta");
      // ...custom key selectors that overlap cannot be told apart before a key comes
      env.kvs()
          .registerDescriptors(
              sbBeta
                  .descriptor("beta", Object.class)
                  .nbKeyPrefix("/prefixB/")
                  .keySelector(k -> k.startsWith("/prefixB/") || k.startsWith("/prefixA/base"))
                  .build(),
              sbAlpha
                  .descriptor("alpha", Object.class)
                  .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                  .build(),
              new MockSouthbound()
                  .descriptor("gamma", Object.class)
                  .nbKeyPrefix("/prefixC/")
                  .keySelector(k -> k.startsWith("/prefixC/") || k.startsWith("/prefixA/base"))
                  .build());
      assertThat(env.kvs().descriptorForKey(A1).orElseThrow().name()).isEqualTo("alpha");
      // every descriptor selecting the key is named, not just the first two
      assertThat(appender.list)
          .filteredOn(e -> e.getLevel() == Level.ERROR)
          .extracting(ILoggingEvent::getFormattedMessage)
          .containsExactly(
              "key "
                  + A1
                  + " is selected by descriptors alpha, beta, gamma: its values fail as INVALID");
      // the value is INVALID, naming them; no descriptor is called
      TransactionException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              TransactionException.class,
              () -> env.kvs().startNBTransaction().setValue(A1, arr(1)).commit());
      assertThat(e.keyErrors())
          .singleElement()
          .satisfies(k -> assertThat(k.kind()).isEqualTo(KeyError.Kind.INVALID))
          .satisfies(k -> assertThat(k.message()).contains("alpha and beta and gamma"));
      assertThat(sbAlpha.callLog()).isEmpty();
      assertThat(sbBeta.callLog()).isEmpty();
      assertThat(sbAlpha.inconsistencies()).isEmpty();
    } finally {
      registryLog.detachAppender(appender);
    }
  }

  @Test
  @DisplayName(
      "B14 (ours) with retrieve order reversed, the other descriptor wins the ambiguous key")
  void ambiguousSelectionFollowsRetrieveOrder() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("beta", Object.class)
                .nbKeyPrefix("/prefixB/")
                .keySelector(k -> k.startsWith("/prefixB/") || k.startsWith("/prefixA/base"))
                .build(),
            sb.descriptor("alpha", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .retrieveDependencies("beta")
                .build());
    assertThat(names(env.kvs().descriptors())).containsExactly("beta", "alpha");
    assertThat(env.kvs().descriptorForKey(A1).orElseThrow().name()).isEqualTo("beta");
    assertThat(env.kvs().descriptorForKey("/prefixA/other").orElseThrow().name())
        .isEqualTo("alpha");
  }

  @Test
  @DisplayName(
      "B14 (ours, D2) a cycle among retrieve dependencies fails registration, names the cycle and registers nothing")
  void retrieveDependencyCycle() {
    assertThatThrownBy(
            () ->
                env.kvs()
                    .registerDescriptors(
                        sb.descriptor("descriptor1", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                            .retrieveDependencies("descriptor2")
                            .build(),
                        sb.descriptor("descriptor2", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                            .retrieveDependencies("descriptor3")
                            .build(),
                        sb.descriptor("descriptor3", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                            .retrieveDependencies("descriptor1")
                            .build()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("descriptor1 -> descriptor2 -> descriptor3 -> descriptor1");
    assertThat(env.kvs().descriptors()).isEmpty();
    assertThat(env.kvs().descriptor("descriptor1")).isEmpty();
    assertThat(env.kvs().registeredNBKeyPrefixes()).isEmpty();
    assertThat(env.kvs().descriptorForKey(A1)).isEmpty();
  }

  @Test
  @DisplayName("B14 the cycle message names only the cycle, not a descriptor depending on it")
  void retrieveDependencyCycleWithTail() {
    env.kvs()
        .registerDescriptors(sb.descriptor("base", Object.class).nbKeyPrefix("/base/").build());
    assertThatThrownBy(
            () ->
                env.kvs()
                    .registerDescriptors(
                        sb.descriptor("aaa", Object.class)
                            .nbKeyPrefix("/aaa/")
                            .retrieveDependencies("cyc1")
                            .build(),
                        sb.descriptor("cyc1", Object.class)
                            .nbKeyPrefix("/cyc1/")
                            .retrieveDependencies("base", "cyc2")
                            .build(),
                        sb.descriptor("cyc2", Object.class)
                            .nbKeyPrefix("/cyc2/")
                            .retrieveDependencies("cyc1")
                            .build()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cyc1 -> cyc2 -> cyc1")
        .hasMessageNotContaining("aaa");
    assertThat(names(env.kvs().descriptors())).containsExactly("base");
  }

  @Test
  @DisplayName(
      "B14 (ours, D2) an unknown retrieve dependency fails registration naming both descriptors, nothing registered")
  void unknownRetrieveDependency() {
    assertThatThrownBy(
            () ->
                env.kvs()
                    .registerDescriptors(
                        sb.descriptor("descriptor2", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                            .build(),
                        sb.descriptor("descriptor1", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                            .retrieveDependencies("descriptorX")
                            .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor1")
        .hasMessageContaining("descriptorX");
    assertThat(env.kvs().descriptors()).isEmpty();
    assertThat(env.kvs().descriptor("descriptor2")).isEmpty();
  }

  @Test
  @DisplayName(
      "B15 (ours, D2) registering a name twice throws IllegalArgumentException naming it and changes nothing")
  void duplicateName() {
    KVDescriptor<Object, Object> d1 =
        sb.descriptor("descriptor1", Object.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
            .withMetadata()
            .build();
    env.kvs().registerDescriptors(d1);
    // alone
    assertThatThrownBy(
            () ->
                env.kvs()
                    .registerDescriptors(
                        sb.descriptor("descriptor1", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                            .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor1");
    // within a group: the group is rejected as a whole
    assertThatThrownBy(
            () ->
                env.kvs()
                    .registerDescriptors(
                        sb.descriptor("descriptor2", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                            .build(),
                        sb.descriptor("descriptor1", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                            .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor1");
    // twice in one group
    assertThatThrownBy(
            () ->
                env.kvs()
                    .registerDescriptors(
                        sb.descriptor("descriptor3", Object.class)
                            .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                            .build(),
                        sb.descriptor("descriptor3", Object.class)
                            .nbKeyPrefix("/prefixD/")
                            .build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor3");
    assertThat(names(env.kvs().descriptors())).containsExactly("descriptor1");
    assertThat(env.kvs().descriptor("descriptor1").orElseThrow()).isSameAs(d1);
    assertThat(env.kvs().descriptor("descriptor2")).isEmpty();
    assertThat(env.kvs().registeredNBKeyPrefixes()).containsExactly(CatalogueFixtures.PREFIX_A);
    assertThat(env.kvs().descriptorForKey(CatalogueFixtures.C3)).isEmpty();
    // the original descriptor is still the one in use
    env.kvs().startNBTransaction().setValue(A1, arr()).commit();
    assertThat(sb.callLog()).containsExactly("CREATE " + A1);
    assertThat(env.kvs().metadataMap("descriptor1", Object.class).lookup("base-value1"))
        .contains(0);
  }

  @Test
  @DisplayName("B16 registeredNBKeyPrefixes() is the set of non-empty NB key prefixes")
  void nbKeyPrefixes() {
    assertThat(env.kvs().registeredNBKeyPrefixes()).isEmpty();
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .build());
    assertThat(env.kvs().registeredNBKeyPrefixes()).containsExactly(CatalogueFixtures.PREFIX_A);
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .build(),
            sb.descriptor("descriptor3", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                .build(),
            sb.descriptor("descriptor4", Object.class)
                .keySelector(KeySelector.exact("randomKey"))
                .build());
    assertThat(env.kvs().registeredNBKeyPrefixes())
        .containsExactlyInAnyOrder(
            CatalogueFixtures.PREFIX_A, CatalogueFixtures.PREFIX_B, CatalogueFixtures.PREFIX_C);
  }

  @Test
  @DisplayName(
      "B17 the metadata map exists, empty, right after registration (with declared secondary indexes)")
  void metadataMapAfterRegistration() {
    KVDescriptor<Object, Integer> typed =
        KVDescriptor.builder("descriptor2", Object.class)
            .withMetadata(Integer.class)
            .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
            .metadataIndex("parity", m -> List.of(m % 2 == 0 ? "even" : "odd"))
            .create((k, v) -> 7)
            .delete((k, v, m) -> {})
            .build();
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .withMetadata()
                .build(),
            typed,
            sb.descriptor("descriptor3", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                .build());
    NamedMapping<Object> m1 = env.kvs().metadataMap("descriptor1", Object.class);
    assertThat(m1.name()).isEqualTo("descriptor1");
    assertThat(m1.labels()).isEmpty();
    assertThat(m1.lookup("base-value1")).isEmpty();
    assertThat(m1.indexNames()).isEmpty();
    NamedMapping<Integer> m2 = env.kvs().metadataMap("descriptor2", Integer.class);
    assertThat(m2.name()).isEqualTo("descriptor2");
    assertThat(m2.labels()).isEmpty();
    assertThat(m2.indexNames()).containsExactly("parity");
    assertThat(m2.lookupByIndex("parity", "odd")).isEmpty();
    // the same map object is live: it shows values created later
    env.kvs().startNBTransaction().setValue(CatalogueFixtures.B2, arr(1)).commit();
    assertThat(m2.lookup(CatalogueFixtures.B2)).contains(7);
    assertThat(m2.lookupByIndex("parity", "odd")).containsExactly(CatalogueFixtures.B2);
    // without metadata there is no map (Go: nil; ours: IllegalArgumentException)
    assertThatThrownBy(() -> env.kvs().metadataMap("descriptor3", Object.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor3");
    assertThatThrownBy(() -> env.kvs().metadataMap("descriptorX", Object.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptorX");
  }

  @Test
  @DisplayName(
      "B17 (ours) metadataMap with a metadata type other than the descriptor's is rejected, as documented")
  void metadataMapWrongType() {
    env.kvs()
        .registerDescriptors(
            KVDescriptor.builder("descriptor2", Object.class)
                .withMetadata(Integer.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .create((k, v) -> 7)
                .delete((k, v, m) -> {})
                .build());
    assertThatThrownBy(() -> env.kvs().metadataMap("descriptor2", String.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("descriptor2");
  }

  @Test
  @DisplayName(
      "B18 (ours: registration re-applies UNIMPLEMENTED values) a value waiting for a descriptor is applied by RetryUnimplOps")
  void unimplementedAppliedOnRegistration() {
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor2", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_B)
                .build());
    long seq = env.kvs().startNBTransaction().setValue(A1, arr(1)).commit();
    assertThat(seq).isZero();
    assertThat(sb.callLog()).isEmpty();
    TxnAssert.assertThat(env.txn(0))
        .executed(op(CREATE, A1).states(NONEXISTENT, UNIMPLEMENTED).flags("NOOP"));
    assertThat(env.kvs().valueStatus(A1).value())
        .isEqualTo(new ValueStatus(A1, UNIMPLEMENTED, "", CREATE, List.of()));
    // registering a descriptor with another prefix does not touch it
    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor3", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_C)
                .build());
    env.kvs().transactionBarrier();
    assertThat(env.kvs().transactionHistory()).hasSize(1);

    env.kvs()
        .registerDescriptors(
            sb.descriptor("descriptor1", Object.class)
                .nbKeyPrefix(CatalogueFixtures.PREFIX_A)
                .derivedValues(CatalogueFixtures.derivedItems())
                .build());
    env.kvs().transactionBarrier();
    assertThat(sb.callLog()).containsExactly("CREATE " + A1, "CREATE " + d(A1, 1));
    var retry = env.txn(1);
    assertThat(retry.type()).isEqualTo(TxnType.RETRY_UNIMPL_OPS);
    assertThat(retry.retryForTxn()).isZero();
    assertThat(retry.values()).extracting(v -> v.key()).containsExactly(A1);
    TxnAssert.assertThat(retry)
        .executed(
            op(CREATE, A1).states(UNIMPLEMENTED, CONFIGURED).flags("RETRY"),
            op(CREATE, d(A1, 1)).states(NONEXISTENT, CONFIGURED).flags("DERIVED", "RETRY"));
    BaseValueStatus st = env.kvs().valueStatus(A1);
    assertThat(st.value()).isEqualTo(new ValueStatus(A1, CONFIGURED, "", CREATE, List.of()));
    assertThat(env.kvs().registeredNBKeyPrefixes())
        .isEqualTo(
            Set.of(
                CatalogueFixtures.PREFIX_A,
                CatalogueFixtures.PREFIX_B,
                CatalogueFixtures.PREFIX_C));
  }
}
