package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.watch.WatchEvent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as a process ({@code AgentMain run}) with etcd: its status keys say it is gone whether
 * it stops cleanly (SIGTERM: stopping, then deleted) or dies (SIGKILL: deleted when its lease of
 * {@code session-ttl} expires), never "OK" for a dead agent.
 */
class AgentProcessStatusTest extends SharedEtcdTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(40);
  @TempDir Path dir;

  private Process startAgent(String label) throws Exception {
    Path conf = dir.resolve("etcd.conf");
    Files.writeString(conf, "endpoints: [\"" + etcd.endpoint() + "\"]\nsession-ttl: 2\n");
    ProcessBuilder pb =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                AgentMain.class.getName(),
                "run",
                "--label",
                label,
                "--rest",
                "off",
                "--quiet",
                "--status-publishing",
                "--state-dir",
                dir.resolve("state").toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(label + ".log").toFile());
    pb.environment().put("ETCD_CONFIG", conf.toString());
    pb.environment().remove("ETCD_ENDPOINTS");
    pb.environment().remove("MICROSERVICE_LABEL");
    return pb.start();
  }

  /** The events of the agent status key of {@code label}, as "PUT state" / "DELETE". */
  private static Watch.Watcher watchAgentStatus(Client c, String label, List<String> events) {
    return c.getWatchClient()
        .watch(
            bytes(prefix(label) + "check/status/v1/agent"),
            r ->
                r.getEvents()
                    .forEach(
                        e ->
                            events.add(
                                e.getEventType() == WatchEvent.EventType.DELETE
                                    ? "DELETE"
                                    : "PUT "
                                        + e.getKeyValue()
                                            .getValue()
                                            .toString(StandardCharsets.UTF_8))));
  }

  /**
   * Waits until the agent {@code label} wrote its status OK and the status of tap1, then forgets
   * the events seen so far.
   */
  private void awaitRunning(String label, List<String> events) {
    await()
        .atMost(TIMEOUT)
        .until(() -> events.stream().anyMatch(e -> e.contains("\"state\":\"OK\"")));
    await()
        .atMost(TIMEOUT)
        .until(() -> etcd.get(prefix(label) + "config-status/mock/v1/interfaces/tap1") != null);
    events.clear();
  }

  @Test
  void cleanStopSaysStoppingThenTheKeysGo() throws Exception {
    String label = "proc-term";
    etcd.put(prefix(label) + IF + "tap1", tap("tap1", true));
    List<String> events = new CopyOnWriteArrayList<>();
    try (Client c = Client.builder().endpoints(etcd.endpoint()).build();
        Watch.Watcher w = watchAgentStatus(c, label, events)) {
      Process agent = startAgent(label);
      try {
        awaitRunning(label, events);
        long t0 = System.nanoTime();
        agent.destroy(); // SIGTERM
        assertThat(agent.waitFor(20, TimeUnit.SECONDS)).isTrue();
        await().atMost(TIMEOUT).until(() -> events.contains("DELETE"));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(events).hasSize(2);
        assertThat(events.get(0)).contains("\"state\":\"INIT\"").contains("agent stopping");
        assertThat(events.get(1)).isEqualTo("DELETE");
        assertThat(etcd.getPrefix(prefix(label) + "config-status/")).isEmpty();
        Figures.print(
            "etcd agent process stopped with SIGTERM: status 'stopping' then deleted"
                + " with the value statuses, %d ms after the signal",
            ms);
      } finally {
        agent.destroyForcibly();
      }
    }
  }

  @Test
  void deadAgentsKeysVanishWithItsLease() throws Exception {
    String label = "proc-kill";
    etcd.put(prefix(label) + IF + "tap1", tap("tap1", true));
    List<String> events = new CopyOnWriteArrayList<>();
    try (Client c = Client.builder().endpoints(etcd.endpoint()).build();
        Watch.Watcher w = watchAgentStatus(c, label, events)) {
      Process agent = startAgent(label);
      try {
        awaitRunning(label, events);
        long t0 = System.nanoTime();
        agent.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertThat(agent.waitFor(20, TimeUnit.SECONDS)).isTrue();
        await().atMost(TIMEOUT).until(() -> events.contains("DELETE"));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(events).containsExactly("DELETE");
        assertThat(ms).isGreaterThan(1000); // the lease ran out (session-ttl 2 s)
        assertThat(etcd.getPrefix(prefix(label) + "config-status/")).isEmpty();
        Figures.print(
            "etcd agent process killed with SIGKILL: its status keys vanished %d ms"
                + " later (session-ttl 2 s)",
            ms);
      } finally {
        agent.destroyForcibly();
      }
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
