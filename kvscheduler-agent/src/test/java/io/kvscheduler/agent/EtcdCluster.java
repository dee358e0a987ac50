package io.kvscheduler.agent;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real etcd cluster for tests: {@code size} members of the {@code etcd} binary on free loopback
 * ports, each with its own data directory and log. Members can be killed (SIGKILL) and started
 * again on the same ports and data; {@code etcdctl} talks to every member.
 */
final class EtcdCluster implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(30);
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
    List<Integer> used = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      clientPorts[i] = freePort(used);
      peerPorts[i] = freePort(used);
    }
    List<String> peers = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      peers.add(name(i) + "=" + peerUrl(i));
    }
    initialCluster = String.join(",", peers);
  }

  /** Starts a fresh cluster of {@code size} members and waits until every member answers. */
  static EtcdCluster startNew(int size) throws Exception {
    EtcdCluster c = new EtcdCluster(size);
    try {
      c.startAll();
    } catch (Exception | Error e) {
      c.close();
      throw e;
    }
    return c;
  }

  int size() {
    return processes.length;
  }

  /** The client endpoint of member {@code i}. */
  String endpoint(int i) {
    return "http://127.0.0.1:" + clientPorts[i];
  }

  /** The client endpoints of all members. */
  List<String> endpoints() {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < size(); i++) {
      out.add(endpoint(i));
    }
    return out;
  }

  /** Starts every member that is not running (all at once: they need each other), waits. */
  synchronized void startAll() throws Exception {
    for (int i = 0; i < size(); i++) {
      launch(i);
    }
    for (int i = 0; i < size(); i++) {
      awaitHealthy(i);
    }
  }

  /** Starts member {@code i} again on its ports and data, and waits until it answers. */
  synchronized void start(int i) throws Exception {
    launch(i);
    awaitHealthy(i);
  }

  /** Kills member {@code i} with SIGKILL (no clean shutdown); its data stays. */
  synchronized void kill(int i) throws InterruptedException {
    Process p = processes[i];
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      processes[i] = null;
    }
  }

  /** Kills every member. */
  synchronized void killAll() throws InterruptedException {
    for (int i = 0; i < size(); i++) {
      kill(i);
    }
  }

  /** {@code etcdctl put}. */
  void put(String key, String value) {
    ctlChecked("put", key, value);
  }

  /** {@code etcdctl get --print-value-only}: the value or null. */
  String get(String key) {
    String out = ctlChecked("get", key, "--print-value-only").strip();
    return out.isEmpty() ? null : out;
  }

  /** {@code etcdctl get --prefix --keys-only}: the keys under {@code prefix}. */
  List<String> keys(String prefix) {
    return ctlChecked("get", "--prefix", prefix, "--keys-only")
        .lines()
        .filter(l -> !l.isBlank())
        .toList();
  }

  /** The lease IDs of the keys under {@code prefix}, in key order (0 = no lease). */
  List<Long> leases(String prefix) {
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
  long revision() {
    String out = ctlChecked("get", "kvs-test-none", "-w", "fields");
    return out.lines()
        .filter(l -> l.startsWith("\"Revision\""))
        .map(l -> Long.parseLong(l.substring(l.indexOf(':') + 1).strip()))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("no revision in " + out));
  }

  /** Compacts the history up to the current revision; returns it. */
  long compact() {
    long rev = revision();
    ctlChecked("compact", Long.toString(rev), "--physical");
    return rev;
  }

  /** {@code etcdctl <args>} against every member; fails unless it exits with 0. */
  String ctlChecked(String... args) {
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
    String[] result = run(cmd);
    if (!result[0].equals("0")) {
      throw new IllegalStateException(
          "etcdctl " + String.join(" ", args) + " failed (" + result[0] + "): " + result[1]);
    }
    return result[1];
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
      String[] r =
          run(
              List.of(
                  "etcdctl",
                  "--endpoints",
                  endpoint(i),
                  "--dial-timeout",
                  "1s",
                  "--command-timeout",
                  "2s",
                  "endpoint",
                  "health"));
      if (r[0].equals("0")) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "etcd member "
                + name(i)
                + " not healthy within "
                + READY_TIMEOUT
                + ": "
                + r[1]
                + "\n"
                + tail(i));
      }
      Thread.sleep(100);
    }
  }

  private static String[] run(List<String> cmd) {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("ETCDCTL_API", "3");
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(CTL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new String[] {"-1", "etcdctl timed out"};
      }
      return new String[] {
        Integer.toString(p.exitValue()), new String(out, StandardCharsets.UTF_8)
      };
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private String tail(int i) {
    try {
      List<String> lines = Files.readAllLines(dir.resolve(name(i) + ".log"));
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
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
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }

  private static int freePort(List<Integer> used) throws IOException {
    while (true) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = s.getLocalPort();
        if (!used.contains(port)) {
          used.add(port);
          return port;
        }
      }
    }
  }
}
