package io.kvscheduler.agent;

import static io.kvscheduler.agent.PushingAgent.TAP;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvscheduler.plugins.mock.util.SouthboundJournal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What REST and gRPC pushed survives a SIGKILL of the agent process: the restart's first resync
 * finds it in the state store and changes nothing in the southbound (kept in a state file, as a
 * data plane outlives the agent).
 */
class PushedStateRestartTest {
  @TempDir Path tmp;

  /** The transactions the agent recorded, oldest first. */
  static List<JsonNode> history(PushingAgent a) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    a.get("/scheduler/txn-history").forEach(out::add);
    return out;
  }

  @Test
  @DisplayName(
      "killed with SIGKILL and started again, the agent still gives what REST and gRPC pushed,"
          + " and the file's first resync carries out 0 operations")
  void restartKeepsPushedValues() throws Exception {
    Path configDir = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        configDir.resolve("a.yaml"),
        "config/mock/v1/interfaces/file1:\n  name: file1\n  type: TAP\n");
    Path sb = tmp.resolve("sb.state");
    String[] args = {
      "--config-dir", configDir.toString(), "--state-dir", tmp.resolve("state").toString()
    };
    try (PushingAgent a = PushingAgent.start(sb, args)) {
      assertThat(a.put(PushingAgent.yaml("tj", "tk"))).isEqualTo(200);
      a.setConfig("g1");
      assertThat(a.put(PushingAgent.yaml("tj"))).isEqualTo(200); // a change: tk stays
      a.kill();
    }
    int opsBefore = SouthboundJournal.read(sb).size();
    assertThat(SouthboundJournal.read(sb))
        .filteredOn(op -> op.get(0).equals("iface-create"))
        .extracting(op -> op.get(2))
        .containsExactlyInAnyOrder("file1", "tj", "tk", "g1");

    try (PushingAgent b = PushingAgent.start(sb, args)) {
      assertThat(b.output()).contains("3 value(s) pushed over REST and gRPC restored");
      String conf = b.configuration();
      assertThat(conf).contains("name: tj", "name: tk", "name: g1", "name: file1");
      List<JsonNode> txns = history(b);
      assertThat(txns).isNotEmpty();
      JsonNode first = txns.get(0);
      assertThat(first.path("Description").asText()).isEqualTo("resync from file");
      assertThat(first.path("Values").size()).isEqualTo(4);
      assertThat(first.has("Executed")).as("operations of the first resync: %s", first).isFalse();
      assertThat(SouthboundJournal.read(sb)).hasSize(opsBefore); // the southbound untouched
      b.kill();
    }
  }

  @Test
  @DisplayName(
      "REST alone: the restart's resync from the state store carries out 0 operations and"
          + " deletes nothing")
  void restartWithRestAloneResyncsFromTheStore() throws Exception {
    Path sb = tmp.resolve("sb.state");
    String[] args = {"--state-dir", tmp.resolve("state").toString()};
    try (PushingAgent a = PushingAgent.start(sb, args)) {
      assertThat(a.put(PushingAgent.yaml("tj"))).isEqualTo(200);
      a.setConfig("g1", "g2");
      a.kill();
    }
    int opsBefore = SouthboundJournal.read(sb).size();
    try (PushingAgent b = PushingAgent.start(sb, args)) {
      assertThat(history(b)).as("transactions after the restart").isNotEmpty();
      JsonNode first = history(b).get(0);
      assertThat(first.path("Description").asText()).isEqualTo("resync from the state store");
      assertThat(first.path("Values").size()).isEqualTo(3);
      assertThat(first.has("Executed")).as("operations of the resync: %s", first).isFalse();
      assertThat(SouthboundJournal.read(sb)).hasSize(opsBefore); // the southbound untouched
      assertThat(b.get("/info/settings").path("state-dir").asText())
          .isEqualTo(tmp.resolve("state").toString());
      assertThat(b.get("/scheduler/status?key=" + TAP + "g2").path("value").path("state").asText())
          .isEqualTo("CONFIGURED");
    }
  }

  @Test
  @DisplayName(
      "the labels given with gRPC SetConfig are kept with the values: killed and started again,"
          + " GetConfig shows them and filters by them; a later SetConfig replaces a key's"
          + " labels, overwrite_all every key's")
  void labelsSurviveARestart() throws Exception {
    Path sb = tmp.resolve("sb.state");
    String[] args = {"--state-dir", tmp.resolve("state").toString()};
    Map<String, Map<String, String>> given = new LinkedHashMap<>();
    given.put("g1", Map.of("team", "a", "colour", "red"));
    given.put("g2", Map.of("team", "b"));
    given.put("g3", Map.of());
    try (PushingAgent a = PushingAgent.start(sb, args)) {
      a.setConfig(false, given);
      assertThat(a.getConfigLabels(Map.of())).isEqualTo(given);
      a.setConfig(false, Map.of("g2", Map.of("team", "c"))); // replaces g2's labels
      a.kill();
    }
    Map<String, Map<String, String>> expected = new TreeMap<>(given);
    expected.put("g2", Map.of("team", "c"));
    try (PushingAgent b = PushingAgent.start(sb, args)) {
      assertThat(b.output()).contains("3 value(s) pushed over REST and gRPC restored");
      assertThat(b.getConfigLabels(Map.of())).isEqualTo(expected);
      assertThat(b.getConfigLabels(Map.of("team", "a")).keySet()).containsExactly("g1");
      assertThat(b.getConfigLabels(Map.of("!colour", "")).keySet()).containsExactly("g2", "g3");
      b.setConfig(true, Map.of("g3", Map.of("team", "d")));
      b.kill();
    }
    try (PushingAgent c = PushingAgent.start(sb, args)) {
      assertThat(c.getConfigLabels(Map.of())).isEqualTo(Map.of("g3", Map.of("team", "d")));
    }
  }

  @Test
  @DisplayName(
      "killed while a confirmed commit waits for its confirmation, the agent starts again with"
          + " the configuration before it; a confirmed one is kept")
  void aPendingConfirmedCommitDoesNotSurviveARestart() throws Exception {
    Path sb = tmp.resolve("sb.state");
    String[] args = {"--state-dir", tmp.resolve("state").toString()};
    try (PushingAgent a = PushingAgent.start(sb, args)) {
      assertThat(a.put("?replace", PushingAgent.yaml("before"))).isEqualTo(200);
      assertThat(a.put("?replace&confirm-within=10m", PushingAgent.yaml("unconfirmed")))
          .isEqualTo(200);
      assertThat(a.configuration()).contains("name: unconfirmed").doesNotContain("name: before");
      a.kill();
    }
    assertThat(SouthboundJournal.read(sb))
        .filteredOn(op -> op.get(0).equals("iface-create"))
        .extracting(op -> op.get(2))
        .contains("unconfirmed");
    int deletesBefore =
        (int)
            SouthboundJournal.read(sb).stream()
                .filter(op -> op.get(0).equals("iface-delete"))
                .count();
    try (PushingAgent b = PushingAgent.start(sb, args)) {
      assertThat(b.output())
          .contains(
              "rollback: not confirmed before the agent stopped: confirmed commit #1 from rest");
      JsonNode first = history(b).get(0);
      assertThat(first.path("Description").asText())
          .isEqualTo(
              "resync from the state store (rollback: not confirmed before the agent stopped)");
      assertThat(b.configuration()).contains("name: before").doesNotContain("name: unconfirmed");
      assertThat(
              b.get("/scheduler/status?key=" + TAP + "unconfirmed")
                  .path("value")
                  .path("state")
                  .asText())
          .isIn("", "NONEXISTENT");
      assertThat(
              b.get("/scheduler/status?key=" + TAP + "before").path("value").path("state").asText())
          .isEqualTo("CONFIGURED");
      assertThat(SouthboundJournal.read(sb))
          .as("the southbound follows: the unconfirmed interface deleted")
          .filteredOn(op -> op.get(0).equals("iface-delete"))
          .hasSize(deletesBefore + 1);

      assertThat(b.put("?replace&confirm-within=10m", PushingAgent.yaml("confirmed")))
          .isEqualTo(200);
      assertThat(b.post("/configuration/confirm")).isEqualTo(200);
      b.kill();
    }
    try (PushingAgent c = PushingAgent.start(sb, args)) {
      assertThat(c.output()).doesNotContain("rollback: not confirmed");
      assertThat(c.configuration()).contains("name: confirmed").doesNotContain("name: before");
    }
  }

  @Test
  @DisplayName(
      "a damaged state store: the agent does not start (exit 1), naming the file and"
          + " --state-dir off, and applies nothing")
  void damagedStoreStopsTheStart() throws Exception {
    Path configDir = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        configDir.resolve("a.yaml"),
        "config/mock/v1/interfaces/file1:\n  name: file1\n  type: TAP\n");
    Path state = tmp.resolve("state");
    Path file = state.resolve("vpp1").resolve("pushed.db");
    Files.createDirectories(file.getParent());
    Files.writeString(file, "not a database, whatever it was ".repeat(100));
    Path sb = tmp.resolve("sb.state");
    Process p =
        PushingAgent.command(
                sb,
                PushingAgent.freePort(),
                PushingAgent.freePort(),
                "--config-dir",
                configDir.toString(),
                "--state-dir",
                state.toString())
            .redirectOutput(tmp.resolve("agent.log").toFile())
            .start();
    boolean ended = p.waitFor(60, TimeUnit.SECONDS);
    if (!ended) {
      p.destroyForcibly().waitFor();
    }
    String out = Files.readString(tmp.resolve("agent.log"));
    assertThat(ended).as("the agent stopped at start: %s", out).isTrue();
    assertThat(p.exitValue()).as(out).isEqualTo(1);
    assertThat(out)
        .contains("kvs-agent: the state store " + file + " is damaged")
        .contains("--state-dir off")
        .doesNotContain("started with plugins");
    assertThat(SouthboundJournal.read(sb)).isEmpty(); // nothing applied, nothing deleted
  }

  @Test
  @DisplayName("--state-dir off: the start says that pushed values are kept in memory only")
  void stateDirOffIsSaid() throws Exception {
    try (PushingAgent a = PushingAgent.start(tmp.resolve("sb.state"), "--state-dir", "off")) {
      assertThat(a.output())
          .contains(
              "state directory off (--state-dir off): what REST and gRPC push is kept in"
                  + " memory only");
      assertThat(a.get("/info/settings").path("state-dir").asText()).isEqualTo("off");
    }
  }
}
