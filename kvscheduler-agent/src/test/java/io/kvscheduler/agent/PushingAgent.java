package io.kvscheduler.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Any;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.kvscheduler.grpc.proto.generic.Data;
import io.kvscheduler.grpc.proto.generic.GetConfigRequest;
import io.kvscheduler.grpc.proto.generic.Item;
import io.kvscheduler.grpc.proto.generic.ManagerServiceGrpc;
import io.kvscheduler.grpc.proto.generic.SetConfigRequest;
import io.kvscheduler.grpc.proto.generic.UpdateItem;
import io.kvscheduler.plugins.mock.MockAgentPlugin;
import io.kvscheduler.plugins.mock.proto.interfaces.Interface;
import io.kvscheduler.testsupport.AgentOutput;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * An agent process (java with the test's classpath, the agent's own logging) with the REST API, the
 * gRPC server and the mock southbound kept in a state file, to push to over REST and gRPC, kill and
 * start again.
 */
final class PushingAgent implements AutoCloseable {
  static final String TAP = "config/mock/v1/interfaces/";
  private static final ObjectMapper JSON = new ObjectMapper();

  final Process process;
  final int restPort;
  final int grpcPort;
  final List<String> lines;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private ManagedChannel channel;

  private PushingAgent(Process process, int restPort, int grpcPort, List<String> lines) {
    this.process = process;
    this.restPort = restPort;
    this.grpcPort = grpcPort;
    this.lines = lines;
  }

  /** The command line of an agent on free ports, its southbound kept in {@code sbFile}. */
  static ProcessBuilder command(Path sbFile, int restPort, int grpcPort, String... args) {
    String classpath =
        Arrays.stream(
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"))
                    .split(File.pathSeparator))
            .filter(e -> !e.endsWith("test-classes")) // the agent's logging settings
            .collect(Collectors.joining(File.pathSeparator));
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:+ExitOnOutOfMemoryError",
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                classpath,
                AgentMain.class.getName(),
                "run",
                "--rest",
                "127.0.0.1:" + restPort,
                "--grpc",
                "127.0.0.1:" + grpcPort));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put(MockAgentPlugin.STATE_FILE_ENV, sbFile.toString());
    return pb;
  }

  /** Starts the agent and waits for it to have started (at most 60 s). */
  static PushingAgent start(Path sbFile, String... args) throws Exception {
    int rest = freePort();
    int grpc = freePort();
    Process p = command(sbFile, rest, grpc, args).start();
    List<String> lines = new ArrayList<>();
    AgentOutput.awaitStarted(p, lines, Duration.ofSeconds(60));
    return new PushingAgent(p, rest, grpc, lines);
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A mock TAP interface named {@code name}, as YAML of the configuration format. */
  static String yaml(String... names) {
    StringBuilder b = new StringBuilder("mockConfig:\n  Interface_list:\n");
    for (String n : names) {
      b.append("  - name: ").append(n).append("\n    type: TAP\n    enabled: true\n");
    }
    return b.toString();
  }

  /** {@code PUT /configuration} of {@code yaml}: the status code. */
  int put(String yaml) throws IOException, InterruptedException {
    return put("", yaml);
  }

  /** {@code POST path} without a body: the status code. */
  int post(String path) throws IOException, InterruptedException {
    return http.send(
            HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  /** {@code PUT /configuration?query} of {@code yaml} ({@code query} empty or from {@code ?}). */
  int put(String query, String yaml) throws IOException, InterruptedException {
    return http.send(
            HttpRequest.newBuilder(uri("/configuration" + query))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/yaml")
                .PUT(HttpRequest.BodyPublishers.ofString(yaml))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }

  /** {@code GET path}, parsed. */
  JsonNode get(String path) throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException("GET " + path + ": " + r.statusCode() + " " + r.body());
    }
    return JSON.readTree(r.body());
  }

  /** {@code GET /configuration}, the YAML text. */
  String configuration() throws IOException, InterruptedException {
    return http.send(
            HttpRequest.newBuilder(uri("/configuration")).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + restPort + path);
  }

  /** gRPC {@code SetConfig} of TAP interfaces named {@code names} (returns once answered OK). */
  void setConfig(String... names) {
    Map<String, Map<String, String>> none = new LinkedHashMap<>();
    for (String n : names) {
      none.put(n, Map.of());
    }
    setConfig(false, none);
  }

  /**
   * gRPC {@code SetConfig} of TAP interfaces by name, each with its labels ({@code overwrite_all}
   * when {@code replace}); returns once answered OK.
   */
  void setConfig(boolean replace, Map<String, Map<String, String>> labelsByName) {
    SetConfigRequest.Builder req = SetConfigRequest.newBuilder().setOverwriteAll(replace);
    labelsByName.forEach(
        (n, labels) -> {
          Interface tap =
              Interface.newBuilder()
                  .setName(n)
                  .setType(Interface.Type.TAP)
                  .setEnabled(true)
                  .build();
          Any any =
              Any.newBuilder()
                  .setTypeUrl("type.googleapis.com/" + tap.getDescriptorForType().getFullName())
                  .setValue(tap.toByteString())
                  .build();
          req.addUpdates(
              UpdateItem.newBuilder()
                  .setItem(Item.newBuilder().setData(Data.newBuilder().setAny(any)))
                  .putAllLabels(labels));
        });
    ManagerServiceGrpc.newBlockingStub(channel())
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .setConfig(req.build());
  }

  /** gRPC {@code GetConfig} with a label filter: each item's name and labels. */
  Map<String, Map<String, String>> getConfigLabels(Map<String, String> filter) {
    Map<String, Map<String, String>> out = new TreeMap<>();
    ManagerServiceGrpc.newBlockingStub(channel())
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .getConfig(GetConfigRequest.newBuilder().putAllLabels(filter).build())
        .getItemsList()
        .forEach(i -> out.put(i.getItem().getId().getName(), i.getLabelsMap()));
    return out;
  }

  private synchronized ManagedChannel channel() {
    if (channel == null) {
      channel = ManagedChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
    }
    return channel;
  }

  /** SIGKILL, and waits for the process to end. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("the agent did not die of SIGKILL within 30 s");
    }
    closeChannel();
  }

  String output() {
    synchronized (lines) {
      return String.join("\n", lines);
    }
  }

  private synchronized void closeChannel() {
    if (channel != null) {
      channel.shutdownNow();
      channel = null;
    }
  }

  @Override
  public void close() throws InterruptedException {
    closeChannel();
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }
}
