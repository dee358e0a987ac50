package io.kvscheduler.testsupport;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A real etcd cluster for tests: {@code size} members of the {@code etcd} binary on free loopback
 * ports, each with its own data directory and log. Members can be killed (SIGKILL) and started
 * again on the same ports and data; {@code etcdctl} talks to every member.
 */
public final class EtcdCluster implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration CTL_TIMEOUT = Duration.ofSeconds(15);

  private final Path dir;
  private final int[] clientPorts;
  private final int[] peerPorts;
  private final Process[] processes;
  private final String initialCluster;

  private EtcdCluster(int size) throws IOException {
    dir = Files.createTempDirectory("kvs-etcd-cluster");
    clientPorts = new int[size];
    peerPorts = new int[size];
    processes = new Process[size];
    Set<Integer> used = new HashSet<>();
    for (int i = 0; i < size; i++) {
      clientPorts[i] = EtcdProcesses.freePort(used);
      peerPorts[i] = EtcdProcesses.freePort(used);
    }
    List<String> peers = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      peers.add(name(i) + "=" + peerUrl(i));
    }
    initialCluster = String.join(",", peers);
  }

  /** Starts a fresh cluster of {@code size} members and waits until every member answers. */
  public static EtcdCluster startNew(int size) throws Exception {
    EtcdCluster c = new EtcdCluster(size);
    try {
      c.startAll();
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
    return c;
  }

  public int size() {
    return processes.length;
  }

  /** The client endpoint of member {@code i}. */
  public String endpoint(int i) {
    return "http://127.0.0.1:" + clientPorts[i];
  }

  /** The client endpoints of all members. */
  public List<String> endpoints() {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < size(); i++) {
      out.add(endpoint(i));
    }
    return out;
  }

  /** Starts every member that is not running (all at once: they need each other), waits. */
  public synchronized void startAll() throws Exception {
    for (int i = 0; i < size(); i++) {
      launch(i);
    }
    for (int i = 0; i < size(); i++) {
      awaitHealthy(i);
    }
  }

  /** Starts member {@code i} again on its ports and data, and waits until it answers. */
  public synchronized void start(int i) throws Exception {
    launch(i);
    awaitHealthy(i);
  }

  /** Kills member {@code i} with SIGKILL (no clean shutdown); its data stays. */
  public synchronized void kill(int i) throws InterruptedException {
    Process p = processes[i];
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      processes[i] = null;
    }
  }

  /** Kills every member. */
  public synchronized void killAll() throws InterruptedException {
    for (int i = 0; i < size(); i++) {
      kill(i);
    }
  }

  /** {@code etcdctl put}. */
  public void put(String key, String value) {
    ctlChecked("put", key, value);
  }

  /** {@code etcdctl get --print-value-only}: the value or null. */
  public String get(String key) {
    String out = ctlChecked("get", key, "--print-value-only").strip();
    return out.isEmpty() ? null : out;
  }

  /** {@code etcdctl get --prefix --keys-only}: the keys under {@code prefix}. */
  public List<String> keys(String prefix) {
    return ctlChecked("get", "--prefix", prefix, "--keys-only")
        .lines()
        .filter(l -> !l.isBlank())
        .toList();
  }

  /** The lease IDs of the keys under {@code prefix}, in key order (0 = no lease). */
  public List<Long> leases(String prefix) {
    String out = ctlChecked("get", "--prefix", prefix, "-w", "json");
    try {
      List<Long> ids = new ArrayList<>();
      new ObjectMapper()
          .readTree(out)
          .path("kvs")
          .forEach(kv -> ids.add(kv.path("lease").asLong(0)));
      return ids;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The current revision of the cluster. */
  public long revision() {
    String out = ctlChecked("get", "kvs-test-none", "-w", "fields");
    return out.lines()
        .filter(l -> l.startsWith("\"Revision\""))
        .map(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).strip()))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no revision in " + out));
  }

  /** Compacts the history up to the current revision; returns it. */
  public long compact() {
    long rev = revision();
    ctlChecked("compact", Long.toString(rev), "--physical");
    return rev;
  }

  /** {@code etcdctl <args>} against every member; fails unless it exits with 0. */
  public String ctlChecked(String... args) {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "etcdctl",
                "--endpoints",
                String.join(",", endpoints()),
                "--dial-timeout",
                "2s",
                "--command-timeout",
                "10s"));
    cmd.addAll(List.of(args));
    return EtcdProcesses.run(cmd, CTL_TIMEOUT).checked().output();
  }

  private void launch(int i) throws IOException {
    if (processes[i] != null && processes[i].isAlive()) {
      return;
    }
    Path data = dir.resolve(name(i));
    List<String> cmd =
        List.of(
            "etcd",
            "--name",
            name(i),
            "--data-dir",
            data.toString(),
            "--listen-client-urls",
            endpoint(i),
            "--advertise-client-urls",
            endpoint(i),
            "--listen-peer-urls",
            peerUrl(i),
            "--initial-advertise-peer-urls",
            peerUrl(i),
            "--initial-cluster",
            initialCluster,
            "--initial-cluster-state",
            "new",
            "--initial-cluster-token",
            "kvs-test-" + dir.getFileName(),
            "--log-level",
            "warn");
    processes[i] =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dir.resolve(name(i) + ".log").toFile()))
            .start();
  }

  private void awaitHealthy(int i) throws Exception {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      Process p = processes[i];
      if (p == null || !p.isAlive()) {
        throw new IllegalStateException("etcd member " + name(i) + " exited:\n" + tail(i));
      }
      EtcdProcesses.Result r =
          EtcdProcesses.run(
              List.of(
                  "etcdctl",
                  "--endpoints",
                  endpoint(i),
                  "--dial-timeout",
                  "1s",
                  "--command-timeout",
                  "2s",
                  "endpoint",
                  "health"),
              CTL_TIMEOUT);
      if (r.exit() == 0) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "etcd member "
                + name(i)
                + " not healthy within "
                + READY_TIMEOUT
                + ": "
                + r.output()
                + "\n"
                + tail(i));
      }
      Thread.sleep(100);
    }
  }

  private String tail(int i) {
    return EtcdProcesses.tail(dir.resolve(name(i) + ".log"));
  }

  private static String name(int i) {
    return "m" + i;
  }

  private String peerUrl(int i) {
    return "http://127.0.0.1:" + peerPorts[i];
  }

  @Override
  public void close() throws InterruptedException {
    killAll();
    EtcdProcesses.deleteTree(dir);
  }
}
