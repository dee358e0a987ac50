package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.BD;
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

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.agent.internal.northbound.EtcdNorthboundProbe;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.ifplugin.model.Interface;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The etcd northbound against a real etcd: resync, watch, bad values, labels. */
class EtcdNorthboundTest extends SharedEtcdTest {
  @Test
  void startupResyncsFromKeysAlreadyInEtcd() throws Exception {
    String p = prefix("resync");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    etcd.put(p + IF + "loop1", "{\"name\":\"loop1\",\"type\":\"LOOPBACK\"}");
    etcd.put(p + BD + "bd1", "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"tap1\"}]}");
    // under the agent prefix but outside the model prefixes: never read
    etcd.put(p + "check/status/v1/plugin/x", "{\"state\":\"OK\"}");
    etcd.put(p + "config-status/mock/v1/interfaces/old", "{\"key\":\"x\"}");

    Agent agent = agents.start("resync", false);

    EtcdNorthbound nb = etcdSource(agent);
    assertThat(nb.resyncCount()).isEqualTo(1);
    assertThat(EtcdNorthboundProbe.resyncRevision(nb)).isPositive();
    assertThat(nb.rejected()).isEmpty();
    assertThat(agent.northbound().desired())
        .containsOnlyKeys(IF + "tap1", IF + "loop1", BD + "bd1");
    assertThat(agent.northbound().desired().get(IF + "tap1"))
        .isEqualTo(Interface.of("tap1", Interface.Type.TAP, true));
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    awaitState(agent, IF + "loop1", ValueState.CONFIGURED);
    awaitState(agent, BD + "bd1", ValueState.CONFIGURED);
    assertThat(agent.scheduler().valueStatus(BD + "bd1").derived())
        .extracting(s -> s.state())
        .containsExactly(ValueState.CONFIGURED);
  }

  @Test
  void livePutsAndDeletesAreApplied() throws Exception {
    String p = prefix("live");
    MockAgentPlugin mock = new MockAgentPlugin();
    Agent agent = agents.start("live", false, mock);
    assertThat(agent.northbound().desired()).isEmpty();

    etcd.put(p + IF + "tap1", tap("tap1", true));
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    assertThat(sbInterface(mock, "tap1").enabled()).isTrue();

    etcd.put(p + IF + "tap1", tap("tap1", false));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> assertThat(sbInterface(mock, "tap1").enabled()).isFalse());
    assertThat(state(agent, IF + "tap1")).isEqualTo(ValueState.CONFIGURED);

