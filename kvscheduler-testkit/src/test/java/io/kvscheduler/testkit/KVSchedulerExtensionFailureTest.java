package io.kvscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.ValueOrigin;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * {@link KVSchedulerTest} fails a test whose scheduler made an inconsistent call on the mock
 * southbound, closes the scheduler even then, and leaves the check off on request. The tests below
 * run small test classes through the JUnit launcher and read their results.
 */
class KVSchedulerExtensionFailureTest {
  static final String KEY = "config/interfaces/eth0";

  /** Set while a test below runs the inner classes; they are skipped otherwise. */
  static volatile boolean launched;

  static final AtomicReference<KVScheduler> given = new AtomicReference<>();

  static boolean launched() {
    return launched;
  }

  /** Makes the scheduler create a key the southbound already holds. */
  static void createTwice(SchedulerFixture fx) {
    given.set(fx.kvs());
    fx.kvs()
        .registerDescriptors(
            fx.southbound()
                .descriptor("interface", String.class)
                .nbKeyPrefix("config/interfaces/")
                .build());
    fx.southbound().setValue(KEY, "there", null, ValueOrigin.FROM_NB, false);
    fx.commit(KEY, "up");
  }

  @KVSchedulerTest
  @EnabledIf("io.kvscheduler.testkit.KVSchedulerExtensionFailureTest#launched")
  static class Checked {
    @Test
    void inconsistent(SchedulerFixture fx) {
      createTwice(fx);
    }
  }

  @KVSchedulerTest(checkSouthbound = false)
  @EnabledIf("io.kvscheduler.testkit.KVSchedulerExtensionFailureTest#launched")
  static class Unchecked {
    @Test
    void inconsistent(SchedulerFixture fx) {
      createTwice(fx);
    }
  }

  private static TestExecutionSummary run(Class<?> testClass) {
    Launcher launcher = LauncherFactory.create();
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    launched = true;
    try {
      launcher.execute(
          LauncherDiscoveryRequestBuilder.request().selectors(selectClass(testClass)).build(),
          listener);
    } finally {
      launched = false;
    }
    return listener.getSummary();
  }

  @Test
  @DisplayName("an inconsistent southbound call fails the test, naming the call")
  void inconsistentCallFailsTheTest() {
    given.set(null);
    TestExecutionSummary summary = run(Checked.class);

    assertThat(summary.getTestsStartedCount()).isEqualTo(1);
    assertThat(summary.getTestsFailedCount()).isEqualTo(1);
    List<TestExecutionSummary.Failure> failures = summary.getFailures();
    assertThat(failures.get(0).getException())
        .isInstanceOf(AssertionError.class)
        .hasMessage("inconsistent calls on the mock southbound:\n  CREATE of existing key " + KEY);
    assertThat(given.get()).isNotNull();
    assertThat(isClosed(given.get())).as("closed before the check").isTrue();
  }

  @Test
  @DisplayName("with checkSouthbound = false the same test passes, and its scheduler is closed")
  void checkCanBeTurnedOff() {
    given.set(null);
    TestExecutionSummary summary = run(Unchecked.class);

    assertThat(summary.getTestsStartedCount()).isEqualTo(1);
    assertThat(summary.getTestsSucceededCount()).isEqualTo(1);
    assertThat(isClosed(given.get())).isTrue();
  }

  private static boolean isClosed(KVScheduler kvs) {
    try {
      kvs.startNBTransaction().setValue(KEY, "x").commit();
      return false;
    } catch (RuntimeException e) {
      return e.getMessage() != null && e.getMessage().contains("closed");
    }
  }
}
