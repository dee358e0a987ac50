package io.kvscheduler.plugins.mock.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.DelayScheduler;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnType;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Runs each scenario of the hands-on example through the scenario runner and checks the executed
 * operations of every transaction (order, flags as the transaction log shows them, key) and the
 * final value states against the reference's scenarios (interop fact sheet §5.3; I/, B/, F/ stand
 * for the interface, bridge-domain and FIB key prefixes).
 */
class ScenariosTest {

  /** What a scenario left behind. */
  record Outcome(
      List<RecordedTxn> history,
      Map<String, BaseValueStatus> states,
      String output,
      List<Duration> timers) {

    /** Executed operations of transaction {@code seq}, as {@code OP [FLAGS] key}. */
    List<String> executed(long seq) {
      return brief(
          history.stream().filter(t -> t.seqNum() == seq).findFirst().orElseThrow().executed());
    }

    ValueState state(String key) {
      BaseValueStatus st = states.get(expand(key));
      return st == null ? ValueState.NONEXISTENT : st.state();
    }
  }

  /**
   * Runs a scenario quietly; timers (the retry's 1 s delay) fire at once, on a thread of their own,
   * so no test waits for wall-clock time.
   */
  static Outcome run(String name) throws Exception {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    AtomicReference<Outcome> out = new AtomicReference<>();
    List<Duration> delays = new CopyOnWriteArrayList<>();
    DelayScheduler immediate =
        (delay, task) -> {
          delays.add(delay);
          Thread t = new Thread(task, "scenario-timer");
          t.setDaemon(true);
          t.start();
          return () -> {};
        };
    try (PrintStream ps = new PrintStream(buf, true, StandardCharsets.UTF_8)) {
      ScenarioRunner.run(
          Scenarios.byName(name).orElseThrow(),
          ps,
          b -> b.printTxnSummary(false).delayScheduler(immediate),
          ctx -> {
            KVScheduler kvs = ctx.scheduler();
            Map<String, BaseValueStatus> states = new LinkedHashMap<>();
            kvs.valueStatuses().forEach(s -> states.put(s.key(), s));
            out.set(new Outcome(kvs.transactionHistory(), states, "", List.of()));
          });
    }
    Outcome o = out.get();
    return new Outcome(
        o.history(), o.states(), buf.toString(StandardCharsets.UTF_8), List.copyOf(delays));
  }

  static List<String> brief(List<RecordedTxnOp> ops) {
    List<String> out = new ArrayList<>();
    for (RecordedTxnOp op : ops) {
      List<String> flags = RecordedTxnOp.labels(op.displayFlags());
      out.add(op.operation() + (flags.isEmpty() ? "" : " " + flags) + " " + shorten(op.key()));
    }
    return out;
  }

  static String shorten(String key) {
    return key.replace("config/mock/v1/interfaces/", "I/")
        .replace("config/mock/v1/bridge-domain/", "B/")
        .replace("config/mock/v1/fib/", "F/");
  }

  static String expand(String key) {
    return key.replaceFirst("^I/", "config/mock/v1/interfaces/")
        .replaceFirst("^B/", "config/mock/v1/bridge-domain/")
        .replaceFirst("^F/", "config/mock/v1/fib/");
  }

  @Test
  @DisplayName("B173 scenario pending-after-resync: binding and FIB wait, then are created")
  void pendingAfterResync() throws Exception {
    Outcome o = run("pending-after-resync");
    assertThat(o.executed(0))
        .containsExactly(
            "CREATE B/bd1",
            "CREATE [DERIVED, NOOP, IS-PENDING] mock/bd/bd1/interface/tap2",
            "CREATE [NOOP, IS-PENDING] F/bd1/mac/aa:aa:aa:bb:bb:bb",
            "CREATE [NOOP, IS-PENDING] F/bd1/mac/cc:cc:cc:dd:dd:dd",
            "CREATE I/loopback1",
            "CREATE [DERIVED] mock/bd/bd1/interface/loopback1",
            "CREATE I/tap1");
    assertThat(o.executed(1))
        .containsExactly(
            "CREATE [DERIVED] mock/bd/bd1/interface/tap1",
            "CREATE [WAS-PENDING] F/bd1/mac/cc:cc:cc:dd:dd:dd",
            "CREATE I/tap2",
            "CREATE [DERIVED, WAS-PENDING] mock/bd/bd1/interface/tap2",
            "CREATE [WAS-PENDING] F/bd1/mac/aa:aa:aa:bb:bb:bb");
    assertThat(o.states().values()).allMatch(s -> s.state() == ValueState.CONFIGURED);
    assertThat(o.states()).hasSize(6);
    // no operation touched the bridge domain after its Create: its last operation stays CREATE
    // (D61; the reference reports UPDATE)
    assertThat(o.states().get(expand("B/bd1")).value().lastOperation().name()).isEqualTo("CREATE");
    assertThat(o.output())
        .contains("[mock SB] Added interface 'tap2' into the bridge domain 'bd1'")
        .contains("waiting for [interface-exists]")
        .contains("Where to look next:");
  }