    etcd.put(p + IF + "tap2", tap("tap2", true));
    etcd.del(p + IF + "tap1");
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> assertThat(sbInterfaces(mock)).containsExactly("tap2"));
    assertThat(state(agent, IF + "tap1")).isEqualTo(ValueState.NONEXISTENT);
    assertThat(agent.northbound().desired()).containsOnlyKeys(IF + "tap2");
    // the watch, not a resync, delivered all of it
    assertThat(etcdSource(agent).resyncCount()).isEqualTo(1);
  }

  @Test
  void badValuesAreLoggedWithKeyAndCauseAndSkipped() throws Exception {
    Logger log = (Logger) LoggerFactory.getLogger(EtcdNorthbound.class);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    log.addAppender(logged);
    try {
      String p = prefix("bad");
      etcd.put(p + IF + "tap1", tap("tap1", true));
      etcd.put(p + IF + "tap2", "{\"name\":\"tap2\",");
      etcd.put(p + IF + "tap3", "{\"name\":\"tap3\",\"colour\":\"red\"}");
      etcd.put(p + IF + "tap4", tap("other", true));
      etcd.put(p + "config/mock/v1/unknown/x", "{}");

      MockAgentPlugin mock = new MockAgentPlugin();
      Agent agent = agents.start("bad", false, mock);
      EtcdNorthbound nb = etcdSource(agent);

      awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
      assertThat(sbInterfaces(mock)).containsExactly("tap1");
      assertThat(nb.rejected())
          .containsOnlyKeys(IF + "tap2", IF + "tap3", IF + "tap4", "config/mock/v1/unknown/x");
      assertThat(nb.rejected().get(IF + "tap2")).contains("malformed JSON");
      assertThat(nb.rejected().get(IF + "tap3")).contains("unknown field 'colour'");
      assertThat(nb.rejected().get(IF + "tap4")).contains("does not match");
      assertThat(nb.rejected().get("config/mock/v1/unknown/x")).contains("no registered model");
      assertThat(errors(logged))
          .anySatisfy(m -> assertThat(m).contains(p + IF + "tap2").contains("malformed JSON"))
          .anySatisfy(m -> assertThat(m).contains(p + IF + "tap3").contains("'colour'"))
          .anySatisfy(m -> assertThat(m).contains(p + IF + "tap4").contains("does not match"))
          .anySatisfy(
              m ->
                  assertThat(m)
                      .contains(p + "config/mock/v1/unknown/x")
                      .contains("no registered model"));

      // live: a bad value is skipped, the good one next to it is applied
      etcd.put(p + IF + "tap5", "not json");
      etcd.put(p + IF + "tap6", tap("tap6", true));
      awaitState(agent, IF + "tap6", ValueState.CONFIGURED);
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () ->
                  assertThat(errors(logged))
                      .anySatisfy(
                          m -> assertThat(m).contains(p + IF + "tap5").contains("malformed JSON")));
      assertThat(nb.rejected()).containsKey(IF + "tap5");
      assertThat(state(agent, IF + "tap5")).isEqualTo(ValueState.NONEXISTENT);

      // a bad update leaves the applied value as it was
      etcd.put(p + IF + "tap1", "{\"name\":\"tap1\",\"type\":\"NO_SUCH_TYPE\"}");
      await()
          .atMost(TIMEOUT)
          .untilAsserted(() -> assertThat(nb.rejected()).containsKey(IF + "tap1"));
      assertThat(sbInterface(mock, "tap1").enabled()).isTrue();
      // counted per reason: tap2, tap3, tap4 (resync), tap5 and tap1 (watch); the key of no model
      assertThat(nb.resyncCount()).isEqualTo(1);
      assertThat(agent.metrics().scrape())
          .contains(
              "kvs_northbound_rejected_values_total{reason=\"malformed\",source=\"etcd\"} 5.0",
              "kvs_northbound_rejected_values_total{reason=\"unknown-model\",source=\"etcd\"} 1.0");

      // fixed values are applied and no longer listed as rejected
      etcd.put(p + IF + "tap2", tap("tap2", true));
      etcd.del(p + IF + "tap5");
      awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () -> assertThat(nb.rejected()).doesNotContainKeys(IF + "tap2", IF + "tap5"));
      assertThat(sbInterfaces(mock)).containsExactly("tap1", "tap2", "tap6");
    } finally {
      log.detachAppender(logged);
    }
  }

  @Test
  @DisplayName(
      "a key with an empty name is rejected saying so; a value starting with a UTF-8"
          + " byte order mark is read")
  void emptyNameIsNamedAndByteOrderMarkIsSkipped() throws Exception {
    String p = prefix("bom");
    etcd.put(p + IF, "{\"name\":\"\",\"type\":\"TAP\"}");
    etcd.put(p + IF + "tap1", "\uFEFF" + tap("tap1", true));
    MockAgentPlugin mock = new MockAgentPlugin();
    Agent agent = agents.start("bom", false, mock);
    EtcdNorthbound nb = etcdSource(agent);
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    assertThat(nb.rejected()).containsOnlyKeys(IF);
    assertThat(nb.rejected().get(IF))
        .isEqualTo(
            IF
                + ": the key has an empty name after the"
                + " prefix "
                + IF
                + " of model mock.interfaces");

    // live too
    try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      etcd.put(p + IF + "tap2", "\uFEFF" + tap("tap2", true));
      etcd.put(p + IF, "{\"name\":\"\",\"type\":\"LOOPBACK\"}");
      awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
      await()
          .atMost(TIMEOUT)
          .untilAsserted(
              () ->
                  assertThat(log.messages())
                      .contains(
                          "etcd: skipping change of "
                              + p
                              + IF
                              + ": the key has an empty name after the prefix "
                              + IF
                              + " of model mock.interfaces"));
    }
    assertThat(nb.rejected()).containsOnlyKeys(IF);
  }

  @Test
  void agentsWithDifferentLabelsApplyOnlyTheirOwnKeys() throws Exception {
    etcd.put(prefix("alpha") + IF + "tapA", tap("tapA", true));
    etcd.put(prefix("beta") + IF + "tapB", tap("tapB", true));
    // a label that is a prefix of another must not see the other's keys
    etcd.put(prefix("alpha2") + IF + "tapX", tap("tapX", true));
    MockAgentPlugin mockA = new MockAgentPlugin();
    MockAgentPlugin mockB = new MockAgentPlugin();
    Agent alpha = agents.start("alpha", false, mockA);
    Agent beta = agents.start("beta", false, mockB);

    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(sbInterfaces(mockA)).containsExactly("tapA");
              assertThat(sbInterfaces(mockB)).containsExactly("tapB");
            });

    etcd.put(prefix("alpha") + IF + "tapA2", tap("tapA2", true));
    etcd.put(prefix("beta") + IF + "tapB2", tap("tapB2", true));
    etcd.put(prefix("alpha2") + IF + "tapY", tap("tapY", true));
    etcd.del(prefix("beta") + IF + "tapB");
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              assertThat(sbInterfaces(mockA)).containsExactly("tapA", "tapA2");
              assertThat(sbInterfaces(mockB)).containsExactly("tapB2");
            });
    assertThat(alpha.northbound().desired()).containsOnlyKeys(IF + "tapA", IF + "tapA2");
    assertThat(beta.northbound().desired()).containsOnlyKeys(IF + "tapB2");
  }

  @Test
  void changesDuringStartupAreNeitherLostNorAppliedTwice() throws Exception {
    String p = prefix("busy");
    for (int i = 0; i < 10; i++) {
      etcd.put(p + IF + "tap" + i, tap("tap" + i, true));
    }
    // etcdctl keeps writing while the agent reads, resyncs and starts to watch
    Thread writer =
        new Thread(
            () -> {
              for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 10; i++) {
                  if ((i + round) % 3 == 0) {
                    etcd.del(p + IF + "tap" + i);
                  } else {
                    etcd.put(p + IF + "tap" + i, tap("tap" + i, (i + round) % 2 == 0));
                  }
                }
              }
            });
    writer.start();
    MockAgentPlugin mock = new MockAgentPlugin();
    Agent agent = agents.start("busy", false, mock);
    writer.join(30_000);

    Map<String, Boolean> expected = new TreeMap<>();
    for (int i = 0; i < 10; i++) {
      if ((i + 2) % 3 != 0) {
        expected.put("tap" + i, (i + 2) % 2 == 0);
      }
    }
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              Map<String, Boolean> sb = new TreeMap<>();
              mock.plugins()
                  .interfaces()
                  .southboundState()
                  .values()
                  .forEach(i -> sb.put(i.name(), i.enabled()));
              assertThat(sb).isEqualTo(expected);
            });
    assertThat(agent.northbound().desired().keySet())
        .containsExactlyInAnyOrderElementsOf(expected.keySet().stream().map(n -> IF + n).toList());
  }

  private static List<String> errors(ListAppender<ILoggingEvent> logged) {
    synchronized (logged.list) {
      return logged.list.stream()
          .filter(e -> e.getLevel() == Level.ERROR)
          .map(ILoggingEvent::getFormattedMessage)
          .toList();
    }
  }
}
