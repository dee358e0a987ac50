package io.kvscheduler.plugins.mock.l2plugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockBdHandler;
import io.kvscheduler.plugins.mock.l2plugin.mockcalls.MockFibHandler;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.util.MockSbException;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The in-memory bridge-domain and FIB southbounds: members and entries, errors, replay. */
class MockBdHandlerTest {
  @TempDir Path dir;

  @Test
  void membersKeepTheirOrderAndADuplicateOrMissingMemberIsAnError() {
    List<String> printed = new ArrayList<>();
    MockBdHandler sb = new MockBdHandler(printed::add);
    int bd = sb.createBridgeDomain("bd1");
    sb.addInterfaceToBridgeDomain(bd, "if2", false);
    sb.addInterfaceToBridgeDomain(bd, "if1", true);
    sb.addInterfaceToBridgeDomain(bd, "if3", false);
    sb.deleteInterfaceFromBridgeDomain(bd, "if1");
    sb.addInterfaceToBridgeDomain(bd, "if1", false);

    assertThat(sb.dumpBridgeDomains().get(bd))
        .isEqualTo(
            new BridgeDomain(
                "bd1",
                List.of(
                    BridgeDomain.member("if2"),
                    BridgeDomain.member("if3"),
                    BridgeDomain.member("if1"))));
    assertThatThrownBy(() -> sb.addInterfaceToBridgeDomain(bd, "if3", false))
        .isInstanceOf(MockSbException.class)
        .hasMessage("interface 'if3' is already in the bridge domain 'bd1'");
    assertThatThrownBy(() -> sb.deleteInterfaceFromBridgeDomain(bd, "if9"))
        .isInstanceOf(MockSbException.class)
        .hasMessage("interface 'if9' is not in the bridge domain 'bd1'");
    assertThat(printed)
        .containsExactly(
            "Created bridge domain: bd1 (handle 0)",
            "Added interface 'if2' into the bridge domain 'bd1'",
            "Added interface 'if1' into the bridge domain 'bd1' as BVI",
            "Added interface 'if3' into the bridge domain 'bd1'",
            "Removed interface 'if1' from the bridge domain 'bd1'",
            "Added interface 'if1' into the bridge domain 'bd1'");
  }

  @Test
  void aJournalReplaysTheMembers() throws Exception {
    Path file = dir.resolve("sb");
    try (SouthboundJournal journal = SouthboundJournal.open(file)) {
      MockBdHandler sb = new MockBdHandler(SbPrinter.silent(), journal);
      int bd = sb.createBridgeDomain("bd1");
      sb.addInterfaceToBridgeDomain(bd, "a", false);
      sb.addInterfaceToBridgeDomain(bd, "b", true);
      sb.addInterfaceToBridgeDomain(bd, "c", false);
      sb.deleteInterfaceFromBridgeDomain(bd, "a");
    }
    try (SouthboundJournal journal = SouthboundJournal.open(file)) {
      MockBdHandler sb = new MockBdHandler(SbPrinter.silent(), journal);
      assertThat(sb.dumpBridgeDomains().get(0))
          .isEqualTo(
              new BridgeDomain("bd1", List.of(BridgeDomain.bvi("b"), BridgeDomain.member("c"))));
      assertThat(sb.createBridgeDomain("bd2")).isEqualTo(1);
    }
  }

  @Test
  void fibEntriesAreListedInOrderAndAMissingOneIsAnError() {
    MockFibHandler sb = new MockFibHandler(SbPrinter.silent());
    FibEntry a = new FibEntry("aa:00:00:00:00:01", "bd1", FibEntry.Action.FORWARD, "if1");
    FibEntry b = new FibEntry("aa:00:00:00:00:02", "bd1", FibEntry.Action.DROP, "");
    FibEntry c = new FibEntry("aa:00:00:00:00:03", "bd1", FibEntry.Action.FORWARD, "if3");
    sb.createL2Fib(a);
    sb.createL2Fib(b);
    sb.createL2Fib(c);
    sb.deleteL2Fib(b);
    assertThat(sb.dumpL2Fibs()).containsExactly(a, c);
    assertThatThrownBy(() -> sb.deleteL2Fib(b))
        .isInstanceOf(MockSbException.class)
        .hasMessageStartingWith("no such L2 FIB entry");
  }
}
