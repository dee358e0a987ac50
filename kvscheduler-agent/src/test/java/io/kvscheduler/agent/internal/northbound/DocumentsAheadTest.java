package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.internal.northbound.FileNorthboundSettleTest.Recording;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.MockModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The config files parsed while the agent starts: the file northbound's first reading takes them
 * when their content is unchanged, and gives the same values and the same problems as a reading
 * without them.
 */
class DocumentsAheadTest {
  @TempDir Path dir;
  final ModelRegistry models = new ModelRegistry();

  @BeforeEach
  void models() {
    MockModels.registerAll(models);
  }

  private FileNorthbound northbound(Recording nb) {
    return new FileNorthbound(
        dir, models, nb, Duration.ZERO, Duration.ofHours(1), Duration.ZERO, Clock.systemUTC());
  }

  private void writeFiles() throws Exception {
    Files.writeString(dir.resolve("a.yaml"), FileNorthboundSettleTest.interfaces(0, 10));
    Files.writeString(
        dir.resolve("b.json"),
        "{\"config/mock/v1/interfaces/tap20\": {\"name\": \"tap20\", \"type\": \"TAP\"}}");
    Files.writeString(dir.resolve("broken.yaml"), "config/mock/v1/interfaces/tap30:\n  name: [x\n");
  }

  @Test
  @DisplayName("the first reading takes every document parsed ahead: same values, same problems")
  void sameOutcome() throws Exception {
    writeFiles();
    Recording plain = new Recording();
    FileNorthbound without = northbound(plain);
    without.resyncAtStart();
    Map<Path, String> plainErrors = without.errors();
    without.close();

    DocumentsAhead ahead = DocumentsAhead.start(dir, false);
    ahead.awaitRead();
    Recording nb = new Recording();
    FileNorthbound with = northbound(nb).parsedAhead(ahead);
    with.resyncAtStart();
    try {
      assertThat(ahead.taken()).as("documents taken from the reading ahead").isEqualTo(3);
      assertThat(nb.resyncs).isEqualTo(plain.resyncs);
      assertThat(nb.resyncs.get(0)).hasSize(11);
      assertThat(with.errors()).isEqualTo(plainErrors).containsKey(dir.resolve("broken.yaml"));
    } finally {
      with.close();
    }
  }

  @Test
  @DisplayName("a file changed after it was parsed ahead is read as it is now")
  void changedFile() throws Exception {
    writeFiles();
    DocumentsAhead ahead = DocumentsAhead.start(dir, false);
    ahead.awaitRead();
    Files.writeString(dir.resolve("a.yaml"), FileNorthboundSettleTest.interfaces(0, 3));
    Files.delete(dir.resolve("broken.yaml"));
    Recording nb = new Recording();
    FileNorthbound with = northbound(nb).parsedAhead(ahead);
    with.resyncAtStart();
    try {
      assertThat(ahead.taken()).as("only b.json is unchanged").isEqualTo(1);
      assertThat(nb.resyncs.get(0))
          .containsOnlyKeys(
              FileNorthboundSettleTest.key(0),
              FileNorthboundSettleTest.key(1),
              FileNorthboundSettleTest.key(2),
              FileNorthboundSettleTest.key(20));
      assertThat(with.errors()).isEmpty();
    } finally {
      with.close();
    }
  }

  @Test
  @DisplayName("documents parsed ahead from another directory are refused")
  void otherDirectory(@TempDir Path other) {
    DocumentsAhead ahead = DocumentsAhead.start(other, false);
    try {
      assertThatThrownBy(() -> northbound(new Recording()).parsedAhead(ahead))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(other.toAbsolutePath().normalize().toString());
    } finally {
      ahead.close();
    }
  }
}
