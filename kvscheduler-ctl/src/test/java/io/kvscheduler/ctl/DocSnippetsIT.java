package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.kvscheduler.testsupport.DocSnippets;
import io.kvscheduler.testsupport.DocSnippets.Snippet;
import io.kvscheduler.testsupport.EtcdFixture;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every code block of the README and of the agent's documents ({@link DocSnippets#DOCUMENTS}) is
 * run, or excused with a reason: the shell blocks run here with bash, in document order, against a
 * real agent (the mock plugins, the file northbound on a copy of {@code examples/config}, REST on a
 * free port) and, for those naming etcd, a real etcd server. A block of another language must name
 * the test that runs it ({@code <!-- run by CLASS -->}), and one that cannot run here says why
 * ({@code <!-- not run: ... -->}); any other block fails.
 *
 * <p>The blocks run as they are written, but for the addresses: {@code 127.0.0.1:9191} and {@code
 * localhost:9191} become the agent's, {@code 127.0.0.1:2379} etcd's; {@code bin/kvsctl} and {@code
 * bin/kvs-agent scenario} are the commands as built here (the test's class path; other uses of
 * {@code bin/kvs-agent} run the agent until stopped, and are noted not run), {@code curl} fails on
 * an HTTP error ({@code --fail-with-body}), and a block fails on its first failing command ({@code
 * set -euo pipefail}). The working directory holds {@code more.yaml} and {@code token}, the files
 * the documents' examples read.
 */
class DocSnippetsIT {
  /** The test classes that run the blocks noted {@code run by ...}. */
  private static final Set<String> RUNNERS = Set.of("LigatoClientIT", "LibraryDocSnippetsTest");

  private static final Set<String> SHELL = Set.of("sh", "bash");

  @TempDir static Path work;
  private static RunningAgent agent;
  private static EtcdFixture etcd;

  @BeforeAll
  static void startAgent() throws Exception {
    Path repository = DocSnippets.repository();
    Path config = work.resolve("examples/config");
    Files.createDirectories(config);
    try (Stream<Path> files = Files.list(repository.resolve("examples/config"))) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        Files.copy(f, config.resolve(f.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
      }
    }
    Files.writeString(
        work.resolve("more.yaml"),
        "mockConfig:\n  Interface_list:\n  - name: tap9\n    type: TAP\n    enabled: true\n");
    Files.writeString(work.resolve("token"), "a-token\n");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classPath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String jvm = quote(java) + " -cp " + quote(classPath) + " ";
    command("bin/kvsctl", "exec " + jvm + KvsCtl.class.getName() + " \"$@\"");
    command(
        "bin/kvs-agent",
        "[ \"${1:-}\" = scenario ] || { echo 'here bin/kvs-agent runs scenarios only' >&2; exit 2; }",
        "shift",
        "exec " + jvm + "io.kvscheduler.plugins.mock.scenario.ScenarioMain \"$@\"");
    command("shims/curl", "PATH=\"${PATH#*:}\"", "exec curl --fail-with-body \"$@\"");
    agent = RunningAgent.start(config);
  }

  /** Writes an executable bash script {@code name} in the working directory. */
  private static void command(String name, String... lines) throws IOException {
    Path file = work.resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, "#!/usr/bin/env bash\n" + String.join("\n", lines) + "\n");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @AfterAll
  static void stop() throws InterruptedException {
    if (agent != null) {
      agent.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  @TestFactory
  List<DynamicTest> everySnippetIsRunOrExcused() {
    List<Snippet> snippets = DocSnippets.all();
    assertThat(snippets).as("the documents' code blocks").isNotEmpty();
    List<DynamicTest> tests = new ArrayList<>();
    for (Snippet s : snippets) {
      String name =
          s.where() + " (" + (s.language().isEmpty() ? "no language" : s.language()) + ")";
      tests.add(DynamicTest.dynamicTest(name, () -> check(s)));
    }
    return tests;
  }

  private static void check(Snippet s) throws Exception {
    if (s.notRun()) {
      assertThat(s.reasonNotRun()).as("%s: the reason it is not run", s.where()).isNotBlank();
      System.out.println(s.where() + ": not run: " + s.reasonNotRun());
    } else if (!s.runner().isEmpty()) {
      assertThat(RUNNERS)
          .as("%s is noted 'run by %s', which is no test that runs blocks", s.where(), s.runner())
          .contains(s.runner());
    } else if (SHELL.contains(s.language())) {
      run(s);
    } else {
      fail(
          "%s: no test runs this ```%s block: run it here (a shell block), name the test that runs"
              + " it (<!-- run by CLASS -->), or say why it is not run (<!-- not run: WHY -->)",
          s.where(), s.language());
    }
  }

  private static void run(Snippet s) throws Exception {
    String code =
        s.code()
            .replace("127.0.0.1:9191", agent.url.substring("http://".length()))
            .replace("localhost:9191", agent.url.substring("http://".length()));
    if (code.contains("127.0.0.1:2379") || code.contains("etcdctl")) {
      code = code.replace("127.0.0.1:2379", etcd().endpoint().substring("http://".length()));
    }
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", "set -euo pipefail\n" + code)
            .directory(work.toFile())
            .redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("PATH", work.resolve("shims") + ":" + env.get("PATH"));
    env.put("KVS_AGENT", agent.url);
    env.put("NO_COLOR", "1");
    if (etcd != null) {
      env.put("ETCDCTL_ENDPOINTS", etcd.endpoint());
    }
    Path log = Files.createTempFile(work, "snippet", ".log");
    pb.redirectOutput(log.toFile())
        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    Process p = pb.start();
    boolean ended = p.waitFor(60, TimeUnit.SECONDS);
    if (!ended) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly().waitFor();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    assertThat(ended).as("%s ends within 60 s; output:\n%s", s.where(), output).isTrue();
    System.out.println("--- " + s.where() + "\n" + code + "--- output\n" + output);
    assertThat(p.exitValue())
        .as("%s: exit status of\n%s\noutput:\n%s", s.where(), code, output)
        .isZero();
    if (!s.expectedOutput().isEmpty()) {
      assertThat(output).as("%s: its output", s.where()).contains(s.expectedOutput());
    }
    if (!s.unwantedOutput().isEmpty()) {
      assertThat(output).as("%s: its output", s.where()).doesNotContain(s.unwantedOutput());
    }
  }

  private static EtcdFixture etcd() throws Exception {
    if (etcd == null) {
      etcd = EtcdFixture.startNew();
    }
    return etcd;
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
