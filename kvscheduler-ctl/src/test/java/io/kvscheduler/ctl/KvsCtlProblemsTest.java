package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code kvsctl status} and the agent's northbound problems (input it rejected or ignored). */
class KvsCtlProblemsTest {
  static final String TAP1 = "config/mock/v1/interfaces/tap1";

  @TempDir Path dir;
  RunningAgent agent;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  @Test
  @DisplayName(
      "kvsctl status prints a 'northbound problems' block naming the file, line and cause; with"
          + " --strict it exits 1; without problems there is no block and --strict exits 0")
  void statusListsProblems() throws Exception {
    Path config = Files.createDirectories(dir.resolve("config"));
    Files.writeString(config.resolve("good.yaml"), TAP1 + ": {name: tap1, type: TAP}\n");
    Path bad = config.resolve("bad.yaml");
    Files.writeString(bad, "config/mock/v1/interfaces/tap2:\n  name: [tap2\n");
    agent = RunningAgent.start(config);

    var r = agent.ctl("status");
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains(TAP1, "northbound problems (1):", "file bad.yaml:", "malformed");
    var strict = agent.ctl("status", "--strict");
    assertThat(strict.exit()).isEqualTo(1);
    assertThat(strict.out()).contains("northbound problems");
    // JSON on the standard output stays one document; the block goes to the standard error
    var json = agent.ctl("status", "-o", "json", "--strict");
    assertThat(json.exit()).isEqualTo(1);
    assertThat(json.out()).doesNotContain("northbound problems");
    assertThat(json.err()).contains("northbound problems", "bad.yaml");

    Files.delete(bad);
    await().atMost(Duration.ofSeconds(20)).until(() -> agent.agent.problems().list().isEmpty());
    var fixed = agent.ctl("status", "--strict");
    assertThat(fixed.exit()).as(fixed.err()).isZero();
    assertThat(fixed.out()).doesNotContain("northbound problems");
  }
}
