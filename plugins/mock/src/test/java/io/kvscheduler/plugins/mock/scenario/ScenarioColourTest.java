package io.kvscheduler.plugins.mock.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The scenarios' output in a process of its own: coloured on a terminal (a pseudo-terminal made by
 * util-linux's {@code script}), plain text in a pipe or a file and with {@code NO_COLOR}.
 */
class ScenarioColourTest {
  static final String ESC = "\u001b[";

  /** {@code java -cp <test class path> ScenarioMain pending-after-resync}. */
  static List<String> command() {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    return List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp",
        classpath,
        ScenarioMain.class.getName(),
        "pending-after-resync");
  }

  static String run(List<String> command, Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().remove("NO_COLOR");
    pb.environment().putAll(env);
    Process p = pb.start();
    p.getOutputStream().close();
    byte[] out = p.getInputStream().readAllBytes();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(new String(out, StandardCharsets.UTF_8)).isZero();
    return new String(out, StandardCharsets.UTF_8);
  }

  @Test
  void plainInAPipe() throws Exception {
    String out = run(command(), Map.of());
    assertThat(out).contains("~~~~~~~~").contains("PENDING").doesNotContain(ESC);
  }

  @Test
  void colouredOnATerminalUnlessNoColor() throws Exception {
    Path script = Path.of("/usr/bin/script");
    assertThat(Files.isExecutable(script))
        .as("util-linux's script (Debian package bsdutils) gives the test a terminal")
        .isTrue();
    // script -qec "<command>" /dev/null: runs the command on a pseudo-terminal
    String line =
        command().stream()
            .map(a -> "'" + a.replace("'", "'\\''") + "'")
            .collect(Collectors.joining(" "));
    List<String> onTerminal =
        new ArrayList<>(List.of(script.toString(), "-qec", line, "/dev/null"));
    String coloured = run(onTerminal, Map.of());
    assertThat(coloured).contains(ESC + "34m~~~~~~~~");
    String noColor = run(onTerminal, Map.of("NO_COLOR", "1"));
    assertThat(noColor).contains("~~~~~~~~").doesNotContain(ESC);
  }
}
