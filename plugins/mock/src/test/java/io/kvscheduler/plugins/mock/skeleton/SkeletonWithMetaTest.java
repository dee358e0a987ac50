package io.kvscheduler.plugins.mock.skeleton;

import static io.kvscheduler.testkit.OpSpec.op;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.plugins.mock.skeleton.withmeta.TunnelPlugin;
import io.kvscheduler.plugins.mock.skeleton.withmeta.descriptor.TunnelDescriptor;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.InMemoryTunnelHandler;
import io.kvscheduler.plugins.mock.skeleton.withmeta.mockcalls.SbTunnel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.Tunnel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.model.TunnelModel;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelIndex;
import io.kvscheduler.plugins.mock.skeleton.withmeta.tunnelidx.TunnelMetadata;
import io.kvscheduler.testkit.TxnAssert;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The skeleton with metadata (tunnels and their derived addresses) on a real scheduler. */
class SkeletonWithMetaTest {
  private static final Tunnel T1 = Tunnel.of("t1", "192.0.2.1", 10, "10.0.0.1/24", "10.0.1.1/24");
  private static final Tunnel T2 = Tunnel.of("t2", "192.0.2.2", 10);
  private static final String T1_KEY = TunnelModel.key(T1);
  private static final String T2_KEY = TunnelModel.key(T2);
  private static final String T1_ADDR0 = TunnelModel.addressKey("t1", "10.0.0.1/24");
  private static final String T1_ADDR1 = TunnelModel.addressKey("t1", "10.0.1.1/24");

  private final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  private final List<String> sbLog = Collections.synchronizedList(new ArrayList<>());
  private final InMemoryTunnelHandler tunnelSb = new InMemoryTunnelHandler(sbLog::add);
  private final TunnelPlugin plugin = TunnelPlugin.register(kvs, tunnelSb);
  private final TunnelIndex index = plugin.tunnelIndex();

  @AfterEach
  void close() {
    kvs.close();
  }

  private TxnAssert txn(long seqNum) {
    return TxnAssert.assertThat(kvs.recordedTransaction(seqNum).orElseThrow());
  }

  private ValueStatus status(String key) {
    return kvs.valueStatus(key).value();
  }

  @Test
  void createStoresTheHandleFoundByNameHandleAndVni() {
    long seq = kvs.startNBTransaction().setValue(T1_KEY, T1).setValue(T2_KEY, T2).commit();

    assertThat(sbLog)
        .containsExactly(
            "Created tunnel to 192.0.2.1 vni 10 mtu 1500 (handle 0)",
            "Added address 10.0.0.1/24 to tunnel 0",
            "Added address 10.0.1.1/24 to tunnel 0",
            "Created tunnel to 192.0.2.2 vni 10 mtu 1500 (handle 1)");
    txn(seq)
        .executed(
            op(TxnOperation.CREATE, T1_KEY).states(ValueState.NONEXISTENT, ValueState.CONFIGURED),
            op(TxnOperation.CREATE, T1_ADDR0)
                .states(ValueState.NONEXISTENT, ValueState.CONFIGURED)
                .flags("DERIVED"),
            op(TxnOperation.CREATE, T1_ADDR1)
                .states(ValueState.NONEXISTENT, ValueState.CONFIGURED)
                .flags("DERIVED"),
            op(TxnOperation.CREATE, T2_KEY).states(ValueState.NONEXISTENT, ValueState.CONFIGURED));

    assertThat(index.lookupByName("t1")).contains(new TunnelMetadata(0, 10));
    assertThat(index.lookupByName("t2")).contains(new TunnelMetadata(1, 10));
    assertThat(index.lookupByHandle(1)).contains("t2");
    assertThat(index.lookupByHandle(2)).isEmpty();
    assertThat(index.lookupByVni(10)).containsExactly("t1", "t2");
    assertThat(index.names()).containsExactly("t1", "t2");
    assertThat(index.mapping().indexNames())
        .containsExactlyInAnyOrder(TunnelIndex.BY_HANDLE, TunnelIndex.BY_VNI);
    assertThat(kvs.valueStatus(T1_KEY).derived())
        .extracting(ValueStatus::key, ValueStatus::state)
        .containsExactly(
            Tuple.tuple(T1_ADDR0, ValueState.CONFIGURED),
            Tuple.tuple(T1_ADDR1, ValueState.CONFIGURED));
  }

  @Test
  void mtuUpdatesInPlaceAndAddressChangesTouchOnlyTheDerivedValues() {
    kvs.startNBTransaction().setValue(T1_KEY, T1).commit();
    sbLog.clear();

    kvs.startNBTransaction().setValue(T1_KEY, T1.withMtu(Tunnel.DEFAULT_MTU)).commit();
    assertThat(sbLog).isEmpty();

    kvs.startNBTransaction()
        .setValue(T1_KEY, T1.withMtu(9000).withAddresses("10.0.1.1/24", "10.0.2.1/24"))
        .commit();
    assertThat(sbLog)
        .containsExactly(
            "Deleted address 10.0.0.1/24 from tunnel 0",
            "Set MTU of tunnel 0 to 9000",
            "Added address 10.0.2.1/24 to tunnel 0");
    assertThat(index.lookupByName("t1")).contains(new TunnelMetadata(0, 10));
    sbLog.clear();

    // only the address list changes: the comparator ignores it, no Update of the tunnel
    kvs.startNBTransaction()
        .setValue(T1_KEY, T1.withMtu(9000).withAddresses("10.0.2.1/24"))
        .commit();
    assertThat(sbLog).containsExactly("Deleted address 10.0.1.1/24 from tunnel 0");
    assertThat(plugin.southboundState())
        .containsEntry(0, new SbTunnel("192.0.2.1", 10, 9000, List.of("10.0.2.1/24")));
  }

