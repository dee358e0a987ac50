package io.kvscheduler.dist;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Debian package built by {@code package}, installed with {@code dpkg}, run as installed, and
 * removed again. Runs only as root on a machine with {@code dpkg}, and never over a
 * kvscheduler-agent package already installed there.
 */
class DebianPackageIT {
  @TempDir Path work;

  @Test
  void installsRunsAndRemovesCleanly() throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "installing a package needs root; this test runs as root only");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/dpkg")), "needs dpkg (a Debian system)");
    assumeTrue(
        InstalledAgent.run(work, "dpkg-query", "-W", "kvscheduler-agent").exitCode() != 0,
        "a kvscheduler-agent package is installed on this machine already: left alone");
    Path deb = Path.of(System.getProperty("kvs.dist.deb"));
    assertThat(deb).isRegularFile();

    InstalledAgent.Ran install = InstalledAgent.run(work, "dpkg", "-i", deb.toString());
    try {
      assertThat(install.exitCode()).as(install.output()).isZero();
      assertThat(Path.of("/usr/bin/kvs-agent")).isExecutable();
      assertThat(Path.of("/usr/bin/kvsctl")).isExecutable();
      assertThat(Path.of("/lib/systemd/system/kvs-agent.service")).isRegularFile();
      assertThat(Path.of("/etc/kvscheduler/agent.yaml")).content().contains("config-dir: config.d");

      // the unit's own command line, with the REST API on a free port
      Files.writeString(
          Path.of("/etc/kvscheduler/config.d/test.yaml"),
          "config/mock/v1/interfaces/deb1:\n  name: deb1\n  type: TAP\n  enabled: true\n");
      try (InstalledAgent agent =
          InstalledAgent.start(
              Path.of("/usr/bin/kvs-agent"),
              work,
              "--config",
              "/etc/kvscheduler/agent.yaml",
              "--quiet")) {
        var status = agent.get("/scheduler/status?key=config/mock/v1/interfaces/deb1");
        assertThat(status.body()).contains("\"state\": \"CONFIGURED\"");
        InstalledAgent.Ran ctl =
            InstalledAgent.run(work, "/usr/bin/kvsctl", "--agent", agent.url(), "status");
        assertThat(ctl.output()).contains("config/mock/v1/interfaces/deb1");
        assertThat(agent.stop()).isZero();
      } finally {
        Files.deleteIfExists(Path.of("/etc/kvscheduler/config.d/test.yaml"));
      }
    } finally {
      InstalledAgent.Ran purge = InstalledAgent.run(work, "dpkg", "--purge", "kvscheduler-agent");
      assertThat(purge.exitCode()).as(purge.output()).isZero();
    }
    assertThat(Path.of("/usr/bin/kvs-agent")).doesNotExist();
    assertThat(Path.of("/usr/share/kvscheduler")).doesNotExist();
    assertThat(Path.of("/etc/kvscheduler/agent.yaml")).doesNotExist();
  }
}
