package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.internal.format.ConfigDocument;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file northbound against files it must not read whole: larger than a document may be, or whose
 * read fails in any way. The watcher reports them and goes on.
 */
class FileNorthboundLimitsTest {
  private static final long LIMIT = ConfigDocument.MAX_CODE_POINTS;

  @TempDir Path dir;
  Agent agent;
  FileNorthbound files;

  @BeforeEach
  void startAgent() throws Exception {
    agent = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    files =
        new FileNorthbound(
            dir, agent.models(), agent.northbound(), Duration.ofMillis(50), Duration.ofMillis(200));
  }

  @AfterEach
  void close() {
    files.close();
    agent.close();
  }

  static ConditionFactory eventually() {
    return await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50));
  }

  static String tap(String name) {
    return "config/mock/v1/interfaces/" + name + ": {name: " + name + ", type: TAP}\n";
  }

  static String key(String name) {
    return "config/mock/v1/interfaces/" + name;
  }

  /** A file of {@code size} zero bytes that takes no disk space (a sparse file). */
  Path sparse(String name, long size) throws IOException {
    Path p = dir.resolve(name);
    try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
      f.setLength(size);
    }
    Files.setLastModifiedTime(p, FileTime.from(Instant.now().minusSeconds(60)));
    return p;
  }

  /** Writes a file modified a minute ago (the next scan reads it at once). */
  void writeOld(String name, String content) throws IOException {
    Path tmp = dir.resolve("." + name + ".tmp");
    Files.writeString(tmp, content);
    Files.setLastModifiedTime(tmp, FileTime.from(Instant.now().minusSeconds(60)));
    Files.move(tmp, dir.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  static long allocatedByThisThread() {
    return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
        .getCurrentThreadAllocatedBytes();
  }

  @Test
  @DisplayName(
      "a 10 GiB sparse file added to the directory is refused unread, naming its size and the"
          + " limit, and a file added after it applies")
  void hugeSparseFileIsRefusedAndTheWatcherGoesOn() throws Exception {
    writeOld("a.yaml", tap("a1"));
    files.start();
    Path huge = sparse("huge.yaml", 10L << 30);
    eventually()
        .untilAsserted(
            () ->
                assertThat(files.errors().get(huge))
                    .isNotNull()
                    .contains("too large")
                    .contains((10L << 30) + " bytes")
                    .contains(String.valueOf(LIMIT)));
    writeOld("b.yaml", tap("b1"));
    eventually()
        .untilAsserted(
            () -> assertThat(agent.northbound().desired()).containsKeys(key("a1"), key("b1")));
    assertThat(files.errors()).containsOnlyKeys(huge);
  }

  @Test
  @DisplayName(
      "a file one byte over the byte limit, and one character over the document limit, are"
          + " refused without being read into memory; the other files apply")
  void filesJustOverTheLimitAreRefusedWithoutBeingRead() throws Exception {
    Path overBytes = sparse("over-bytes.yaml", 4 * LIMIT + 1);
    Path overChars = sparse("over-chars.yaml", LIMIT + 1);
    writeOld("a.yaml", tap("a1"));
    long before = allocatedByThisThread();
    files.start(); // the first reading runs on this thread
    long allocated = allocatedByThisThread() - before;
    assertThat(allocated).as("bytes allocated by the first reading").isLessThan(64L << 20);
    assertThat(files.errors().get(overBytes))
        .contains("too large")
        .contains((4 * LIMIT + 1) + " bytes")
        .contains(String.valueOf(LIMIT));
    assertThat(files.errors().get(overChars))
        .contains("too large")
        .contains("more than " + LIMIT + " characters");
    assertThat(agent.northbound().desired()).containsKey(key("a1"));
  }

  @Test
  @DisplayName(
      "a file whose read throws (an OutOfMemoryError, a runtime exception) is reported with"
          + " its cause, and the watcher goes on: a later file applies")
  void aFileWhoseReadThrowsDoesNotStopTheWatcher() throws Exception {
    files.readWith(
        p -> {
          String n = p.getFileName().toString();
          if (n.equals("oom.yaml")) {
            throw new OutOfMemoryError("Required array size too large");
          }
          if (n.equals("npe.yaml")) {
            throw new IllegalStateException("reading failed");
          }
          return ConfigFiles.readBounded(p);
        });
    files.start();
    Path oom = dir.resolve("oom.yaml");
    writeOld("oom.yaml", tap("o1"));
    eventually()
        .untilAsserted(
            () ->
                assertThat(files.errors().get(oom))
                    .isNotNull()
                    .contains("OutOfMemoryError")
                    .contains("Required array size too large"));
    writeOld("npe.yaml", tap("n1"));
    eventually()
        .untilAsserted(
            () ->
                assertThat(files.errors().get(dir.resolve("npe.yaml")))
                    .isNotNull()
                    .contains("reading failed"));
    writeOld("b.yaml", tap("b1"));
    eventually()
        .untilAsserted(() -> assertThat(agent.northbound().desired()).containsKey(key("b1")));
    assertThat(agent.northbound().desired()).doesNotContainKeys(key("o1"), key("n1"));
  }
}
