package io.kvscheduler.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvscheduler.agent.spi.AgentContext;
import io.kvscheduler.agent.spi.AgentPlugin;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PluginOrderTest {
  record P(String name, Set<String> dependsOn) implements AgentPlugin {
    @Override
    public void init(AgentContext ctx) {}
  }

  @Test
  void dependenciesComeFirstTiesByName() {
    List<AgentPlugin> ordered =
        PluginOrder.order(
            List.of(
                new P("l2", Set.of("ifplugin")),
                new P("ifplugin", Set.of()),
                new P("audit", Set.of("l2"))));
    assertThat(ordered).extracting(AgentPlugin::name).containsExactly("ifplugin", "l2", "audit");
  }

  @Test
  void cyclesUnknownDependenciesAndDuplicatesAreNamed() {
    assertThatThrownBy(
            () -> PluginOrder.order(List.of(new P("a", Set.of("b")), new P("b", Set.of("a")))))
        .hasMessage("plugin dependency cycle: a -> b -> a");
    assertThatThrownBy(() -> PluginOrder.order(List.of(new P("a", Set.of("zz")))))
        .hasMessage("plugin 'a' depends on unknown plugin 'zz'");
    assertThatThrownBy(() -> PluginOrder.order(List.of(new P("a", Set.of()), new P("a", Set.of()))))
        .hasMessage("two plugins are named 'a'");
  }

  @Test
  void agentStartsTheMockPluginsFoundByServiceLoader() throws Exception {
    try (Agent agent =
        Agent.start(AgentConfig.builder().restAddress(null).printTxnSummary(false).build())) {
      assertThat(agent.models().models())
          .extracting(m -> m.name())
          .containsExactly("mock.interfaces", "mock.bridge-domain", "mock.fib");
      assertThat(agent.scheduler().descriptor("mock-interface")).isPresent();
      Object tap =
          agent
              .models()
              .decode(
                  "config/mock/v1/interfaces/tap1",
                  "{\"name\":\"tap1\",\"type\":\"TAP\",\"enabled\":true}");
      long seq =
          agent.northbound().change("test", Map.of("config/mock/v1/interfaces/tap1", tap)).get();
      assertThat(seq).isGreaterThanOrEqualTo(0);
      assertThat(agent.scheduler().valueStatus("config/mock/v1/interfaces/tap1").state().name())
          .isEqualTo("CONFIGURED");
      assertThat(agent.northbound().desired()).containsOnlyKeys("config/mock/v1/interfaces/tap1");
    }
  }

  @Test
  void aPluginOffByDefaultStartsOnlyWhenTheSettingsEnableIt() throws Exception {
    AgentConfig base = AgentConfig.builder().restAddress(null).printTxnSummary(false).build();
    try (Agent agent = Agent.start(base)) {
      assertThat(agent.pluginNames()).doesNotContain("linux");
      assertThat(agent.scheduler().descriptor("linux-interface")).isEmpty();
    }
    List<String> inited = new ArrayList<>();
    AgentPlugin optional =
        new AgentPlugin() {
          @Override
          public String name() {
            return "optional";
          }

          @Override
          public boolean enabledByDefault() {
            return false;
          }

          @Override
          public void init(AgentContext ctx) {
            inited.add(name());
          }
        };
    try (Agent agent = Agent.start(base, List.of(optional))) {
      assertThat(agent.pluginNames()).isEmpty();
    }
    try (Agent agent =
        Agent.start(base.toBuilder().enablePlugin("optional").build(), List.of(optional))) {
      assertThat(agent.pluginNames()).containsExactly("optional");
    }
    assertThat(inited).containsExactly("optional");
  }
}
