package io.kvscheduler.agent.internal.northbound;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.internal.northbound.StateStore.StateStoreException;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The state store of what REST and gRPC pushed: written, read back, refused when unusable. */
class StateStoreTest {
  static final String TAP = "config/mock/v1/interfaces/";

  @TempDir Path dir;
  final ModelRegistry models = new ModelRegistry();

  StateStoreTest() {
    new MockAgentPlugin().registerModels(models);
  }

  /** A mock interface value, as the REST and gRPC sources decode it. */
  Object tap(String name, boolean enabled) throws Exception {
    return models.decode(
        TAP + name,
        "{\"name\": \"" + name + "\", \"type\": \"TAP\", \"enabled\": " + enabled + "}");
  }

  static Map<String, Object> values(Object... keysAndValues) {
    Map<String, Object> m = new HashMap<>();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      m.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return m;
  }

  @Test
  @DisplayName("changes and resyncs of each source are read back after the store is opened again")
  void writesAreReadBack() throws Exception {
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      assertThat(s.file()).isEqualTo(dir.resolve("vpp1").resolve("pushed.db"));
      assertThat(s.read().bySource()).isEmpty();
      s.change("rest", values(TAP + "a", tap("a", true), TAP + "b", tap("b", false)));
      s.change("rest", values(TAP + "b", null)); // removed
      s.resync("grpc", values(TAP + "c", tap("c", true)));
      s.resync("grpc", values(TAP + "d", tap("d", true))); // replaces c
      s.resync("emptied", Map.of());
    }
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      StateStore.Restored r = s.read();
      assertThat(r.bySource())
          .containsOnlyKeys("rest", "grpc", "emptied")
          .containsEntry("rest", Map.of(TAP + "a", tap("a", true)))
          .containsEntry("grpc", Map.of(TAP + "d", tap("d", true)))
          .containsEntry("emptied", Map.of());
      assertThat(r.values()).isEqualTo(2);
    }
    assertThat(StateStore.SOURCES).containsExactlyInAnyOrder("rest", "grpc");
  }

  @Test
  @DisplayName(
      "labels are written with their values and read back; a store of before labels opens and"
          + " gets the column")
  void labelsAreReadBack() throws Exception {
    Path db = StateStore.file(dir, "old");
    Files.createDirectories(db.getParent());
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + db);
        java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)");
      st.execute("INSERT INTO meta VALUES ('format', '1')");
      st.execute("CREATE TABLE source (name TEXT PRIMARY KEY)");
      st.execute(
          "CREATE TABLE pushed (source TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
              + " PRIMARY KEY (source, key)) WITHOUT ROWID");
      st.execute("INSERT INTO source VALUES ('grpc')");
      st.execute(
          "INSERT INTO pushed VALUES ('grpc', '"
              + TAP
              + "old', '{\"name\": \"old\", \"type\": \"TAP\"}')");
    }
    try (StateStore s = StateStore.open(dir, "old", models)) {
      assertThat(s.read().bySource().get("grpc")).containsOnlyKeys(TAP + "old");
      assertThat(s.read().labels()).isEmpty();
      s.change(
          "grpc",
          values(TAP + "a", tap("a", true), TAP + "b", tap("b", true)),
          Map.of(TAP + "a", Map.of("team", "x", "colour", "red")));
    }
    try (StateStore s = StateStore.open(dir, "old", models)) {
      StateStore.Restored r = s.read();
      assertThat(r.bySource().get("grpc")).containsOnlyKeys(TAP + "old", TAP + "a", TAP + "b");
      assertThat(r.labels())
          .isEqualTo(Map.of("grpc", Map.of(TAP + "a", Map.of("team", "x", "colour", "red"))));
      s.resync("grpc", values(TAP + "b", tap("b", true)), Map.of(TAP + "b", Map.of("k", "v")));
    }
    try (StateStore s = StateStore.open(dir, "old", models)) {
      assertThat(s.read().labels()).isEqualTo(Map.of("grpc", Map.of(TAP + "b", Map.of("k", "v"))));
    }
  }

  @Test
  @DisplayName(
      "a crash in the middle of writing a delivery: the files as the crash left them hold every"
          + " earlier delivery and none of the torn one")
  void tornWriteIsDroppedWhole() throws Exception {
    Path live = dir.resolve("live");
    Map<String, Object> big = new HashMap<>();
    for (int i = 0; i < 300; i++) {
      big.put(TAP + "big" + i, tap("big" + i, i % 2 == 0));
    }
    for (int cut : new int[] {0, 100, 5000}) {
      Path crashed = dir.resolve("crashed-" + cut);
      try (StateStore s = StateStore.open(live.resolve("s" + cut), "vpp1", models)) {
        s.change("rest", values(TAP + "a", tap("a", true)));
        s.change("grpc", big); // many pages: the last one cut below
        // the files as a SIGKILL or power loss leaves them (the store still open)
        Path from = s.file();
        Path to = StateStore.file(crashed, "vpp1");
        Files.createDirectories(to.getParent());
        Files.copy(from, to);
        Path wal = Path.of(from + "-wal");
        byte[] log = Files.readAllBytes(wal);
        assertThat(log.length).isGreaterThan(5000 + 4096);
        Files.write(Path.of(to + "-wal"), java.util.Arrays.copyOf(log, log.length - cut));
      }
      try (StateStore s = StateStore.open(crashed, "vpp1", models)) {
        StateStore.Restored r = s.read();
        assertThat(r.bySource().get("rest")).containsOnlyKeys(TAP + "a");
        if (cut == 0) {
          assertThat(r.bySource().get("grpc")).hasSize(300);
        } else {
          assertThat(r.bySource()).as("cut %d bytes", cut).doesNotContainKey("grpc");
        }
      }
    }
  }

  @Test
  @DisplayName("a file that is no database: refused, naming the file and --state-dir off")
  void corruptStoreIsRefused() throws Exception {
    Path file = StateStore.file(dir, "vpp1");
    Files.createDirectories(file.getParent());
    Files.write(file, "this is not what the agent wrote, not at all ".repeat(200).getBytes());
    assertThatThrownBy(() -> StateStore.open(dir, "vpp1", models))
        .isInstanceOf(StateStoreException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("damaged")
        .hasMessageContaining("--state-dir off")
        .hasMessageContaining("aside");
    assertThat(Files.readString(file)).startsWith("this is not"); // left as it was
  }

  @Test
  @DisplayName("a damaged page in a valid database: refused by the integrity check")
  void damagedPagesAreRefused() throws Exception {
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      Map<String, Object> many = new HashMap<>();
      for (int i = 0; i < 500; i++) {
        many.put(TAP + "if" + i, tap("if" + i, true));
      }
      s.change("rest", many);
    }
    Path file = StateStore.file(dir, "vpp1");
    byte[] bytes = Files.readAllBytes(file);
    assertThat(bytes.length).isGreaterThan(3 * 4096);
    for (int i = 4096 + 100; i < 3 * 4096; i++) {
      bytes[i] = (byte) 0x5a; // the tables' pages, not the header
    }
    Files.write(file, bytes);
    assertThatThrownBy(
            () -> {
              try (StateStore s = StateStore.open(dir, "vpp1", models)) {
                s.read();
              }
            })
        .isInstanceOf(StateStoreException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining("--state-dir off");
  }

  @Test
  @DisplayName("a stored value that cannot be decoded: refused, naming the key")
  void undecodableValueIsRefused() throws Exception {
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      s.change("rest", values(TAP + "a", tap("a", true)));
    }
    ModelRegistry other = new ModelRegistry();
    new MockAgentPlugin().registerModels(other);
    Path file = StateStore.file(dir, "vpp1");
    try (var c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + file);
        var st = c.createStatement()) {
      st.execute("UPDATE pushed SET value = '{\"name\": 7, \"bogus\": 1}'");
    }
    assertThatThrownBy(
            () -> {
              try (StateStore s = StateStore.open(dir, "vpp1", other)) {
                s.read();
              }
            })
        .isInstanceOf(StateStoreException.class)
        .hasMessageContaining(file.toString())
        .hasMessageContaining(TAP + "a")
        .hasMessageContaining("--state-dir off");
  }

  @Test
  @DisplayName("values of a model not registered now stay in the store and are not restored")
  void valuesOfNoModelStay() throws Exception {
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      s.change("rest", values(TAP + "a", tap("a", true)));
    }
    try (StateStore s = StateStore.open(dir, "vpp1", new ModelRegistry())) {
      StateStore.Restored r = s.read();
      assertThat(r.notApplied()).isEqualTo(1);
      assertThat(r.bySource()).containsEntry("rest", Map.of());
    }
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      assertThat(s.read().bySource()).containsEntry("rest", Map.of(TAP + "a", tap("a", true)));
    }
  }

  @Test
  @DisplayName("a second agent with the same state directory and label cannot open the store")
  void secondOpenerIsRefused() throws Exception {
    try (StateStore s = StateStore.open(dir, "vpp1", models)) {
      s.change("rest", values(TAP + "a", tap("a", true)));
      assertThatThrownBy(() -> StateStore.open(dir, "vpp1", models))
          .isInstanceOf(StateStoreException.class)
          .hasMessageContaining("in use by another agent")
          .hasMessageContaining(s.file().toString());
      try (StateStore other = StateStore.open(dir, "vpp2", models)) {
        assertThat(other.read().bySource()).isEmpty(); // another label: its own store
      }
    }
  }
}
