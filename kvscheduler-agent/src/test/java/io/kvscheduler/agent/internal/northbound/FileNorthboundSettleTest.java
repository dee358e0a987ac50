package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.plugins.mock.MockModels;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file northbound as people edit files: a file rewritten in place, read half-written by a scan.
 * Scans are driven by the test on a manual clock (no watcher thread), so each step sees exactly the
 * bytes written so far.
 */
class FileNorthboundSettleTest {
  private static final Duration SETTLE = Duration.ofSeconds(2);

  @TempDir Path dir;
  final ManualClock clock = new ManualClock();
  final Recording nb = new Recording();
  FileNorthbound files;

  /** A clock the test moves. */
  static final class ManualClock extends Clock {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    void advance(Duration d) {
      now = now.plus(d);
    }
  }

  /** A northbound recording what it is given, in order. */
  static final class Recording implements Northbound {
    final List<Map<String, Object>> resyncs = new ArrayList<>();
    final List<Map<String, Object>> changes = new ArrayList<>();
    final Map<String, Object> desired = new TreeMap<>();

    @Override
    public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
      resyncs.add(new TreeMap<>(values));
      desired.clear();
      desired.putAll(values);
      return CompletableFuture.completedFuture((long) resyncs.size());
    }

    @Override
    public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
      this.changes.add(new HashMap<>(changes));
      changes.forEach(
          (k, v) -> {
            if (v == null) {
              desired.remove(k);
            } else {
              desired.put(k, v);
            }
          });
      return CompletableFuture.completedFuture((long) this.changes.size());
    }

    @Override
    public Map<String, Object> desired() {
      return Map.copyOf(desired);
    }
  }

  static String interfaces(int from, int to) {
    StringBuilder b = new StringBuilder();
    for (int i = from; i < to; i++) {
      b.append("config/mock/v1/interfaces/tap")
          .append(i)
          .append(":\n  name: tap")
          .append(i)
          .append("\n  type: TAP\n  enabled: true\n");
    }
    return b.toString();
  }

  static String key(int i) {
    return "config/mock/v1/interfaces/tap" + i;
  }

  @BeforeEach
  void start() throws IOException {
    Files.writeString(dir.resolve("a.yaml"), interfaces(0, 10));
    ModelRegistry models = new ModelRegistry();
    MockModels.registerAll(models);
    files = new FileNorthbound(dir, models, nb, Duration.ZERO, Duration.ofHours(1), SETTLE, clock);
    files.resyncAtStart();
    assertThat(nb.resyncs).hasSize(1);
    assertThat(nb.desired).hasSize(10);
  }

  @AfterEach
  void close() {
    files.close();
  }

  /** Writes {@code text} over the file in place (truncate, then write), as {@code cat >} does. */
  void writeInPlace(String name, String text) throws IOException {
    Files.write(dir.resolve(name), text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName(
      "a file rewritten in place with a pause mid-write: the half-written file removes"
          + " nothing, and the whole one changes nothing")
  void halfWrittenRewriteRemovesNothing() throws IOException {
    String whole = interfaces(0, 10);
    for (int cut :
        new int[] {0, 1, whole.length() / 3, whole.indexOf("tap5") + 2, whole.length() - 3}) {
      writeInPlace("a.yaml", whole.substring(0, cut)); // the writer pauses here
      assertThat(files.scanNow()).as("waiting at %d", cut).isTrue();
      clock.advance(SETTLE.dividedBy(2));
      assertThat(files.scanNow()).isTrue();
      assertThat(nb.changes).as("nothing delivered for the half of %d", cut).isEmpty();
      assertThat(files.errors()).as("a half-written file is not reported yet").isEmpty();
      writeInPlace("a.yaml", whole); // ... and finishes
      assertThat(files.scanNow()).isFalse();
      clock.advance(SETTLE.multipliedBy(2));
      assertThat(files.scanNow()).isFalse();
      assertThat(nb.changes).isEmpty();
    }
    assertThat(nb.desired).hasSize(10);
  }

  @Test
  @DisplayName(
      "a file rewritten in place with more values: the half is held back, the whole"
          + " adds the new values at once, nothing is deleted and created again")
  void halfWrittenGrowingRewriteAddsOnlyTheNewValues() throws IOException {
    String whole = interfaces(0, 12);
    writeInPlace("a.yaml", whole.substring(0, whole.indexOf("tap4") + 1));
    assertThat(files.scanNow()).isTrue();
    assertThat(nb.changes).isEmpty();
    clock.advance(Duration.ofMillis(300));
    writeInPlace("a.yaml", whole);
    files.scanNow();
    assertThat(nb.changes)
        .containsExactly(
            Map.of(key(10), nb.desired.get(key(10)), key(11), nb.desired.get(key(11))));
    assertThat(nb.desired).hasSize(12);
  }

  @Test
  @DisplayName(
      "additions apply at once; a removal, a replaced value or a removed file once the"
          + " files have read the same for the settle time")
  void removalsWaitForTheSettleTime() throws IOException {
    Files.writeString(dir.resolve("b.yaml"), interfaces(20, 22));
    assertThat(files.scanNow()).isFalse();
    assertThat(nb.changes).hasSize(1);
    assertThat(nb.changes.get(0)).containsOnlyKeys(key(20), key(21));

    writeInPlace("a.yaml", interfaces(0, 9)); // tap9 removed
    assertThat(files.scanNow()).isTrue();
    clock.advance(SETTLE.minusMillis(1));
    assertThat(files.scanNow()).isTrue();
    assertThat(nb.changes).hasSize(1);
    clock.advance(Duration.ofMillis(1));
    assertThat(files.scanNow()).isFalse();
    assertThat(nb.changes).hasSize(2);
    assertThat(nb.changes.get(1)).isEqualTo(nullValue(key(9)));

    writeInPlace("a.yaml", interfaces(0, 9).replace("enabled: true\n", "enabled: false\n"));
    assertThat(files.scanNow()).isTrue(); // replaced values wait too
    clock.advance(SETTLE);
    files.scanNow();
    assertThat(nb.changes).hasSize(3);
    assertThat(nb.changes.get(2)).hasSize(9);

    Files.delete(dir.resolve("b.yaml"));
    assertThat(files.scanNow()).isTrue();
    clock.advance(SETTLE.dividedBy(2));
    Files.writeString(dir.resolve("b.yaml"), interfaces(20, 22)); // deleted and written again
    assertThat(files.scanNow()).isFalse();
    clock.advance(SETTLE);
    assertThat(files.scanNow()).isFalse();
    assertThat(nb.changes).hasSize(3);
    Files.delete(dir.resolve("b.yaml"));
    files.scanNow();
    clock.advance(SETTLE);
    files.scanNow();
    assertThat(nb.changes).hasSize(4);
    assertThat(nb.changes.get(3)).containsOnlyKeys(key(20), key(21));
    assertThat(nb.changes.get(3).values()).containsOnlyNulls();
  }

  @Test
  @DisplayName(
      "a file that stays malformed is reported, with its line, once it has read the same"
          + " for the settle time; its values stay applied")
  void malformedFileIsReportedOnceSettled() throws IOException {
    writeInPlace("a.yaml", interfaces(0, 10) + "config/mock/v1/interfaces/tap10:\n  nme: x\n");
    assertThat(files.scanNow()).isTrue();
    assertThat(files.errors()).isEmpty();
    clock.advance(SETTLE);
    assertThat(files.scanNow()).isFalse();
    assertThat(files.errors()).hasSize(1);
    assertThat(files.errors().values().iterator().next())
        .startsWith(dir.resolve("a.yaml") + ":42: ")
        .contains("unknown field 'nme'");
    assertThat(nb.changes).isEmpty();
    assertThat(nb.desired).hasSize(10);
  }

  @Test
  @DisplayName(
      "files in subdirectories, and in subdirectories made later, are read; hidden"
          + " directories are not")
  void subdirectoriesAreRead() throws IOException {
    Files.createDirectories(dir.resolve("site/rack1"));
    Files.writeString(dir.resolve("site/rack1/c.yaml"), interfaces(30, 31));
    Files.createDirectories(dir.resolve(".git"));
    Files.writeString(dir.resolve(".git/d.yaml"), interfaces(40, 41));
    files.scanNow();
    assertThat(nb.changes).containsExactly(Map.of(key(30), nb.desired.get(key(30))));
    Files.delete(dir.resolve("site/rack1/c.yaml"));
    Files.delete(dir.resolve("site/rack1"));
    files.scanNow();
    clock.advance(SETTLE);
    files.scanNow();
    assertThat(nb.changes).hasSize(2);
    assertThat(nb.changes.get(1)).isEqualTo(nullValue(key(30)));
  }

  private static Map<String, Object> nullValue(String key) {
    Map<String, Object> m = new HashMap<>();
    m.put(key, null);
    return m;
  }
}
