package io.kvscheduler.agent;

import static io.kvscheduler.agent.EtcdTestSupport.IF;
import static io.kvscheduler.agent.EtcdTestSupport.TIMEOUT;
import static io.kvscheduler.agent.EtcdTestSupport.awaitState;
import static io.kvscheduler.agent.EtcdTestSupport.etcdSource;
import static io.kvscheduler.agent.EtcdTestSupport.prefix;
import static io.kvscheduler.agent.EtcdTestSupport.sbInterfaces;
import static io.kvscheduler.agent.EtcdTestSupport.state;
import static io.kvscheduler.agent.EtcdTestSupport.tap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvscheduler.agent.internal.northbound.EtcdNorthbound;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.testsupport.EtcdFixture;
import io.kvscheduler.testsupport.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The agent against a secured etcd: client TLS with client certificates signed by a test CA (made
 * with openssl) and username/password authentication, settings from an {@code ETCD_CONFIG} file as
 * vpp-agent users write it. A wrong password and an untrusted server certificate are reported
 * naming the cause; the agent keeps its state, retries, and connects once the cause is fixed.
 */
class EtcdSecuredTest {
  /**
   * The request timeout of the agents: room for a request over TLS whose password etcd checks
   * (bcrypt) while the machine's 2 cores are shared with other builds, so that the cause an agent
   * names is etcd's answer and not a timeout.
   */
  private static final Duration OPERATION_TIMEOUT = Duration.ofSeconds(5);

  private static Path dir;
  private static TestCertificates certs;
  private static EtcdFixture etcd;
  private final List<Agent> started = new ArrayList<>();

  @BeforeAll
  static void startSecuredEtcd() throws Exception {
    dir = Files.createTempDirectory("kvs-etcd-tls");
    certs = new TestCertificates(dir);
    certs.ca("trusted-ca");
    certs.ca("other-ca");
    certs.signed("server-of-other-ca", "other-ca", true);
    certs.signed("agent", "trusted-ca", false);
    certs.signed("agent-of-other-ca", "other-ca", false);
    etcd = EtcdFixture.startTls(certs, "trusted-ca");
    Files.copy(certs.cert("server"), dir.resolve("server-good.crt"));
    Files.copy(certs.key("server"), dir.resolve("server-good.key"));
    etcd.addAgentRole();
    etcd.addAgentUser("agent", "secret");
    etcd.enableAuth();
  }

  @AfterEach
  void closeAgents() throws Exception {
    started.forEach(Agent::close);
    started.clear();
    useServerCertificate("server-good");
  }

  @AfterAll
  static void stopEtcd() throws Exception {
    if (etcd != null) {
      etcd.close();
    }
  }

  /** Writes an etcd.conf as vpp-agent users do. */
  private static Path etcdConf(String name, String cert, String user, String password)
      throws Exception {
    Path f = dir.resolve(name + ".conf");
    Files.writeString(
        f,
        String.join(
            "\n",
            "endpoints:",
            "  - \"" + etcd.endpoint().substring("https://".length()) + "\"",
            "dial-timeout: 1s",
            // a request over TLS with a password check (bcrypt in etcd) on a loaded 2-core machine
            "operation-timeout: " + OPERATION_TIMEOUT.toSeconds() + "s",
            "session-ttl: 7",
            "insecure-transport: false",
            "ca-file: trusted-ca.crt",
            "cert-file: " + cert + ".crt",
            "key-file: " + cert + ".key",
            "username: " + user,
            "password: " + password,
            "auto-compact: 0",
            ""));
    return f;
  }

  private Agent start(String label, Path conf, MockAgentPlugin mock) throws Exception {
    AgentConfig cfg =
        AgentConfig.load(
            List.of("--label", label, "--rest", "off", "--quiet", "--status-publishing"),
            Map.of("ETCD_CONFIG", conf.toString()));
    Agent a = Agent.start(cfg, List.of(mock));
    started.add(a);
    return a;
  }

  @Test
  void connectsWithClientCertificateAndPasswordFromEtcdConfig() throws Exception {
    String p = prefix("sec1");
    etcd.put(p + IF + "tap1", tap("tap1", true));
    Path conf = etcdConf("sec1", "agent", "agent", "secret");
    AgentConfig cfg = AgentConfig.load(List.of(), Map.of("ETCD_CONFIG", conf.toString()));
    assertThat(cfg.etcdEndpoints()).containsExactly(etcd.endpoint().substring(8));
    assertThat(cfg.etcd().tls()).isTrue();
    assertThat(cfg.etcd().leaseTtl()).isEqualTo(Duration.ofSeconds(7));
    assertThat(cfg.etcd().toString()).doesNotContain("secret");

    MockAgentPlugin mock = new MockAgentPlugin();
    Agent agent = start("sec1", conf, mock);
    awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
    etcd.put(p + IF + "tap2", tap("tap2", true));
    awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
    // the status keys live under a lease of session-ttl
    String agentKey = p + "check/status/v1/agent";
    await().atMost(TIMEOUT).until(() -> etcd.get(agentKey) != null);
    long lease = etcd.leaseOf(agentKey);
    assertThat(etcd.ctlChecked("lease", "timetolive", Long.toHexString(lease)))
        .contains("granted with TTL(7s)");
    assertThat(sbInterfaces(mock)).containsExactly("tap1", "tap2");
  }

