package io.kvscheduler.agent.internal.rest;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.Probe;
import io.kvscheduler.agent.internal.config.SettingsLoader;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class InfoSettingsTest {

  /** Settings-file keys shown under another key: the file's contents, the token's source. */
  private static final Map<String, String> SHOWN_AS =
      Map.of("etcd-config", "etcd", "rest-token-file", "rest-token");

  @Test
  @DisplayName("/info/settings shows every key the settings file takes")
  void everySettingIsShown() {
    Set<String> expected = new HashSet<>();
    for (String key : SettingsLoader.keys()) {
      expected.add(SHOWN_AS.getOrDefault(key, key));
    }
    assertThat(InfoRoutes.settings(AgentConfig.defaults()).keySet()).containsAll(expected);
  }

  @Test
  @DisplayName("/info/settings shows standby, the probes and the fleet view's address as set")
  void standbyProbesAndFleetUrl() {
    AgentConfig c =
        AgentConfig.builder()
            .standby(true)
            .fleetUrl("http://fleet.example:9400/")
            .probes(
                List.of(
                    Probe.tcp("dns", "10.0.0.53:53", Duration.ofSeconds(2)),
                    Probe.command("ping", List.of("ping", "-c1", "10.0.0.1"), "blue", null)))
            .build();
    Map<String, Object> m = InfoRoutes.settings(c);
    assertThat(m)
        .containsEntry("standby", true)
        .containsEntry("fleet-url", "http://fleet.example:9400/");
    assertThat(m.get("probes"))
        .isEqualTo(
            List.of(
                Map.of("name", "dns", "tcp", "10.0.0.53:53", "timeout", "PT2S"),
                Map.of(
                    "name",
                    "ping",
                    "command",
                    List.of("ping", "-c1", "10.0.0.1"),
                    "netns",
                    "blue",
                    "timeout",
                    "PT5S")));
    assertThat(InfoRoutes.settings(AgentConfig.defaults()))
        .containsEntry("standby", false)
        .containsEntry("probes", List.of())
        .containsEntry("fleet-url", null);
  }
}
