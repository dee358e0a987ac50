package io.kvscheduler.dist;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.testsupport.AgentOutput;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An agent started from an installation (the unpacked archive or the installed Debian package), as
 * an operator starts it: its own launcher script, an environment without Maven or the source tree,
 * and its REST API on a free loopback port.
 */
final class InstalledAgent implements AutoCloseable {
  private final Process process;
  private final List<String> lines = new ArrayList<>();
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

  private InstalledAgent(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /**
   * Runs {@code launcher run --rest 127.0.0.1:PORT args} in {@code workDir} and waits, at most 90
   * s, for the line saying the agent started.
   */
  static InstalledAgent start(Path launcher, Path workDir, String... args) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    List<String> cmd = new ArrayList<>(List.of(launcher.toString(), "run"));
    cmd.addAll(List.of("--rest", "127.0.0.1:" + port));
    // a state store of its own (the default directory is shared by every agent of the user)
    cmd.addAll(List.of("--state-dir", workDir.resolve("kvs-state").toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile());
    pb.redirectErrorStream(true);
    clean(pb.environment());
    InstalledAgent agent = new InstalledAgent(pb.start(), port);
    agent.awaitStart();
    return agent;
  }

  /** An environment as a login shell has it: no Maven, no class path, the JDK on PATH. */
  static void clean(Map<String, String> env) {
    env.keySet().removeIf(k -> k.startsWith("MAVEN") || k.equals("CLASSPATH"));
    env.remove("JAVA_OPTS");
    env.put("JAVA_HOME", System.getProperty("java.home"));
  }

  private void awaitStart() throws Exception {
    AgentOutput.awaitStarted(process, lines, Duration.ofSeconds(90));
  }

  /** What the agent printed so far. */
  String output() {
    synchronized (lines) {
      return String.join("\n", lines);
    }
  }

  /** The agent's command line as the kernel shows it ({@code /proc/PID/cmdline}). */
  List<String> commandLine() throws Exception {
    String all = Files.readString(Path.of("/proc", String.valueOf(process.pid()), "cmdline"));
    return List.of(all.split("\0"));
  }

  /** The REST base URL. */
  String url() {
    return "http://127.0.0.1:" + port;
  }

  /** GET {@code path}: the status code and body. */
  HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url() + path)).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Stops the agent with SIGTERM, as a supervisor does; returns its exit code. */
  int stop() throws Exception {
    Process kill = new ProcessBuilder("kill", "-TERM", String.valueOf(process.pid())).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(process.waitFor(30, TimeUnit.SECONDS))
        .as("the agent stops within 30 s of SIGTERM")
        .isTrue();
    return process.exitValue();
  }

  /** Runs {@code cmd} (in a clean environment) and returns its exit code and output. */
  static Ran run(Path workDir, String... cmd) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile());
    pb.redirectErrorStream(true);
    clean(pb.environment());
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(String.join(" ", cmd)).isTrue();
    return new Ran(p.exitValue(), out);
  }

  /** A command's exit code and output. */
  record Ran(int exitCode, String output) {}

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
    }
  }
}
