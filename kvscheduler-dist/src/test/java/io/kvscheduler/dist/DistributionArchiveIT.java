package io.kvscheduler.dist;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distribution archive built by {@code package}, unpacked with {@code tar} into a directory of
 * its own and run from there: nothing of the source tree or Maven is needed.
 */
class DistributionArchiveIT {
  @TempDir static Path unpacked;
  static Path home;

  @BeforeAll
  static void unpack() throws Exception {
    Path archive = Path.of(System.getProperty("kvs.dist.archive"));
    assertThat(archive).as("the archive built by package").isRegularFile();
    InstalledAgent.Ran tar =
        InstalledAgent.run(unpacked, "tar", "-xzf", archive.toString(), "-C", unpacked.toString());
    assertThat(tar.exitCode()).as(tar.output()).isZero();
    try (Stream<Path> top = Files.list(unpacked)) {
      List<Path> dirs = top.toList();
      assertThat(dirs).as("one top directory").hasSize(1);
      home = dirs.get(0);
    }
    assertThat(home.getFileName().toString()).startsWith("kvscheduler-agent-");
  }

  @Test
  void holdsTheCommandsTheRuntimeLibrariesOnlyTheExamplesAndAUnit() throws Exception {
    assertThat(home.resolve("bin/kvs-agent")).isExecutable();
    assertThat(home.resolve("bin/kvsctl")).isExecutable();
    assertThat(home.resolve("systemd/kvs-agent.service"))
        .content()
        .contains("ExecStart=/usr/bin/kvs-agent run --config /etc/kvscheduler/agent.yaml");
    assertThat(home.resolve("libexec/jvm.options"))
        .content()
        .contains("\n-XX:+ExitOnOutOfMemoryError\n")
        .contains("\n-XX:TieredStopAtLevel=1\n");
    assertThat(home.resolve("config/examples/interfaces.yaml")).isRegularFile();
    assertThat(home.resolve("config/agent.yaml")).content().contains("config-dir: examples");
    assertThat(home.resolve("docs/agent.md")).content().contains("--rest-allowed-hosts");
    List<String> jars;
    try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
      jars = lib.map(p -> p.getFileName().toString()).sorted().toList();
    }
    assertThat(jars)
        .anyMatch(j -> j.startsWith("kvscheduler-agent-"))
        .anyMatch(j -> j.startsWith("kvscheduler-ctl-"))
        .anyMatch(j -> j.startsWith("kvscheduler-plugin-linux-"))
        .allMatch(j -> j.endsWith(".jar"))
        .noneMatch(
            j ->
                Stream.of(
                        "junit",
                        "assertj",
                        "jqwik",
                        "awaitility",
                        "selenium",
                        "opentelemetry",
                        "grpc-inprocess",
                        "opentest4j",
                        "kvscheduler-testkit")
                    .anyMatch(j::contains));
  }

  @Test
  void theJlinkProfileBundlesEveryJdkModuleTheLibrariesUse() throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "jdeps").toString(),
                "--ignore-missing-deps",
                "--print-module-deps",
                "--multi-release",
                "17",
                "-q"));
    try (Stream<Path> lib = Files.list(home.resolve("lib"))) {
      lib.map(Path::toString).sorted().forEach(cmd::add);
    }
    InstalledAgent.Ran jdeps = InstalledAgent.run(home, cmd.toArray(String[]::new));
    assertThat(jdeps.exitCode()).as(jdeps.output()).isZero();
    List<String> used = List.of(jdeps.output().strip().split(","));
    assertThat(List.of(System.getProperty("kvs.dist.jlink.modules").split(",")))
        .as("the jlink profile's modules (dist.jlink.modules in kvscheduler-dist/pom.xml)")
        .containsAll(used);
  }

  @Test
  void runsTheAgentOnTheExamplesAndKvsctlTalksToIt() throws Exception {
    try (InstalledAgent agent =
        InstalledAgent.start(home.resolve("bin/kvs-agent"), unpacked, "--quiet")) {
      assertThat(agent.output()).contains(home.resolve("config/examples").toString());
      // the JVM options of libexec/jvm.options, before the class path (JAVA_OPTS would come
      // between)
      List<String> cmdline = agent.commandLine();
      assertThat(cmdline)
          .containsSubsequence(
              "-XX:+ExitOnOutOfMemoryError",
              "-XX:TieredStopAtLevel=1",
              "-cp",
              home.resolve("lib").toString() + "/*",
              "io.kvscheduler.agent.AgentMain");
      var status = agent.get("/scheduler/status?key=config/mock/v1/interfaces/tap1");
      assertThat(status.statusCode()).isEqualTo(200);
      assertThat(status.body()).contains("\"state\": \"CONFIGURED\"");

      InstalledAgent.Ran ctl =
          InstalledAgent.run(
              unpacked, home.resolve("bin/kvsctl").toString(), "--agent", agent.url(), "status");
      assertThat(ctl.exitCode()).as(ctl.output()).isZero();
      assertThat(ctl.output()).contains("config/mock/v1/interfaces/tap1").contains("CONFIGURED");

      assertThat(agent.stop()).as("exit code after SIGTERM").isZero();
    }
  }

  @Test
  void runsFromASymbolicLinkToItsLauncher() throws Exception {
    Path link =
        Files.createSymbolicLink(unpacked.resolve("kvs-agent-link"), home.resolve("bin/kvs-agent"));
    try (InstalledAgent agent =
        InstalledAgent.start(
            link, unpacked, "--config", home.resolve("config/agent.yaml").toString(), "--quiet")) {
      var status = agent.get("/scheduler/status?key=config/mock/v1/interfaces/loop1");
      assertThat(status.body()).contains("\"state\": \"CONFIGURED\"");
      assertThat(agent.stop()).isZero();
    }
  }
}
