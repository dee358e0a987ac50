package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.FileNorthbound;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ValueState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The file northbound with the mock plugins, on real files. */
class FileNorthboundTest {
  static final String TAP1 = "config/mock/v1/interfaces/tap1";
  static final String TAP2 = "config/mock/v1/interfaces/tap2";
  static final String LOOP1 = "config/mock/v1/interfaces/loop1";
  static final String BD1 = "config/mock/v1/bridge-domain/bd1";
  static final String BD1_TAP2 = "mock/bd/bd1/interface/tap2";
  static final String FIB_TAP1 = "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:10";
  static final String FIB_TAP2 = "config/mock/v1/fib/bd1/mac/aa:bb:cc:00:00:20";

  static final String INTERFACES = """
      config/mock/v1/interfaces/tap1:
        name: tap1
        type: TAP
        enabled: true
        phys_address: "aa:bb:cc:00:00:01"
      config/mock/v1/interfaces/loop1:
        name: loop1
        type: LOOPBACK
      """;

  /** §2.6 format: bd1 with tap1 and tap2 (missing), FIB entries to both. */
  static final String L2 = """
      mockConfig:
        BridgeDomain_list:
        - name: bd1
          interfaces:
          - name: tap1
          - name: tap2
        FIBEntry_list:
        - physAddress: "aa:bb:cc:00:00:10"
          bridgeDomain: bd1
          outgoingInterface: tap1
        - physAddress: "aa:bb:cc:00:00:20"
          bridgeDomain: bd1
          outgoingInterface: tap2
      """;

  @TempDir Path dir;
  Agent agent;

  @AfterEach
  void close() {
    if (agent != null) {
      agent.close();
    }
  }

