package io.kvscheduler.testsupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A real etcd server for tests: the {@code etcd} binary on free loopback ports with a temporary
 * data directory, and the {@code etcdctl} command-line client (API v3) to read and write keys.
 * {@link #stop()} and {@link #start()} restart it on the same ports and data directory. With {@link
 * Tls}, clients must use TLS and present a certificate signed by the CA; the server's certificate
 * files are read at each start (a test may replace them in between).
 */
public final class EtcdFixture implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(20);
  private static final Duration CTL_TIMEOUT = Duration.ofSeconds(10);

  /** The password of etcd's {@code root} user once {@link #addAgentRole} made it. */
  public static final String ROOT_PASSWORD = "root-pw";

  private final Path dir;
  private final Path dataDir;
  private final Path log;
  private final int clientPort;
  private final int peerPort;
  private final Tls tls;
  private volatile String ctlUser;
  private Process process;

  /** Files of a TLS etcd: the CA clients trust, the server's pair, etcdctl's client pair. */
  public record Tls(Path ca, Path serverCert, Path serverKey, Path clientCert, Path clientKey) {}

  private EtcdFixture() throws IOException {
    this(null);
  }

  private EtcdFixture(Tls tls) throws IOException {
    this.tls = tls;
    this.dir = Files.createTempDirectory("kvs-etcd-test");
    this.dataDir = dir.resolve("data");
    this.log = dir.resolve("etcd.log");
    Set<Integer> taken = new HashSet<>();
    this.clientPort = EtcdProcesses.freePort(taken);
    this.peerPort = EtcdProcesses.freePort(taken);
  }

  /** Starts a fresh etcd and waits until it answers. */
  public static EtcdFixture startNew() throws Exception {
    return startNew(null);
  }

  /** Starts a fresh etcd, with client TLS if {@code tls} is given, and waits until it answers. */
  public static EtcdFixture startNew(Tls tls) throws Exception {
    EtcdFixture f = new EtcdFixture(tls);
    try {
      f.start();
    } catch (Exception | Error e) {
      f.close();
      throw e;
    }
    return f;
  }

  /**
   * Starts a fresh etcd serving client TLS: its server pair {@code server} and etcdctl's client
   * pair {@code etcdctl} are made in {@code certs}, signed by the CA {@code ca} made there before.
   */
  public static EtcdFixture startTls(TestCertificates certs, String ca) throws Exception {
    Path server = certs.signed("server", ca, true);
    Path ctl = certs.signed("etcdctl", ca, false);
    return startNew(
        new Tls(certs.cert(ca), server, certs.key("server"), ctl, certs.key("etcdctl")));
  }

  /**
   * The users of an etcd shared by agents, before {@link #enableAuth}: {@code root} (password
   * {@value #ROOT_PASSWORD}) and the role {@code agents}, which reads and writes under {@code
   * /vnf-agent/}; {@link #addAgentUser} adds its members.
   */
  public void addAgentRole() {
    ctlChecked("user", "add", "root", "--new-user-password", ROOT_PASSWORD);
    ctlChecked("user", "grant-role", "root", "root");
    ctlChecked("role", "add", "agents");
    ctlChecked("role", "grant-permission", "agents", "readwrite", "/vnf-agent/", "--prefix=true");
  }

  /** A user of the role {@code agents} ({@link #addAgentRole}). */
  public void addAgentUser(String user, String password) {
    ctlChecked("user", "add", user, "--new-user-password", password);
    ctlChecked("user", "grant-role", user, "agents");
  }

  /** Turns authentication on; etcdctl goes on as {@code root}. */
  public void enableAuth() {
    ctlChecked("auth", "enable");
    ctlUser("root:" + ROOT_PASSWORD);
  }

  /** The client endpoint, {@code http(s)://127.0.0.1:<port>}. */
  public String endpoint() {
    return (tls != null ? "https" : "http") + "://127.0.0.1:" + clientPort;
  }

  /** etcdctl authenticates as {@code user:password} from now on (null: no authentication). */
  public void ctlUser(String userAndPassword) {
    this.ctlUser = userAndPassword;
  }

  /** Starts (or restarts) etcd on the same ports and data directory; waits until it answers. */
  public synchronized void start() throws Exception {
    if (process != null && process.isAlive()) {
      return;
    }
    String peer = "http://127.0.0.1:" + peerPort;
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "etcd",
                "--name",
                "kvs-test",
                "--data-dir",
                dataDir.toString(),
                "--listen-client-urls",
                endpoint(),
                "--advertise-client-urls",
                endpoint(),
                "--listen-peer-urls",
                peer,
                "--initial-advertise-peer-urls",
                peer,
                "--initial-cluster",
                "kvs-test=" + peer,
                "--log-level",
                "warn"));
    if (tls != null) {
      cmd.addAll(
          List.of(
              "--cert-file",
              tls.serverCert().toString(),
              "--key-file",
              tls.serverKey().toString(),
              "--trusted-ca-file",
              tls.ca().toString(),
              "--client-cert-auth"));
    }
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    process = pb.start();
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      if (!process.isAlive()) {
        throw new IllegalStateException("etcd exited with " + process.exitValue() + ":\n" + tail());
      }
      EtcdProcesses.Result r = ctl("endpoint", "health");
      if (r.exit() == 0) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "etcd not healthy within " + READY_TIMEOUT + ": " + r.output() + "\n" + tail());
      }
      Thread.sleep(100);
    }
  }

  /** Stops etcd (SIGTERM, then SIGKILL after 10 s); the data directory stays. */
  public synchronized void stop() throws InterruptedException {
    if (process == null) {
      return;
    }
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    process = null;
  }

  /** {@code etcdctl put key value}. */
  public void put(String key, String value) {
    ctl("put", key, value).checked();
  }

  /** {@code etcdctl del key}. */
  public void del(String key) {
    ctl("del", key).checked();
  }

  /** {@code etcdctl get key --print-value-only}: the value, or null when the key is absent. */
  public String get(String key) {
    EtcdProcesses.Result r = ctl("get", key, "--print-value-only").checked();
    String out = r.output().strip();
    return out.isEmpty() ? null : out;
  }

  /** {@code etcdctl get --prefix prefix}: keys and values, in key order. */
  public Map<String, String> getPrefix(String prefix) {
    EtcdProcesses.Result r = ctl("get", "--prefix", prefix).checked();
    List<String> lines = r.output().lines().toList();
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i + 1 < lines.size(); i += 2) {
      out.put(lines.get(i), lines.get(i + 1));
    }
    return out;
  }

  /** {@code etcdctl <args>}; fails unless it exits with 0. Returns the output. */
  public String ctlChecked(String... args) {
    return ctl(args).checked().output();
  }

  /** The ID of the lease {@code key} is attached to (0 for none), from {@code etcdctl -w json}. */
  public long leaseOf(String key) {
    String out = ctlChecked("get", key, "-w", "json");
    try {
      JsonNode kvs = new ObjectMapper().readTree(out).path("kvs");
      if (!kvs.isArray() || kvs.isEmpty()) {
        throw new IllegalStateException("no key " + key);
      }
      return kvs.get(0).path("lease").asLong(0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code etcdctl compact <current revision>}: old revisions can no longer be watched. */
  public void compact() {
    EtcdProcesses.Result r = ctl("get", "x", "-w", "fields").checked();
    String rev =
        r.output()
            .lines()
            .filter(l -> l.startsWith("\"Revision\""))
            .map(l -> l.substring(l.indexOf(':') + 1).strip())
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no revision in " + r.output()));
    ctl("compact", rev).checked();
  }

  private EtcdProcesses.Result ctl(String... args) {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "etcdctl",
                "--endpoints",
                endpoint(),
                "--dial-timeout",
                "2s",
                "--command-timeout",
                "5s"));
    if (tls != null) {
      // the test may give the server a certificate of another CA: etcdctl does not mind
      cmd.addAll(
          List.of(
              "--cert",
              tls.clientCert().toString(),
              "--key",
              tls.clientKey().toString(),
              "--insecure-skip-tls-verify"));
    }
    String user = ctlUser;
    if (user != null) {
      cmd.addAll(List.of("--user", user));
    }
    cmd.addAll(List.of(args));
    return EtcdProcesses.run(cmd, CTL_TIMEOUT);
  }

  private String tail() {
    return EtcdProcesses.tail(log);
  }

  @Override
  public void close() throws InterruptedException {
    stop();
    EtcdProcesses.deleteTree(dir);
  }
}
