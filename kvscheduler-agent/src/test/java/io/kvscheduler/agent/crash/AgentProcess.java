package io.kvscheduler.agent.crash;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
}
