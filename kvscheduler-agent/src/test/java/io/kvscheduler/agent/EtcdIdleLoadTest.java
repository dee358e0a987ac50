package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.etcdSource;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.kvscheduler.agent.internal.etcd.EtcdStatusPublisher;
import io.kvscheduler.agent.internal.northbound.EtcdNorthboundProbe;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What an agent at rest costs etcd, read from the etcd server's own gRPC counters ({@code
 * /metrics}): no read and no write at all, only the lease keep-alives and the open watches. The
 * window is longer than the 10 s of vpp-agent's status heartbeat, which this agent does not send:
 * its agent status is written when it changes, and its lease tells that it is alive.
 */
class EtcdIdleLoadTest extends SharedEtcdTest {
  private static final Duration WINDOW = Duration.ofSeconds(12);
  private static final Pattern HANDLED =
      Pattern.compile("^grpc_server_handled_total\\{(.*)} (\\S+)$");
  private static final Pattern RECEIVED =
      Pattern.compile("^grpc_server_msg_received_total\\{(.*)} (\\S+)$");
  private static final Pattern METHOD = Pattern.compile("grpc_method=\"([^\"]+)\"");

  @Test
  void idleAgentSendsNoReadAndNoWriteOnlyKeepAlives() throws Exception {
    String label = "idle";
    String p = prefix(label);
    etcd.put(p + IF + "tap1", tap("tap1", true));
    etcd.put(p + IF + "tap2", tap("tap2", true));
    Agent agent = agents.start(label, true, new MockAgentPlugin());
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
    await().atMost(TIMEOUT).until(() -> etcd.getPrefix(p + "config-status/").size() == 2);
    await().atMost(TIMEOUT).until(() -> etcd.get(p + "check/status/v1/applied") != null);

    // which keys are written while the agent rests, seen through a watch (no read of its own)
    List<String> written = new CopyOnWriteArrayList<>();
    try (Client watcher = Client.builder().endpoints(etcd.endpoint()).build();
        Watch.Watcher w =
            watcher
                .getWatchClient()
                .watch(
                    ByteSequence.from(p, StandardCharsets.UTF_8),
                    WatchOption.builder().isPrefix(true).build(),
                    r -> {
                      for (WatchEvent e : r.getEvents()) {
                        written.add(e.getKeyValue().getKey().toString(StandardCharsets.UTF_8));
                      }
                    })) {
      Thread.sleep(2000); // the start settles: lease grants, stale statuses looked for
      written.clear();
      long probes = EtcdNorthboundProbe.probeCount(etcdSource(agent));
      Map<String, Double> before = counters();
      Thread.sleep(WINDOW.toMillis());
      Map<String, Double> after = counters();
      Thread.sleep(300); // the watch events of the window's last writes arrive
      List<String> keys = List.copyOf(written);
      Map<String, Double> delta = new TreeMap<>();
      after.forEach(
          (k, v) -> {
            double d = v - before.getOrDefault(k, 0.0);
            if (d != 0) {
              delta.put(k, d);
            }
          });
      double range = delta.getOrDefault("Range", 0.0);
      double writes = delta.getOrDefault("Put", 0.0) + delta.getOrDefault("Txn", 0.0);
      assertThat(range).as("reads at rest (%s)", delta).isZero();
      assertThat(delta.getOrDefault("DeleteRange", 0.0)).as("deletes at rest").isZero();
      assertThat(delta.getOrDefault("LeaseGrant", 0.0)).as("lease grants at rest").isZero();
      // no key written at all, not even the agent status (no heartbeat)
      assertThat(keys).as("keys written at rest (%s)", delta).isEmpty();
      assertThat(writes).as("writes at rest (%s), keys %s", delta, keys).isZero();
      assertThat(delta.getOrDefault("LeaseRevoke", 0.0)).as("lease revokes at rest").isZero();
      // and the agent is connected: its leases are kept alive
      assertThat(delta.getOrDefault("LeaseKeepAlive_msgs", 0.0)).isPositive();
      // its agent status is still there, under a lease etcd keeps alive
      assertThat(etcd.get(p + EtcdStatusPublisher.AGENT_STATUS_KEY)).contains("\"state\":\"OK\"");
      assertThat(EtcdNorthboundProbe.probeCount(etcdSource(agent))).isEqualTo(probes);
      Figures.print(
          "etcd requests of one agent at rest over %d s: %s", WINDOW.toSeconds(), delta.toString());
    }
  }

  /**
   * etcd's gRPC counters: unary calls by method ({@code Range}, {@code Put}, {@code Txn}, ...),
   * stream messages received as {@code <method>_msgs}.
   */
  private static Map<String, Double> counters() throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(etcd.endpoint() + "/metrics"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    Map<String, Double> out = new TreeMap<>();
    for (String line : r.body().split("\n")) {
      String suffix = "";
      Matcher m = HANDLED.matcher(line);
      if (!m.matches()) {
        m = RECEIVED.matcher(line);
        if (!m.matches()) {
          continue;
        }
        suffix = "_msgs";
      }
      Matcher method = METHOD.matcher(m.group(1));
      if (method.find()) {
        out.merge(method.group(1) + suffix, Double.parseDouble(m.group(2)), Double::sum);
      }
    }
    return out;
  }
}
