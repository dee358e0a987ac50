package io.kvscheduler.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An etcd cluster of local processes (the {@code etcd} binary on free loopback ports, a data
 * directory each under one temporary directory) for benchmarks: members can be killed (SIGKILL) and
 * started again on the same ports and data; {@link #counters} reads a member's Prometheus metrics.
 */
final class LocalEtcdCluster implements AutoCloseable {
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final Path dir;
  private final int[] clientPorts;
  private final int[] peerPorts;
  private final Process[] processes;
  private final String initialCluster;
  private final HttpClient http = HttpClient.newHttpClient();

  LocalEtcdCluster(int size) throws IOException {
    dir = Files.createTempDirectory("kvs-bench-etcd");
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
      peers.add("m" + i + "=http://127.0.0.1:" + peerPorts[i]);
    }
    initialCluster = String.join(",", peers);
  }

  List<String> endpoints() {
    List<String> out = new ArrayList<>();
    for (int port : clientPorts) {
      out.add("http://127.0.0.1:" + port);
    }
    return out;
  }

  /** Starts every member (together: they need each other) and waits until each answers. */
  void startAll() throws Exception {
    for (int i = 0; i < processes.length; i++) {
      launch(i);
    }
    for (int i = 0; i < processes.length; i++) {
      awaitHealthy(i);
    }
  }

  /** Starts member {@code i} again on its ports and data; waits until it answers. */
  void start(int i) throws Exception {
    launch(i);
    awaitHealthy(i);
  }

  /** Kills member {@code i} with SIGKILL; its data stays. */
  void kill(int i) throws InterruptedException {
    Process p = processes[i];
    if (p != null) {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      processes[i] = null;
    }
  }

  private void launch(int i) throws IOException {
    String client = "http://127.0.0.1:" + clientPorts[i];
    String peer = "http://127.0.0.1:" + peerPorts[i];
    List<String> cmd =
        List.of(
            "etcd",
            "--name",
            "m" + i,
            "--data-dir",
            dir.resolve("m" + i).toString(),
            "--listen-client-urls",
            client,
            "--advertise-client-urls",
            client,
            "--listen-peer-urls",
            peer,
            "--initial-advertise-peer-urls",
            peer,
            "--initial-cluster",
            initialCluster,
            "--initial-cluster-state",
            "new",
            "--log-level",
            "warn");
    processes[i] =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(dir.resolve("m" + i + ".log").toFile()))
            .start();
  }

  private void awaitHealthy(int i) throws Exception {
    long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
    while (true) {
      try {
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create(endpoints().get(i) + "/health"))
                    .timeout(Duration.ofSeconds(2))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200 && r.body().contains("\"health\":\"true\"")) {
          return;
        }
      } catch (IOException e) {
        // not up yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "etcd member m" + i + " not healthy within " + READY_TIMEOUT);
      }
      Thread.sleep(100);
    }
  }

  private static final Pattern COUNTER =
      Pattern.compile(
          "^(grpc_server_handled_total|grpc_server_msg_received_total)\\{(.*)} (\\S+)$");
  private static final Pattern METHOD = Pattern.compile("grpc_method=\"([^\"]+)\"");

  /**
   * The gRPC requests member {@code i} has handled, by method: unary calls ({@code Range}, {@code
   * Put}, {@code Txn}, ...) from {@code grpc_server_handled_total}, stream messages ({@code
   * LeaseKeepAlive}, {@code Watch}) from {@code grpc_server_msg_received_total} as {@code
   * <method>_msgs}.
   */
  Map<String, Double> counters(int i) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(endpoints().get(i) + "/metrics"))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    Map<String, Double> out = new HashMap<>();
    for (String line : r.body().split("\n")) {
      Matcher m = COUNTER.matcher(line);
      if (!m.matches()) {
        continue;
      }
      Matcher method = METHOD.matcher(m.group(2));
      if (!method.find()) {
        continue;
      }
      boolean stream = m.group(1).equals("grpc_server_msg_received_total");
      String name = method.group(1);
      if (stream && !(name.equals("LeaseKeepAlive") || name.equals("Watch"))) {
        continue;
      }
      out.merge(stream ? name + "_msgs" : name, Double.parseDouble(m.group(3)), Double::sum);
    }
    return out;
  }

  @Override
  public void close() throws InterruptedException {
    for (int i = 0; i < processes.length; i++) {
      kill(i);
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }

  private static int freePort(List<Integer> used) throws IOException {
    while (true) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int p = s.getLocalPort();
        if (!used.contains(p)) {
          used.add(p);
          return p;
        }
      }
    }
  }
}
