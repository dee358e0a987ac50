package io.kvscheduler.ctl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.testsupport.EtcdFixture;
import io.kvscheduler.testsupport.TestCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code kvsctl fleet --etcd-config} against a real etcd with client TLS (client certificates
 * signed by a test CA) and username/password authentication, with a real agent process that reads
 * the same etcd.conf. A wrong password or a missing CA is named in one line, without a stack trace.
 */
class KvsCtlFleetSecuredTest {
  private static final String LABEL = "secured1";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Room for an agent process to start and connect over TLS on a loaded machine. */
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  private static Path dir;
  private static EtcdFixture etcd;
  private static AgentProcesses agents;

  @BeforeAll
  static void startSecuredEtcdAndAgent() throws Exception {
    dir = Files.createTempDirectory("kvsctl-etcd-tls");
    TestCertificates certs = new TestCertificates(dir);
    certs.ca("trusted-ca");
    certs.signed("client", "trusted-ca", false);
    etcd = EtcdFixture.startTls(certs, "trusted-ca");
    etcd.addAgentRole();
    etcd.addAgentUser("agent", "secret");
    etcd.enableAuth();

    agents = new AgentProcesses(etcd, etcdConf("etcd", "secret", true));
    agents.start(LABEL);
  }

  @AfterAll
  static void stop() throws Exception {
    if (agents != null) {
      agents.close();
    }
    if (etcd != null) {
      etcd.close();
    }
  }

  /** An etcd.conf as vpp-agent users write it, with the client certificate and user "agent". */
  private static Path etcdConf(String name, String password, boolean withCa) throws Exception {
    Path f = dir.resolve(name + ".conf");
    Files.writeString(
        f,
        String.join(
            "\n",
            "endpoints:",
            "  - \"" + etcd.endpoint().substring("https://".length()) + "\"",
            "dial-timeout: 2s",
            // a request over TLS with a password check (bcrypt in etcd) on a loaded machine
            "operation-timeout: 5s",
            "session-ttl: 10",
            "insecure-transport: false",
            withCa ? "ca-file: trusted-ca.crt" : "",
            "cert-file: client.crt",
            "key-file: client.key",
            "username: agent",
            "password: " + password,
            ""));
    return f;
  }

  @Test
  void listsTheAgentOverTlsWithAUserAndNamesAWrongPasswordOrAMissingCa() throws Exception {
    await()
        .atMost(TIMEOUT)
        .until(
            () -> {
              assertThat(agents.output()).doesNotContain("Exception");
              return agents.ready(LABEL);
            });

    Path good = dir.resolve("etcd.conf");
    RunningAgent.Run run =
        RunningAgent.run(Map.of(), "fleet", "-o", "json", "--etcd-config", good.toString());
    assertThat(run.exit()).as(run.err() + "\n" + run.out() + "\n" + agents.output()).isZero();
    JsonNode view = JSON.readTree(run.out());
    assertThat(view.get("ok").asBoolean()).isTrue();
    assertThat(view.get("agents").size()).isEqualTo(1);
    JsonNode agent = view.get("agents").get(0);
    assertThat(agent.get("label").asText()).isEqualTo(LABEL);
    assertThat(agent.get("state").asText()).isEqualTo("OK");
    assertThat(agent.get("ok").asBoolean()).isTrue();

    // the same from the environment, as the agent reads it
    RunningAgent.Run env =
        RunningAgent.run(Map.of("ETCD_CONFIG", good.toString()), "fleet", "-o", "json");
    assertThat(env.exit()).as(env.err()).isZero();
    assertThat(JSON.readTree(env.out()).at("/agents/0/label").asText()).isEqualTo(LABEL);

    // a wrong password: etcd and the cause are named, no stack trace
    RunningAgent.Run wrong = fleetWith(etcdConf("wrong-password", "not-the-password", true));
    // etcd answered, refusing the user: refused (4), as an agent refusing a token, neither an
    // unreachable etcd (3) nor an agent that is not well (1)
    assertOneLineError(
        wrong, 4, "authentication failed for user 'agent'", "check the username and password");
    assertThat(wrong.err()).doesNotContain("not-the-password");

    // no ca-file: the server certificate is not trusted
    RunningAgent.Run noCa = fleetWith(etcdConf("no-ca", "secret", false));
    // no TLS connection to etcd: etcd cannot be reached (3)
    assertOneLineError(
        noCa,
        3,
        "TLS handshake with etcd failed, the server certificate is not trusted",
        "ca-file");
  }

  /** {@code kvsctl fleet -o json} with the etcd settings of file {@code etcdConfig}. */
  private static RunningAgent.Run fleetWith(Path etcdConfig) throws Exception {
    return RunningAgent.run(
        Map.of(), "fleet", "-o", "json", "--etcd-config", etcdConfig.toString());
  }

  /**
   * {@code run} ended with {@code exit}, printed nothing on stdout and one line on stderr naming
   * etcd and each of {@code says}, without a stack trace.
   */
  private static void assertOneLineError(RunningAgent.Run run, int exit, String... says) {
    assertThat(run.exit()).as(run.err()).isEqualTo(exit);
    assertThat(run.out()).isEmpty();
    assertThat(run.err()).contains("etcd at ").contains(says).doesNotContain("\tat ");
    assertThat(run.err().lines()).hasSize(1);
  }
}
