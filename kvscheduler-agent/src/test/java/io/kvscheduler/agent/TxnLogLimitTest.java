package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The transaction log lists a bounded number of values and operations per transaction. */
class TxnLogLimitTest {
  @Test
  @DisplayName(
      "--txn-log-max-ops N: the log lists N operations, then how many more and where"
          + " to see them; the history keeps them all")
  void theLogIsBounded() throws Exception {
    AgentConfig config =
        AgentConfig.load(List.of("--rest", "off", "--txn-log-max-ops", "3"), Map.of());
    assertThat(config.txnLogMaxOps()).isEqualTo(3);
    assertThat(AgentConfig.defaults().txnLogMaxOps()).isEqualTo(50);
    try (LogCapture log = new LogCapture("io.kvscheduler.txn");
        Agent a = Agent.start(config)) {
      Northbound nb = a.northbound();
      Map<String, Object> values = new TreeMap<>();
      for (int i = 0; i < 10; i++) {
        values.put(
            "config/mock/v1/interfaces/lo" + i,
            Interface.of("lo" + i, Interface.Type.LOOPBACK, true));
      }
      long seq = nb.change("test", values).get();
      String text = String.join("\n", log.messages());
      assertThat(text).contains("… and 7 more (see /scheduler/txn-history?seq-num=" + seq + ")");
      assertThat(text).contains("3. CREATE").doesNotContain("4. CREATE");
      assertThat(a.scheduler().recordedTransaction(seq).orElseThrow().executed()).hasSize(10);
    }
  }
}
