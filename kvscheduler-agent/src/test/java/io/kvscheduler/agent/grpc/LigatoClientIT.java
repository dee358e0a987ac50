package io.kvscheduler.agent.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.RestSecurity;
import io.kvscheduler.agent.internal.northbound.GrpcNorthbound;
import io.kvscheduler.agent.internal.northbound.NorthboundSource;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import io.kvscheduler.grpc.GrpcSettings;
import io.kvscheduler.testsupport.DocSnippets;
import io.kvscheduler.testsupport.DocSnippets.Snippet;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real client of the gRPC API: Python stubs generated with Debian's {@code protoc} and {@code
 * grpc_python_plugin} from vpp-agent's own .proto files, driving a running agent over TCP. The
 * client script is {@code grpc/ligato_client.py} (test resources).
 *
 * <p>ligato's .proto files stay outside the repository: they are a conformance input, never copied
 * in. The test finds them through the system property {@code kvs.ligato.proto} or the environment
 * variable {@code LIGATO_PROTO_DIR}, by default in {@code ../shared/spec/ligato-proto} relative to
 * the repository root, and is skipped when they are not there.
 *
 * <p>The documents' Python clients (blocks noted {@code run by LigatoClientIT}, see {@link
 * DocSnippets}) run here as they are written, with the stubs the documented {@code protoc} command
 * generates, and the one noted so with ligato's stubs too.
 */
class LigatoClientIT {
  static Path protoDir;
  static String python;
  @TempDir static Path work;

  @BeforeAll
  static void prerequisites() throws Exception {
    String given =
        Optional.ofNullable(System.getProperty("kvs.ligato.proto"))
            .orElse(System.getenv("LIGATO_PROTO_DIR"));
    Path root = Path.of("").toAbsolutePath().getParent(); // the module's parent: the repository
    protoDir =
        given != null ? Path.of(given) : root.resolve("../shared/spec/ligato-proto").normalize();
    assumeTrue(
        Files.isDirectory(protoDir.resolve("ligato/configurator")),
        "skipped: vpp-agent's .proto files are not at "
            + protoDir
            + " (set -Dkvs.ligato.proto or LIGATO_PROTO_DIR)");
    assumeTrue(
        run(List.of("protoc", "--version")) == 0
            && Files.isExecutable(Path.of("/usr/bin/grpc_python_plugin")),
        "skipped: protoc or grpc_python_plugin missing (Debian protobuf-compiler,"
            + " protobuf-compiler-grpc; bin/test installs them)");
    python =
        Stream.of("/usr/bin/python3", "python3")
            .filter(p -> run(List.of(p, "-c", "import grpc, google.protobuf")) == 0)
            .findFirst()
            .orElse(null);
    assumeTrue(
        python != null,
        "skipped: no python3 with grpc and protobuf (Debian"
            + " python3-grpcio, python3-protobuf; bin/test installs them)");
    List<String> protos;
    try (Stream<Path> files = Files.walk(protoDir)) {
      protos =
          files
              .filter(p -> p.toString().endsWith(".proto"))
              .map(p -> protoDir.relativize(p).toString())
              .sorted()
              .toList();
    }
    Path stubs = Files.createDirectories(work.resolve("stubs"));
    List<String> protoc =
        new ArrayList<>(
            List.of(
                "protoc",
                "-I",
                protoDir.toString(),
                "-I",
                "/usr/include",
                "--python_out=" + stubs,
                "--grpc_out=" + stubs,
                "--plugin=protoc-gen-grpc=/usr/bin/grpc_python_plugin"));
    protoc.addAll(protos);
    assertThat(run(protoc, protoDir)).as("protoc of vpp-agent's protos").isZero();
  }

  static int run(List<String> cmd) {
    return run(cmd, null);
  }

  static int run(List<String> cmd, Path dir) {
    return exec(cmd, dir).exit();
  }

  /**
   * What a command printed (standard output and error) and its exit status (-1: it did not end).
   */
  record Result(int exit, String output) {}

