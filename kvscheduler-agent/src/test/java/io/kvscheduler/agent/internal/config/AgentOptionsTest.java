package io.kvscheduler.agent.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.AgentConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's command line on picocli: its help, repeated flags, flags over other sources. */
class AgentOptionsTest {
  @TempDir Path dir;

  @Test
  void helpListsEveryFlagAndTheEnvironment() {
    StringWriter out = new StringWriter();
    AgentOptions.commandLine(new AgentOptions()).usage(new PrintWriter(out, true));
    assertThat(out.toString())
        .contains(
            "--config=FILE",
            "--label=L",
            "--config-dir=DIR",
            "--rest=HOST:PORT|off",
            "--etcd=ENDPOINTS",
            "--etcd-config=FILE",
            "--status-publishing",
            "--quiet",
            "--operation-timeout=DURATION",
            "--rest-token-file=FILE",
            "--rest-read-only",
            "--rest-allowed-hosts=HOSTS",
            "--rest-tls-cert=FILE",
            "--rest-tls-key=FILE",
            "--txn-log-max-ops=N",
            "--parallelism=N",
            "MICROSERVICE_LABEL",
            "ETCD_ENDPOINTS",
            "KVS_REST_TOKEN");
  }

  @Test
  void aRepeatedFlagTakesItsLastValueFlagsWinOverFileAndEnvironment() throws Exception {
    Path f = dir.resolve("agent.yaml");
    Files.writeString(f, "label: from-file\nprint-txn-summary: true\ntxn-log-max-ops: 7\n");
    AgentConfig c =
        AgentConfig.load(
            List.of(
                "--label",
                "a",
                "--config",
                f.toString(),
                "--label",
                "b",
                "--quiet",
                "--txn-log-max-ops=9"),
            Map.of("MICROSERVICE_LABEL", "env"));
    assertThat(c.label()).isEqualTo("b");
    assertThat(c.printTxnSummary()).isFalse();
    assertThat(c.txnLogMaxOps()).isEqualTo(9);
    assertThat(
            AgentConfig.load(List.of("--config", f.toString()), Map.of("MICROSERVICE_LABEL", "env"))
                .label())
        .isEqualTo("env");
  }

  @Test
  void badFlagsAreNamed() {
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", "a", "--config", "b"), Map.of()))
        .hasMessage("--config given twice (one settings file at most)");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--rest-token-file"), Map.of()))
        .hasMessage("--rest-token-file needs a value");
    assertThatThrownBy(() -> AgentConfig.load(List.of("extra"), Map.of()))
        .hasMessage("unknown option 'extra'");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--txn-log-max-ops", "-1"), Map.of()))
        .hasMessageContaining("--txn-log-max-ops: expected a whole number");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--parallelism", "0"), Map.of()))
        .hasMessage("--parallelism: expected a whole number, 1 or more, got '0'");
  }

  @Test
  void parallelismComesFromTheFileOrTheFlag() throws Exception {
    Path f = dir.resolve("agent.yaml");
    Files.writeString(f, "parallelism: 16\n");
    assertThat(AgentConfig.load(List.of(), Map.of()).parallelism()).isEqualTo(1);
    assertThat(AgentConfig.load(List.of("--config", f.toString()), Map.of()).parallelism())
        .isEqualTo(16);
    assertThat(
            AgentConfig.load(List.of("--config", f.toString(), "--parallelism", "4"), Map.of())
                .parallelism())
        .isEqualTo(4);
    Files.writeString(f, "parallelism: many\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .hasMessageEndingWith("parallelism: expected a whole number, 1 or more, got 'many'");
  }
}
