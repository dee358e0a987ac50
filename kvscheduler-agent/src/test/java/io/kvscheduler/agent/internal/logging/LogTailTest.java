package io.kvscheduler.agent.internal.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.DisplayName;
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
  @DisplayName("control characters of user data are escaped: one line per message, no ESC")
  void controlCharactersAreEscaped() {
    LogTail tail = new LogTail(10);
    assertThat(tail.attach()).isTrue();
    String key = "config/x\n12:00:00.000 ERROR forged - line\r\u001b[31mred\u0000\u009b";
    try {
      LOG.warn("value {} refused", key, new IllegalArgumentException("bad key " + key));
    } finally {
      tail.detach();
    }
    List<String> lines = tail.text().lines().toList();
    assertThat(lines.get(0))
        .endsWith(
            "value config/x\\n12:00:00.000 ERROR forged - line\\r\\u001b[31mred\\u0000\\u009b"
                + " refused");
    assertThat(lines.get(1))
        .startsWith("java.lang.IllegalArgumentException: bad key config/x\\n12:00")
        .contains("\\u001b[31m");
    assertThat(lines).noneMatch(l -> l.startsWith("12:00:00.000 ERROR forged"));
    assertThat(tail.text()).doesNotContain("\u001b", "\r", "\u0000", "\u009b");
  }

  @Test
  void aCapacityBelowOneIsRefused() {
    assertThatThrownBy(() -> new LogTail(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity must be positive");
  }
}
