package io.kvscheduler.plugins.mock.scenario;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVSchedulerBuilder;
import io.kvscheduler.plugins.mock.MockPlugins;
import java.io.PrintStream;
import java.util.function.Consumer;

/**
 * Runs a scenario on a fresh scheduler with the mock plugins: prints what it is about to do, the
 * mock southbound's operations, the transaction log (through the {@code io.kvscheduler.txn}
 * logger), the value states after each step, and where to look next.
 */
public final class ScenarioRunner {
  private ScenarioRunner() {}

  /**
   * Runs {@code scenario}.
   *
   * @param out where explanations, SB operations and states go
   * @param customize adjusts the scheduler builder (tests inject clocks or turn the log off)
   * @param inspect called with the scheduler and plugins after the scenario ran, before close
   */
  public static void run(
      Scenario scenario,
      PrintStream out,
      Consumer<KVSchedulerBuilder> customize,
      Consumer<ScenarioContext> inspect)
      throws Exception {
    out.println(Console.green("=== " + scenario.name() + ": " + scenario.title()));
    Console.box(out, String.join(" ", scenario.explanation()));
    KVSchedulerBuilder builder =
        KVScheduler.builder()
            .printTxnSummary(true)
            .enableTxnSimulation(false)
            .recordHistory(true)
            .threadName("kvs-scenario");
    customize.accept(builder);
    try (KVScheduler kvs = builder.build()) {
      MockPlugins mock =
          MockPlugins.register(kvs, line -> out.println(Console.magenta("  [mock SB] " + line)));
      ScenarioContext ctx = new ScenarioContext(kvs, mock, out);
      scenario.body().run(ctx);
      kvs.transactionBarrier();
      inspect.accept(ctx);
    }
    out.println(Console.green("Where to look next:"));
    out.println("  " + String.join(" ", scenario.next()));
    out.println(
        "  Scenario code: "
            + Scenarios.source()
            + "; descriptors: "
            + "plugins/mock/src/main/java/io/kvscheduler/plugins/mock/*/descriptor/");
    out.println("  Other scenarios: bin/kvs-agent scenario --list");
  }
}
