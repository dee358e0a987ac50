package io.kvscheduler.agent.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The recent log kept for bug reports is bounded: the last lines, and how many were dropped. */
class LogTailTest {
  private static final Logger LOG = LoggerFactory.getLogger(LogTailTest.class);

  @Test
  void keepsTheLastLinesAndSaysHowManyWereDropped() {
    LogTail tail = new LogTail(3);
    assertThat(tail.attach()).isTrue();
    try {
      for (int i = 1; i <= 5; i++) {
        LOG.warn("line {}", i);
      }
    } finally {
      tail.detach();
    }
    LOG.warn("after detach");
    List<String> lines = tail.text().lines().toList();
    assertThat(lines).hasSize(4);
    assertThat(lines.get(0)).isEqualTo("(2 older lines not kept; the tail keeps the last 3)");
    assertThat(lines.get(1)).contains(" WARN ").endsWith("LogTailTest - line 3");
    assertThat(lines.get(3)).endsWith(" - line 5");
    assertThat(tail.text()).doesNotContain("after detach");
  }

  @Test
  void aCapacityBelowOneIsRefused() {
    assertThatThrownBy(() -> new LogTail(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity must be positive");
  }
}
