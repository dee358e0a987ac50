package io.kvscheduler.agent.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.TransactionException;
import java.time.Clock;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@code kvs_southbound_call_seconds{descriptor, call}} comes from the scheduler's operation
 * listener: the descriptors registered are the ones given (no timed copies), and every call is
 * counted, failed ones included.
 */
class SouthboundCallMetricsTest {

  /** The pattern of the call counter of {@code call}s of descriptor "things". */
  private static String count(String call) {
    return "kvs_southbound_call_seconds_count\\{call=\"" + call + "\",descriptor=\"things\"\\}";
  }

  @Test
  @DisplayName(
      "southbound calls are timed through the operation listener, descriptors registered as given")
  void timedThroughTheListener() {
    AgentMetrics metrics = new AgentMetrics(Clock.systemUTC());
    try (KVScheduler kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .operationListener(metrics.operationListener())
            .build()) {
      metrics.attach(kvs);
      KVDescriptor<String, Void> d =
          KVDescriptor.builder("things", String.class)
              .nbKeyPrefix("config/things/")
              .create(
                  (key, value) -> {
                    if (value.equals("bad")) {
                      throw new IllegalStateException("refused");
                    }
                    return null;
                  })
              .delete((key, value, meta) -> {})
              .retrieve(correlate -> List.of())
              .build();
      kvs.registerDescriptors(d);
      assertThat(kvs.descriptor("things")).containsSame(d);
      kvs.startNBTransaction().setValue("config/things/a", "ok").commit();
      assertThatThrownBy(() -> kvs.startNBTransaction().setValue("config/things/b", "bad").commit())
          .isInstanceOf(TransactionException.class);
      kvs.startNBTransaction().delete("config/things/a").commit();

      String text = metrics.scrape();
      assertThat(text)
          .containsPattern(count("create") + " 2(\\.0)?\n")
          .containsPattern(count("delete") + " 1(\\.0)?\n")
          .containsPattern(count("retrieve") + " [1-9]")
          .contains("kvs_queue_length 0.0");
    } finally {
      metrics.close();
    }
  }
}
