package io.kvscheduler.agent;

import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import io.kvscheduler.testsupport.EtcdFixture;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.Assertions;

/** Helpers shared by the etcd tests: agents on an {@link EtcdFixture}, keys, waiting. */
final class EtcdTestSupport implements AutoCloseable {
  static final Duration TIMEOUT = Duration.ofSeconds(20);
  static final String IF = "config/mock/v1/interfaces/";
  static final String BD = "config/mock/v1/bridge-domain/";
  static final String FIB = "config/mock/v1/fib/";

  private final EtcdFixture etcd;
  private final List<Agent> agents = new CopyOnWriteArrayList<>();

  EtcdTestSupport(EtcdFixture etcd) {
    this.etcd = etcd;
  }

  /** An agent found by ServiceLoader (the mock plugins), REST off. */
  Agent start(String label, boolean statusPublishing) throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .label(label)
                .restAddress(null)
                .etcdEndpoints(List.of(etcd.endpoint()))
                .statusPublishing(statusPublishing)
                .printTxnSummary(false)
                .build());
    agents.add(a);
    return a;
  }

  /** An agent with the given mock plugin instance (to look at its southbound). */
  Agent start(String label, boolean statusPublishing, MockAgentPlugin mock) throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .label(label)
                .restAddress(null)
                .etcdEndpoints(List.of(etcd.endpoint()))
                .statusPublishing(statusPublishing)
                .printTxnSummary(false)
                .build(),
            List.of(mock));
    agents.add(a);
    return a;
  }

  /** An agent with these settings and the given mock plugin instance. */
  Agent start(AgentConfig config, MockAgentPlugin mock) throws Exception {
    Agent a = Agent.start(config, List.of(mock));
    agents.add(a);
    return a;
  }

  static String prefix(String label) {
    return "/vnf-agent/" + label + "/";
  }

  static String tap(String name, boolean enabled) {
    return "{\"name\":\"" + name + "\",\"type\":\"TAP\",\"enabled\":" + enabled + "}";
  }

  static EtcdNorthbound etcdSource(Agent agent) {
    return agent.sources().stream()
        .filter(EtcdNorthbound.class::isInstance)
        .map(EtcdNorthbound.class::cast)
        .findFirst()
        .orElseThrow();
  }

  static ValueState state(Agent agent, String key) {
    return agent.scheduler().valueStatus(key).state();
  }

  static void awaitState(Agent agent, String key, ValueState state) {
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> Assertions.assertThat(state(agent, key)).as(key).isEqualTo(state));
  }

  /** Names of the interfaces in the mock southbound. */
  static Set<String> sbInterfaces(MockAgentPlugin mock) {
    Set<String> out = new TreeSet<>();
    mock.plugins().interfaces().southboundState().values().forEach(i -> out.add(i.name()));
    return out;
  }

  static Interface sbInterface(MockAgentPlugin mock, String name) {
    return mock.plugins().interfaces().southboundState().values().stream()
        .filter(i -> i.name().equals(name))
        .findFirst()
        .orElse(null);
  }

  @Override
  public void close() {
    for (Agent a : agents) {
      a.close();
    }
    agents.clear();
  }
}
