package io.kvscheduler.plugins.linux.linuxcalls;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A long-running restore sees the end of each text by the mark it echoes: stand-in commands show
 * the protocol (a text is done when its mark comes back, a process that never answers is bounded, a
 * process that ends fails the text with its message), the installed {@code iptables-restore} in a
 * private namespace shows that iptables keeps it.
 */
class RestoreSessionTest {
  private static final Duration LIMIT = Duration.ofSeconds(10);

  /** Echoes the comment lines it reads, as {@code iptables-restore --verbose} does. */
  private static final List<String> ECHO =
      List.of("sh", "-c", "while read -r l; do case \"$l\" in '#'*) echo \"$l\";; esac; done");

  private static RestoreSession session(List<String> argv, Duration limit) {
    return new RestoreSession(new CommandRunner(List.of(), limit), argv, limit);
  }

  @Test
  void aTextIsDoneWhenItsMarkComesBackAndOneProcessServesThemAll(@TempDir Path dir)
      throws Exception {
    // notes its process number once, echoes comments at once, and handles other lines slowly
    Path handled = dir.resolve("handled");
    List<String> slow =
        List.of(
            "sh",
            "-c",
            "echo \"pid $$\" >> \"$0\"; while read -r l; do case \"$l\" in"
                + " '#'*) echo \"$l\";; *) sleep 0.2; echo \"$l\" >> \"$0\";; esac; done",
            handled.toString());
    try (RestoreSession s = session(slow, LIMIT)) {
      assertThat(s.probe(LIMIT)).isTrue(); // the process that answers the probe serves the texts
      s.apply("*filter\nCOMMIT\n");
      assertThat(Files.readAllLines(handled)).endsWith("*filter", "COMMIT");
      // a comment of the text itself comes back first: the text is done at its mark only
      s.apply("# a comment of the text itself\n-A X -j ACCEPT\n");
      assertThat(Files.readAllLines(handled)).endsWith("-A X -j ACCEPT");
      s.apply("");
    }
    assertThat(Files.readAllLines(handled)).filteredOn(l -> l.startsWith("pid ")).hasSize(1);
    assertThat(RestoreSession.echoesMarks(new CommandRunner(List.of(), LIMIT), ECHO, LIMIT))
        .isTrue();
  }

  @Test
  void aProcessThatNeverAnswersIsKilledAtTheLimit() throws Exception {
    Duration limit = Duration.ofMillis(300);
    List<String> silent = List.of("sh", "-c", "cat > /dev/null");
    try (RestoreSession s = session(silent, limit)) {
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> s.apply("*filter\nCOMMIT\n"))
          .isInstanceOf(LinuxCallException.class)
          .hasMessageContaining("did not finish within 300 ms");
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
      assertThat(s.probe(limit)).isFalse(); // a new process, as silent: killed again
    }
    assertThat(RestoreSession.echoesMarks(new CommandRunner(List.of(), limit), silent, limit))
        .isFalse();
  }

  @Test
  void aProcessThatEndsFailsTheTextWithItsMessageInTheTextsOwnLineNumbers() throws Exception {
    // answers the first text, then rejects the second one's second line, as iptables does
    List<String> rejecting =
        List.of(
            "sh",
            "-c",
            "read -r a; read -r m; echo \"$m\"; read -r b; read -r c;"
                + " echo 'Error occurred at line: 4' >&2; exit 2");
    try (RestoreSession s = session(rejecting, LIMIT)) {
      s.apply("*filter\n");
      assertThatThrownBy(() -> s.apply("*filter\n-A X -j NOPE\n"))
          .isInstanceOf(LinuxCallException.class)
          .hasMessage("Error occurred at line: 2")
          .extracting(e -> ((LinuxCallException) e).exitCode())
          .isEqualTo(2);
    }
  }

  @Test
  void aProbeOfAProcessThatEndsFailsWithItsMessage() {
    List<String> missing =
        List.of("sh", "-c", "echo 'nsenter: cannot open /run/netns/gone' >&2; exit 1");
    try (RestoreSession s = session(missing, LIMIT)) {
      assertThatThrownBy(() -> s.probe(LIMIT))
          .isInstanceOf(LinuxCallException.class)
          .hasMessage("nsenter: cannot open /run/netns/gone");
    }
    assertThat(RestoreSession.echoesMarks(new CommandRunner(List.of(), LIMIT), missing, LIMIT))
        .isFalse();
  }

  @Test
  void theInstalledIptablesRestoreEchoesMarksInAPrivateNamespace() throws Exception {
    CommandRunner runner =
        new CommandRunner(List.of("unshare", "--user", "--map-root-user", "--net"), LIMIT);
    List<String> restore = List.of("iptables-restore", "--noflush", "--verbose", "-w", "5");
    String version;
    try {
      version = runner.run(List.of("iptables-restore", "--version"), null);
    } catch (LinuxCallException e) {
      version = "";
    }
    assumeTrue(
        version.contains("nf_tables"),
        "needs iptables-restore with the nf_tables backend and private namespaces");
    assertThat(RestoreSession.echoesMarks(runner, restore, LIMIT)).isTrue();
    RestoreSession s = new RestoreSession(runner, restore, LIMIT);
    try (s) {
      s.apply("*filter\n:KVS-A - [0:0]\n-A KVS-A -p tcp --dport 22 -j ACCEPT\nCOMMIT\n");
      assertThatThrownBy(() -> s.apply("*filter\n:KVS-B - [0:0]\n-A KVS-B -j NOPE\nCOMMIT\n"))
          .isInstanceOf(LinuxCallException.class)
          .hasMessageContaining("NOPE")
          .hasMessageContaining("line: 4");
      s.apply("*filter\n:KVS-C - [0:0]\nCOMMIT\n"); // a new process after the rejected text
    }
  }
}
