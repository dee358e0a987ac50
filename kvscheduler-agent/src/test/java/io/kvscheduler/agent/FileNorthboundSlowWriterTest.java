package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.TxnOperation;
import io.kvscheduler.api.ValueState;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The running agent's file northbound (watch service, debounce, rescan) with a writer that rewrites
 * a file in place and pauses in the middle, as a slow {@code cp} or {@code cat >} does, and with
 * files in subdirectories made while it runs.
 */
class FileNorthboundSlowWriterTest {
  @TempDir Path dir;
  Agent agent;

  @AfterEach
  void close() {
    if (agent != null) {
      agent.close();
    }
  }

  static String interfaces(int n, String type) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append("config/mock/v1/interfaces/tap")
          .append(i)
          .append(":\n  name: tap")
          .append(i)
          .append("\n  type: ")
          .append(type)
          .append("\n  enabled: true\n");
    }
    return b.toString();
  }

  List<RecordedTxn> fileChanges() {
    return agent.scheduler().transactionHistory().stream()
        .filter(t -> t.description().equals("change from file"))
        .toList();
  }

  @Test
  @DisplayName(
      "a file rewritten in place with pauses mid-write: no value is deleted and created"
          + " again, the new values are applied")
  void slowInPlaceRewriteDeletesNothing() throws Exception {
    Path file = dir.resolve("interfaces.yaml");
    Files.writeString(file, interfaces(100, "TAP"));
    agent =
        Agent.start(
            AgentConfig.builder()
                .configDir(dir)
                .restAddress(null)
                .printTxnSummary(false)
                .fileSettleTime(Duration.ofSeconds(5))
                .build());
    assertThat(agent.northbound().desired()).hasSize(100);

    // the same content, then the same with 20 more interfaces, each written in three pieces
    // with pauses longer than the debounce and the rescan period between them; the pieces end
    // between two interfaces, so that what is read during a pause is a valid, shorter file
    for (String whole : new String[] {interfaces(100, "TAP"), interfaces(120, "TAP")}) {
      int first = whole.indexOf("config/mock/v1/interfaces/tap33:");
      int second = whole.indexOf("config/mock/v1/interfaces/tap66:");
      try (OutputStream out = Files.newOutputStream(file)) {
        out.write(whole.substring(0, first).getBytes(StandardCharsets.UTF_8));
        out.flush();
        Thread.sleep(1300);
        out.write(whole.substring(first, second).getBytes(StandardCharsets.UTF_8));
        out.flush();
        Thread.sleep(1300);
        out.write(whole.substring(second).getBytes(StandardCharsets.UTF_8));
      }
    }
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> agent.northbound().desired().size() == 120);
    Thread.sleep(1500); // any late scan of a half would show now
    assertThat(
            fileChanges().stream()
                .flatMap(t -> t.executed().stream())
                .filter(op -> op.operation() == TxnOperation.DELETE)
                .map(op -> op.key())
                .toList())
        .as("values deleted by the file northbound")
        .isEmpty();
    assertThat(fileChanges()).hasSize(1);
    for (int i = 0; i < 120; i++) {
      assertThat(agent.scheduler().valueStatus("config/mock/v1/interfaces/tap" + i).state())
          .isEqualTo(ValueState.CONFIGURED);
    }
  }

  @Test
  @DisplayName(
      "a file in a subdirectory made while the agent runs is applied, and its removal"
          + " removes its values")
  void subdirectoryMadeLaterIsWatched() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder()
                .configDir(dir)
                .restAddress(null)
                .printTxnSummary(false)
                .fileSettleTime(Duration.ofMillis(300))
                .build());
    Path sub = Files.createDirectories(dir.resolve("site/rack1"));
    Files.writeString(sub.resolve("rack.yaml"), interfaces(3, "TAP"));
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> agent.northbound().desired().size() == 3);
    Files.writeString(
        sub.resolve("more.json"),
        "{\"config/mock/v1/interfaces/loop9\": {\"name\": \"loop9\", \"type\": \"LOOPBACK\"}}");
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> agent.northbound().desired().containsKey("config/mock/v1/interfaces/loop9"));
    Files.delete(sub.resolve("rack.yaml"));
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> agent.northbound().desired().size() == 1);
  }
}