  static Result exec(List<String> cmd, Path dir) {
    try {
      Path log = Files.createTempFile(work, "run", ".log");
      ProcessBuilder pb =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
      if (dir != null) {
        pb.directory(dir.toFile());
      }
      Process p = pb.start();
      p.getOutputStream().close();
      boolean ended = p.waitFor(120, TimeUnit.SECONDS);
      if (!ended) {
        p.destroyForcibly().waitFor();
      }
      return new Result(ended ? p.exitValue() : -1, Files.readString(log));
    } catch (IOException e) {
      return new Result(-1, e.toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(-1, e.toString());
    }
  }

  static Path script() throws IOException {
    Path s = work.resolve("ligato_client.py");
    try (InputStream in = LigatoClientIT.class.getResourceAsStream("/grpc/ligato_client.py")) {
      Files.write(s, in.readAllBytes());
    }
    return s;
  }

  static <T extends NorthboundSource> T source(Agent agent, Class<T> type) {
    Optional<T> s = agent.sources().stream().filter(type::isInstance).map(type::cast).findFirst();
    return s.orElseThrow();
  }

  @Test
  @DisplayName(
      "a client generated from vpp-agent's protos: every rpc, on a running agent; REST shows its values")
  void ligatoClientDrivesTheAgent() throws Exception {
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress("127.0.0.1:0")
            .printTxnSummary(false)
            .grpc(GrpcSettings.plain("127.0.0.1:0"))
            .build();
    try (Agent agent = Agent.start(cfg)) {
      int port = source(agent, GrpcNorthbound.class).port();
      Process client =
          new ProcessBuilder(
                  python,
                  script().toString(),
                  work.resolve("stubs").toString(),
                  "127.0.0.1:" + port)
              .redirectErrorStream(true)
              .start();
      String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(client.waitFor(180, TimeUnit.SECONDS)).isTrue();
      assertThat(client.exitValue()).as(out).isZero();
      assertThat(out)
          .contains(
              "ok Update (no wait_done) applied tap1, tap2",
              "ok Update wait_done returns once the value is no longer PENDING",
              "ok Delete removed tap2",
              "ok Update full_resync replaced the gRPC values",
              "ok Update with dry-run:",
              "ok dry-run with confirm-within, and confirm-within 0s: INVALID_ARGUMENT",
              "ok VPP content refused: INVALID_ARGUMENT",
              "ok an empty VPP message refused: INVALID_ARGUMENT",
              "ok Update of a model not registered (Linux, plugin off) refused",
              "ok unknown model refused: INVALID_ARGUMENT",
              "ok SetConfig with labels",
              "ok KnownModels + ProtoFileDescriptor",
              "ok Subscribe: PENDING -> CONFIGURED",
              "ok a megabyte invalid value: FAILED_PRECONDITION",
              "all checks passed");

      int rest = source(agent, RestNorthbound.class).port();
      HttpResponse<String> yaml =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rest + "/configuration"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(yaml.body()).contains("name: tap3", "name: learnt", "name: red");
    }
  }

  @Test
  @DisplayName(
      "the documents' Python clients as written: with the stubs the documents generate, and with"
          + " ligato's")
  void documentedClientsRunAsWritten() throws Exception {
    List<Snippet> blocks =
        DocSnippets.all().stream()
            .filter(s -> s.runBy(LigatoClientIT.class.getSimpleName()))
            .toList();
    List<Snippet> generate = blocks.stream().filter(s -> s.language().equals("sh")).toList();
    List<Snippet> clients = blocks.stream().filter(s -> s.language().equals("python")).toList();
    assertThat(generate).as("the documented protoc command (run by LigatoClientIT)").hasSize(1);
    assertThat(clients).as("the documented Python clients (run by LigatoClientIT)").isNotEmpty();

    // the command as written, in a directory that shows the repository's files at their places
    // (whatever paths it names) and keeps what it writes out of the repository
    Path repository = DocSnippets.repository();
    Path own = Files.createDirectories(work.resolve("own"));
    try (Stream<Path> top = Files.list(repository)) {
      for (Path p : top.toList()) {
        Files.createSymbolicLink(own.resolve(p.getFileName().toString()), p);
      }
    }
    Result stubs = exec(List.of("bash", "-c", "set -euo pipefail\n" + generate.get(0).code()), own);
    assertThat(stubs.exit()).as(generate.get(0).where() + ": " + stubs.output()).isZero();

    for (Snippet client : clients) {
      runDocumentedClient(client, own, client.code());
      if (client.note().contains("ligato's")) {
        // the same client with the stubs of ligato's own .proto files (work/stubs), as documented
        String ligato =
            client
                .code()
                .replace("from model import interface_pb2", "from mock import interface_pb2");
        assertThat(ligato)
            .as("%s imports the mock model from 'model'", client.where())
            .isNotEqualTo(client.code());
        runDocumentedClient(client, work, ligato);
      }
    }
  }

  /**
   * Runs {@code code} (a documented client, its address the agent's) in {@code dir} against a new
   * agent: it exits with 0, prints what its closing {@code # ...} comment says, and REST then lists
   * every value it named.
   */
  private static void runDocumentedClient(Snippet client, Path dir, String code) throws Exception {
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress("127.0.0.1:0")
            .printTxnSummary(false)
            .grpc(GrpcSettings.plain("127.0.0.1:0"))
            .build();
    try (Agent agent = Agent.start(cfg)) {
      int port = source(agent, GrpcNorthbound.class).port();
      Path file = Files.createTempFile(dir, "client", ".py");
      Files.writeString(file, code.replace("127.0.0.1:9111", "127.0.0.1:" + port));
      Result run = exec(List.of(python, file.toString()), dir);
      String what = client.where() + " in " + dir.getFileName() + ", output:\n" + run.output();
      assertThat(run.exit()).as(what).isZero();
      List<String> lines = code.strip().lines().toList();
      String last = lines.get(lines.size() - 1);
      if (last.startsWith("# ")) {
        assertThat(run.output()).as(what).contains(last.substring(2));
      }
      int rest = source(agent, RestNorthbound.class).port();
      String yaml =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + rest + "/configuration"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      Matcher name = Pattern.compile("name=\"([^\"]+)\"").matcher(code);
      while (name.find()) {
        assertThat(yaml)
            .as("%s: REST lists %s", what, name.group(1))
            .contains("name: " + name.group(1));
      }
    }
  }

  @Test
  @DisplayName("a read-only agent refuses every change of a ligato client, and serves its reads")
  void ligatoClientOnAReadOnlyAgent() throws Exception {
    AgentConfig cfg =
        AgentConfig.builder()
            .restAddress(null)
            .printTxnSummary(false)
            .restSecurity(new RestSecurity(null, null, true, null, null))
            .grpc(GrpcSettings.plain("127.0.0.1:0"))
            .build();
    try (Agent agent = Agent.start(cfg)) {
      int port = source(agent, GrpcNorthbound.class).port();
      Result run =
          exec(
              List.of(
                  python,
                  script().toString(),
                  work.resolve("stubs").toString(),
                  "127.0.0.1:" + port,
                  "--read-only"),
              work);
      assertThat(run.exit()).as(run.output()).isZero();
      assertThat(run.output())
          .contains(
              "ok read-only: Update, Delete, SetConfig refused with PERMISSION_DENIED; reads served");
    }
  }

  @Test
  @DisplayName(
      "with the Linux plugin, in a private network namespace: Linux values over the configurator")
  void ligatoClientWithTheLinuxPlugin() throws Exception {
    assumeTrue(
        run(List.of("unshare", "--user", "--map-root-user", "--net", "true")) == 0,
        "skipped: the kernel does not allow private network namespaces here (unshare failed)");
    assumeTrue(run(List.of("ip", "-V")) == 0, "skipped: iproute2 ('ip') is missing");
    assertThat(run(List.of("iptables-restore", "--version")))
        .as("iptables-restore must be installed for the rule chain checks (bin/test installs it)")
        .isZero();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // the agent and the client share the namespace; its port cannot collide with another's
    String inside =
        String.join(
            " ",
            "ip link set lo up &&",
            quote(java),
            "-cp",
            quote(System.getProperty("java.class.path")),
            "io.kvscheduler.agent.AgentMain run --linux --rest off --quiet --grpc 127.0.0.1:9111",
            "> " + quote(work.resolve("agent.log").toString()) + " 2>&1 & agent=$!;",
            quote(python),
            quote(script().toString()),
            quote(work.resolve("stubs").toString()),
            "127.0.0.1:9111 --linux; status=$?; kill $agent; wait $agent; exit $status");
    Process p =
        new ProcessBuilder("unshare", "--user", "--map-root-user", "--net", "sh", "-c", inside)
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(240, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue())
        .as(out + "\nagent log:\n" + Files.readString(work.resolve("agent.log")))
        .isZero();
    assertThat(out)
        .contains(
            "ok ProtoFileDescriptor of ligato/linux/interfaces/interface.proto with its imports",
            "ok Linux veth1 without its peer: Update without wait_done returned, veth1 PENDING",
            "ok Linux veth pair: Update wait_done, Get, Dump from the kernel",
            "ok Notify: the watcher reported veth1",
            "ok Linux veth pair deleted",
            "ok Linux RuleChain: SetConfig made KVS-WEB (iptables-save)",
            "all checks passed");
  }

  private static String quote(String s) {
    return "'" + s.replace("'", "'\\''") + "'";
  }
}
