package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.internal.config.SettingsLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Settings: defaults < YAML file < environment < flags. */
class AgentConfigTest {
  @TempDir Path dir;

  Path file(String yaml) throws Exception {
    Path f = dir.resolve("agent.yaml");
    Files.writeString(f, yaml);
    return f;
  }

  /** The state directory {@link AgentConfig#load} takes by default (the builder has none). */
  static Path defaultStateDir() {
    return SettingsLoader.defaultStateDir();
  }

  /** {@code c} without its state directory, which is checked to be the default one. */
  static AgentConfig withDefaultStateDir(AgentConfig c) {
    assertThat(c.stateDir()).isEqualTo(defaultStateDir());
    return c.toBuilder().stateDir(null).build();
  }

  @Test
  void defaults() throws Exception {
    AgentConfig c = AgentConfig.load(List.of(), Map.of());
    assertThat(withDefaultStateDir(c)).isEqualTo(AgentConfig.defaults());
    assertThat(c.label()).isEqualTo("vpp1");
    assertThat(c.configDir()).isNull();
    assertThat(c.restAddress()).isEqualTo("127.0.0.1:9191");
    assertThat(c.etcdEndpoints()).isEmpty();
    assertThat(c.statusPublishing()).isFalse();
    assertThat(c.printTxnSummary()).isTrue();
    assertThat(c.operationTimeout()).isNull();
    assertThat(c.agentPrefix()).isEqualTo("/vnf-agent/vpp1/");
  }

