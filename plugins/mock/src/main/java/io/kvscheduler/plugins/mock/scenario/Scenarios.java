package io.kvscheduler.plugins.mock.scenario;

import static io.kvscheduler.plugins.mock.scenario.ScenarioContext.values;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.BD1;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.BD1_WITHOUT_TAP1;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.BD2;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.BD2_WITH_TAP2;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.FIB1;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.FIB2;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.FIB3;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.LOOPBACK1;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.TAP1;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.TAP2;
import static io.kvscheduler.plugins.mock.scenario.ScenarioData.TAP2_INVALID;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Subscription;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockPlugins;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.plugins.mock.ifplugin.model.InterfaceModel;
import io.kvscheduler.plugins.mock.l2plugin.model.BridgeDomain;
import io.kvscheduler.plugins.mock.l2plugin.model.FibEntry;
import io.kvscheduler.plugins.mock.util.SbPrinter;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** The scenarios of the hands-on example, in menu order. */
public final class Scenarios {
  private Scenarios() {}

  private static final String SOURCE =
      "plugins/mock/src/main/java/io/kvscheduler/plugins/mock/scenario/Scenarios.java";

  /** Every scenario, in menu order. */
  public static List<Scenario> all() {
    return List.of(
        pendingAfterResync(),
        pendingAfterChange(),
        revertedChange(),
        fixedInvalidConfig(),
        interfaceRecreation(),
        failureFixedByRetry(),
        perf());
  }

  /** The scenario named {@code name}. */
  public static Optional<Scenario> byName(String name) {
    return all().stream().filter(s -> s.name().equals(name)).findFirst();
  }

  static Scenario pendingAfterResync() {
    return new Scenario(
        "pending-after-resync",
        "BD-interface binding and FIB pending after resync, fixed by an update",
        List.of(
            "A full resync configures tap1, loopback1, bridge domain bd1 (members tap2 and",
            "loopback1 as BVI) and two FIBs. tap2 does not exist: its binding to bd1 and the FIB",
            "forwarding to it wait as PENDING, while bd1 itself is created at once.",
            "Then bd1 is updated to contain tap1 as well, and tap2 is added: the bindings and FIBs",
            "waiting for them are created right after what they need."),
        List.of(
            "The bridge domain itself never waits: only its derived bindings do (see",
            "BdInterfaceDescriptor). Its value is 'equivalent' to the previous one, so adding a",
            "member is applied through the derived values alone - no UPDATE of bd1 is executed."),
        ctx -> {
          ctx.announce(
              "Resync config: tap1, loopback1, bd1 (tap2, loopback1 BVI), fib1 (via tap1),",
              "fib2 (via tap2)");
          ctx.resync("initial config", values(TAP1, LOOPBACK1, BD1_WITHOUT_TAP1, FIB1, FIB2));
          ctx.announce("Change config: bd1 gets tap1 as a member, tap2 is created");
          ctx.change("add tap1 to bd1, create tap2", values(BD1, TAP2), false);
        });
  }

  static Scenario pendingAfterChange() {
    return new Scenario(
        "pending-after-change",
        "BD-interface binding and FIB become pending after a change",
        List.of(
            "Everything is configured by a full resync. Then tap2 is deleted: the FIB that",
            "forwards to it and its binding to bd1 are removed first and wait as PENDING;",
            "loopback1 is disabled and tap1 gets a MAC address (updates in place)."),
        List.of(
            "Dependents are deleted before what they depend on, and are kept as PENDING, so",
            "they come back automatically if tap2 is created again."),
        ctx -> {
          ctx.announce(
              "Resync config: tap1, tap2, loopback1, bd1 (tap1, tap2, loopback1 BVI), fib2");
          ctx.resync("initial config", values(TAP1, TAP2, LOOPBACK1, BD1, FIB2));
          ctx.announce(
              "Change config: tap1 MAC 11:22:33:44:55:66, loopback1 disabled, tap2 deleted");
          Map<String, Object> change =
              values(TAP1.withPhysAddress("11:22:33:44:55:66"), LOOPBACK1.withEnabled(false));
          change.put(InterfaceModel.key("tap2"), null);
          ctx.change("update tap1 and loopback1, delete tap2", change, false);
        });
  }

  static Scenario revertedChange() {
    return new Scenario(
        "reverted-change",
        "A change with an invalid MAC address is reverted",
        List.of(
            "tap1 and bd2 are configured. Then one transaction, committed with the revert",
            "option, adds tap2 to bd2, adds fib3 and creates tap2 with an invalid MAC address.",
            "tap2 is INVALID, so the whole transaction is rolled back: the operations flagged",
            "REVERT undo what had been applied, in reverse order."),
        List.of(
            "Without the revert option (best effort) the valid parts would have stayed.",
            "The commit returns an error naming the failed key and operation."),
        ctx -> {
          ctx.announce("Resync config: tap1, bd2 (tap1)");
          ctx.resync("initial config", values(TAP1, BD2));
          ctx.announce(
              "Change config WITH REVERT: bd2 (tap1, tap2), fib3, tap2 with an invalid MAC");
          ctx.change("invalid change, reverted", values(BD2_WITH_TAP2, FIB3, TAP2_INVALID), true);
        });
  }

  static Scenario fixedInvalidConfig() {
    return new Scenario(
        "fixed-invalid-config",
        "An invalid value fixed by the next update",
        List.of(
            "The initial resync holds tap2 with an invalid MAC address: it is INVALID (with",
            "the invalid field as detail), and its binding and FIB wait as PENDING.",
            "The next change gives tap2 a valid MAC: it is created (FIXED) and what waited for it",
            "follows."),
        List.of(
            "INVALID values are never passed to the descriptor's Create; only a new NB value",
            "can fix them."),
        ctx -> {
          ctx.announce("Resync config: tap1, tap2 (invalid MAC), loopback1, bd1, fib2");
          ctx.resync("initial config", values(TAP1, TAP2_INVALID, LOOPBACK1, BD1, FIB2));
          ctx.announce("Change config: tap2 with a valid MAC address");
          ctx.change("fix tap2", values(TAP2), false);
        });
  }

