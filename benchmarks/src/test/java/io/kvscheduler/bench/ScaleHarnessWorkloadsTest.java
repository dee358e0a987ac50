package io.kvscheduler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The baseline, W4, W5 and W6 on small sizes: the fields they report and the checks they make. */
class ScaleHarnessWorkloadsTest {

  @Test
  void growingBridgeDomainEndsWithEveryMemberBoundAndOneBindingCreatedPerTransaction() {
    Map<String, Object> r = GrowingBridgeDomain.run(30, true);

    assertEquals(30, r.get("window"));
    // the last transaction: the bridge domain updated, one binding created
    assertEquals(2, r.get("ops_per_txn"));
    assertTrue((double) r.get("txn_ms") > 0);
    assertTrue((double) r.get("p99_ms") >= (double) r.get("p50_ms"));
  }

  @Test
  void retainedHeapCountsTwoNPlusOneValuesWithHistoryOnAndOff() {
    Map<String, Object> on = RetainedHeap.run(2000, true);
    Map<String, Object> off = RetainedHeap.run(2000, false);

    assertEquals(4001L, on.get("values"));
    assertEquals("on", on.get("history"));
    assertEquals("off", off.get("history"));
    assertTrue((long) on.get("bytes_per_value") > 0, on.toString());
    assertTrue((long) off.get("bytes_per_value") > 0, off.toString());
  }

  @Test
  void w1LineGetsTheBaselineFromAFreshJvmAndItsRatio() {
    Map<String, Object> r = ScaleHarness.withBaseline(ScaleHarness.w1(2000), 2000);

    assertEquals(4001, r.get("ops"));
    double seconds = (double) r.get("seconds");
    double baseline = (double) r.get("baseline_seconds"); // rounded to 0.1 ms
    double ratio = (double) r.get("baseline_ratio");
    assertTrue(baseline > 0, r.toString());
    assertTrue((double) r.get("baseline_same_jvm_seconds") > 0, r.toString());
    assertTrue(ratio >= seconds / (baseline + 0.00005) - 0.01, r.toString());
    assertTrue(ratio <= seconds / Math.max(baseline - 0.00005, 1e-9) + 0.01, r.toString());
    double viaDescriptors = (double) r.get("baseline_descriptors_seconds");
    double ratioViaDescriptors = (double) r.get("baseline_descriptors_ratio");
    assertTrue(viaDescriptors > 0, r.toString());
    assertTrue(
        ratioViaDescriptors >= seconds / (viaDescriptors + 0.00005) - 0.01
            && ratioViaDescriptors <= seconds / Math.max(viaDescriptors - 0.00005, 1e-9) + 0.01,
        r.toString());
  }

  @Test
  void slowSouthboundReportsOneLinePerParallelismWithIdenticalRecords() {
    List<Map<String, Object>> lines = SlowSouthboundApply.run(50, List.of(1, 4), false);

    assertEquals(2, lines.size());
    for (Map<String, Object> line : lines) {
      assertEquals(101L, line.get("calls"), line.toString()); // 50 interfaces, BD, 50 bindings
      assertEquals(101, line.get("ops"), line.toString());
      assertEquals(true, line.get("records_identical"), line.toString());
      // no faster than every call's latency divided among the threads
      assertTrue((double) line.get("seconds") >= 101 * 0.001 / (int) line.get("parallelism"));
      assertTrue((double) line.get("limit_ratio") > 0, line.toString());
    }
    assertEquals(1, lines.get(0).get("parallelism"));
    assertEquals(1.0, lines.get(0).get("speedup"));
    // 101 calls of 1 ms at parallelism 4, plus the critical path of two calls
    assertEquals(0.027, (double) lines.get(1).get("limit_seconds"), 0.0011);
  }

  @Test
  void aTransactionWithRevertRunsItsCallsInParallelToo() {
    List<Map<String, Object>> lines = SlowSouthboundApply.run(50, List.of(1, 8), true);

    assertEquals(2, lines.size());
    for (Map<String, Object> line : lines) {
      assertEquals(true, line.get("revert"), line.toString());
      assertEquals(101L, line.get("calls"), line.toString());
      assertEquals(true, line.get("records_identical"), line.toString());
    }
    assertEquals(1, lines.get(0).get("peak_concurrency"));
    assertTrue((int) lines.get(1).get("peak_concurrency") > 1, lines.get(1).toString());
  }

  @Test
  void recordsDifferingInAStateAreNotIdentical() {
    var a =
        new RecordedTxnOp(
            TxnOperation.CREATE,
            "k",
            Optional.empty(),
            Optional.of("v"),
            ValueState.NONEXISTENT,
            ValueState.CONFIGURED,
            "",
            "",
            Set.of());
    var b =
        new RecordedTxnOp(
            TxnOperation.CREATE,
            "k",
            Optional.empty(),
            Optional.of("v"),
            ValueState.NONEXISTENT,
            ValueState.PENDING,
            "",
            "",
            Set.of());
    assertEquals(
        SlowSouthboundApply.describe(List.of(a)), SlowSouthboundApply.describe(List.of(a)));
    assertNotEquals(
        SlowSouthboundApply.describe(List.of(a)), SlowSouthboundApply.describe(List.of(b)));
  }

  @Test
  void planWorkloadPlansTheChangeAndTimesItAgainstTheSimulation() {
    Map<String, Object> r = PlanWorkload.run(2_000, 200);
    assertEquals(200, r.get("plan_ops"), r.toString());
    for (String k :
        List.of("plan_ms", "simulation_ms", "plan_ratio", "commit_ms", "commit_simulated_ms")) {
      assertTrue(r.containsKey(k), k + " in " + r);
    }
    assertTrue((Double) r.get("plan_ms") > 0, r.toString());
  }

  @Test
  void parallelismIsRefusedOutsideW6() {
    assertThrows(
        IllegalArgumentException.class,
        () -> ScaleHarness.run(new String[] {"W1", "--n", "10", "--parallelism", "4"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> ScaleHarness.run(new String[] {"W6", "--n", "10", "--parallelism", "0"}));
  }

  @Test
  void historyAndWarmupAreRefusedWhereTheyDoNotApply() {
    assertThrows(
        IllegalArgumentException.class,
        () -> ScaleHarness.run(new String[] {"W1", "--n", "10", "--history", "off"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> ScaleHarness.run(new String[] {"W5", "--n", "10", "--warmup", "1"}));
    assertThrows(
        IllegalArgumentException.class,
        () -> ScaleHarness.run(new String[] {"W4", "--n", "10", "--history", "maybe"}));
  }

  @Test
  void everyLineNamesTheCompilersItsJvmRanWith() throws Exception {
    assertEquals("C1", baselineLineField("-XX:TieredStopAtLevel=1", "compilers"));
    assertEquals("C1+C2", baselineLineField("-XX:TieredStopAtLevel=4", "compilers"));
  }

  /** The field {@code name} of the line a fresh JVM with {@code option} prints for BASELINE. */
  private static String baselineLineField(String option, String name) throws Exception {
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                option,
                "-cp",
                System.getProperty("java.class.path"),
                ScaleHarness.class.getName(),
                "BASELINE",
                "--n",
                "10")
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), out);
    Matcher m = Pattern.compile("\"" + name + "\":\"([^\"]*)\"").matcher(out);
    assertTrue(m.find(), out);
    return m.group(1);
  }
}
