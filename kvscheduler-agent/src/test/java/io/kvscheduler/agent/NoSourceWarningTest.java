package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An agent started with no configuration source says so; one with a source does not. */
class NoSourceWarningTest {
  @TempDir Path dir;

  @Test
  void restOnlyAgentWarns() throws Exception {
    try (LogCapture log = new LogCapture(Agent.class);
        Agent a =
            Agent.start(
                AgentConfig.builder().restAddress("127.0.0.1:0").printTxnSummary(false).build())) {
      assertThat(log.messages())
          .contains(
              "agent 'vpp1' has no configuration source (neither"
                  + " --config-dir nor --etcd): only what is pushed with PUT /configuration is applied");
    }
  }

  @Test
  void agentWithoutAnySourceWarnsThatNothingWillBeConfigured() throws Exception {
    try (LogCapture log = new LogCapture(Agent.class);
        Agent a =
            Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build())) {
      assertThat(log.messages())
          .anyMatch(m -> m.contains("REST is off, so nothing will be" + " configured"));
    }
  }

  @Test
  void fileSourceIsEnough() throws Exception {
    try (LogCapture log = new LogCapture(Agent.class);
        Agent a =
            Agent.start(
                AgentConfig.builder()
                    .configDir(dir)
                    .restAddress(null)
                    .printTxnSummary(false)
                    .build())) {
      assertThat(log.messages()).noneMatch(m -> m.contains("no configuration source"));
    }
  }
}