  static Scenario interfaceRecreation() {
    return new Scenario(
        "interface-recreation",
        "A type change applied by re-creation",
        List.of(
            "tap1, bd2 (member tap1) and fib3 (via tap1) are configured. Then tap1's type",
            "changes to LOOPBACK: the descriptor says a type change needs re-creation, so the FIB",
            "and the binding are removed first (PENDING), tap1 is deleted and created again, and",
            "the dependents are restored."),
        List.of(
            "See InterfaceDescriptor's updateWithRecreate; the operations are flagged",
            "RECREATE in the transaction log."),
        ctx -> {
          ctx.announce("Resync config: tap1, bd2 (tap1), fib3 (via tap1)");
          ctx.resync("initial config", values(TAP1, BD2, FIB3));
          ctx.announce("Change config: tap1 becomes a LOOPBACK");
          ctx.change("change tap1's type", values(TAP1.withType(Interface.Type.LOOPBACK)), false);
        });
  }

  static Scenario failureFixedByRetry() {
    return new Scenario(
        "failure-fixed-by-retry",
        "A failed creation fixed by the automatic retry",
        List.of(
            "The mock southbound is told to fail the next TAP creation. A full resync of tap1,",
            "bd2 and fib3 then fails for tap1 (RETRYING, its dependents PENDING). About one",
            "second later the scheduler retries on its own (a RetryFailedOps transaction): tap1",
            "is created and its binding and FIB follow."),
        List.of(
            "Retry is an option of each commit (here the default: 1 s, 3 attempts, backoff).",
            "A descriptor's isRetriableFailure decides which errors are worth retrying."),
        ctx -> {
          ctx.mock().interfaces().southbound().failNextTapCreation("mock error");
          String tap1 = InterfaceModel.key("tap1");
          CountDownLatch configured = new CountDownLatch(1);
          try (Subscription watch =
              ctx.scheduler()
                  .watchValueStatus(
                      KeySelector.exact(tap1),
                      st -> {
                        if (st.state() == ValueState.CONFIGURED) {
                          configured.countDown();
                        }
                      })) {
            ctx.announce("Resync config: tap1 (its creation will fail once), bd2 (tap1), fib3");
            ctx.resync("initial config", values(TAP1, BD2, FIB3));
            ctx.announce("Waiting for the automatic retry (about 1 s) ...");
            if (!configured.await(10, TimeUnit.SECONDS)) {
              ctx.out().println(Console.red("tap1 was not configured within 10 s"));
            }
          }
          ctx.printStates();
        });
  }

  static Scenario perf() {
    return new Scenario(
        "perf",
        "Performance: 1000 small transactions, twice",
        List.of(
            "An empty resync, then 1000 transactions each adding one TAP interface tap-<i>.",
            "Then the same again on a fresh scheduler, where each transaction also rewrites",
            "bridge domain bd1 to contain every TAP so far and adds a FIB via the new TAP.",
            "Unlike the reference, transaction logs and SB printing are off here: the figures",
            "measure the scheduler, not the terminal."),
        List.of("For scale figures (N up to 1M values) run bin/kvs-bench; see BENCHMARKS.md."),
        ctx -> {
          // runs on schedulers of its own, quiet
          ctx.out().println(Console.green("Without bridge domain and FIBs:"));
          PerfRun.run(ctx.out(), false, 1000);
          ctx.out().println(Console.green("With bridge domain bd1 growing and one FIB per TAP:"));
          PerfRun.run(ctx.out(), true, 1000);
        });
  }

  /** The perf scenario's body, on its own quiet scheduler. */
  static final class PerfRun {
    private PerfRun() {}

    static void run(PrintStream out, boolean withBd, int txns) {
      try (KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build()) {
        MockPlugins.register(kvs, SbPrinter.silent());
        kvs.startNBTransaction().commit(TxnOptions.builder().resync(ResyncType.FULL).build());
        List<BridgeDomain.Interface> members = new ArrayList<>();
        long start = System.nanoTime();
        long batch = start;
        for (int i = 0; i < txns; i++) {
          String name = "tap-" + i;
          Map<String, Object> vals = new HashMap<>();
          vals.put(InterfaceModel.key(name), Interface.of(name, Interface.Type.TAP, true));
          if (withBd) {
            members.add(BridgeDomain.member(name));
            BridgeDomain bd = new BridgeDomain("bd1", members);
            FibEntry fib =
                FibEntry.forward(
                    String.format(
                        "00:00:%02x:%02x:%02x:%02x",
                        (i >>> 24) & 0xff, (i >>> 16) & 0xff, (i >>> 8) & 0xff, i & 0xff),
                    "bd1",
                    name);
            vals.put(ScenarioContext.keyOf(bd), bd);
            vals.put(ScenarioContext.keyOf(fib), fib);
          }
          Txn txn = kvs.startNBTransaction();
          vals.forEach(txn::setValue);
          txn.commit();
          if ((i + 1) % 100 == 0) {
            long now = System.nanoTime();
            out.printf("Txns %d-%d: %s%n", i - 98, i + 1, millis(now - batch));
            batch = now;
          }
        }
        out.println("=> Total elapsed time: " + millis(System.nanoTime() - start));
      }
    }

    private static String millis(long nanos) {
      return String.format("%.1f ms", nanos / 1e6);
    }
  }

  static String source() {
    return SOURCE;
  }
}
