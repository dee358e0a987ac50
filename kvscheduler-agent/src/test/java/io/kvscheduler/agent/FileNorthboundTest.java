package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.northbound.FileNorthbound;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ValueState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.assertj.core.api.Assertions;
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

  static final String INTERFACES =
      """
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
  static final String L2 =
      """
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

  /**
   * How long removals settle in these tests: shorter than the default, which {@code
   * FileNorthboundSettleTest} tests on a manual clock.
   */
  static final Duration SETTLE = Duration.ofMillis(300);

  /** An agent on {@code dir}; removals settle for {@link #SETTLE}. */
  Agent start() throws Exception {
    agent =
        Agent.start(
            AgentConfig.builder()
                .configDir(dir)
                .restAddress(null)
                .printTxnSummary(false)
                .fileSettleTime(SETTLE)
                .build());
    return agent;
  }

  FileNorthbound fileNb() {
    return agent.sources().stream()
        .filter(FileNorthbound.class::isInstance)
        .map(FileNorthbound.class::cast)
        .findFirst()
        .orElseThrow();
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
    Files.move(
        tmp,
        dir.resolve(name),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  Map<String, Object> desired() {
    return agent.northbound().desired();
  }

  /** The transactions of the file northbound's changes, in order. */
  List<RecordedTxn> changes() {
    return agent.scheduler().transactionHistory().stream()
        .filter(t -> t.description().equals("change from file"))
        .toList();
  }

  /** The operations of all changes on {@code key} (southbound calls and pending ones). */
  List<RecordedTxnOp> changeOps(String key) {
    return changes().stream()
        .flatMap(t -> t.executed().stream())
        .filter(op -> op.key().equals(key))
        .toList();
  }

  /**
   * Writes a file as {@link #write} does, modified a minute ago: the file northbound applies it at
   * its next scan, without waiting for it to settle.
   */
  void writeOld(String name, String content) throws IOException {
    Path tmp = dir.resolve("." + name + ".tmp");
    Files.writeString(tmp, content);
    Files.setLastModifiedTime(tmp, FileTime.from(Instant.now().minusSeconds(60)));
    Files.move(
        tmp,
        dir.resolve(name),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * A northbound passing everything to another and recording the changes; while {@link #hold} is in
   * force, a change waits before it is passed on, and with it the watcher thread of the file
   * northbound delivering it: files written meanwhile are seen together by its next scan.
   */
  static final class Gate implements Northbound {
    final Northbound target;
    final List<Map<String, Object>> changes = Collections.synchronizedList(new ArrayList<>());
    final Semaphore entered = new Semaphore(0);
    volatile CountDownLatch open = new CountDownLatch(0);

    Gate(Northbound target) {
      this.target = target;
    }

    /** Makes the next changes wait until {@link #release}. */
    void hold() {
      open = new CountDownLatch(1);
    }

    void release() {
      open.countDown();
    }

    @Override
    public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
      return target.resync(source, values);
    }

    @Override
    public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
      this.changes.add(new HashMap<>(changes));
      entered.release();
      try {
        open.await(15, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return target.change(source, changes);
    }

    @Override
    public Map<String, Object> desired() {
      return target.desired();
    }
  }

  /**
   * Starts an agent without a file northbound of its own and a file northbound on {@link #dir}
   * delivering to it through {@code gate}.
   */
  FileNorthbound startGated(Function<Northbound, Gate> gate) throws Exception {
    agent = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    FileNorthbound nb =
        new FileNorthbound(
            dir,
            agent.models(),
            gate.apply(agent.northbound()),
            Duration.ofMillis(50),
            Duration.ofMillis(200),
            SETTLE,
            Clock.systemUTC());
    nb.start();
    return nb;
  }

  /**
   * Runs {@code writes} while the file northbound is held in the delivery of a change (of file
   * {@code trigger.yaml}, written first), so that its next scan sees all the files written.
   */
  static void inOneScan(Gate gate, Path dir, IoAction writes) throws Exception {
    gate.hold();
    Files.writeString(
        dir.resolve("trigger.yaml"), "config/mock/v1/bridge-domain/bd1: {name: bd1}\n");
    assertThat(gate.entered.tryAcquire(15, TimeUnit.SECONDS)).isTrue();
    try {
      writes.run();
    } finally {
      gate.release();
    }
  }

  /** File writing that may fail. */
  interface IoAction {
    void run() throws IOException;
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
    write(
        "interfaces.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
          phys_address: "aa:bb:cc:00:00:01"
        config/mock/v1/interfaces/tap2:
          name: tap2
          type: TAP
          enabled: true
        """);
    eventually()
        .untilAsserted(
            () -> {
              assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
              assertThat(derivedState(BD1, BD1_TAP2)).isEqualTo(ValueState.CONFIGURED);
              assertThat(state(FIB_TAP2)).isEqualTo(ValueState.CONFIGURED);
              assertThat(state(LOOP1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
            });
    assertThat(desired()).containsOnlyKeys(TAP1, TAP2, BD1, FIB_TAP1, FIB_TAP2);
    assertThat(desired().get(TAP1).toString()).doesNotContain("enabled");

    List<RecordedTxn> changes =
        agent.scheduler().transactionHistory().stream()
            .filter(t -> t.description().equals("change from file"))
            .toList();
    assertThat(changes).hasSize(1);
    assertThat(changes.get(0).values())
        .extracting(RecordedTxn.RecordedValue::key)
        .containsExactlyInAnyOrder(TAP1, TAP2, LOOP1);
    assertThat(fileNb().errors()).isEmpty();
  }

  @Test
  void newFileApplies() throws Exception {
    write("l2.yaml", L2);
    start();
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(derivedState(BD1, "mock/bd/bd1/interface/tap1")).isEqualTo(ValueState.PENDING);

    Files.writeString(
        dir.resolve("tap.json"),
        """
        {
          "config/mock/v1/interfaces/tap1": {"name": "tap1", "type": "TAP", "enabled": true}
        }
        """);
    eventually()
        .untilAsserted(
            () -> {
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
    write(
        "interfaces.yaml",
        """
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
    write(
        "interfaces.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        config/mock/v1/interfaces/tap2:
          name: tap2
          speed: 100
        """);
    eventually()
        .untilAsserted(
            () -> assertThat(fileNb().errors().get(file)).contains("unknown field 'speed'"));
    assertThat(fileNb().errors().get(file)).startsWith(file + ":6: " + TAP2);
    assertThat(desired()).containsKeys(TAP1, LOOP1).doesNotContainKey(TAP2);

    // key of no model
    write(
        "interfaces.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        config/mock/v9/tunnels/t1:
          name: t1
        """);
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(file))
                    .contains("config/mock/v9/tunnels/t1: no registered model has this key"));

    // key / value mismatch
    write(
        "interfaces.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap3
          type: TAP
        """);
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(file))
                    .contains("key does not match")
                    .contains("config/mock/v1/interfaces/tap3"));
    assertThat(desired().get(TAP1)).isEqualTo(tap1Before);
    assertThat(desired()).containsKeys(LOOP1, BD1, FIB_TAP1, FIB_TAP2);
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(agent.scheduler().transactionHistory()).hasSize(1);

    // fixed: applies, the error is gone
    write(
        "interfaces.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        config/mock/v1/interfaces/tap2:
          name: tap2
          type: TAP
        """);
    eventually()
        .untilAsserted(
            () -> {
              assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
              assertThat(state(FIB_TAP2)).isEqualTo(ValueState.CONFIGURED);
              assertThat(state(LOOP1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
            });
    assertThat(fileNb().errors()).isEmpty();
  }

  @Test
  void badFileAtStartDoesNotStopTheOthers() throws Exception {
    write("interfaces.yaml", INTERFACES);
    Files.writeString(
        dir.resolve("broken.json"),
        "{\n  \"config/mock/v1/interfaces/tap2\": {\n" + "    \"name\": \"tap2\",,\n  }\n}\n");
    start();
    Path broken = dir.resolve("broken.json");
    assertThat(fileNb().errors()).containsOnlyKeys(broken);
    assertThat(fileNb().errors().get(broken)).startsWith(broken + ":3: malformed JSON");
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);

    Files.writeString(
        broken,
        "{\"config/mock/v1/interfaces/tap2\": {\"name\": \"tap2\"," + " \"type\": \"TAP\"}}");
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
    eventually()
        .untilAsserted(
            () -> {
              assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
              assertThat(state(BD1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
              assertThat(state(FIB_TAP1)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
              assertThat(state(FIB_TAP2)).isIn(ValueState.NONEXISTENT, ValueState.REMOVED);
            });
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    List<RecordedTxn> changes =
        agent.scheduler().transactionHistory().stream()
            .filter(t -> t.description().equals("change from file"))
            .toList();
    assertThat(changes).hasSize(1);
    assertThat(changes.get(0).values()).allMatch(v -> v.value().isEmpty()).hasSize(3);
  }

  @Test
  void yamlConfigFormatFile() throws Exception {
    write(
        "all.yaml",
        """
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
    assertThat(desired().get(TAP2).toString())
        .contains("type:TAP")
        .contains("phys_address:\"aa:bb:cc:00:00:02\"");
    assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);

    // errors name the group, field, item and line
    Path file = dir.resolve("all.yaml");
    write(
        "all.yaml",
        """
        mockConfig:
          Interface_list:
          - name: tap1
            type: TAP
          - name: tap2
            type: TUNNEL
        """);
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(file))
                    .isEqualTo(
                        file
                            + ":6: mockConfig.Interface_list[1]: invalid value TUNNEL for field 'type' of"
                            + " mock.interfaces.Interface"));
    write(
        "all.yaml",
        """
        mockConfig:
          Interfaces:
          - name: tap1
        """);
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(file))
                    .contains(
                        ":2: unknown field 'Interfaces' in group mockConfig (known fields:"
                            + " Interface_list, BridgeDomain_list, FIBEntry_list)"));
    write(
        "all.yaml",
        """
        vppConfig:
          interfaces:
          - name: tap1
        """);
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(file))
                    .contains(":1: unknown group 'vppConfig' (known groups: mockConfig)"));
    write(
        "all.yaml",
        """
        mockConfig:
          Interface_list:
          - name: tap1
            type: TAP
          - name: tap1
            type: LOOPBACK
        """);
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(file))
                    .contains(
                        ":5: mockConfig.Interface_list[1]: key "
                            + TAP1
                            + " is also given by mockConfig.Interface_list[0] on line 3"));
    assertThat(desired()).containsOnlyKeys(TAP1, TAP2, BD1);
    assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
  }

  @Test
  void sameKeyInTwoFiles() throws Exception {
    write(
        "a.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        """);
    write(
        "b.yaml",
        """
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
    assertThat(fileNb().errors().get(b))
        .contains("key " + TAP1 + " is already given by file" + " a.yaml");
    assertThat(desired()).containsOnlyKeys(TAP1);
    assertThat(desired().get(TAP1).toString()).contains("type:TAP");

    // a new file taking a key of a.yaml is skipped too
    write(
        "c.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: LOOPBACK
        config/mock/v1/interfaces/loop1:
          name: loop1
          type: LOOPBACK
        """);
    eventually()
        .untilAsserted(() -> assertThat(fileNb().errors()).containsKey(dir.resolve("c.yaml")));
    assertThat(desired()).containsOnlyKeys(TAP1);

    // once a.yaml lets the key go, b.yaml (first by name) takes it
    Files.delete(dir.resolve("a.yaml"));
    eventually()
        .untilAsserted(
            () -> {
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
  @DisplayName(
      "renaming a file is no change: its values are neither deleted nor created again,"
          + " and belong to the file under its new name")
  void renamedFileIsNoChange() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("l2.yaml", L2);
    start();
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      Files.move(
          dir.resolve("l2.yaml"), dir.resolve("l2-renamed.yaml"), StandardCopyOption.ATOMIC_MOVE);
      eventually()
          .untilAsserted(
              () -> assertThat(log.messages()).contains("file northbound: l2.yaml removed"));
    }
    // a later change: had the rename's scan delivered anything, it would come before this one
    write(
        "interfaces.yaml",
        INTERFACES + "config/mock/v1/interfaces/tap2: {name: tap2, type: TAP}\n");
    eventually().untilAsserted(() -> assertThat(state(FIB_TAP2)).isEqualTo(ValueState.CONFIGURED));
    assertThat(changes())
        .singleElement()
        .satisfies(
            t ->
                assertThat(t.values())
                    .extracting(RecordedTxn.RecordedValue::key)
                    .containsExactly(TAP2));
    assertThat(changeOps(BD1)).isEmpty();
    assertThat(changeOps(FIB_TAP1)).isEmpty();
    assertThat(state(BD1)).isEqualTo(ValueState.CONFIGURED);
    assertThat(fileNb().errors()).isEmpty();

    // the renamed file holds the values now
    Files.delete(dir.resolve("l2-renamed.yaml"));
    eventually().untilAsserted(() -> assertThat(desired()).containsOnlyKeys(TAP1, TAP2, LOOP1));
  }

  @Test
  @DisplayName(
      "a key moved to another file with the same value in one scan is no change, reports"
          + " no duplicate, and belongs to the file it moved to")
  void keyMovedBetweenFilesWithTheSameValueIsNoChange() throws Exception {
    String tap1 = "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP, enabled: true}\n";
    String tap2 = "config/mock/v1/interfaces/tap2: {name: tap2, type: TAP}\n";
    String loop1 = "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n";
    writeOld("a.yaml", tap2);
    writeOld("b.yaml", tap1 + loop1);
    Gate gate;
    FileNorthbound nb;
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      Gate[] made = new Gate[1];
      nb = startGated(t -> made[0] = new Gate(t));
      gate = made[0];
      try {
        // tap1 moves to a.yaml (read first: it is examined while b.yaml still holds tap1), tap2
        // is enabled so that the scan has something to deliver
        inOneScan(
            gate,
            dir,
            () -> {
              writeOld("a.yaml", tap1 + tap2.replace("}", ", enabled: true}"));
              writeOld("b.yaml", loop1);
            });
        eventually().until(() -> gate.changes.size() == 2);
        assertThat(gate.changes.get(1)).containsOnlyKeys(TAP2);
        assertThat(nb.errors()).isEmpty();
        assertThat(log.messages()).noneMatch(m -> m.contains("already given"));
        eventually()
            .untilAsserted(() -> assertThat(desired().get(TAP2).toString()).contains("enabled"));
        assertThat(changeOps(TAP1)).isEmpty();
        assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);

        // a.yaml holds tap1 now: removing b.yaml leaves it
        Files.delete(dir.resolve("b.yaml"));
        eventually().until(() -> gate.changes.size() == 3);
        assertThat(gate.changes.get(2)).containsOnlyKeys(LOOP1).containsEntry(LOOP1, null);
        Files.delete(dir.resolve("a.yaml"));
        eventually().until(() -> gate.changes.size() == 4);
        assertThat(gate.changes.get(3)).containsOnlyKeys(TAP1, TAP2);
      } finally {
        nb.close();
      }
    }
  }

  @Test
  @DisplayName(
      "a key moved to another file with another value in one scan is one update, not a"
          + " delete and a create")
  void keyMovedBetweenFilesWithAnotherValueIsAnUpdate() throws Exception {
    writeOld(
        "a.yaml",
        "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP}\n"
            + "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    writeOld("b.yaml", "config/mock/v1/interfaces/tap2: {name: tap2, type: TAP}\n");
    Gate[] made = new Gate[1];
    FileNorthbound nb = startGated(t -> made[0] = new Gate(t));
    Gate gate = made[0];
    try {
      inOneScan(
          gate,
          dir,
          () -> {
            writeOld("a.yaml", "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
            writeOld(
                "b.yaml",
                "config/mock/v1/interfaces/tap2: {name: tap2, type: TAP}\n"
                    + "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP, enabled: true}\n");
          });
      eventually().until(() -> gate.changes.size() == 2);
      assertThat(gate.changes.get(1)).containsOnlyKeys(TAP1);
      assertThat(gate.changes.get(1).get(TAP1))
          .as("value of tap1")
          .isNotNull()
          .asString()
          .contains("enabled");
      assertThat(nb.errors()).isEmpty();
      eventually().untilAsserted(() -> assertThat(changes()).hasSize(2));
      assertThat(changes().get(1).values())
          .singleElement()
          .satisfies(v -> assertThat(v.value()).isPresent());
      assertThat(state(TAP1)).isEqualTo(ValueState.CONFIGURED);

      // b.yaml holds tap1 now
      Files.delete(dir.resolve("b.yaml"));
      eventually().untilAsserted(() -> assertThat(desired()).containsOnlyKeys(LOOP1, BD1));
    } finally {
      nb.close();
    }
  }

  @Test
  @DisplayName(
      "two files that exchange their keys in one scan both apply: one update per key,"
          + " no file blocked by the other's previous values")
  void filesExchangingKeysInOneScanBothApply() throws Exception {
    writeOld("a.yaml", "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP}\n");
    writeOld("b.yaml", "config/mock/v1/interfaces/tap2: {name: tap2, type: TAP}\n");
    Gate[] made = new Gate[1];
    FileNorthbound nb = startGated(t -> made[0] = new Gate(t));
    Gate gate = made[0];
    try {
      inOneScan(
          gate,
          dir,
          () -> {
            writeOld(
                "a.yaml",
                "config/mock/v1/interfaces/tap2: {name: tap2, type: TAP," + " enabled: true}\n");
            writeOld(
                "b.yaml",
                "config/mock/v1/interfaces/tap1: {name: tap1, type: TAP," + " enabled: true}\n");
          });
      eventually().until(() -> gate.changes.size() == 2);
      assertThat(gate.changes.get(1)).containsOnlyKeys(TAP1, TAP2);
      assertThat(gate.changes.get(1).values())
          .allSatisfy(v -> assertThat(v).as("value").isNotNull().asString().contains("enabled"));
      assertThat(nb.errors()).isEmpty();

      // b.yaml holds tap1 now, a.yaml tap2
      Files.delete(dir.resolve("b.yaml"));
      eventually().untilAsserted(() -> assertThat(desired()).containsOnlyKeys(TAP2, BD1));
    } finally {
      nb.close();
    }
  }

  @Test
  @DisplayName(
      "a file blocked by a key another file drops takes the key over in the same"
          + " transaction, without a delete of the key")
  void blockedFileTakesOverADroppedKeyInOneTransaction() throws Exception {
    write(
        "a.yaml",
        """
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        """);
    write(
        "b.yaml",
        """
        config/mock/v1/interfaces/tap1: {name: tap1, type: LOOPBACK}
        config/mock/v1/interfaces/tap2: {name: tap2, type: TAP}
        """);
    start();
    assertThat(fileNb().errors()).containsOnlyKeys(dir.resolve("b.yaml"));

    write("a.yaml", "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    eventually()
        .untilAsserted(
            () -> {
              assertThat(state(TAP2)).isEqualTo(ValueState.CONFIGURED);
              assertThat(state(LOOP1)).isEqualTo(ValueState.CONFIGURED);
            });
    assertThat(fileNb().errors()).isEmpty();
    assertThat(desired().get(TAP1).toString()).contains("type:LOOPBACK");
    assertThat(changes())
        .singleElement()
        .satisfies(
            t ->
                assertThat(t.values())
                    .allMatch(v -> v.value().isPresent())
                    .extracting(RecordedTxn.RecordedValue::key)
                    .containsExactly(LOOP1, TAP1, TAP2));
  }

  @Test
  @DisplayName(
      "a key with the prefix of a model but an empty name is rejected for its empty name,"
          + " not as a key of no model")
  void keyWithAnEmptyNameIsCalledThat() throws Exception {
    write("empty-name.yaml", "# one\nconfig/mock/v1/interfaces/: {name: \"\", type: TAP}\n");
    start();
    Path file = dir.resolve("empty-name.yaml");
    assertThat(fileNb().errors()).containsOnlyKeys(file);
    assertThat(fileNb().errors().get(file))
        .isEqualTo(
            file
                + ":2: config/mock/v1/interfaces/: the"
                + " key has an empty name after the prefix config/mock/v1/interfaces/ of model"
                + " mock.interfaces");
  }

  @Test
  @DisplayName("a JSON file starting with a UTF-8 byte order mark applies, as a YAML file does")
  void jsonFileWithByteOrderMarkApplies() throws Exception {
    Files.write(
        dir.resolve("tap.json"),
        ("\uFEFF{\"config/mock/v1/interfaces/tap1\":"
                + " {\"name\": \"tap1\", \"type\": \"TAP\"}}\n")
            .getBytes(StandardCharsets.UTF_8));
    Files.write(
        dir.resolve("loop.yaml"),
        ("\uFEFFconfig/mock/v1/interfaces/loop1:" + " {name: loop1, type: LOOPBACK}\n")
            .getBytes(StandardCharsets.UTF_8));
    start();
    assertThat(fileNb().errors()).isEmpty();
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
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
    Assertions.assertThatThrownBy(
            () ->
                Agent.start(
                    AgentConfig.builder()
                        .configDir(missing)
                        .restAddress(null)
                        .printTxnSummary(false)
                        .build()))
        .hasMessageContaining(missing.toString())
        .hasMessageContaining("not a directory");
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
  @DisplayName(
      "a bad file at start is logged as skipped with none of its values applied; a file"
          + " that held values keeps them")
  void badFileLogSaysWhatStaysApplied() throws Exception {
    write("interfaces.yaml", INTERFACES);
    write("broken.yaml", "config/mock/v1/interfaces/tap2:\n  name: tap2\n  speed: 1\n");
    Path broken = dir.resolve("broken.yaml");
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      start();
      assertThat(log.messages())
          .filteredOn(m -> m.contains("broken.yaml"))
          .singleElement()
          .satisfies(
              m ->
                  assertThat(m)
                      .startsWith(
                          "file northbound: " + broken + ":3: " + TAP2 + ": unknown field 'speed'")
                      .endsWith("(file skipped, none of its values are applied)"));

      write("interfaces.yaml", INTERFACES + "  speed: 1\n");
      eventually()
          .untilAsserted(
              () ->
                  assertThat(log.messages())
                      .anyMatch(
                          m ->
                              m.contains("interfaces.yaml:")
                                  && m.endsWith(
                                      "(file skipped, the values it held before stay applied)")));
    }
    assertThat(desired()).containsOnlyKeys(TAP1, LOOP1);
  }

  @Test
  @DisplayName(
      "a key already given by another file is reported with its line in the skipped file"
          + " and in the other file")
  void duplicateKeyAcrossFilesNamesBothLines() throws Exception {
    write(
        "a.yaml",
        """
        config/mock/v1/interfaces/loop1:
          name: loop1
          type: LOOPBACK
        config/mock/v1/interfaces/tap1:
          name: tap1
          type: TAP
        """);
    write(
        "b.yaml",
        """
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
    assertThat(fileNb().errors().get(b))
        .isEqualTo(b + ":5: key " + TAP1 + " is already given by file a.yaml on line 4");

    // a keyed file too: its line is the key's
    write("c.yaml", "# c\nconfig/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    Path c = dir.resolve("c.yaml");
    eventually()
        .untilAsserted(
            () ->
                assertThat(fileNb().errors().get(c))
                    .isEqualTo(
                        c + ":2: key " + LOOP1 + " is already given by file a.yaml on line 1"));
  }

  @Test
  @DisplayName(
      "once closed, the file northbound delivers no change it read before; closing"
          + " waits for a delivery under way")
  void closedFileNorthboundDeliversNothingMore() throws Exception {
    write("a.yaml", "config/mock/v1/interfaces/loop1: {name: loop1, type: LOOPBACK}\n");
    CountDownLatch release = new CountDownLatch(1);
    List<Map<String, Object>> delivered = Collections.synchronizedList(new ArrayList<>());
    Northbound slow =
        new Northbound() {
          @Override
          public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
            return CompletableFuture.completedFuture(1L);
          }

          @Override
          public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
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
            return CompletableFuture.completedFuture(2L);
          }

          @Override
          public Map<String, Object> desired() {
            return Map.of();
          }
        };
    // the mock models, from an agent without a file northbound of its own
    agent = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    FileNorthbound nb =
        new FileNorthbound(
            dir, agent.models(), slow, Duration.ofMillis(50), Duration.ofMillis(200));
    nb.start();
    try {
      // a change under way (held in the northbound), and another file changed meanwhile
      writeOld("a.yaml", "config/mock/v1/interfaces/a1: {name: a1, type: TAP}\n");
      eventually().until(() -> delivered.size() == 1);
      writeOld("b.yaml", "config/mock/v1/interfaces/b1: {name: b1, type: TAP}\n");
      Thread closing = new Thread(nb::close);
      closing.start();
      eventually()
          .until(
              () ->
                  closing.getState() != Thread.State.RUNNABLE
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
  @DisplayName(
      "a scan that fails is logged naming the directory and the cause, and the watcher"
          + " goes on: a later change is delivered")
  void aFailedScanDoesNotStopTheWatcher() throws Exception {
    List<Map<String, Object>> delivered = Collections.synchronizedList(new ArrayList<>());
    Semaphore failures = new Semaphore(1);
    Northbound failingOnce =
        new Northbound() {
          @Override
          public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
            return CompletableFuture.completedFuture(1L);
          }

          @Override
          public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
            if (failures.tryAcquire()) {
              throw new IllegalStateException("northbound refused the change");
            }
            delivered.add(Map.copyOf(changes));
            return CompletableFuture.completedFuture(2L);
          }

          @Override
          public Map<String, Object> desired() {
            return Map.of();
          }
        };
    agent = Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build());
    FileNorthbound nb =
        new FileNorthbound(
            dir, agent.models(), failingOnce, Duration.ofMillis(50), Duration.ofMillis(200));
    try (LogCapture log = new LogCapture(FileNorthbound.class)) {
      nb.start();
      writeOld("a.yaml", "config/mock/v1/interfaces/a1: {name: a1, type: TAP}\n");
      eventually().until(() -> failures.availablePermits() == 0);
      eventually()
          .untilAsserted(
              () ->
                  assertThat(log.messages())
                      .anySatisfy(
                          m ->
                              assertThat(m)
                                  .contains("a scan of " + dir.toAbsolutePath().normalize())
                                  .contains("northbound refused the change")));
      writeOld("b.yaml", "config/mock/v1/interfaces/b1: {name: b1, type: TAP}\n");
      eventually()
          .untilAsserted(
              () ->
                  assertThat(delivered)
                      .anySatisfy(c -> assertThat(c).containsKey("config/mock/v1/interfaces/b1")));
    } finally {
      nb.close();
    }
  }

  @Test
  @DisplayName("closing the agent logs one line when stopping starts and one when it stopped")
  void closeLogsStoppingAndStopped() throws Exception {
    start();
    try (LogCapture log = new LogCapture(Agent.class)) {
      agent.close();
      assertThat(log.messages())
          .containsExactly(
              "agent 'vpp1' stopping: northbound [file] first, then plugins and the scheduler",
              "agent 'vpp1' stopped");
    }
  }
}