  @Test
  @DisplayName("B174 scenario pending-after-change: dependents of a deleted interface wait")
  void pendingAfterChange() throws Exception {
    Outcome o = run("pending-after-change");
    assertThat(o.executed(0))
        .containsExactly(
            "CREATE B/bd1",
            "CREATE I/loopback1",
            "CREATE [DERIVED] mock/bd/bd1/interface/loopback1",
            "CREATE I/tap1",
            "CREATE [DERIVED] mock/bd/bd1/interface/tap1",
            "CREATE I/tap2",
            "CREATE [DERIVED] mock/bd/bd1/interface/tap2",
            "CREATE F/bd1/mac/aa:aa:aa:bb:bb:bb");
    assertThat(o.executed(1))
        .containsExactly(
            "DELETE [IS-PENDING] F/bd1/mac/aa:aa:aa:bb:bb:bb",
            "DELETE [DERIVED, IS-PENDING] mock/bd/bd1/interface/tap2",
            "DELETE I/tap2",
            "UPDATE I/loopback1",
            "UPDATE I/tap1");
    assertThat(o.state("F/bd1/mac/aa:aa:aa:bb:bb:bb")).isEqualTo(ValueState.PENDING);
    assertThat(o.state("I/tap2")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(
            o.states()
                .get(expand("B/bd1"))
                .derivedStatus("mock/bd/bd1/interface/tap2")
                .orElseThrow()
                .state())
        .isEqualTo(ValueState.PENDING);
  }

  @Test
  @DisplayName("B175 scenario reverted-change: an invalid value reverts the whole transaction")
  void revertedChange() throws Exception {
    Outcome o = run("reverted-change");
    assertThat(o.executed(0))
        .containsExactly(
            "CREATE B/bd2", "CREATE I/tap1", "CREATE [DERIVED] mock/bd/bd2/interface/tap1");
    assertThat(o.executed(1))
        .containsExactly(
            "CREATE [DERIVED, NOOP, IS-PENDING] mock/bd/bd2/interface/tap2",
            "CREATE F/bd2/mac/ee:ee:ee:ff:ff:ff",
            "CREATE [NOOP, INVALID] I/tap2",
            "DELETE [NOOP, REVERT] I/tap2",
            "DELETE [REVERT] F/bd2/mac/ee:ee:ee:ff:ff:ff",
            "DELETE [DERIVED, NOOP, REVERT, WAS-PENDING] mock/bd/bd2/interface/tap2");
    RecordedTxnOp invalid = o.history().get(1).executed().get(2);
    assertThat(invalid.newError())
        .isEqualTo(
            "field phys_address is invalid: address invalid-hw-address: invalid MAC address");
    assertThat(o.output())
        .contains(
            "KeyErrors: [config/mock/v1/interfaces/tap2 (CREATE): field"
                + " phys_address is invalid");
    assertThat(o.states().keySet()).containsExactly(expand("B/bd2"), expand("I/tap1"));
  }

  @Test
  @DisplayName("B176 scenario fixed-invalid-config: a valid update fixes an INVALID value")
  void fixedInvalidConfig() throws Exception {
    Outcome o = run("fixed-invalid-config");
    assertThat(o.executed(0))
        .containsExactly(
            "CREATE B/bd1",
            "CREATE [DERIVED, NOOP, IS-PENDING] mock/bd/bd1/interface/tap2",
            "CREATE [NOOP, IS-PENDING] F/bd1/mac/aa:aa:aa:bb:bb:bb",
            "CREATE I/loopback1",
            "CREATE [DERIVED] mock/bd/bd1/interface/loopback1",
            "CREATE I/tap1",
            "CREATE [DERIVED] mock/bd/bd1/interface/tap1",
            "CREATE [NOOP, INVALID] I/tap2");
    assertThat(o.executed(1))
        .containsExactly(
            "CREATE [FIXED] I/tap2",
            "CREATE [DERIVED, WAS-PENDING] mock/bd/bd1/interface/tap2",
            "CREATE [WAS-PENDING] F/bd1/mac/aa:aa:aa:bb:bb:bb");
    assertThat(o.states().values()).allMatch(s -> s.state() == ValueState.CONFIGURED);
  }

  @Test
  @DisplayName("B177 scenario interface-recreation: a type change re-creates the interface")
  void interfaceRecreation() throws Exception {
    Outcome o = run("interface-recreation");
    assertThat(o.executed(0))
        .containsExactly(
            "CREATE B/bd2",
            "CREATE I/tap1",
            "CREATE [DERIVED] mock/bd/bd2/interface/tap1",
            "CREATE F/bd2/mac/ee:ee:ee:ff:ff:ff");
    assertThat(o.executed(1))
        .containsExactly(
            "DELETE [IS-PENDING] F/bd2/mac/ee:ee:ee:ff:ff:ff",
            "DELETE [DERIVED, IS-PENDING] mock/bd/bd2/interface/tap1",
            "DELETE [RECREATE] I/tap1",
            "CREATE [RECREATE] I/tap1",
            "CREATE [DERIVED, WAS-PENDING] mock/bd/bd2/interface/tap1",
            "CREATE [WAS-PENDING] F/bd2/mac/ee:ee:ee:ff:ff:ff");
    RecordedTxnOp recreated = o.history().get(1).executed().get(3);
    assertThat(((Interface) recreated.newValue().orElseThrow()).type())
        .isEqualTo(Interface.Type.LOOPBACK);
    assertThat(o.states().values()).allMatch(s -> s.state() == ValueState.CONFIGURED);
  }

  @Test
  @DisplayName("B178 scenario failure-fixed-by-retry: a failed creation is retried automatically")
  void failureFixedByRetry() throws Exception {
    Outcome o = run("failure-fixed-by-retry");
    assertThat(o.executed(0))
        .containsExactly(
            "CREATE B/bd2",
            "CREATE [DERIVED, NOOP, IS-PENDING] mock/bd/bd2/interface/tap1",
            "CREATE [NOOP, IS-PENDING] F/bd2/mac/ee:ee:ee:ff:ff:ff",
            "CREATE I/tap1");
    assertThat(o.history().get(0).executed().get(3).newState()).isEqualTo(ValueState.RETRYING);
    assertThat(o.history().get(0).executed().get(3).newError()).isEqualTo("mock error");
    assertThat(o.timers()).as("retry timer").first().isEqualTo(Duration.ofSeconds(1));
    RecordedTxn retry = o.history().get(1);
    assertThat(retry.type()).isEqualTo(TxnType.RETRY_FAILED_OPS);
    assertThat(retry.retryForTxn()).isZero();
    assertThat(retry.retryAttempt()).isEqualTo(1);
    assertThat(o.executed(1))
        .containsExactly(
            "CREATE [RETRY] I/tap1",
            "CREATE [DERIVED, RETRY, WAS-PENDING] mock/bd/bd2/interface/tap1",
            "CREATE [RETRY, WAS-PENDING] F/bd2/mac/ee:ee:ee:ff:ff:ff");
    assertThat(o.states().values()).allMatch(s -> s.state() == ValueState.CONFIGURED);
  }

  @Test
  void everyScenarioIsListedByTheCommandLine() throws Exception {
    PrintStream saved = System.out;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setOut(new PrintStream(buf, true, StandardCharsets.UTF_8));
    int status;
    try {
      status = ScenarioMain.run(List.of("--list"));
    } finally {
      System.setOut(saved);
    }
    assertThat(status).isZero();
    assertThat(buf.toString(StandardCharsets.UTF_8))
        .contains(
            "pending-after-resync",
            "pending-after-change",
            "reverted-change",
            "fixed-invalid-config",
            "interface-recreation",
            "failure-fixed-by-retry",
            "perf");
    assertThat(ScenarioMain.run(List.of("no-such-scenario"))).isEqualTo(2);
  }
}
