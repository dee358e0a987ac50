package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.testsupport.AgentOutput;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent as a process, as a supervisor runs it: started, then stopped with a signal. */
class AgentProcessTest {
  @TempDir Path dir;

  /** The agent's state directory (the default one is shared by every agent of the user). */
  @TempDir Path stateDir;

  /**
   * Starts {@code AgentMain run args} (with the agent's own logging settings, not the tests') and
   * waits, at most 60 s, for the line saying it started; the output goes on into {@code lines}.
   */
  Process start(List<String> lines, String... args) throws Exception {
    return start(lines, List.of(), AgentMain.class, args);
  }

  /**
   * {@link #start(List, String...)} with {@code jvmOptions} before the main class, and {@code main}
   * (a class of the tests that runs {@code AgentMain}, or {@code AgentMain} itself) as main class.
   */
  Process start(List<String> lines, List<String> jvmOptions, Class<?> main, String... args)
      throws Exception {
    boolean testMain = main != AgentMain.class;
    String classpath =
        Arrays.stream(
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"))
                    .split(File.pathSeparator))
            .filter(e -> testMain || !e.endsWith("test-classes"))
            .collect(Collectors.joining(File.pathSeparator));
    List<String> cmd =
        new ArrayList<>(
            List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(jvmOptions);
    if (testMain) { // the agent's logging settings all the same
      Path classes =
          Path.of(AgentMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      cmd.add("-Dlogback.configurationFile=" + classes.resolve("logback.xml"));
    }
    cmd.addAll(List.of("-cp", classpath, main.getName(), "run"));
    cmd.addAll(List.of("--state-dir", stateDir.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    AgentOutput.awaitStarted(p, lines, Duration.ofSeconds(60));
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

  /** The JVM options the launchers give the agent: bin/kvs-agent reads the file they come from. */
  static List<String> launcherJvmOptions() throws IOException {
    Path launcher = Path.of(System.getProperty("user.dir")).resolve("../bin/kvs-agent").normalize();
    assertThat(Files.readString(launcher))
        .contains("kvscheduler-agent/src/main/resources/io/kvscheduler/agent/jvm.options");
    return AgentMain.launcherJvmOptions();
  }

  @Test
  @DisplayName("an OutOfMemoryError (a large request on a small heap) ends the agent, not zero")
  void outOfMemoryEndsTheProcess() throws Exception {
    List<String> options = new ArrayList<>(launcherJvmOptions());
    assertThat(options).contains("-XX:+ExitOnOutOfMemoryError");
    options.add("-Xmx48m");
    List<String> lines = new ArrayList<>();
    Process p =
        start(
            lines,
            options,
            AgentMain.class,
            "--rest",
            "127.0.0.1:0",
            "--config-dir",
            dir.toString());
    int port = restPort(lines);
    byte[] body = new byte[40 << 20];
    Arrays.fill(body, (byte) 'x');
    try {
      HttpClient.newHttpClient()
          .send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/configuration"))
                  .header("Content-Type", "application/yaml")
                  .PUT(HttpRequest.BodyPublishers.ofByteArray(body))
                  .timeout(Duration.ofSeconds(30))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (IOException expected) {
      // the process ended while answering
    }
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exited; output: %s", lines).isTrue();
    // 3: the JVM's exit code for -XX:+ExitOnOutOfMemoryError
    assertThat(p.exitValue()).as("output: %s", lines).isEqualTo(3);
  }

  @Test
  @DisplayName("a thread of the agent that dies of an Error ends the process with exit code 70")
  void threadDyingOfAnErrorEndsTheProcess() throws Exception {
    Path trigger = dir.resolve("die");
    List<String> lines = new ArrayList<>();
    Process p =
        start(
            lines,
            List.of("-D" + ErrorInThreadMain.TRIGGER + "=" + trigger),
            ErrorInThreadMain.class,
            "--rest",
            "off",
            "--config-dir",
            dir.toString());
    Files.writeString(trigger, "");
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exited; output: %s", lines).isTrue();
    assertThat(p.exitValue()).as("output: %s", lines).isEqualTo(AgentMain.EXIT_ON_ERROR);
  }

  @Test
  @DisplayName("user data in the console log: control characters escaped, no forged line")
  void consoleLogEscapesControlCharacters() throws Exception {
    // a key holding a line feed that starts a forged log line, a carriage return and ESC
    Files.writeString(
        dir.resolve("a.yaml"),
        "\"config/mock/v1/interfaces/x\\n12:00:00.000 ERROR forged\\r\\e[31m\":\n"
            + "  name: x\n  type: TAP\n");
    Files.writeString(
        dir.resolve("b.yaml"), "config/mock/v1/interfaces/tap1:\n  name: tap1\n  type: TAP\n");
    List<String> lines = new ArrayList<>();
    Process p = start(lines, "--rest", "off", "--config-dir", dir.toString());
    signal(p, "TERM");
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(500); // the reader takes the last lines
    synchronized (lines) {
      assertThat(lines).anyMatch(l -> l.contains("x\\n12:00:00.000 ERROR forged\\r\\u001b[31m"));
      assertThat(lines).noneMatch(l -> l.startsWith("12:00:00.000 ERROR forged"));
      assertThat(lines).noneMatch(l -> l.contains("\u001b") || l.contains("\r"));
      // the transaction log keeps its own lines
      assertThat(lines).anyMatch(l -> l.contains("- key: config/mock/v1/interfaces/tap1"));
    }
  }

  /** The port the agent's REST API listens on, from its output. */
  private static int restPort(List<String> lines) {
    Pattern listening = Pattern.compile("REST API listening on \\w+://[^:]+:(\\d+)");
    synchronized (lines) {
      for (String l : lines) {
        Matcher m = listening.matcher(l);
        if (m.find()) {
          return Integer.parseInt(m.group(1));
        }
      }
      throw new AssertionError("no REST port in the output: " + lines);
    }
  }
}
