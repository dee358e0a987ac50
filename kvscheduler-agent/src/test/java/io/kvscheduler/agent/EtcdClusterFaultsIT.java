package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.etcdSource;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.state;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.CompactOption;
import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.agent.internal.northbound.EtcdNorthboundProbe;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.testsupport.EtcdCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The etcd northbound against a real 3-member etcd cluster on loopback ports, through faults: a
 * member killed and restarted while values change, the whole cluster down and back, the agent cut
 * off while etcd compacts past its last revision, and a blackholed endpoint. After each, what the
 * southbound holds, the order in which it got there and the status keys in etcd are checked; the
 * figures go to the test log ({@code [figure]} lines).
 */
class EtcdClusterFaultsIT {
  /** How long the whole cluster stays down. */
  static final Duration CLUSTER_DOWN = Duration.ofSeconds(30);

  static final Duration TIMEOUT = Duration.ofSeconds(40);
  static final EtcdSettings SETTINGS =
      EtcdSettings.defaults()
          .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(5));
  private static final ObjectMapper JSON = new ObjectMapper();

  private static EtcdCluster cluster;
  private final List<Agent> started = new CopyOnWriteArrayList<>();
  private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void startCluster() throws Exception {
    long t0 = System.nanoTime();
    cluster = EtcdCluster.startNew(3);
    Figures.print(
        "etcd cluster of %d members started in %d ms", cluster.size(), ms(System.nanoTime() - t0));
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
  }

  @AfterEach
  void closeAgents() throws Exception {
    started.forEach(Agent::close);
    started.clear();
    for (AutoCloseable c : closeables) {
      c.close();
    }
    closeables.clear();
    cluster.startAll();
  }

  private Agent start(String label, List<String> endpoints, SbRecorder sb) throws Exception {
    return start(label, endpoints, sb, SETTINGS);
  }

  private Agent start(String label, List<String> endpoints, SbRecorder sb, EtcdSettings settings)
      throws Exception {
    Agent a =
        Agent.start(
            AgentConfig.builder()
                .label(label)
                .restAddress(null)
                .etcdEndpoints(endpoints)
                .statusPublishing(true)
                .printTxnSummary(false)
                .etcd(settings)
                .build(),
            List.of(sb));
    started.add(a);
    return a;
  }

  static String iface(String name, int seq) {
    return "{\"name\":\""
        + name
        + "\",\"type\":\"TAP\",\"enabled\":true,\"phys_address\":\""
        + mac(seq)
        + "\"}";
  }

  static String mac(int seq) {
    return String.format("02:00:00:00:%02x:%02x", (seq >> 8) & 0xff, seq & 0xff);
  }

  @Test
  void memberKilledAndRestartedWhileValuesChange() throws Exception {
    String label = "kill";
    String p = prefix(label);
    int keys = 5;
    int writes = 200;
    Map<String, List<String>> written = new TreeMap<>();
    for (int k = 0; k < keys; k++) {
      cluster.put(p + IF + "tap" + k, iface("tap" + k, 0));
      written.computeIfAbsent("tap" + k, x -> new ArrayList<>()).add(mac(0));
    }
    SbRecorder sb = new SbRecorder();
    Agent agent = start(label, cluster.endpoints(), sb);
    EtcdNorthbound nb = etcdSource(agent);
    awaitSb(sb, written);
    long resyncs = nb.resyncCount();
    long resumes = nb.resumedCount();
    assertStatusKeysConsistent(agent, label, written.keySet());
    StatusSampler sampler = new StatusSampler(cluster.endpoints(), p, written.keySet());
    closeables.add(sampler);

    AtomicInteger done = new AtomicInteger();
    AtomicInteger retried = new AtomicInteger();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread writer =
        new Thread(
            () -> {
              try (Client c =
                  Client.builder().endpoints(cluster.endpoints().toArray(String[]::new)).build()) {
                for (int i = 1; i <= writes; i++) {
                  String name = "tap" + (i % keys);
                  ByteSequence key = bytes(p + IF + name);
                  ByteSequence value = bytes(iface(name, i));
                  while (true) {
                    try {
                      c.getKVClient().put(key, value).get(5, TimeUnit.SECONDS);
                      break;
                    } catch (Exception e) {
                      retried
                          .incrementAndGet(); // a put whose answer was lost: the same value again
                    }
                  }
                  synchronized (written) {
                    written.get(name).add(mac(i));
                  }
                  done.set(i);
                  Thread.sleep(10);
                }
              } catch (Throwable t) {
                failed.set(t);
              }
            },
            "etcd-writer");
    long t0 = System.nanoTime();
    writer.start();
    int kills = 0;
    for (int m = 0; m < cluster.size(); m++) {
      int at = (m + 1) * writes / (cluster.size() + 1);
      await().atMost(TIMEOUT).until(() -> done.get() >= at || failed.get() != null);
      cluster.kill(m);
      kills++;
      int back = at + writes / (2 * (cluster.size() + 1));
      await().atMost(TIMEOUT).until(() -> done.get() >= back || failed.get() != null);
      cluster.start(m);
    }
    writer.join(TIMEOUT.toMillis());
    assertThat(failed.get()).isNull();
    assertThat(done.get()).isEqualTo(writes);
    long writtenMs = ms(System.nanoTime() - t0);
    awaitSb(sb, written);
    long convergedMs = ms(System.nanoTime() - t0);
    sampler.close();
    assertThat(sampler.violations()).as("status keys while members died").isEmpty();
    assertThat(sampler.samples()).isGreaterThan(20);

    long extraResyncs = nb.resyncCount() - resyncs;
    TreeMap<String, List<String>> applied = sb.macsSet();
    for (String name : written.keySet()) {
      List<String> seq = applied.get(name);
      // never an older value after a newer one, never the same one twice
      for (int i = 1; i < seq.size(); i++) {
        assertThat(seq.get(i).compareTo(seq.get(i - 1))).as(name + " " + seq).isPositive();
      }
      if (extraResyncs == 0) {
        // no resync: every value written went through the watch, exactly once, in order
        assertThat(seq).as(name).isEqualTo(written.get(name));
      } else {
        assertThat(written.get(name)).as(name).containsSubsequence(seq);
      }
    }
    assertThat(sb.creations().values()).containsOnly(1);
    assertThat(sb.deletions()).isEmpty();
    int appliedCount = applied.values().stream().mapToInt(List::size).sum();
    assertStatusKeysConsistent(agent, label, written.keySet());
    Figures.print(
        "etcd member killed (SIGKILL) and restarted, %d times, while %d updates were"
            + " written (%d puts retried by the writer): %d updates applied (incl. %d creates), none"
            + " twice or out of order; watches resumed %d times, %d full resyncs; written in %d ms,"
            + " converged %d ms after the first write; status keys consistent in all %d samples"
            + " (%d unreadable)",
        kills,
        writes,
        retried.get(),
        appliedCount,
        keys,
        nb.resumedCount() - resumes,
        extraResyncs,
        writtenMs,
        convergedMs,
        sampler.samples(),
        sampler.unreadable());
  }

  @Test
  void wholeClusterDownAndBack() throws Exception {
    String label = "down";
    String p = prefix(label);
    for (int k = 0; k < 3; k++) {
      cluster.put(p + IF + "tap" + k, iface("tap" + k, 0));
    }
    SbRecorder sb = new SbRecorder();
    Agent agent = start(label, cluster.endpoints(), sb);
    EtcdNorthbound nb = etcdSource(agent);
    Map<String, List<String>> expected =
        new TreeMap<>(
            Map.of("tap0", List.of(mac(0)), "tap1", List.of(mac(0)), "tap2", List.of(mac(0))));
    awaitSb(sb, expected);
    // the statuses are written on a thread of their own, after the southbound has the values:
    // on a loaded machine a moment later (they must be there before the outage, to be there after)
    assertStatusKeysConsistent(agent, label, expected.keySet());
    long resyncs = nb.resyncCount();
    int opsBefore = sb.lines().size();

    cluster.killAll();
    long down = System.nanoTime();
    Thread.sleep(CLUSTER_DOWN.toMillis());
    // nothing applied is lost while etcd is away
    for (int k = 0; k < 3; k++) {
      assertThat(state(agent, IF + "tap" + k)).isEqualTo(ValueState.CONFIGURED);
    }
    assertThat(agent.northbound().desired()).hasSize(3);
    assertThat(sb.lines()).hasSize(opsBefore);
    assertThat(nb.resyncCount()).isEqualTo(resyncs);

    long t0 = System.nanoTime();
    cluster.startAll();
    long upMs = ms(System.nanoTime() - t0);
    long downMs = ms(System.nanoTime() - down);
    long healthy = System.nanoTime();
    // when the agent has resynced, taken apart from the etcdctl calls below, which take seconds
    // of their own on a loaded machine
    CompletableFuture<Long> resyncedAt = new CompletableFuture<>();
    Thread stopwatch =
        new Thread(
            () -> {
              while (nb.resyncCount() == resyncs && !resyncedAt.isDone()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
              }
              resyncedAt.complete(System.nanoTime());
            },
            "resync-stopwatch");
    stopwatch.setDaemon(true);
    stopwatch.start();
    // etcd renews leases when it comes back: the statuses are there before the agent returns
    assertThat(cluster.keys(p + "config-status/")).hasSize(3);
    assertThat(cluster.get(p + "check/status/v1/agent")).contains("\"state\":\"OK\"");
    cluster.ctlChecked("del", p + IF + "tap0");
    cluster.put(p + IF + "tap1", iface("tap1", 1));
    cluster.put(p + IF + "tap3", iface("tap3", 0));
    expected.remove("tap0");
    expected.put("tap1", List.of(mac(0), mac(1)));
    expected.put("tap3", List.of(mac(0)));
    awaitSb(sb, expected);
    await().atMost(TIMEOUT).until(() -> nb.resyncCount() > resyncs);
    long reconnectMs = ms(System.nanoTime() - t0);
    // found within seconds, although gRPC's own reconnection back-off has grown long by now
    assertThat(ms(resyncedAt.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) - healthy))
        .as("ms from a healthy cluster to the agent's resync")
        .isLessThan(8000);
    Thread.sleep(3000);
    assertThat(nb.resyncCount()).as("resyncs after the cluster came back").isEqualTo(resyncs + 1);
    // the resync executed only what changed: tap0 deleted, tap1 updated, tap3 created
    List<String> after = sb.lines().subList(opsBefore, sb.lines().size());
    assertThat(after)
        .containsExactlyInAnyOrder(
            "Deleted TAP interface: tap0",
            "Set interface 'tap1' MAC address: " + mac(1),
            after.stream()
                .filter(l -> l.startsWith("Created TAP interface: tap3"))
                .findFirst()
                .orElse("Created TAP interface: tap3"),
            "Set interface 'tap3' UP",
            "Set interface 'tap3' MAC address: " + mac(0));
    // the statuses outlive the lease the agent had before the outage
    Thread.sleep(SETTINGS.leaseTtl().toMillis() + 1000);
    assertStatusKeysConsistent(agent, label, expected.keySet());
    Figures.print(
        "etcd cluster down (all %d members SIGKILLed) for %d ms: agent state kept, 0"
            + " southbound operations meanwhile; cluster healthy %d ms after restart; agent"
            + " resynced once and converged %d ms after restart; %d southbound operations after",
        cluster.size(), downMs, upMs, reconnectMs, after.size());
  }

  @Test
  void cutOffWhileEtcdCompactsPastItsLastRevision() throws Exception {
    String label = "compact";
    String p = prefix(label);
    for (int k = 0; k < 3; k++) {
      cluster.put(p + IF + "tap" + k, iface("tap" + k, 0));
    }
    TcpProxy proxy = new TcpProxy(port(cluster.endpoint(0)), TcpProxy.Mode.FORWARD);
    closeables.add(proxy);
    SbRecorder sb = new SbRecorder();
    // the probe waits for the held connection longer than the cut lasts, so that the agent
    // sees etcd answer and resumes its watch from before the compaction
    Agent agent =
        start(
            label,
            List.of(proxy.address()),
            sb,
            SETTINGS.withTimeouts(
                SETTINGS.dialTimeout(), Duration.ofSeconds(8), SETTINGS.leaseTtl()));
    EtcdNorthbound nb = etcdSource(agent);
    Map<String, List<String>> expected =
        new TreeMap<>(
            Map.of("tap0", List.of(mac(0)), "tap1", List.of(mac(0)), "tap2", List.of(mac(0))));
    awaitSb(sb, expected);
    long resyncs = nb.resyncCount();
    long seenRevision = cluster.revision();

    try (LogCapture log = new LogCapture(EtcdNorthbound.class);
        Client writer =
            Client.builder().endpoints(cluster.endpoints().toArray(String[]::new)).build()) {
      // cut off: connections closed, new ones held (the agent's probe waits on them)
      proxy.mode(TcpProxy.Mode.HOLD);
      proxy.cut();
      long t0 = System.nanoTime();
      writer.getKVClient().delete(bytes(p + IF + "tap0")).get(5, TimeUnit.SECONDS);
      for (int i = 1; i <= 10; i++) {
        writer
            .getKVClient()
            .put(bytes(p + IF + "tap1"), bytes(iface("tap1", i)))
            .get(5, TimeUnit.SECONDS);
      }
      long compacted =
          writer
              .getKVClient()
              .put(bytes(p + IF + "tap3"), bytes(iface("tap3", 0)))
              .get(5, TimeUnit.SECONDS)
              .getHeader()
              .getRevision();
      writer
          .getKVClient()
          .compact(compacted, CompactOption.builder().withCompactPhysical(true).build())
          .get(5, TimeUnit.SECONDS);
      assertThat(compacted).isGreaterThan(seenRevision + 10);
      proxy.mode(TcpProxy.Mode.FORWARD);
      long cutMs = ms(System.nanoTime() - t0);
      expected.remove("tap0");
      expected.put("tap1", List.of(mac(0), mac(10)));
      expected.put("tap3", List.of(mac(0)));
      awaitSb(sb, expected);
      long convergedMs = ms(System.nanoTime() - t0);
      Thread.sleep(2000);
      assertThat(nb.resyncCount()).isEqualTo(resyncs + 1);
      assertThat(EtcdNorthboundProbe.resyncRevision(nb)).isGreaterThanOrEqualTo(compacted);
      // the intermediate values are not replayed: the resync applied the last one only
      assertThat(sb.macsSet().get("tap1")).containsExactly(mac(0), mac(10));
      assertStatusKeysConsistent(agent, label, expected.keySet());
      // the watch was resumed where it stopped, and etcd said that history is gone
      String noticed =
          log.messages().stream()
              .filter(m -> m.contains("cannot resume"))
              .findFirst()
              .orElseThrow(() -> new AssertionError("compaction not noticed: " + log.messages()));
      assertThat(noticed).contains("etcd compacted its history up to revision " + compacted);
      Figures.print(
          "etcd agent cut off for %d ms while 12 changes were made and etcd compacted"
              + " past its last revision (%d -> %d): the watch could not resume, one full resync at"
              + " revision %d, converged %d ms after the cut; logged: %s",
          cutMs,
          seenRevision,
          compacted,
          EtcdNorthboundProbe.resyncRevision(nb),
          convergedMs,
          noticed);
    }
  }

  @Test
  void blackholedEndpointIsBoundedByTheTimeouts() throws Exception {
    TcpProxy blackhole = new TcpProxy(0, TcpProxy.Mode.BLACKHOLE);
    closeables.add(blackhole);
    String p = prefix("bh");
    cluster.put(p + IF + "tap0", iface("tap0", 0));

    // the only endpoint accepts connections and never answers: no hang
    SbRecorder sb1 = new SbRecorder();
    long t0 = System.nanoTime();
    Agent alone;
    try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      alone = start("bh", List.of(blackhole.address()), sb1);
      long startMs = ms(System.nanoTime() - t0);
      assertThat(startMs)
          .isLessThan(SETTINGS.dialTimeout().plus(SETTINGS.requestTimeout()).toMillis() + 3000);
      assertThat(log.messages()).anyMatch(m -> m.contains("did not answer in time"));
      assertThat(etcdSource(alone).resyncCount()).isZero();
      long t1 = System.nanoTime();
      alone.close();
      long closeMs = ms(System.nanoTime() - t1);
      assertThat(closeMs).isLessThan(SETTINGS.requestTimeout().toMillis() * 2 + 3000);
      Figures.print(
          "etcd blackholed only endpoint: Agent.start returned in %d ms (dial-timeout"
              + " %d ms, operation-timeout %d ms), close in %d ms; reported as: %s",
          startMs,
          SETTINGS.dialTimeout().toMillis(),
          SETTINGS.requestTimeout().toMillis(),
          closeMs,
          log.messages().stream()
              .filter(m -> m.contains("did not answer"))
              .findFirst()
              .orElseThrow());
    }

    // a blackholed endpoint among good ones: the agent works through the others
    List<String> endpoints = new ArrayList<>();
    endpoints.add(blackhole.address());
    endpoints.addAll(cluster.endpoints());
    SbRecorder sb2 = new SbRecorder();
    long t2 = System.nanoTime();
    Agent agent = start("bh", endpoints, sb2);
    awaitSb(sb2, Map.of("tap0", List.of(mac(0))));
    long firstMs = ms(System.nanoTime() - t2);
    long t3 = System.nanoTime();
    cluster.put(p + IF + "tap1", iface("tap1", 0));
    awaitSb(sb2, Map.of("tap0", List.of(mac(0)), "tap1", List.of(mac(0))));
    long changeMs = ms(System.nanoTime() - t3);
    assertThat(etcdSource(agent).resyncCount()).isEqualTo(1);
    assertStatusKeysConsistent(agent, "bh", List.of("tap0", "tap1"));
    Figures.print(
        "etcd blackholed endpoint among %d good ones: started and applied in %d ms, a"
            + " change applied in %d ms",
        cluster.size(), firstMs, changeMs);
  }

  /** Waits until the southbound holds exactly {@code expected}: name -> MACs set, last holds. */
  private static void awaitSb(SbRecorder sb, Map<String, List<String>> expected) {
    await()
        .atMost(TIMEOUT)
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () -> {
              Map<String, String> now = new TreeMap<>();
              sb.plugins()
                  .interfaces()
                  .southboundState()
                  .values()
                  .forEach(i -> now.put(i.name(), i.physAddress()));
              Map<String, String> want = new TreeMap<>();
              synchronized (expected) {
                expected.forEach((k, v) -> want.put(k, v.get(v.size() - 1)));
              }
              assertThat(now).isEqualTo(want);
            });
  }

  /**
   * The status keys in etcd match the agent: one CONFIGURED value status per value, none other, the
   * agent status OK, all under one live lease.
   */
  private static void assertStatusKeysConsistent(
      Agent agent, String label, Collection<String> names) throws Exception {
    String p = prefix(label);
    await()
        .atMost(TIMEOUT)
        .untilAsserted(
            () -> {
              List<String> want =
                  names.stream()
                      .map(n -> p + "config-status/mock/v1/interfaces/" + n)
                      .sorted()
                      .toList();
              assertThat(cluster.keys(p + "config-status/")).isEqualTo(want);
              for (String key : want) {
                JsonNode s = JSON.readTree(cluster.get(key));
                assertThat(s.path("state").asText()).as(key).isEqualTo("CONFIGURED");
              }
              JsonNode st = JSON.readTree(cluster.get(p + "check/status/v1/agent"));
              assertThat(st.path("state").asText()).isEqualTo("OK");
              List<Long> leases = new ArrayList<>(cluster.leases(p + "config-status/"));
              leases.addAll(cluster.leases(p + "check/status/v1/agent"));
              assertThat(leases).doesNotContain(0L);
              assertThat(new HashSet<>(leases)).hasSize(1);
              assertThat(cluster.ctlChecked("lease", "timetolive", Long.toHexString(leases.get(0))))
                  .doesNotContain("already expired");
            });
    for (String n : names) {
      assertThat(state(agent, IF + n)).isEqualTo(ValueState.CONFIGURED);
    }
  }

  private static int port(String endpoint) {
    return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
