package io.kvscheduler.plugins.mock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.util.MacAddress;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MockPluginsTest {
  private final List<String> sbLog = new ArrayList<>();
  private final KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
  private final MockPlugins mock = MockPlugins.register(kvs, sbLog::add);

  @AfterEach
  void close() {
    kvs.close();
  }

  private static final Interface TAP1 = Interface.of("tap1", Interface.Type.TAP, true);

  @Test
  void interfaceMetadataIsExposedReadOnlyWithTheSbHandleIndex() {
    kvs.startNBTransaction()
        .setValue(
            InterfaceModel.key("loop0"), Interface.of("loop0", Interface.Type.LOOPBACK, false))
        .setValue(InterfaceModel.key("tap1"), TAP1)
        .commit();
    // keys are applied in order: loop0 gets handle 0, tap1 handle 1
    assertThat(mock.interfaces().handleOf("tap1")).contains(1);
    assertThat(mock.interfaces().nameOf(0)).contains("loop0");
    assertThat(mock.interfaces().interfaceIndex().labels())
        .containsExactlyInAnyOrder("loop0", "tap1");
    assertThat(mock.interfaces().southboundState().get(1)).isEqualTo(TAP1);
    assertThat(sbLog)
        .containsExactly(
            "Created Loopback interface: loop0 (handle 0)",
            "Created TAP interface: tap1 (handle 1)",
            "Set interface 'tap1' UP");
  }

  @Test
  void typeChangeRecreatesAndEnabledChangeUpdatesInPlace() {
    kvs.startNBTransaction().setValue(InterfaceModel.key("tap1"), TAP1).commit();
    sbLog.clear();
    kvs.startNBTransaction().setValue(InterfaceModel.key("tap1"), TAP1.withEnabled(false)).commit();
    assertThat(sbLog).containsExactly("Set interface 'tap1' DOWN");
    sbLog.clear();
    kvs.startNBTransaction()
        .setValue(InterfaceModel.key("tap1"), TAP1.withType(Interface.Type.LOOPBACK))
        .commit();
    assertThat(sbLog)
        .containsExactly(
            "Deleted TAP interface: tap1",
            "Created Loopback interface: tap1 (handle 1)",
            "Set interface 'tap1' UP");
    assertThat(mock.interfaces().handleOf("tap1")).contains(1);
  }

  @Test
  void equivalentMacInOtherCaseOrEmptyCausesNoSouthboundCall() {
    kvs.startNBTransaction()
        .setValue(InterfaceModel.key("tap1"), TAP1.withPhysAddress("aa:bb:cc:dd:ee:ff"))
        .commit();
    sbLog.clear();
    kvs.startNBTransaction()
        .setValue(InterfaceModel.key("tap1"), TAP1.withPhysAddress("AA:BB:CC:DD:EE:FF"))
        .commit();
    kvs.startNBTransaction().setValue(InterfaceModel.key("tap1"), TAP1).commit();
    assertThat(sbLog).isEmpty();
  }

  @Test
  void invalidValuesNameTheInvalidFields() {
    assertThatThrownBy(
            () ->
                kvs.startNBTransaction()
                    .setValue(InterfaceModel.key("tap2"), TAP1.withPhysAddress("bad"))
                    .setValue(
                        L2Model.bridgeDomainKey("bd1"),
                        BridgeDomain.of("bd1", BridgeDomain.bvi("a"), BridgeDomain.bvi("b")))
                    .setValue(
                        L2Model.fibKey("bd1", "aa:aa:aa:aa:aa:aa"),
                        FibEntry.forward("aa:aa:aa:aa:aa:aa", "bd1", ""))
                    .commit())
        .isInstanceOf(TransactionException.class)
        .hasMessageContaining("field phys_address is invalid: address bad: invalid MAC address")
        .hasMessageContaining("mock bridge domain defined with mutliple BVIs")
        .hasMessageContaining("fields [action outgoing_interface] are invalid");
    assertThat(kvs.valueStatus(L2Model.bridgeDomainKey("bd1")).value().details())
        .containsExactly("interfaces.bridged_virtual_interface");
    assertThat(kvs.valueStatus(InterfaceModel.key("tap2")).state()).isEqualTo(ValueState.INVALID);
  }

  @Test
  void bridgeDomainNeverWaitsButItsBindingsAndForwardFibsDo() {
    kvs.startNBTransaction()
        .setValue(
            L2Model.bridgeDomainKey("bd1"), BridgeDomain.of("bd1", BridgeDomain.member("tap1")))
        .setValue(
            L2Model.fibKey("bd1", "aa:aa:aa:aa:aa:aa"),
            FibEntry.forward("aa:aa:aa:aa:aa:aa", "bd1", "tap1"))
        .setValue(
            L2Model.fibKey("bd1", "bb:bb:bb:bb:bb:bb"), FibEntry.drop("bb:bb:bb:bb:bb:bb", "bd1"))
        .commit();
    assertThat(kvs.valueStatus(L2Model.bridgeDomainKey("bd1")).state())
        .isEqualTo(ValueState.CONFIGURED);
    assertThat(kvs.valueStatus(L2Model.bdInterfaceKey("bd1", "tap1")).value().details())
        .containsExactly("interface-exists");
    assertThat(kvs.valueStatus(L2Model.fibKey("bd1", "aa:aa:aa:aa:aa:aa")).value().details())
        .containsExactly("bridged-interface");
    assertThat(kvs.valueStatus(L2Model.fibKey("bd1", "bb:bb:bb:bb:bb:bb")).state())
        .isEqualTo(ValueState.CONFIGURED);

    kvs.startNBTransaction().setValue(InterfaceModel.key("tap1"), TAP1).commit();
    assertThat(mock.l2().bridgeDomainState().get(0).interfaces())
        .containsExactly(BridgeDomain.member("tap1"));
    assertThat(mock.l2().fibState()).hasSize(2);
  }

  @Test
  void pendingBindingOfARefreshedBridgeDomainGoesWithItsBase() {
    TxnOptions full = TxnOptions.builder().resync(ResyncType.FULL).build();
    kvs.startNBTransaction()
        .setValue(
            L2Model.bridgeDomainKey("bd1"), BridgeDomain.of("bd1", BridgeDomain.member("tap1")))
        .commit(full);
    // the next full resync refreshes bd1 from the SB (no members there), then drops bd1 and
    // brings tap1: the binding that was waiting for tap1 must go with bd1, not be created
    kvs.startNBTransaction().setValue(InterfaceModel.key("tap1"), TAP1).commit(full);
    assertThat(mock.l2().bridgeDomainState()).isEmpty();
    assertThat(kvs.valueStatus(L2Model.bdInterfaceKey("bd1", "tap1")).state())
        .isEqualTo(ValueState.NONEXISTENT);
  }

  @Test
  void macAddressNotationsAcceptedLikeTheReference() {
    assertThat(MacAddress.isValid("01:23:45:67:89:ab")).isTrue();
    assertThat(MacAddress.isValid("01-23-45-67-89-AB")).isTrue();
    assertThat(MacAddress.isValid("0123.4567.89ab")).isTrue();
    assertThat(MacAddress.isValid("01:23:45:67:89:ab:cd:ef")).isTrue();
    assertThat(MacAddress.isValid("01:23:45:67:89")).isFalse();
    assertThat(MacAddress.isValid("01:23:45:67:89-ab")).isFalse();
    assertThat(MacAddress.isValid("aa:bb:cc:00:00:zz")).isFalse();
    assertThat(MacAddress.isValid("bad-mac")).isFalse();
    assertThatThrownBy(() -> MacAddress.check("x")).hasMessage("address x: invalid MAC address");
  }

  @Test
  void printerReceivesEveryOperation() {
    List<String> lines = new ArrayList<>();
    try (KVScheduler other = KVScheduler.builder().printTxnSummary(false).build()) {
      SbPrinter printer = lines::add;
      MockPlugins.register(other, printer);
      other.startNBTransaction().setValue(InterfaceModel.key("tap1"), TAP1).commit();
      other.startNBTransaction().setValue(InterfaceModel.key("tap1"), null).commit();
    }
    assertThat(lines)
        .containsExactly(
            "Created TAP interface: tap1 (handle 0)",
            "Set interface 'tap1' UP",
            "Deleted TAP interface: tap1");
  }
}
