package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.Excerpt;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A configuration holding one invalid value of a megabyte, resynced again and again by small
 * changes elsewhere: the errors and the transaction log quote a bounded part of it, and the
 * transaction history keeps within its byte budget.
 */
class LargeInvalidValueTest {
  private static final String BIG_KEY = "config/mock/v1/interfaces/big";
  private static final String BIG_MAC = "x".repeat(1 << 20);

  @Test
  @DisplayName("a 1 MB invalid field: statuses, errors and the transaction log stay bounded")
  void boundedErrorsForLargeInvalidValue() throws Exception {
    AgentConfig config = AgentConfig.load(List.of("--rest", "off"), Map.of());
    try (LogCapture log = new LogCapture("io.kvscheduler.txn");
        Agent a = Agent.start(config)) {
      Northbound nb = a.northbound();
      String first = null;
      for (int i = 0; i < 40; i++) {
        Throwable failure =
            failureOf(
                nb.resync(
                    "file",
                    Map.of(
                        BIG_KEY,
                        new Interface("big", Interface.Type.TAP, true, BIG_MAC),
                        "config/mock/v1/interfaces/lo",
                        Interface.of("lo", Interface.Type.LOOPBACK, i % 2 == 0))));
        assertThat(failure.getMessage())
            .contains(BIG_KEY)
            .hasSizeLessThan(2 * Excerpt.MAX_MESSAGE_CHARS);
        ValueStatus st = a.scheduler().valueStatus(BIG_KEY).value();
        assertThat(st.state()).isEqualTo(ValueState.INVALID);
        assertThat(st.details()).contains("phys_address");
        assertThat(st.error())
            .contains("phys_address")
            .contains("more characters")
            .hasSizeLessThan(Excerpt.MAX_MESSAGE_CHARS + 100);
        if (first == null) {
          first = st.error();
        }
        assertThat(st.error()).isSameAs(first);
      }
      // each record holds the value (2 MiB estimated): the default 64 MiB budget keeps about 32
      assertThat(a.scheduler().transactionHistory(Instant.MIN, Instant.MAX)).hasSizeLessThan(34);
      assertThat(log.messages()).isNotEmpty();
      for (String m : log.messages()) {
        assertThat(m.lines()).allSatisfy(l -> assertThat(l).hasSizeLessThan(1500));
      }
    }
  }

  private static Throwable failureOf(CompletableFuture<Long> txn) throws InterruptedException {
    try {
      txn.get();
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("the resync did not fail");
  }
}