  @Test
  void fileSetsEverything() throws Exception {
    Path f =
        file(
            """
        label: from-file
        config-dir: conf.d
        rest-address: off
        etcd-endpoints: [127.0.0.1:2379, 127.0.0.1:22379]
        status-publishing: true
        print-txn-summary: false
        operation-timeout: 5s
        """);
    AgentConfig c = AgentConfig.load(List.of("--config", f.toString()), Map.of());
    assertThat(c.label()).isEqualTo("from-file");
    // relative to the file's directory
    assertThat(c.configDir()).isEqualTo(dir.toAbsolutePath().resolve("conf.d"));
    assertThat(c.restAddress()).isNull();
    assertThat(c.etcdEndpoints()).containsExactly("127.0.0.1:2379", "127.0.0.1:22379");
    assertThat(c.statusPublishing()).isTrue();
    assertThat(c.printTxnSummary()).isFalse();
    assertThat(c.operationTimeout()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void probesFromTheSettingsFile() throws Exception {
    Path f = dir.resolve("probes.yaml");
    Files.writeString(
        f,
        """
        probes:
        - name: ping-ns2
          command: [ping, -c, "1", -W, "1", 10.0.2.1]
          netns: ns1
          timeout: 3s
        - {name: api, tcp: "127.0.0.1:6443", timeout: 500ms}
        - {name: health, http: "http://127.0.0.1:8080/healthz"}
        - {name: words, command: "true --quiet"}
        """);
    List<Probe> probes = AgentConfig.load(List.of("--config", f.toString()), Map.of()).probes();
    assertThat(probes)
        .containsExactly(
            Probe.command(
                "ping-ns2",
                List.of("ping", "-c", "1", "-W", "1", "10.0.2.1"),
                "ns1",
                Duration.ofSeconds(3)),
            Probe.tcp("api", "127.0.0.1:6443", Duration.ofMillis(500)),
            Probe.http("health", "http://127.0.0.1:8080/healthz", Probe.DEFAULT_TIMEOUT),
            Probe.command("words", List.of("true", "--quiet"), null, null));
    assertThat(AgentConfig.load(List.of(), Map.of()).probes()).isEmpty();

    Files.writeString(f, "probes:\n- {name: both, tcp: \"a:1\", http: \"http://a/\"}\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .hasMessageContaining("probe 'both'")
        .hasMessageContaining("exactly one of command, tcp or http");
    Files.writeString(f, "probes:\n- {name: x, tcp: \"a:1\", colour: blue}\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .hasMessageContaining("unknown key 'colour'");
    Files.writeString(f, "probes:\n- {name: x, tcp: \"a:1\", timeout: 0s}\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .hasMessageContaining("probe 'x': timeout");
  }

  @Test
  void restAllowedHostsFromFileOrFlag() throws Exception {
    assertThat(AgentConfig.load(List.of(), Map.of()).restSecurity().allowedHosts()).isEmpty();
    Path list = file("rest-allowed-hosts: [Agent.example, 'proxy.example:8443']\n");
    assertThat(
            AgentConfig.load(List.of("--config", list.toString()), Map.of())
                .restSecurity()
                .allowedHosts())
        .containsExactly("agent.example", "proxy.example:8443");
    Path text = file("rest-allowed-hosts: a.example, b.example\n");
    assertThat(
            AgentConfig.load(
                    List.of("--config", text.toString(), "--rest-allowed-hosts", "c.example"),
                    Map.of())
                .restSecurity()
                .allowedHosts())
        .containsExactly("c.example");
    assertThat(
            AgentConfig.load(List.of("--config", text.toString()), Map.of())
                .restSecurity()
                .allowedHosts())
        .containsExactly("a.example", "b.example");
    assertThatThrownBy(
            () -> AgentConfig.load(List.of("--rest-allowed-hosts", "a.example,b c"), Map.of()))
        .hasMessageContaining("--rest-allowed-hosts")
        .hasMessageContaining("'b c'");
  }

  @Test
  void fleetUrlFromFileEnvironmentOrFlagAndOnlyHttp() throws Exception {
    assertThat(AgentConfig.load(List.of(), Map.of()).fleetUrl()).isNull();
    Path f = file("fleet-url: http://fleet.example:9192/\n");
    assertThat(AgentConfig.load(List.of("--config", f.toString()), Map.of()).fleetUrl())
        .isEqualTo("http://fleet.example:9192/");
    assertThat(
            AgentConfig.load(
                    List.of("--config", f.toString()),
                    Map.of("KVS_FLEET_URL", "https://env.example/fleet"))
                .fleetUrl())
        .isEqualTo("https://env.example/fleet");
    assertThat(
            AgentConfig.load(
                    List.of("--config", f.toString(), "--fleet-url", "http://flag.example:1/"),
                    Map.of("KVS_FLEET_URL", "https://env.example/fleet"))
                .fleetUrl())
        .isEqualTo("http://flag.example:1/");
    // shown as a link: nothing but an absolute http or https URL
    for (String bad : List.of("javascript:alert(1)", "/fleet", "fleet.example:9192", "ftp://x/")) {
      assertThatThrownBy(() -> AgentConfig.load(List.of("--fleet-url", bad), Map.of()))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("fleet-url '" + bad + "' is not an absolute http or https URL");
    }
  }

  @Test
  void fileSettleTimeFromFileOrFlag() throws Exception {
    assertThat(AgentConfig.load(List.of(), Map.of()).fileSettleTime()).isNull(); // the default
    Path f = file("file-settle-time: 5s\n");
    assertThat(AgentConfig.load(List.of("--config", f.toString()), Map.of()).fileSettleTime())
        .isEqualTo(Duration.ofSeconds(5));
    assertThat(
            AgentConfig.load(
                    List.of("--config", f.toString(), "--file-settle-time", "300ms"), Map.of())
                .fileSettleTime())
        .isEqualTo(Duration.ofMillis(300));
    assertThatThrownBy(() -> AgentConfig.load(List.of("--file-settle-time", "0s"), Map.of()))
        .hasMessageStartingWith("--file-settle-time: expected a positive duration");
  }

  @Test
  void operationTimeoutFlagAndFormats() throws Exception {
    assertThat(
            AgentConfig.load(List.of("--operation-timeout", "250ms"), Map.of()).operationTimeout())
        .isEqualTo(Duration.ofMillis(250));
    assertThat(AgentConfig.load(List.of("--operation-timeout", "2m"), Map.of()).operationTimeout())
        .isEqualTo(Duration.ofMinutes(2));
    assertThat(
            AgentConfig.load(List.of("--operation-timeout", "PT1.5S"), Map.of()).operationTimeout())
        .isEqualTo(Duration.ofMillis(1500));
    for (String bad : List.of("0s", "soon", "-1s", "PT0S")) {
      assertThatThrownBy(() -> AgentConfig.load(List.of("--operation-timeout", bad), Map.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "--operation-timeout: expected a positive duration such as 500ms, 5s, 1m"
                  + " or PT5S, got '"
                  + bad
                  + "'");
    }
    Path f = file("operation-timeout: later\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .hasMessage(
            "agent config "
                + f
                + ": operation-timeout: expected a positive duration"
                + " such as 500ms, 5s, 1m or PT5S, got 'later'");
  }

  @Test
  void environmentOverridesFileAndFlagsOverrideBoth() throws Exception {
    Path f =
        file(
            """
        label: from-file
        etcd-endpoints: file:2379
        rest-address: 127.0.0.1:1111
        """);
    Map<String, String> env =
        Map.of(
            "MICROSERVICE_LABEL",
            "from-env",
            "ETCD_ENDPOINTS",
            "env1:2379, env2:2379",
            "ENABLE_STATUS_PUBLISHING",
            "1");

    AgentConfig fileOnly = AgentConfig.load(List.of("--config", f.toString()), Map.of());
    assertThat(fileOnly.label()).isEqualTo("from-file");
    assertThat(fileOnly.etcdEndpoints()).containsExactly("file:2379");

    AgentConfig withEnv = AgentConfig.load(List.of("--config", f.toString()), env);
    assertThat(withEnv.label()).isEqualTo("from-env");
    assertThat(withEnv.etcdEndpoints()).containsExactly("env1:2379", "env2:2379");
    assertThat(withEnv.statusPublishing()).isTrue();
    assertThat(withEnv.restAddress()).isEqualTo("127.0.0.1:1111");

    // flags win, wherever --config is among them
    AgentConfig withFlags =
        AgentConfig.load(
            List.of(
                "--label",
                "from-flag",
                "--config",
                f.toString(),
                "--etcd",
                "flag:2379",
                "--rest",
                "0.0.0.0:9999",
                "--config-dir",
                "x",
                "--quiet"),
            env);
    assertThat(withFlags.label()).isEqualTo("from-flag");
    assertThat(withFlags.etcdEndpoints()).containsExactly("flag:2379");
    assertThat(withFlags.restAddress()).isEqualTo("0.0.0.0:9999");
    assertThat(withFlags.configDir()).isEqualTo(Path.of("x"));
    assertThat(withFlags.printTxnSummary()).isFalse();
    assertThat(withFlags.statusPublishing()).isTrue();
  }

  @Test
  void emptyEnvironmentVariablesAreIgnored() throws Exception {
    AgentConfig c =
        AgentConfig.load(
            List.of(),
            Map.of("MICROSERVICE_LABEL", "", "ETCD_ENDPOINTS", "", "ENABLE_STATUS_PUBLISHING", ""));
    assertThat(withDefaultStateDir(c)).isEqualTo(AgentConfig.defaults());
  }

  @Test
  void stateDirectory() throws Exception {
    // the tests' JVMs run with the system property off: no test agent keeps state by chance
    assertThat(System.getProperty(SettingsLoader.STATE_DIR_PROPERTY)).isEqualTo("off");
    assertThat(AgentConfig.load(List.of(), Map.of()).stateDir()).isNull();
    String before = System.clearProperty(SettingsLoader.STATE_DIR_PROPERTY);
    try {
      assertThat(AgentConfig.load(List.of(), Map.of()).stateDir())
          .isEqualTo(
              SettingsLoader.defaultStateDir(
                  System.getenv(),
                  System.getProperty("user.name"),
                  Path.of(System.getProperty("user.home"))));
    } finally {
      System.setProperty(SettingsLoader.STATE_DIR_PROPERTY, before);
    }
    assertThat(SettingsLoader.defaultStateDir(Map.of(), "root", Path.of("/root")))
        .isEqualTo(Path.of("/var/lib/kvscheduler"));
    assertThat(SettingsLoader.defaultStateDir(Map.of(), "ann", Path.of("/home/ann")))
        .isEqualTo(Path.of("/home/ann/.local/share/kvscheduler"));
    assertThat(
            SettingsLoader.defaultStateDir(
                Map.of("XDG_DATA_HOME", "/data/ann"), "ann", Path.of("/home/ann")))
        .isEqualTo(Path.of("/data/ann/kvscheduler"));
    assertThat( // a relative XDG_DATA_HOME is not valid: ignored, as the specification says
            SettingsLoader.defaultStateDir(
                Map.of("XDG_DATA_HOME", "data"), "ann", Path.of("/home/ann")))
        .isEqualTo(Path.of("/home/ann/.local/share/kvscheduler"));
    assertThat(AgentConfig.load(List.of("--state-dir", "off"), Map.of()).stateDir()).isNull();
    assertThat(AgentConfig.load(List.of(), Map.of("KVS_STATE_DIR", "off")).stateDir()).isNull();
    assertThat(
            AgentConfig.load(List.of("--state-dir", "/f"), Map.of("KVS_STATE_DIR", "/e"))
                .stateDir())
        .isEqualTo(Path.of("/f"));
    assertThat(AgentConfig.load(List.of("--state-dir", "/s"), Map.of()).stateDir())
        .isEqualTo(Path.of("/s"));
    assertThat(
            AgentConfig.load(List.of("--config", file("state-dir: st\n").toString()), Map.of())
                .stateDir())
        .isEqualTo(dir.toAbsolutePath().resolve("st"));
    assertThat(
            AgentConfig.load(List.of("--config", file("state-dir: off\n").toString()), Map.of())
                .stateDir())
        .isNull();
    assertThat(
            AgentConfig.load(
                    List.of("--config", file("state-dir: st\n").toString(), "--state-dir", "off"),
                    Map.of())
                .stateDir())
        .isNull(); // the flag wins
    assertThatThrownBy(() -> AgentConfig.load(List.of("--state-dir", " "), Map.of()))
        .hasMessageContaining("--state-dir: expected a directory or off");
    assertThatThrownBy(
            () ->
                AgentConfig.load(
                    List.of("--config", file("state-dir: true\n").toString()), Map.of()))
        .hasMessageContaining("state-dir must be a directory or off");
  }

  @Test
  void restOffFlag() throws Exception {
    assertThat(AgentConfig.load(List.of("--rest", "off"), Map.of()).restAddress()).isNull();
  }

  @Test
  void unknownKeyInFileIsAnError() throws Exception {
    Path f = file("label: a\nrest-adress: 127.0.0.1:1\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(f.toString())
        .hasMessageContaining("unknown key 'rest-adress'")
        .hasMessageContaining("rest-address");
  }

  @Test
  void unknownFlagIsAnError() {
    assertThatThrownBy(() -> AgentConfig.load(List.of("--label", "a", "--colour"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown option '--colour'");
  }

  @Test
  void badInputsAreErrors() throws Exception {
    assertThatThrownBy(() -> AgentConfig.load(List.of("--label"), Map.of()))
        .hasMessage("--label needs a value");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config"), Map.of()))
        .hasMessage("--config needs a file");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--label", "a/b"), Map.of()))
        .hasMessageContaining("invalid label 'a/b'");
    Path missing = dir.resolve("missing.yaml");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", missing.toString()), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(missing.toString());
    Path list = file("- a\n- b\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", list.toString()), Map.of()))
        .hasMessageContaining("expected a mapping");
    Path malformed = file("label: [\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", malformed.toString()), Map.of()))
        .hasMessageContaining("cannot read agent config")
        .hasMessageContaining(malformed + ":2: malformed YAML");
  }

  @Test
  void aMalformedRestAddressIsAnErrorOfTheSettings() throws Exception {
    assertThatThrownBy(() -> AgentConfig.load(List.of("--rest", "localhost"), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("REST address 'localhost' is not host:port");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--rest", "127.0.0.1:abc"), Map.of()))
        .hasMessage("REST address '127.0.0.1:abc': bad port");
    Path f = file("rest-address: 127.0.0.1:70000\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", f.toString()), Map.of()))
        .hasMessage("REST address '127.0.0.1:70000': bad port");
  }

  @Test
  void aMissingConfigFileIsNamedAsMissing() {
    Path missing = dir.resolve("missing.yaml");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", missing.toString()), Map.of()))
        .hasMessage("cannot read agent config " + missing + ": no such file");
  }

  @Test
  void settingsOfTheWrongTypeInTheFileAreErrors() throws Exception {
    Path typo = file("print-txn-summary: flase\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", typo.toString()), Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "agent config " + typo + ": print-txn-summary must be true or false, got 'flase'");
    Path word = file("status-publishing: nope\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", word.toString()), Map.of()))
        .hasMessage(
            "agent config " + word + ": status-publishing must be true or false, got 'nope'");
    Path nested = file("label:\n  name: a\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", nested.toString()), Map.of()))
        .hasMessage("agent config " + nested + ": label must be a single value, got a mapping");
    Path plain = file("print-txn-summary: false\nstatus-publishing: true\n");
    AgentConfig ok = AgentConfig.load(List.of("--config", plain.toString()), Map.of());
    assertThat(ok.printTxnSummary()).isFalse();
    assertThat(ok.statusPublishing()).isTrue();
    Path quoted = file("print-txn-summary: \"false\"\nstatus-publishing: 'True'\n");
    AgentConfig q = AgentConfig.load(List.of("--config", quoted.toString()), Map.of());
    assertThat(q.printTxnSummary()).isFalse();
    assertThat(q.statusPublishing()).isTrue();
  }

  @Test
  void etcdEndpointsAndOtherSettingsAreCheckedWhereTheyAreGiven() throws Exception {
    assertThatThrownBy(() -> AgentConfig.load(List.of("--etcd", ","), Map.of()))
        .hasMessage("--etcd: no endpoint given");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--etcd", "127.0.0.1:notaport"), Map.of()))
        .hasMessage(
            "--etcd: endpoint '127.0.0.1:notaport' is not host:port or http(s)://host:port");
    assertThatThrownBy(() -> AgentConfig.load(List.of(), Map.of("ETCD_ENDPOINTS", "http://[::1")))
        .hasMessageStartingWith("ETCD_ENDPOINTS: endpoint 'http://[::1'");
    Path map = file("etcd-endpoints: {a: 1}\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", map.toString()), Map.of()))
        .hasMessage(
            "agent config "
                + map
                + ": etcd-endpoints: expected a list or a"
                + " comma-separated string");
    assertThat(
            AgentConfig.load(List.of("--etcd", "127.0.0.1:2379, http://h:2380"), Map.of())
                .etcdEndpoints())
        .containsExactly("127.0.0.1:2379", "http://h:2380");
    Path emptyDir = file("config-dir: \"\"\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", emptyDir.toString()), Map.of()))
        .hasMessage("agent config " + emptyDir + ": config-dir is empty");
    Path restOn = file("rest-address: on\n");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config", restOn.toString()), Map.of()))
        .hasMessage(
            "agent config " + restOn + ": rest-address must be host:port or off, got 'true'");
    assertThatThrownBy(() -> AgentConfig.load(List.of("--config-dir", "--rest", "off"), Map.of()))
        .hasMessage("--config-dir needs a value");
    assertThatThrownBy(
            () ->
                AgentConfig.load(
                    List.of("--config", restOn.toString(), "--config", emptyDir.toString()),
                    Map.of()))
        .hasMessage("--config given twice (one settings file at most)");
  }

  @Test
  void linuxPluginIsOffUnlessTheFileTheEnvironmentOrTheFlagEnablesIt() throws Exception {
    assertThat(AgentConfig.load(List.of(), Map.of()).enabledPlugins()).isEmpty();
    assertThat(AgentConfig.load(List.of("--linux"), Map.of()).enabledPlugins())
        .containsExactly("linux");
    assertThat(
            AgentConfig.load(List.of("--config", file("linux: true\n").toString()), Map.of())
                .enabledPlugins())
        .containsExactly("linux");
    assertThat(AgentConfig.load(List.of(), Map.of("KVS_LINUX", "true")).enabledPlugins())
        .containsExactly("linux");
    assertThat(
            AgentConfig.load(
                    List.of("--config", file("linux: true\n").toString()),
                    Map.of("KVS_LINUX", "false"))
                .enabledPlugins())
        .isEmpty();
    assertThatThrownBy(() -> AgentConfig.load(List.of(), Map.of("KVS_LINUX", "yes")))
        .hasMessage("KVS_LINUX must be true or false, got 'yes'");
    assertThatThrownBy(
            () -> AgentConfig.load(List.of("--config", file("linux: 3\n").toString()), Map.of()))
        .hasMessageContaining("linux must be true or false, got '3'");
  }
}
