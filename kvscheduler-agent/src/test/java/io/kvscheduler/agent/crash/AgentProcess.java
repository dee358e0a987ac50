package io.kvscheduler.agent.crash;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * One agent process (java with the test's classpath) running inside the namespace with the Linux
 * plugin and the file northbound, its REST API on the namespace's own loopback (read with {@code
 * curl} inside the namespace; the namespace is private, so its port is nobody else's).
 */
final class AgentProcess {
  static final String LABEL = "crash";
  private static final String REST = "127.0.0.1:9191";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final NamespaceHolder holder;
  private final Process process;
  final Path log;

  private AgentProcess(NamespaceHolder holder, Process process, Path log) {
    this.holder = holder;
    this.process = process;
    this.log = log;
  }

  static AgentProcess start(NamespaceHolder holder, Path configDir, Path log) throws IOException {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> java =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+ExitOnOutOfMemoryError", // as bin/kvs-agent
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-cp",
            classpath,
            "io.kvscheduler.agent.AgentMain",
            "run",
            "--linux",
            "--label",
            LABEL,
            "--config-dir",
            configDir.toString(),
            "--rest",
            REST,
            "--quiet",
            "--file-settle-time",
            "200ms",
            "--state-dir",
            configDir.resolveSibling("agent-state").toString());
    ProcessBuilder pb = new ProcessBuilder(holder.inside(java));
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    return new AgentProcess(holder, pb.start(), log);
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /**
   * Kills the agent with SIGKILL. Its {@code ip -batch} processes, which the kernel does not kill
   * with it, carry out the commands already written to them and end (their input is closed): they
   * are waited for, so that what the kernel holds afterwards is what the crash left. Its {@code ip
   * monitor} processes would wait for the next event; they are killed.
   */
  void kill() throws InterruptedException {
    List<ProcessHandle> children = new ArrayList<>(process.toHandle().descendants().toList());
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("the agent did not die of SIGKILL within 30 s");
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    for (ProcessHandle c : children) {
      boolean batch = c.info().commandLine().orElse("").contains("-batch");
      while (batch && c.isAlive() && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      if (c.isAlive()) {
        c.destroyForcibly();
      }
    }
  }

  /** Ends the agent (SIGKILL) and what it started, for the test's cleanup. */
  void destroy() {
    List<ProcessHandle> children = process.toHandle().descendants().toList();
    process.destroyForcibly();
    children.forEach(ProcessHandle::destroyForcibly);
  }

  /** {@code GET path} of the REST API, or null while the API does not answer yet. */
  JsonNode get(String path) throws IOException {
    try {
      return JSON.readTree(
          holder.run("curl", "-sS", "--fail", "--max-time", "20", "http://" + REST + path));
    } catch (IllegalStateException e) {
      if (e.getMessage().contains("(7)")) { // curl: could not connect
        return null;
      }
      throw e;
    }
  }

  /** The last lines of the agent's log. */
  String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /**
   * Writes a configuration file the way the file northbound must see it: whole, by moving a
   * finished file into place.
   */
  static void writeConfig(Path file, String text) throws IOException {
    Path next = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.writeString(next, text);
    Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /**
   * What is wrong with the statuses ({@code GET /scheduler/status}) of the configured values ("" if
   * nothing): a status of a key other than {@code keys}, a missing one, or a value or derived value
   * not CONFIGURED. Obtained values (keys outside {@code config/}) do not count.
   */
  static String statusProblem(JsonNode statuses, Set<String> keys) {
    Set<String> seen = new TreeSet<>();
    List<String> wrong = new ArrayList<>();
    for (JsonNode s : statuses) {
      JsonNode v = s.path("value");
      String key = v.path("key").asText();
      if (!key.startsWith("config/")) {
        continue; // obtained values (host links)
      }
      seen.add(key);
      if (!"CONFIGURED".equals(v.path("state").asText())) {
        wrong.add(key + " " + v.path("state").asText() + " " + v.path("error").asText());
      }
      for (JsonNode d : s.path("derived_values")) {
        if (!"CONFIGURED".equals(d.path("state").asText())) {
          wrong.add(d.path("key").asText() + " " + d.path("state").asText());
        }
      }
    }
    if (!seen.equals(keys)) {
      Set<String> extra = new TreeSet<>(seen);
      extra.removeAll(keys);
      Set<String> missing = new TreeSet<>(keys);
      missing.removeAll(seen);
      return "statuses of other keys: extra " + extra + ", missing " + missing;
    }
    return wrong.isEmpty() ? "" : "not CONFIGURED: " + wrong;
  }

  /** Whether the transaction history ({@code GET /scheduler/txn-history}) holds a full resync. */
  static boolean hasFullResync(JsonNode history) {
    for (JsonNode t : history) {
      if ("FullResync".equals(t.path("ResyncType").asText())) {
        return true;
      }
    }
    return false;
  }

  /**
   * "OPERATION key" of every executed operation (not properties, not no-ops) of the transactions of
   * {@code history} other than SB notifications.
   */
  static List<String> operations(JsonNode history) {
    List<String> out = new ArrayList<>();
    for (JsonNode t : history) {
      if ("SBNotification".equals(t.path("TxnType").asText())) {
        continue;
      }
      for (JsonNode op : t.path("Executed")) {
        if (!op.path("IsProperty").asBoolean() && !op.path("NOOP").asBoolean()) {
          out.add(op.path("Operation").asText() + " " + op.path("Key").asText());
        }
      }
    }
    return out;
  }
}
