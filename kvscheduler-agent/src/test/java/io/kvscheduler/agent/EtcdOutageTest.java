package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.etcdSource;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.sbInterface;
import static io.kvscheduler.agent.EtcdTestSupport.sbInterfaces;
import static io.kvscheduler.agent.EtcdTestSupport.state;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.agent.internal.northbound.EtcdNorthboundProbe;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.testsupport.EtcdFixture;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** etcd goes away for a few seconds; keys change around its return; the agent converges. */
class EtcdOutageTest {
  private EtcdFixture etcd;
  private EtcdTestSupport agents;

  @BeforeEach
  void setUp() throws Exception {
    etcd = EtcdFixture.startNew();
    agents = new EtcdTestSupport(etcd);
  }

  @AfterEach
  void tearDown() throws Exception {
    agents.close();
    etcd.close();
  }

  /**
   * etcd cut off without a reset or an error (the connections stay open, nothing arrives): the
   * agent, which reads nothing at rest, notices that etcd's answers to its keep-alives stopped,
   * probes, says the connection is lost and resyncs once etcd answers again.
   */
  @Test
  void silentPartitionIsNoticedFromTheMissingKeepAliveAnswersAndHealed() throws Exception {
    String p = prefix("silent");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    // a long TTL: the claim of the label outlives the partition, so what notices it is the
    // northbound (a third of the TTL, 10 s, plus operation-timeout, 1 s, plus 1 s)
    Duration ttl = Duration.ofSeconds(30);
    try (TcpProxy proxy =
            new TcpProxy(URI.create(etcd.endpoint()).getPort(), TcpProxy.Mode.FORWARD);
        LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      MockAgentPlugin mock = new MockAgentPlugin();
      Agent agent =
          agents.start(
              AgentConfig.builder()
                  .label("silent")
                  .restAddress(null)
                  .etcdEndpoints(List.of(proxy.address()))
                  .etcd(
                      EtcdSettings.defaults()
                          .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(1), ttl))
                  .statusPublishing(true)
                  .printTxnSummary(false)
                  .build(),
              mock);
      EtcdNorthbound nb = etcdSource(agent);
      awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
      long resyncs = nb.resyncCount();
      long probes = EtcdNorthboundProbe.probeCount(nb);

      proxy.mode(TcpProxy.Mode.HOLD); // new connections wait too
      proxy.freeze(true);
      long t0 = System.nanoTime();
      etcd.put(p + IF + "tap2", tap("tap2", true)); // made meanwhile, not seen
      await()
          .atMost(Duration.ofSeconds(25))
          .until(() -> log.messages().stream().anyMatch(m -> m.contains("does not answer")));
      long noticedMs = (System.nanoTime() - t0) / 1_000_000;
      assertThat(EtcdNorthboundProbe.probeCount(nb)).isGreaterThan(probes);
      assertThat(agent.labelClaim().isOwner()).isTrue(); // the claim did not tell it
      assertThat(state(agent, IF + "tap1")).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(agent, IF + "tap2")).isEqualTo(ValueState.NONEXISTENT);

      proxy.freeze(false);
      proxy.mode(TcpProxy.Mode.FORWARD);
      awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
      assertThat(nb.resyncCount()).isGreaterThan(resyncs);
      assertThat(sbInterfaces(mock)).containsExactly("tap1", "tap2");
      Figures.print(
          "etcd cut off silently (connections open, nothing arrives): noticed after %d ms"
              + " (session-ttl %d s, operation-timeout 1 s), resynced once it answered",
          noticedMs, ttl.toSeconds());
    }
  }

  @Test
  void agentResyncsAfterEtcdRestartAndConvergesToWhatEtcdHolds() throws Exception {
    String p = prefix("outage");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    etcd.put(p + IF + "tap2", tap("tap2", true));
    MockAgentPlugin mock = new MockAgentPlugin();
    Agent agent = agents.start("outage", true, mock);
    EtcdNorthbound nb = etcdSource(agent);
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
    await()
        .atMost(TIMEOUT)
        .until(() -> etcd.get(p + "config-status/mock/v1/interfaces/tap2") != null);
    long firstRevision = EtcdNorthboundProbe.resyncRevision(nb);
    // a value whose update was rejected keeps its applied value, through the resync too
    etcd.put(p + IF + "tap6", tap("tap6", true));
    awaitState(agent, IF + "tap6", ValueState.CONFIGURED);
    etcd.put(p + IF + "tap6", "{\"name\":\"tap6\",\"enabled\":1}");
    await().atMost(TIMEOUT).until(() -> nb.rejected().containsKey(IF + "tap6"));

    etcd.stop();
    Thread.sleep(4000);
    etcd.start();
    // changes right after the restart, racing with the agent's reconnection; compaction makes
    // the revisions before them unwatchable
    etcd.del(p + IF + "tap1");
    etcd.put(p + IF + "tap2", tap("tap2", false));
    etcd.put(p + IF + "tap3", tap("tap3", true));
    etcd.compact();
    etcd.put(p + IF + "tap4", tap("tap4", true));

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(sbInterfaces(mock)).containsExactly("tap2", "tap3", "tap4", "tap6");
              assertThat(sbInterface(mock, "tap2").enabled()).isFalse();
            });
    assertThat(nb.rejected()).containsKey(IF + "tap6");
    assertThat(nb.resyncCount()).isGreaterThanOrEqualTo(2);
    // each resync after the first is a reconnect, counted in the metrics
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(agent.metrics().scrape())
                    .contains(
                        "kvs_northbound_reconnects_total{source=\"etcd\"} "
                            + (nb.resyncCount() - 1)
                            + ".0"));
    assertThat(EtcdNorthboundProbe.resyncRevision(nb)).isGreaterThan(firstRevision);
    assertThat(agent.northbound().desired())
        .containsOnlyKeys(IF + "tap2", IF + "tap3", IF + "tap4", IF + "tap6");
    assertThat(agent.scheduler().valueStatus(IF + "tap1").state())
        .isEqualTo(ValueState.NONEXISTENT);

    // the status keys follow: tap1's is gone, the others are (re)written
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(etcd.getPrefix(p + "config-status/").keySet())
                    .containsExactlyInAnyOrder(
                        p + "config-status/mock/v1/interfaces/tap2",
                        p + "config-status/mock/v1/interfaces/tap3",
                        p + "config-status/mock/v1/interfaces/tap4",
                        p + "config-status/mock/v1/interfaces/tap6"));

    // and the watch works again
    etcd.put(p + IF + "tap5", tap("tap5", true));
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(sbInterfaces(mock)).contains("tap5"));
  }
}
