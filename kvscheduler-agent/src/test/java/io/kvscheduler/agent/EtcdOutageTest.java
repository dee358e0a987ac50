package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.etcdSource;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.sbInterface;
import static io.kvscheduler.agent.EtcdTestSupport.sbInterfaces;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.agent.internal.northbound.EtcdNorthboundProbe;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.testsupport.EtcdFixture;
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