  @Test
  void vniChangeRecreatesTheTunnelWithItsAddressesAndMovesItInTheIndex() {
    kvs.startNBTransaction().setValue(T1_KEY, T1).commit();
    sbLog.clear();

    long seq = kvs.startNBTransaction().setValue(T1_KEY, T1.withVni(20)).commit();

    assertThat(sbLog)
        .containsExactly(
            "Deleted address 10.0.0.1/24 from tunnel 0",
            "Deleted address 10.0.1.1/24 from tunnel 0",
            "Deleted tunnel 0",
            "Created tunnel to 192.0.2.1 vni 20 mtu 1500 (handle 1)",
            "Added address 10.0.0.1/24 to tunnel 1",
            "Added address 10.0.1.1/24 to tunnel 1");
    txn(seq)
        .executed(
            op(TxnOperation.DELETE, T1_ADDR0).flags("DERIVED", "RECREATE"),
            op(TxnOperation.DELETE, T1_ADDR1).flags("DERIVED", "RECREATE"),
            op(TxnOperation.DELETE, T1_KEY).flags("RECREATE"),
            op(TxnOperation.CREATE, T1_KEY).flags("RECREATE"),
            op(TxnOperation.CREATE, T1_ADDR0).flags("DERIVED", "RECREATE"),
            op(TxnOperation.CREATE, T1_ADDR1).flags("DERIVED", "RECREATE"));
    assertThat(index.lookupByName("t1")).contains(new TunnelMetadata(1, 20));
    assertThat(index.lookupByVni(10)).isEmpty();
    assertThat(index.lookupByVni(20)).containsExactly("t1");
    assertThat(index.lookupByHandle(0)).isEmpty();
  }

  @Test
  void invalidTunnelIsRejectedWithItsFieldsAndNeverReachesTheSouthbound() {
    Tunnel bad = new Tunnel("t3", "192.0.2.300", 0, 100, List.of("10.0.0.1"));
    assertThatThrownBy(
            () ->
                kvs.startNBTransaction()
                    .setValue(TunnelModel.key(bad), bad)
                    .setValue(TunnelModel.key("t4"), T2)
                    .commit())
        .isInstanceOf(TransactionException.class)
        .hasMessageContaining("fields [remote_address vni mtu addresses] are invalid")
        .hasMessageContaining("field name is invalid: name 't2' does not match the key");

    assertThat(status(TunnelModel.key(bad)).state()).isEqualTo(ValueState.INVALID);
    assertThat(status(TunnelModel.key(bad)).details())
        .containsExactly("remote_address", "vni", "mtu", "addresses");
    assertThat(status(TunnelModel.key("t4")).details()).containsExactly("name");
    assertThat(kvs.valueStatus(TunnelModel.key(bad)).derived()).isEmpty();
    assertThat(sbLog).isEmpty();
    assertThat(index.names()).isEmpty();
  }

  @Test
  void deleteRemovesTheAddressesFirstThenTheTunnelAndItsMetadata() {
    kvs.startNBTransaction().setValue(T1_KEY, T1).setValue(T2_KEY, T2).commit();
    sbLog.clear();

    long seq = kvs.startNBTransaction().setValue(T1_KEY, null).commit();

    assertThat(sbLog)
        .containsExactly(
            "Deleted address 10.0.0.1/24 from tunnel 0",
            "Deleted address 10.0.1.1/24 from tunnel 0",
            "Deleted tunnel 0");
    txn(seq)
        .executed(
            op(TxnOperation.DELETE, T1_ADDR0)
                .states(ValueState.CONFIGURED, ValueState.REMOVED)
                .flags("DERIVED"),
            op(TxnOperation.DELETE, T1_ADDR1)
                .states(ValueState.CONFIGURED, ValueState.REMOVED)
                .flags("DERIVED"),
            op(TxnOperation.DELETE, T1_KEY).states(ValueState.CONFIGURED, ValueState.REMOVED));
    assertThat(index.names()).containsExactly("t2");
    assertThat(index.lookupByHandle(0)).isEmpty();
    assertThat(kvs.valueStatus(T1_KEY).state()).isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  void fullResyncCorrelatesNamelessSouthboundTunnelsWithTheDesiredOnes() {
    // what the southbound holds before the first resync (e.g. after an agent restart):
    // t1 with one of its two addresses, and a tunnel nobody asked for
    tunnelSb.createTunnel("192.0.2.1", 10, 1500);
    tunnelSb.addTunnelAddress(0, "10.0.0.1/24");
    tunnelSb.createTunnel("198.51.100.7", 99, 1500);
    sbLog.clear();
    TxnOptions fullResync = TxnOptions.builder().resync(ResyncType.FULL).build();

    kvs.startNBTransaction().setValue(T1_KEY, T1).commit(fullResync);

    assertThat(sbLog).containsExactly("Deleted tunnel 1", "Added address 10.0.1.1/24 to tunnel 0");
    assertThat(index.lookupByName("t1")).contains(new TunnelMetadata(0, 10));
    assertThat(index.names()).containsExactly("t1");
    assertThat(status(T1_KEY).state()).isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(TunnelModel.key(TunnelDescriptor.UNKNOWN_NAME_PREFIX + "1")).state())
        .isEqualTo(ValueState.NONEXISTENT);
    sbLog.clear();

    // a run-time resync correlates by the handle in the metadata: nothing to do
    kvs.startNBTransaction().setValue(T1_KEY, T1).commit(fullResync);
    assertThat(sbLog).isEmpty();
    assertThat(plugin.southboundState())
        .containsExactly(
            Map.entry(
                0, new SbTunnel("192.0.2.1", 10, 1500, List.of("10.0.0.1/24", "10.0.1.1/24"))));
  }
}
