package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.BD;
import static io.kvscheduler.agent.EtcdTestSupport.FIB;
import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.kvscheduler.api.ValueState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Status keys the agent writes back into etcd, read back with etcdctl. */
class EtcdStatusPublishingTest extends SharedEtcdTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MAC = "aa:bb:cc:dd:ee:01";

  @Test
  void valueStatusesArePublishedUnderConfigStatus() throws Exception {
    String p = prefix("st1");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    Agent agent = agents.start("st1", true);

    // from the startup resync
    JsonNode tap1 = awaitStatus(p + "config-status/mock/v1/interfaces/tap1");
    assertThat(tap1)
        .isEqualTo(
            JSON.readTree(
                "{\"key\":\"config/mock/v1/interfaces/tap1\",\"state\":\"CONFIGURED\","
                    + "\"last_operation\":\"CREATE\"}"));

    // a FIB entry forwarding to an interface that is not in the bridge domain waits
    etcd.put(
        p + BD + "bd1",
        "{\"name\":\"bd1\",\"interfaces\":[{\"name\":\"tap1\"}," + "{\"name\":\"tap9\"}]}");
    String fibKey = FIB + "bd1/mac/" + MAC;
    etcd.put(
        p + fibKey,
        "{\"phys_address\":\""
            + MAC
            + "\",\"bridge_domain\":\"bd1\","
            + "\"outgoing_interface\":\"tap9\"}");
    String fibStatus = p + "config-status/mock/v1/fib/bd1/mac/" + MAC;
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              JsonNode s = status(fibStatus);
              assertThat(s).isNotNull();
              assertThat(s.path("key").asText()).isEqualTo(fibKey);
              assertThat(s.path("state").asText()).isEqualTo("PENDING");
            });
    assertThat(agent.scheduler().valueStatus(fibKey).state()).isEqualTo(ValueState.PENDING);
    JsonNode bd = awaitStatus(p + "config-status/mock/v1/bridge-domain/bd1");
    assertThat(bd.path("state").asText()).isEqualTo("CONFIGURED");
    assertThat(status(fibStatus).has("error")).isFalse();

    // the interface appears: binding and FIB entry get configured, the status follows
    etcd.put(p + IF + "tap9", tap("tap9", true));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> assertThat(status(fibStatus).path("state").asText()).isEqualTo("CONFIGURED"));
    assertThat(status(fibStatus).path("last_operation").asText()).isEqualTo("CREATE");

    // an update is reported as UPDATE
    etcd.put(p + IF + "tap1", tap("tap1", false));
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () ->
                assertThat(
                        status(p + "config-status/mock/v1/interfaces/tap1")
                            .path("last_operation")
                            .asText())
                    .isEqualTo("UPDATE"));

    // a removed value's status is deleted
    etcd.del(p + fibKey);
    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(etcd.get(fibStatus)).isNull());
    awaitState(agent, fibKey, ValueState.NONEXISTENT);
    assertThat(etcd.getPrefix(p + "config-status/").keySet())
        .containsExactlyInAnyOrder(
            p + "config-status/mock/v1/interfaces/tap1",
            p + "config-status/mock/v1/interfaces/tap9",
            p + "config-status/mock/v1/bridge-domain/bd1");

    // the statuses live as long as the agent's etcd client (lease)
    agents.close();
    await()
        .atMost(TIMEOUT)
        .untilAsserted(() -> assertThat(etcd.getPrefix(p + "config-status/")).isEmpty());
  }

  @Test
  void agentStatusIsWrittenAndNoValueStatusWhenPublishingIsOff() throws Exception {
    String p = prefix("st2");
    long before = Instant.now().getEpochSecond();
    etcd.put(p + IF + "tap1", tap("tap1", true));
    Agent agent = agents.start("st2", false);
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);

    JsonNode st = awaitStatus(p + "check/status/v1/agent");
    assertThat(st.path("state").asText()).isEqualTo("OK");
    assertThat(st.path("build_version").asText()).isNotEmpty();
    assertThat(st.path("start_time").isTextual()).isTrue();
    assertThat(Long.parseLong(st.path("start_time").asText()))
        .isBetween(before - 1, Instant.now().getEpochSecond());
    assertThat(st.path("last_update").isTextual()).isTrue();
    assertThat(st.path("plugins").toString()).isEqualTo("[{\"name\":\"mock\",\"state\":\"OK\"}]");

    assertThat(etcd.getPrefix(p + "config-status/")).isEmpty();
  }

  @Test
  void agentStatusLivesUnderTheAgentsLeaseAndSaysStoppingOnCleanShutdown() throws Exception {
    String p = prefix("st3");
    String agentKey = p + "check/status/v1/agent";
    etcd.put(p + IF + "tap1", tap("tap1", true));
    Agent agent = agents.start("st3", true);
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    assertThat(awaitStatus(agentKey).path("state").asText()).isEqualTo("OK");
    String tapStatus = p + "config-status/mock/v1/interfaces/tap1";
    awaitStatus(tapStatus);

    // one lease for the agent status and the value statuses: they die with the agent
    long lease = etcd.leaseOf(agentKey);
    assertThat(lease).isNotZero();
    assertThat(etcd.leaseOf(tapStatus)).isEqualTo(lease);
    assertThat(etcd.ctlChecked("lease", "timetolive", Long.toHexString(lease)))
        .contains("granted with TTL(10s)");

    List<String> events = new CopyOnWriteArrayList<>();
    try (Client c = Client.builder().endpoints(etcd.endpoint()).build()) {
      // the watch starts after the current revision, however late it is registered
      long revision =
          c.getKVClient().get(bytes(agentKey)).get(10, TimeUnit.SECONDS).getHeader().getRevision();
      Watch.Watcher w =
          c.getWatchClient()
              .watch(
                  bytes(agentKey),
                  WatchOption.builder().withRevision(revision + 1).build(),
                  r ->
                      r.getEvents()
                          .forEach(
                              e ->
                                  events.add(
                                      e.getEventType()
                                          + " "
                                          + e.getKeyValue()
                                              .getValue()
                                              .toString(StandardCharsets.UTF_8))));
      agent.close();
      await().atMost(TIMEOUT).until(() -> events.size() >= 2);
      w.close();
    }
    assertThat(events).hasSize(2);
    assertThat(events.get(0)).startsWith("PUT ");
    JsonNode stopping = JSON.readTree(events.get(0).substring(4));
    assertThat(stopping.path("state").asText()).isEqualTo("INIT");
    assertThat(stopping.path("plugins").toString())
        .isEqualTo("[{\"name\":\"mock\",\"state\":\"INIT\",\"error\":\"agent stopping\"}]");
    assertThat(Long.parseLong(stopping.path("last_change").asText()))
        .isGreaterThanOrEqualTo(Long.parseLong(stopping.path("start_time").asText()));
    assertThat(events.get(1)).isEqualTo("DELETE ");
    assertThat(etcd.get(agentKey)).isNull();
    assertThat(etcd.get(tapStatus)).isNull();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  @Test
  void theAppliedRevisionIsWrittenAfterTheStatusesOfTheChangesUpToIt() throws Exception {
    String p = prefix("st-applied");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    agents.start("st-applied", true);
    String tap1 = p + "config-status/mock/v1/interfaces/tap1";
    awaitStatus(tap1);
    long start = revision(p + IF + "tap1");
    await().atMost(TIMEOUT).until(() -> applied(p) >= start);

    // a change that leaves the status as it was (CONFIGURED, UPDATE) still moves the revision
    etcd.put(p + IF + "tap1", tap("tap1", false));
    etcd.put(p + IF + "tap1", tap("tap1", true));
    long update = revision(p + IF + "tap1");
    await().atMost(TIMEOUT).until(() -> applied(p) >= update);
    assertThat(status(tap1).path("state").asText()).isEqualTo("CONFIGURED");

    // once the revision of a change is seen, its status is there already
    for (int i = 0; i < 5; i++) {
      String key = IF + "bad" + i;
      etcd.put(p + key, "{\"name\":\"bad" + i + "\"}"); // no type: INVALID
      long rev = revision(p + key);
      await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(5)).until(() -> applied(p) >= rev);
      JsonNode s = status(p + "config-status/mock/v1/interfaces/bad" + i);
      assertThat(s).as("status of %s when revision %d is applied", key, rev).isNotNull();
      assertThat(s.path("state").asText()).isEqualTo("INVALID");
    }
  }

  /** The revision in the agent's {@code check/status/v1/applied}, 0 when absent. */
  private static long applied(String prefix) throws Exception {
    JsonNode n = status(prefix + "check/status/v1/applied");
    return n == null ? 0 : n.path("revision").asLong();
  }

  private static long revision(String key) throws Exception {
    return JSON.readTree(etcd.ctlChecked("get", key, "-w", "json"))
        .path("kvs")
        .get(0)
        .path("mod_revision")
        .asLong();
  }

  private static JsonNode awaitStatus(String key) {
    return await().atMost(TIMEOUT).until(() -> status(key), s -> s != null);
  }

  private static JsonNode status(String key) throws Exception {
    String v = etcd.get(key);
    return v == null ? null : JSON.readTree(v);
  }
}
