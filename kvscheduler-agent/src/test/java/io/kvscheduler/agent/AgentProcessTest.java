package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent as a process, as a supervisor runs it: started, then stopped with a signal. */
class AgentProcessTest {
  @TempDir Path dir;

  /**
   * Starts {@code AgentMain run args} (with the agent's own logging settings, not the tests') and
   * waits, at most 60 s, for the line saying it started; the output goes on into {@code lines}.
   */
  Process start(List<String> lines, String... args) throws Exception {
    String classpath =
        Arrays.stream(
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"))
                    .split(File.pathSeparator))
            .filter(e -> !e.endsWith("test-classes"))
            .collect(Collectors.joining(File.pathSeparator));
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                classpath,
                AgentMain.class.getName(),
                "run"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    CountDownLatch started = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                  synchronized (lines) {
                    lines.add(l);
                  }
                  if (l.contains("started with plugins")) {
                    started.countDown();
                  }
                }
              } catch (IOException e) {
                // the process ended
              }
            });
    reader.setDaemon(true);
    reader.start();
    if (!started.await(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      synchronized (lines) {
        throw new AssertionError("the agent did not start within 60 s: " + lines);
      }
    }
    return p;
  }

  static void signal(Process p, String name) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(p.pid())).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
  }

  @Test
  void sigtermStopsCleanlyWithExitCode0() throws Exception {
    Files.writeString(
        dir.resolve("a.yaml"), "config/mock/v1/interfaces/tap1:\n  name: tap1\n  type: TAP\n");
    List<String> lines = new ArrayList<>();
    Process p = start(lines, "--rest", "127.0.0.1:0", "--config-dir", dir.toString());
    signal(p, "TERM"); // not Process.destroy(): it also closes the pipe of the output
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("output: %s", lines).isZero();
    Thread.sleep(500); // the reader takes the last lines
    synchronized (lines) {
      assertThat(lines).anyMatch(l -> l.contains("agent 'vpp1' stopped"));
    }
  }

  @Test
  void sigintStopsCleanlyWithExitCode0() throws Exception {
    List<String> lines = new ArrayList<>();
    Process p = start(lines, "--rest", "127.0.0.1:0", "--config-dir", dir.toString());
    signal(p, "INT");
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("output: %s", lines).isZero();
  }
}
