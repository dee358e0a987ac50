package io.kvscheduler.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The baseline, W4 and W5 on small sizes: the fields they report and the checks they make. */
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
  void w1LineGetsTheBaselineAndItsRatio() {
    Map<String, Object> r = ScaleHarness.withBaseline(ScaleHarness.w1(2000), 2000);

    assertEquals(4001, r.get("ops"));
    double seconds = (double) r.get("seconds");
    double baseline = (double) r.get("baseline_seconds"); // rounded to 0.1 ms
    double ratio = (double) r.get("baseline_ratio");
    assertTrue(baseline > 0, r.toString());
    assertTrue(ratio >= seconds / (baseline + 0.00005) - 0.01, r.toString());
    assertTrue(ratio <= seconds / Math.max(baseline - 0.00005, 1e-9) + 0.01, r.toString());
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
}