  @Test
  void wrongPasswordIsNamedAndTheAgentKeepsItsStateUntilItConnects() throws Exception {
    String p = prefix("sec2");
    etcd.addAgentUser("agent2", "secret2");
    try {
      etcd.put(p + IF + "tap1", tap("tap1", true));
      MockAgentPlugin mock = new MockAgentPlugin();
      // the JVM's first agent loads and compiles the TLS, gRPC and etcd client code, which on a
      // loaded machine takes longer than the bound below: what it bounds is how long the agent
      // waits for etcd, so an agent with the right password starts first
      start(
              "sec2-warm-up",
              etcdConf("sec2-warm-up", "agent", "agent", "secret"),
              new MockAgentPlugin())
          .close();
      Agent agent;
      try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
        // at start: the agent comes up without etcd, naming the cause, in bounded time
        long t0 = System.nanoTime();
        agent = start("sec2", etcdConf("sec2-wrong", "agent", "agent2", "not-the-password"), mock);
        long startMs = (System.nanoTime() - t0) / 1_000_000;
        Figures.print("etcd wrong password at start: Agent.start returned after %d ms", startMs);
        assertThat(startMs).isLessThan(10_000);
        assertThat(log.messages())
            .anyMatch(
                m ->
                    m.contains("authentication failed for user" + " 'agent2'")
                        && m.contains("check the username and password"));
        assertThat(etcdSource(agent).resyncCount()).isZero();
        agent.close();
      }

      // running, then the password is changed in etcd: the agent keeps what it applied
      agent = start("sec2", etcdConf("sec2", "agent", "agent2", "secret2"), mock);
      awaitState(agent, IF + "tap1", ValueState.CONFIGURED);
      EtcdNorthbound nb = etcdSource(agent);
      long resyncs = nb.resyncCount();
      try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
        etcd.ctlChecked("user", "delete", "agent2");
        etcd.addAgentUser("agent2", "changed-by-an-operator");
        // at rest the agent sends etcd nothing but lease keep-alives (D65), and etcd keeps
        // delivering to a watch opened before the change: the agent learns of the new password at
        // its next request, here the status it publishes for a value that arrived
        etcd.put(p + IF + "tap2", tap("tap2", true));
        await()
            .atMost(TIMEOUT)
            .until(
                () ->
                    log.messages().stream()
                        .anyMatch(m -> m.contains("authentication failed for user 'agent2'")));
        Figures.print(
            "etcd password changed while running, reported as: %s",
            log.messages().stream()
                .filter(m -> m.contains("authentication failed"))
                .findFirst()
                .orElseThrow());
        Thread.sleep(2000); // retrying, and nothing of what was applied is lost
        assertThat(state(agent, IF + "tap1")).isEqualTo(ValueState.CONFIGURED);
        assertThat(sbInterfaces(mock)).contains("tap1");
        assertThat(agent.northbound().desired()).containsKey(IF + "tap1");
      }
      // fixed: the agent connects, resyncs once and applies what changed meanwhile
      etcd.ctlChecked("user", "delete", "agent2");
      etcd.addAgentUser("agent2", "secret2");
      await().atMost(TIMEOUT).until(() -> nb.resyncCount() > resyncs);
      awaitState(agent, IF + "tap2", ValueState.CONFIGURED);
      assertThat(state(agent, IF + "tap1")).isEqualTo(ValueState.CONFIGURED);
      assertThat(nb.resyncCount()).as("resyncs after the fix").isEqualTo(resyncs + 1);
      assertThat(sbInterfaces(mock)).containsExactly("tap1", "tap2");
    } finally {
      etcd.ctlChecked("user", "delete", "agent2");
    }
  }

  @Test
  void untrustedServerCertificateIsNamedAndTheAgentKeepsItsStateUntilItConnects() throws Exception {
    String p = prefix("sec3");
    etcd.put(p + IF + "tap5", tap("tap5", true));
    MockAgentPlugin mock = new MockAgentPlugin();
    Agent agent = start("sec3", etcdConf("sec3", "agent", "agent", "secret"), mock);
    awaitState(agent, IF + "tap5", ValueState.CONFIGURED);
    EtcdNorthbound nb = etcdSource(agent);
    long resyncs = nb.resyncCount();

    try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      // etcd comes back with a certificate of a CA the agent does not trust
      useServerCertificate("server-of-other-ca");
      etcd.put(p + IF + "tap6", tap("tap6", true));
      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  log.messages().stream()
                      .anyMatch(
                          m ->
                              m.contains(
                                      "TLS handshake with etcd failed, the server certificate is not trusted: check"
                                          + " ca-file")
                                  && m.contains("trusted-ca.crt")));
      Figures.print(
          "etcd untrusted server certificate, reported as: %s",
          log.messages().stream()
              .filter(m -> m.contains("TLS handshake"))
              .findFirst()
              .orElseThrow());
      Thread.sleep(2000);
      assertThat(state(agent, IF + "tap5")).isEqualTo(ValueState.CONFIGURED);
      assertThat(state(agent, IF + "tap6")).isEqualTo(ValueState.NONEXISTENT);
      assertThat(sbInterfaces(mock)).containsExactly("tap5");
    }
    useServerCertificate("server-good");
    awaitState(agent, IF + "tap6", ValueState.CONFIGURED);
    assertThat(nb.resyncCount()).isEqualTo(resyncs + 1);
    assertThat(sbInterfaces(mock)).containsExactly("tap5", "tap6");
  }

  @Test
  void clientCertificateOfAnotherCaIsNamed() throws Exception {
    try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      Agent agent =
          start(
              "sec4",
              etcdConf("sec4", "agent-of-other-ca", "agent", "secret"),
              new MockAgentPlugin());
      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  log.messages().stream()
                      .anyMatch(
                          m ->
                              m.contains(
                                      "TLS handshake with etcd failed, etcd refused the client certificate")
                                  && m.contains("agent-of-other-ca.crt")));
      Figures.print(
          "etcd client certificate of another CA, reported as: %s",
          log.messages().stream()
              .filter(m -> m.contains("TLS handshake"))
              .findFirst()
              .orElseThrow());
      assertThat(etcdSource(agent).resyncCount()).isZero();
    }
  }

  @Test
  void userWithoutAccessToTheAgentPrefixIsNamed() throws Exception {
    etcd.ctlChecked("user", "add", "stranger", "--new-user-password", "pw");
    try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      Agent agent =
          start("sec5", etcdConf("sec5", "agent", "stranger", "pw"), new MockAgentPlugin());
      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  log.messages().stream()
                      .anyMatch(
                          m ->
                              m.contains(
                                  "etcd denied user 'stranger' access: grant it read and write on the"
                                      + " agent prefix /vnf-agent/sec5/")));
      Figures.print(
          "etcd user without access to the agent prefix, reported as: %s",
          log.messages().stream().filter(m -> m.contains("denied")).findFirst().orElseThrow());
      assertThat(etcdSource(agent).resyncCount()).isZero();
    } finally {
      etcd.ctlChecked("user", "delete", "stranger");
    }
  }

  @Test
  void userWhoMayOnlyReadCannotClaimTheLabelAndNothingIsAppliedUntilItMayWrite() throws Exception {
    String p = prefix("sec6");
    etcd.put(p + IF + "tap7", tap("tap7", true));
    etcd.ctlChecked("role", "add", "readers");
    etcd.ctlChecked("role", "grant-permission", "readers", "read", p, "--prefix=true");
    etcd.ctlChecked("user", "add", "reader", "--new-user-password", "pw");
    etcd.ctlChecked("user", "grant-role", "reader", "readers");
    try (LogCapture log = new LogCapture(EtcdNorthbound.class)) {
      MockAgentPlugin mock = new MockAgentPlugin();
      Agent agent = start("sec6", etcdConf("sec6", "agent", "reader", "pw"), mock);
      // the claim of the label is a write: refused, named, and nothing is applied
      await()
          .atMost(TIMEOUT)
          .until(
              () ->
                  log.messages().stream()
                      .anyMatch(
                          m ->
                              m.contains(
                                  "etcd denied user 'reader' access: grant it read and write on"
                                      + " the agent prefix "
                                      + p)));
      Thread.sleep(2000);
      assertThat(state(agent, IF + "tap7")).isEqualTo(ValueState.NONEXISTENT);
      assertThat(sbInterfaces(mock)).isEmpty();
      assertThat(etcdSource(agent).resyncCount()).isZero();
      assertThat(etcd.get(p + "owner")).isNull();
      assertThat(etcd.get(p + "check/status/v1/agent")).isNull();

      // once the user may write, the agent claims its label and applies what etcd holds
      etcd.ctlChecked("role", "grant-permission", "readers", "readwrite", p, "--prefix=true");
      awaitState(agent, IF + "tap7", ValueState.CONFIGURED);
      assertThat(etcd.get(p + "owner")).isNotNull();
    } finally {
      etcd.ctlChecked("user", "delete", "reader");
      etcd.ctlChecked("role", "delete", "readers");
    }
  }

  /** Restarts etcd with the server certificate {@code name} (no restart if already in use). */
  private static void useServerCertificate(String name) throws Exception {
    Path crt = dir.resolve("server.crt");
    if (Files.mismatch(crt, dir.resolve(name + ".crt")) == -1) {
      return;
    }
    etcd.stop();
    Files.copy(dir.resolve(name + ".crt"), crt, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(
        dir.resolve(name + ".key"), dir.resolve("server.key"), StandardCopyOption.REPLACE_EXISTING);
    etcd.start();
  }
}
