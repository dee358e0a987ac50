package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.etcdSource;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.sbInterfaces;
import static io.kvscheduler.agent.EtcdTestSupport.state;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.internal.etcd.LabelClaim;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.testsupport.EtcdFixture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The label claim of agents in this JVM: a lost lease, a label taken meanwhile, bad labels. */
class LabelClaimTest {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final ObjectMapper JSON = new ObjectMapper();

  private EtcdFixture etcd;
  private final List<AutoCloseable> closing = new ArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    etcd = EtcdFixture.startNew();
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    etcd.close();
  }

  private Agent start(String label, String endpoint, String rest, MockAgentPlugin mock)
      throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .label(label)
                .restAddress(rest)
                .etcdEndpoints(List.of(endpoint))
                .etcd(
                    EtcdSettings.defaults()
                        .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(1), TTL))
                .statusPublishing(true)
                .printTxnSummary(false)
                .build(),
            List.of(mock));
    closing.add(a);
    return a;
  }

  private static JsonNode label(Agent agent) throws Exception {
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/info/label"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  private static int port(String endpoint) {
    return URI.create(endpoint).getPort();
  }

  @Test
  void lostLeaseStopsEtcdChangesUntilTheLabelIsClaimedAgain() throws Exception {
    String p = prefix("lost");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    TcpProxy proxy = new TcpProxy(port(etcd.endpoint()), TcpProxy.Mode.FORWARD);
    closing.add(proxy);
    MockAgentPlugin mockA = new MockAgentPlugin();
    Agent a = start("lost", proxy.address(), "127.0.0.1:0", mockA);
    awaitState(a, IF + "tap1", ValueState.CONFIGURED);
    assertThat(a.labelClaim().state()).isEqualTo(LabelClaim.State.OWNER);
    assertThat(label(a).get("state").asText()).isEqualTo("OWNER");
    String ownerA = etcd.get(p + "owner");
    assertThat(ownerA).isNotNull();

    // a partition longer than the TTL: the agent says it lost the label
    proxy.mode(TcpProxy.Mode.BLACKHOLE);
    proxy.cut();
    await().atMost(TTL.plusSeconds(3)).until(() -> a.labelClaim().state() == LabelClaim.State.LOST);
    JsonNode lost = label(a);
    assertThat(lost.get("state").asText()).isEqualTo("LOST");
    assertThat(lost.get("detail").asText()).startsWith("lease lost: ");
    await().atMost(TTL.plusSeconds(5)).until(() -> etcd.get(p + "owner") == null);

    // meanwhile another agent takes the label and applies a change
    MockAgentPlugin mockB = new MockAgentPlugin();
    Agent b = start("lost", etcd.endpoint(), null, mockB);
    assertThat(b.labelClaim().isOwner()).isTrue();
    etcd.put(p + IF + "tap2", tap("tap2", true));
    awaitState(b, IF + "tap2", ValueState.CONFIGURED);
    long statusLeaseB = etcd.leaseOf(p + "config-status/mock/v1/interfaces/tap2");

    // the network heals: the first agent applies nothing and writes nothing while b holds it
    proxy.mode(TcpProxy.Mode.FORWARD);
    etcd.put(p + IF + "tap3", tap("tap3", true));
    awaitState(b, IF + "tap3", ValueState.CONFIGURED);
    // it reaches etcd again and finds the label held by b
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> assertThat(label(a).at("/holder/this_agent").asBoolean(true)).isFalse());
    Thread.sleep(2000);
    assertThat(state(a, IF + "tap2")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(state(a, IF + "tap3")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(sbInterfaces(mockA)).containsExactly("tap1");
    assertThat(label(a).get("state").asText()).isEqualTo("LOST");
    assertThat(label(a).at("/holder/pid").asLong()).isEqualTo(ProcessHandle.current().pid());
    assertThat(etcd.leaseOf(p + "config-status/mock/v1/interfaces/tap2")).isEqualTo(statusLeaseB);
    assertThat(etcd.getPrefix(p + "config-status/")).hasSize(3);

    // b stops: the first agent claims the label again, resyncs and applies what it missed
    b.close();
    awaitState(a, IF + "tap2", ValueState.CONFIGURED);
    awaitState(a, IF + "tap3", ValueState.CONFIGURED);
    assertThat(sbInterfaces(mockA)).containsExactly("tap1", "tap2", "tap3");
    assertThat(label(a).get("state").asText()).isEqualTo("OWNER");
    assertThat(etcdSource(a).resyncCount()).isGreaterThanOrEqualTo(2);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> etcd.getPrefix(p + "config-status/").size() == 3);
    assertThat(JSON.readTree(etcd.get(p + "owner")).get("instance").asText())
        .isEqualTo(a.labelClaim().self().instance());
  }

  @Test
  void secondAgentInTheSameProcessIsRefusedAndTheFirstKeepsTheLabel() throws Exception {
    MockAgentPlugin mock = new MockAgentPlugin();
    Agent a = start("same", etcd.endpoint(), null, mock);
    assertThatThrownBy(() -> start("same", etcd.endpoint(), null, new MockAgentPlugin()))
        .isInstanceOf(LabelClaim.HeldException.class)
        .hasMessageContaining("label 'same' is held by another agent")
        .hasMessageContaining("pid " + ProcessHandle.current().pid());
    assertThat(a.labelClaim().isOwner()).isTrue();
    a.close();
    assertThat(etcd.get(prefix("same") + "owner")).isNull();
  }

  @Test
  void agentThatGotNoAnswerAtStartAndThenFindsTheLabelHeldAppliesNothingAndSaysSo()
      throws Exception {
    String p = prefix("late");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    MockAgentPlugin mockA = new MockAgentPlugin();
    Agent a = start("late", etcd.endpoint(), null, mockA);
    awaitState(a, IF + "tap1", ValueState.CONFIGURED);
    // the second agent's etcd answers nothing at first (connections held), later it does
    TcpProxy slow = new TcpProxy(port(etcd.endpoint()), TcpProxy.Mode.HOLD);
    closing.add(slow);
    MockAgentPlugin mockB = new MockAgentPlugin();
    try (LogCapture log = new LogCapture(Agent.class)) {
      Agent b = start("late", slow.address(), null, mockB);
      assertThat(b.labelClaim().isOwner()).isFalse();
      assertThat(log.messages()).anyMatch(m -> m.contains("cannot claim label 'late' yet"));
      slow.mode(TcpProxy.Mode.FORWARD);
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  log.messages().stream()
                      .anyMatch(
                          m ->
                              m.contains("label 'late' is held by another agent")
                                  && m.contains("this agent applies nothing from etcd")));
      Thread.sleep(1000);
      assertThat(state(b, IF + "tap1")).isEqualTo(ValueState.NONEXISTENT);
      assertThat(sbInterfaces(mockB)).isEmpty();
    }
    assertThat(JSON.readTree(etcd.get(p + "owner")).get("instance").asText())
        .isEqualTo(a.labelClaim().self().instance());
  }

  @Test
  void labelsWithASlashOrEmptyAreRefused() {
    for (String bad : List.of("a/b", "", "/")) {
      assertThatThrownBy(() -> AgentConfig.builder().label(bad).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("invalid label '" + bad + "'");
    }
  }
}
