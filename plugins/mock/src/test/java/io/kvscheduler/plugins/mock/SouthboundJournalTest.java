package io.kvscheduler.plugins.mock;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.l2plugin.model.L2Model;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The mock southbound kept in a state file: what one process did, the next one finds. */
class SouthboundJournalTest {
  @TempDir Path dir;

  private static final Interface TAP1 =
      Interface.of("tap1", Interface.Type.TAP, true).withPhysAddress("aa:bb:cc:00:00:01");

  private static Txn set(KVScheduler kvs, Map<String, Object> values) {
    Txn txn = kvs.startNBTransaction();
    values.forEach(txn::setValue);
    return txn;
  }

  @Test
  void southboundOutlivesTheSchedulerAndTheResyncDoesOnlyWhatIsMissing() throws Exception {
    Path state = dir.resolve("sb.state");
    Map<String, Object> config =
        Map.of(
            InterfaceModel.key("tap1"),
            TAP1,
            InterfaceModel.key("loop1"),
            Interface.of("loop1", Interface.Type.LOOPBACK, false),
            L2Model.bridgeDomainKey("bd1"),
            BridgeDomain.of("bd1", BridgeDomain.member("tap1"), BridgeDomain.bvi("loop1")),
            L2Model.fibKey("bd1", "aa:bb:cc:00:00:10"),
            FibEntry.forward("aa:bb:cc:00:00:10", "bd1", "tap1"));
    MockPlugins first;
    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
        SouthboundJournal journal = SouthboundJournal.open(state)) {
      first = MockPlugins.register(kvs, line -> {}, journal);
      set(kvs, config).commit();
    }
    // a process killed while writing a line: the operation did not happen
    Files.writeString(
        state, "iface-create\t9\ttap", StandardCharsets.UTF_8, StandardOpenOption.APPEND);

    List<String> log = new ArrayList<>();
    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
        SouthboundJournal journal = SouthboundJournal.open(state)) {
      MockPlugins again = MockPlugins.register(kvs, log::add, journal);
      assertThat(again.interfaces().southboundState())
          .isEqualTo(first.interfaces().southboundState());
      assertThat(again.l2().bridgeDomainState()).isEqualTo(first.l2().bridgeDomainState());
      assertThat(again.l2().fibState()).isEqualTo(first.l2().fibState());
      set(kvs, config).commit(TxnOptions.builder().resync(ResyncType.FULL).build());
      assertThat(log).as("the resync finds everything in place").isEmpty();

      // tap1 lost its MAC address while the agent was away: only that is done again
      journal.append("iface-mac", again.interfaces().handleOf("tap1").orElseThrow(), "");
    }
    log.clear();
    try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
        SouthboundJournal journal = SouthboundJournal.open(state)) {
      MockPlugins again = MockPlugins.register(kvs, log::add, journal);
      set(kvs, config).commit(TxnOptions.builder().resync(ResyncType.FULL).build());
      assertThat(log).containsExactly("Set interface 'tap1' MAC address: aa:bb:cc:00:00:01");
      assertThat(again.interfaces().southboundState()).hasSize(2);
    }
    assertThat(Files.readString(state)).endsWith("\n").doesNotContain("\t9\t");
  }
}