  static ConditionFactory eventually() {
    return await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50));
  }

  Agent start() throws Exception {
    agent = Agent.start(new AgentConfig("vpp1", dir, null, List.of(), false, false));
    return agent;
  }

  FileNorthbound fileNb() {
    return agent.sources().stream().filter(FileNorthbound.class::isInstance)
        .map(FileNorthbound.class::cast).findFirst().orElseThrow();
  }

  ValueState state(String key) {
    return agent.scheduler().valueStatus(key).state();
  }

  ValueState derivedState(String base, String derived) {
    return agent.scheduler().valueStatus(base).derivedStatus(derived).orElseThrow().state();
  }

  /** Writes a file the way editors do: a hidden temporary file moved over the target. */
  void write(String name, String content) throws IOException {
    Path tmp = dir.resolve("." + name + ".tmp");
    Files.writeString(tmp, content);
    Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  Map<String, Object> desired() {
    return agent.northbound().desired();
  }

  @Test
  void startResyncsEveryFile() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("l2.yml", L2);
    write("notes.txt", "not a config file");
    start();

    // start() waits for the resync
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1, BD1, FIB_TAP1, FIB_TAP2);
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(LOOP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(derivedState(BD1, BD1_TAP2)).isEqualTo(ValueState.PENDING);
    assertThat(state(FIB_TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(FIB_TAP2)).isEqualTo(ValueState.PENDING);
    assertThat(fileNb().errors()).isEmpty();

    List<RecordedTxn> history = agent.scheduler().transactionHistory();
    assertThat(history).hasSize(1);
    assertThat(history.get(0).description()).isEqualTo("resync from file");
  }

  @Test
  void liveEditIsOneChange() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("l2.yaml", L2);
    start();
    assertThat(state(FIB_TAP2)).isEqualTo(ValueState.PENDING);

    // add tap2, disable tap1, drop loop1: one change of three values
    write("interfaces.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
          phys_address: "aa:bb:cc:00:00:01"
        config/mock/v1/interfaces/tap2:
          name: tap2
          type: TAP
          enabled: true
        """);
    eventually().untilAsserted(() -> {
      assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
      assertThat(derivedState(BD1, BD1_TAP2)).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(FIB_TAP2)).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(LOOP1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
    });
    assertThat(desired()).containsOnlyKeys(TAP1, TAP2, BD1, FIB_TAP1, FIB_TAP2);
    assertThat(desired().get(TAP1).toString()).doesNotContain("enabled");

    List<RecordedTxn> changes = agent.scheduler().transactionHistory().stream()
        .filter(t -> t.description().equals("change from file")).toList();
    assertThat(changes).hasSize(1);
    assertThat(changes.get(0).values()).extracting(RecordedTxn.RecordedValue::key)
        .containsExactlyInAnyOrder(TAP1, TAP2, LOOP1);
    assertThat(fileNb().errors()).isEmpty();
  }

  @Test
  void newFileApplies() throws Exception {
    write("l2.yaml", L2);
    start();
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(derivedState(BD1, "mock/bd/bd1/interface/tap1")).isEqualTo(ValueState.PENDING);

    Files.writeString(dir.resolve("tap.json"), """
        {
          "config/mock/v1/interfaces/tap1": {"name": "tap1", "type": "TAP", "enabled": true}
        }
        """);
    eventually().untilAsserted(() -> {
      assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(FIB_TAP1)).isEqualTo(ValueState.CONFIGURED);
    });
  }

  @Test
  void badFileIsSkippedAndKeepsItsPreviousValues() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("l2.yaml", L2);
    start();
    Object tap1Before = desired().get(TAP1);
    Path file = dir.resolve("interfaces.yaml");

    // malformed YAML, reported with file and line; nothing changes
    write("interfaces.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
         enabled true
        config/mock/v1/interfaces/tap2:
          name: tap2
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors()).containsKey(file));
    assertThat(fileNb().errors().get(file)).startsWith(file + ":4: malformed YAML");
    assertThat(desired()).containsKeys(TAP1, LOOP1).doesNotContainKey(TAP2);
    assertThat(desired().get(TAP1)).isEqualTo(tap1Before);
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(LOOP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);

    // unknown field, on line 6
    write("interfaces.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        config/mock/v1/interfaces/tap2:
          name: tap2
          speed: 100
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file))
        .contains("unknown field 'speed'"));
    assertThat(fileNb().errors().get(file)).startsWith(file + ":6: " + TAP2);
    assertThat(desired()).containsKeys(TAP1, LOOP1).doesNotContainKey(TAP2);

    // key of no model
    write("interfaces.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        config/mock/v9/tunnels/t1:
          name: t1
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file))
        .contains("config/mock/v9/tunnels/t1: no registered model has this key"));

    // key / value mismatch
    write("interfaces.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap3
          type: TAP
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file))
        .contains("key does not match").contains("config/mock/v1/interfaces/tap3"));
    assertThat(desired().get(TAP1)).isEqualTo(tap1Before);
    assertThat(desired()).containsKeys(LOOP1, BD1, FIB_TAP1, FIB_TAP2);
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.scheduler().transactionHistory()).hasSize(1);

    // fixed: applies, the error is gone
    write("interfaces.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        config/mock/v1/interfaces/tap2:
          name: tap2
          type: TAP
        """);
    eventually().untilAsserted(() -> {
      assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(FIB_TAP2)).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(LOOP1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
    });
    assertThat(fileNb().errors()).isEmpty();
  }

  @Test
  void badFileAtStartDoesNotStopTheOthers() throws Exception {
    write("interfaces.yaml", INTERFACES);
    Files.writeString(dir.resolve("broken.json"), "{\n  \"config/mock/v1/interfaces/tap2\": {\n"
        + "    \"name\": \"tap2\",,\n  }\n}\n");
    start();
    Path broken = dir.resolve("broken.json");
    assertThat(fileNb().errors()).containsOnlyKeys(broken);
    assertThat(fileNb().errors().get(broken)).startsWith(broken + ":3: malformed JSON");
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);

    Files.writeString(broken, "{\"config/mock/v1/interfaces/tap2\": {\"name\": \"tap2\","
        + " \"type\": \"TAP\"}}");
    eventually().untilAsserted(() -> assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED));
    assertThat(fileNb().errors()).isEmpty();
  }

  @Test
  void deletedFileDeletesItsValues() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("l2.yaml", L2);
    start();
    assertThat(state(FIB_TAP1)).isEqualTo(ValueState.CONFIGURED);

    Files.delete(dir.resolve("l2.yaml"));
    eventually().untilAsserted(() -> {
      assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
      assertThat(state(BD1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
      assertThat(state(FIB_TAP1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
      assertThat(state(FIB_TAP2)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
    });
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    List<RecordedTxn> changes = agent.scheduler().transactionHistory().stream()
        .filter(t -> t.description().equals("change from file")).toList();
    assertThat(changes).hasSize(1);
    assertThat(changes.get(0).values()).allMatch(v -> v.value().isEmpty()).hasSize(3);
  }

  @Test
  void yamlConfigFormatFile() throws Exception {
    write("all.yaml", """
        mockConfig:
          Interface_list:
          - name: tap1
            type: TAP
            enabled: true
            physAddress: "aa:bb:cc:00:00:01"
          - name: tap2
            type: 2
            phys_address: "aa:bb:cc:00:00:02"
          BridgeDomain_list:
          - name: bd1
            interfaces:
            - name: tap1
              bridged_virtual_interface: true
          FIBEntry_list: []
        """);
    start();
    assertThat(desired()).containsOnlyKeys(TAP1, TAP2, BD1);
    assertThat(desired().get(TAP2).toString()).contains("type:TAP")
        .contains("phys_address:\"aa:bb:cc:00:00:02\"");
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);

    // errors name the group, field, item and line
    Path file = dir.resolve("all.yaml");
    write("all.yaml", """
        mockConfig:
          Interface_list:
          - name: tap1
            type: TAP
          - name: tap2
            type: TUNNEL
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file)).isEqualTo(
        file + ":6: mockConfig.Interface_list[1]: invalid value TUNNEL for field 'type' of"
            + " mock.interfaces.Interface"));
    write("all.yaml", """
        mockConfig:
          Interfaces:
          - name: tap1
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file))
        .contains(":2: unknown field 'Interfaces' in group mockConfig (known fields:"
            + " Interface_list, BridgeDomain_list, FIBEntry_list)"));
    write("all.yaml", """
        vppConfig:
          interfaces:
          - name: tap1
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file))
        .contains(":1: unknown group 'vppConfig' (known groups: mockConfig)"));
    write("all.yaml", """
        mockConfig:
          Interface_list:
          - name: tap1
            type: TAP
          - name: tap1
            type: LOOPBACK
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(file))
        .contains(":5: mockConfig.Interface_list[1]: key " + TAP1
            + " is also given by mockConfig.Interface_list[0] on line 3"));
    assertThat(desired()).containsOnlyKeys(TAP1, TAP2, BD1);
    assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void sameKeyInTwoFiles() throws Exception {
    write("a.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        """);
    write("b.yaml", """
        mockConfig:
          Interface_list:
          - name: tap2
            type: TAP
          - name: tap1
            type: LOOPBACK
        """);
    start();
    Path b = dir.resolve("b.yaml");
    // the file read first keeps the key; the other is skipped as a whole
    assertThat(fileNb().errors()).containsOnlyKeys(b);
    assertThat(fileNb().errors().get(b)).contains("key " + TAP1 + " is already given by file"
        + " a.yaml");
    assertThat(desired()).containsOnlyKeys(TAP1);
    assertThat(desired().get(TAP1).toString()).contains("type:TAP");

    // a new file taking a key of a.yaml is skipped too
    write("c.yaml", """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: LOOPBACK
        config/mock/v1/interfaces/loop1:
          name: loop1
          type: LOOPBACK
        """);
    eventually().untilAsserted(() -> assertThat(fileNb().errors())
        .containsKey(dir.resolve("c.yaml")));
    assertThat(desired()).containsOnlyKeys(TAP1);

    // once a.yaml lets the key go, b.yaml (first by name) takes it
    Files.delete(dir.resolve("a.yaml"));
    eventually().untilAsserted(() -> {
      assertThat(desired()).containsKeys(TAP1, TAP2).doesNotContainKey(LOOP1);
      assertThat(desired().get(TAP1).toString()).contains("type:LOOPBACK");
      assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
      // c.yaml is re-examined right after b.yaml took the key (same rescan, possibly later
      // than the transaction that applied b.yaml): now blocked by b.yaml
      assertThat(fileNb().errors()).containsOnlyKeys(dir.resolve("c.yaml"));
      assertThat(fileNb().errors().get(dir.resolve("c.yaml"))).contains("b.yaml");
    });
  }

  @Test
  void emptyDirectoryAndEmptyFile() throws Exception {
    start();
    assertThat(desired()).isEmpty();
    Files.writeString(dir.resolve("empty.yaml"), "");
    write("one.yaml", "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    eventually().untilAsserted(() -> assertThat(state(LOOP1)).isEqualTo(ValueState.CONFIGURED));
    assertThat(fileNb().errors()).isEmpty();
  }

  @Test
  void missingDirectoryFailsTheStart() {
    Path missing = dir.resolve("nope");
    org.assertj.core.api.Assertions.assertThatThrownBy(() ->
            Agent.start(new AgentConfig("vpp1", missing, null, List.of(), false, false)))
        .hasMessageContaining(missing.toString()).hasMessageContaining("not a directory");
  }

  @Test
  @DisplayName("a file over 3 Mi code points (SnakeYAML's default limit) applies")
  void fileOverThreeMegabytesApplies() throws Exception {
    // comments first: SnakeYAML checks its limit before each token, not after a last comment
    StringBuilder big = new StringBuilder();
    while (big.length() < 4 * 1024 * 1024) {
      big.append("# ").append("x".repeat(77)).append('\n');
    }
    write("interfaces.yaml", big.append(INTERFACES).toString());
    start();
    assertThat(fileNb().errors()).isEmpty();
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
  }

  @Test
  @DisplayName("a bad file at start is logged as skipped with none of its values applied; a file"
      + " that held values keeps them")
  void badFileLogSaysWhatStaysApplied() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("broken.yaml", "config/mock/v1/interfaces/tap2:\n  name: tap2\n  speed: 1\n");
    Path broken = dir.resolve("broken.yaml");
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      start();
      assertThat(log.messages()).filteredOn(m -> m.contains("broken.yaml")).singleElement()
          .satisfies(m -> assertThat(m)
              .startsWith("file northbound: " + broken + ":3: " + TAP2 + ": unknown field 'speed'")
              .endsWith("(file skipped, none of its values are applied)"));

      write("interfaces.yaml", INTERFACES + "  speed: 1\n");
      eventually().untilAsserted(() -> assertThat(log.messages())
          .anyMatch(m -> m.contains("interfaces.yaml:")
              && m.endsWith("(file skipped, the values it held before stay applied)")));
    }
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
  }

  @Test
  @DisplayName("a key already given by another file is reported with its line in the skipped file"
      + " and in the other file")
  void duplicateKeyAcrossFilesNamesBothLines() throws Exception {
    write("a.yaml", """
        config/mock/v1/interfaces/loop1:
          name: loop1
          type: LOOPBACK
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        """);
    write("b.yaml", """
        mockConfig:
          Interface_list:
          - name: tap2
            type: TAP
          - name: tap1
            type: LOOPBACK
        """);
    start();
    Path b = dir.resolve("b.yaml");
    assertThat(fileNb().errors()).containsOnlyKeys(b);
    assertThat(fileNb().errors().get(b)).isEqualTo(
        b + ":5: key " + TAP1 + " is already given by file a.yaml on line 4");

    // a keyed file too: its line is the key's
    write("c.yaml", "# c\nconfig/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    Path c = dir.resolve("c.yaml");
    eventually().untilAsserted(() -> assertThat(fileNb().errors().get(c)).isEqualTo(
        c + ":2: key " + LOOP1 + " is already given by file a.yaml on line 1"));
  }

  @Test
  @DisplayName("once closed, the file northbound delivers no change it read before; closing"
      + " waits for a delivery under way")
  void closedFileNorthboundDeliversNothingMore() throws Exception {
    write("a.yaml", "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
    List<Map<String, Object>> delivered =
        java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    io.kvscheduler.agent.spi.Northbound slow = new io.kvscheduler.agent.spi.Northbound() {
      @Override
      public java.util.concurrent.CompletableFuture<Long> resync(String source,
          Map<String, Object> values) {
        return java.util.concurrent.CompletableFuture.completedFuture(1L);
      }

      @Override
      public java.util.concurrent.CompletableFuture<Long> change(String source,
          Map<String, Object> changes) {
        delivered.add(changes);
        if (delivered.size() == 1) {
          boolean interrupted = false;
          while (true) { // the first delivery is slow, and not cut short by close()
            try {
              release.await();
              break;
            } catch (InterruptedException e) {
              interrupted = true;
            }
          }
          if (interrupted) {
            Thread.currentThread().interrupt();
          }
        }
        return java.util.concurrent.CompletableFuture.completedFuture(2L);
      }

      @Override
      public Map<String, Object> desired() {
        return Map.of();
      }
    };
    // the mock models, from an agent without a file northbound of its own
    agent = Agent.start(new AgentConfig("vpp1", null, null, List.of(), false, false));
    FileNorthbound nb = new FileNorthbound(dir, agent.models(), slow, Duration.ofMillis(50),
        Duration.ofMillis(200));
    nb.start();
    try {
      // two files changed in one scan (modified long enough ago not to be left for later)
      java.nio.file.attribute.FileTime old = java.nio.file.attribute.FileTime.from(
          java.time.Instant.now().minusSeconds(60));
      for (String name : List.of("a.yaml", "b.yaml")) {
        Path tmp = dir.resolve("." + name + ".tmp");
        Files.writeString(tmp, "config/mock/v1/interfaces/" + name.charAt(0)
            + "1: {name: " + name.charAt(0) + "1, type: TAP}\n");
        Files.setLastModifiedTime(tmp, old);
        Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      }
      eventually().until(() -> delivered.size() == 1);
      Thread closing = new Thread(nb::close);
      closing.start();
      eventually().until(() -> closing.getState() != Thread.State.RUNNABLE
          && closing.getState() != Thread.State.NEW);
      release.countDown();
      closing.join(10_000);
      assertThat(closing.isAlive()).isFalse();
      Thread.sleep(300);
      assertThat(delivered).hasSize(1);
    } finally {
      release.countDown();
      nb.close();
    }
  }

  @Test
  @DisplayName("closing the agent logs one line when stopping starts and one when it stopped")
  void closeLogsStoppingAndStopped() throws Exception {
    start();
    try (LogCapture log = new LogCapture(Agent.class)) {
      agent.close();
      assertThat(log.messages()).containsExactly(
          "agent 'vpp1' stopping: northbound [file] first, then plugins and the scheduler",
          "agent 'vpp1' stopped");
    }
  }
}
