package io.kvscheduler.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.agent.AgentMain;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * W9: the agent as an operator starts it, in a process of its own, on a configuration directory
 * generated for the run, with the mock plugins: one YAML file in the keyed format holding W1's
 * values, {@code n} interfaces {@code if<i>} and bridge domain {@code bd1} listing them all ({@code
 * 2n+1} values with the derived bindings).
 *
 * <p>Reports {@code seconds}: from the start of the process to every value CONFIGURED, as read over
 * REST ({@code GET /scheduler/status}). And its parts, each of its own: {@code rest_up_seconds}
 * (process start to the agent's log line saying that REST listens: the JVM's start, the plugins'
 * init, the REST server), {@code parse_seconds} (the file northbound reading and parsing the
 * directory, as the agent logs it), {@code commit_seconds} (the engine's own part of its
 * transactions until then: their recorded start to stop less the time spent in southbound calls,
 * which {@code southbound_seconds} gives from {@code kvs_southbound_call_seconds}) and {@code
 * parts_seconds}, their sum. {@code seconds} well above {@code parts_seconds} is time spent
 * elsewhere: in the southbound, in logging, in publishing statuses.
 *
 * <p>The agent runs with this JVM's runtime and options (less those that write files or attach a
 * debugger), on the agent's jars of this class path, with its own logging configuration; its output
 * goes to {@code agent.log} in the run's temporary directory (deleted afterwards unless {@code
 * kvs.bench.keep} is set).
 */
final class AgentStartup {
  private AgentStartup() {}

  private static final ObjectMapper JSON = new ObjectMapper();

  /** How long the agent may take to configure everything. */
  private static final Duration DEADLINE = Duration.ofMinutes(10);

  /** Between two looks at the last values' status. */
  private static final long POLL_MS = 20;

  static Map<String, Object> run(int n) {
    return measure(n, false);
  }

  /**
   * W9 with the Linux plugin: {@code n} veth pairs, an address on one end of each, in the agent's
   * own network namespace. The harness runs again, and the agent with it, inside a private user and
   * network namespace ({@code unshare --user --map-root-user --net}): the agent's REST server and
   * the kernel objects it makes are there, and the host is never touched. Here the southbound is
   * the kernel's work, which the agent must spend: {@code commit_seconds} includes it.
   */
  static Map<String, Object> runLinux(int n) {
    List<String> cmd = new ArrayList<>(List.of("unshare", "--user", "--map-root-user", "--net"));
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (ScaleHarness.NOT_INHERITED.stream().noneMatch(option::startsWith)) {
        cmd.add(option);
      }
    }
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            AgentStartup.class.getName(),
            "linux",
            Integer.toString(n)));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int exit = p.waitFor();
      String last = output.strip().lines().reduce((a, b) -> b).orElse("");
      if (exit != 0 || !last.startsWith("{")) {
        throw new IllegalStateException("W9 (linux): exit " + exit + ", output: " + output);
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> out = JSON.readValue(last, LinkedHashMap.class);
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("W9 (linux): " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("W9 interrupted", e);
    }
  }

  /** Inside the private namespace of {@link #runLinux}: {@code linux N}; prints one JSON line. */
  public static void main(String[] args) throws Exception {
    if (args.length != 2 || !args[0].equals("linux")) {
      throw new IllegalArgumentException("usage: AgentStartup linux N");
    }
    Process lo = new ProcessBuilder("ip", "link", "set", "lo", "up").inheritIO().start();
    if (lo.waitFor() != 0) {
      throw new IllegalStateException("W9 (linux): cannot bring lo up");
    }
    System.out.println(ScaleHarness.toJson(measure(Integer.parseInt(args[1]), true)));
  }

  private static Map<String, Object> measure(int n, boolean linux) {
    Map<String, Object> out = new LinkedHashMap<>();
    Path tmp = null;
    Process agent = null;
    try {
      tmp = Files.createTempDirectory("kvs-w9-");
      Path config = Files.createDirectory(tmp.resolve("config"));
      int values = linux ? writeLinux(config, n) : writeMock(config, n);
      int port = freePort();
      Path log = tmp.resolve("agent.log");
      List<String> cmd = command(config, port, linux);
      HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
      String base = "http://127.0.0.1:" + port;

      long start = System.nanoTime();
      long startMillis = System.currentTimeMillis();
      agent =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      long deadline = start + DEADLINE.toNanos();
      waitFor(agent, deadline, () -> get(http, base + "/info/version") != null);
      // the cheap probe: the last values of the configuration, then every value to be sure
      List<String> last = linux ? linuxProbe(n) : mockProbe(n);
      waitFor(agent, deadline, () -> last.stream().allMatch(k -> configured(http, base, k)));
      long done;
      int configured;
      while (true) {
        long seen = System.nanoTime();
        String status = get(http, base + "/scheduler/status");
        configured = countConfigured(status);
        if (configured >= values && (!linux || countUnsettled(status) == 0)) {
          done = seen;
          break;
        }
        if (System.nanoTime() > deadline || !agent.isAlive()) {
          throw new IllegalStateException(
              "W9: " + configured + " of " + values + " values CONFIGURED; agent log " + log);
        }
        Thread.sleep(POLL_MS);
      }
      double seconds = (done - start) / 1e9;
      double transactions = commitSeconds(get(http, base + "/scheduler/txn-history"));
      double southbound = southboundSeconds(get(http, base + "/metrics"));
      // the mock southbound's cost is its own (left out); the kernel's is what the agent must spend
      double commit = linux ? transactions : transactions - southbound;
      double parse = parseSeconds(log);
      double rest = (restListening(log) - startMillis) / 1e3;
      double parts = rest + parse + commit;
      out.put("values", values);
      out.put("seconds", ScaleHarness.round(seconds, 3));
      out.put("rest_up_seconds", ScaleHarness.round(rest, 3));
      out.put("parse_seconds", ScaleHarness.round(parse, 3));
      out.put("commit_seconds", ScaleHarness.round(commit, 3));
      out.put("southbound_seconds", ScaleHarness.round(southbound, 3));
      out.put("parts_seconds", ScaleHarness.round(parts, 3));
      out.put("parts_ratio", ScaleHarness.round(seconds / parts, 2));
      out.put("log_lines", lines(log));
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException("W9: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("W9 interrupted", e);
    } finally {
      if (agent != null) {
        agent.destroy();
        try {
          if (!agent.waitFor(20, TimeUnit.SECONDS)) {
            agent.destroyForcibly().waitFor();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (tmp != null && !Boolean.getBoolean("kvs.bench.keep")) {
        delete(tmp);
      } else if (tmp != null) {
        System.err.println("kvs-bench: W9 kept " + tmp);
      }
    }
  }

  /**
   * Environment variable with JVM options for the agent process alone, after the harness's own,
   * separated by spaces: {@code KVS_W9_AGENT_OPTS="-XX:+UseParallelGC" bin/kvs-bench W9 --n
   * 100000}.
   */
  static final String AGENT_OPTS = "KVS_W9_AGENT_OPTS";

  /** The command starting the agent. */
  private static List<String> command(Path config, int port, boolean linux) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(AgentMain.launcherJvmOptions()); // as the launchers start it
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (ScaleHarness.NOT_INHERITED.stream().noneMatch(option::startsWith)) {
        cmd.add(option);
      }
    }
    // options for the agent's JVM only (e.g. a class-data archive the harness's JVM cannot share)
    for (String option : System.getenv().getOrDefault(AGENT_OPTS, "").trim().split("\\s+")) {
      if (!option.isEmpty()) {
        cmd.add(option);
      }
    }
    cmd.addAll(
        List.of(
            "-cp",
            agentClassPath(),
            "io.kvscheduler.agent.AgentMain",
            "run",
            "--config-dir",
            config.toString(),
            "--rest",
            "127.0.0.1:" + port,
            // nothing is pushed over REST or gRPC: no state store (and none left behind)
            "--state-dir",
            "off"));
    if (linux) {
      cmd.add("--linux");
    }
    return cmd;
  }

  /**
   * This class path without the benchmarks' own classes: their logging configuration (warnings
   * only, to stderr) is not the agent's.
   */
  private static String agentClassPath() {
    String self;
    try {
      self =
          Path.of(AgentStartup.class.getProtectionDomain().getCodeSource().getLocation().toURI())
              .toString();
    } catch (Exception e) {
      self = "";
    }
    List<String> kept = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      if (!entry.isEmpty() && !Path.of(entry).toAbsolutePath().toString().equals(self)) {
        kept.add(entry);
      }
    }
    return String.join(java.io.File.pathSeparator, kept);
  }

  /** W1's values in the keyed format: {@code n} interfaces and bridge domain {@code bd1}. */
  static int writeMock(Path dir, int n) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(dir.resolve("w1.yaml"))) {
      w.write("# W1: " + n + " interfaces and a bridge domain listing them\n");
      w.write("config/mock/v1/bridge-domain/bd1:\n  name: bd1\n  interfaces:\n");
      for (int i = 0; i < n; i++) {
        w.write("  - name: if" + i + "\n");
      }
      for (int i = 0; i < n; i++) {
        w.write("config/mock/v1/interfaces/if" + i + ":\n");
        w.write("  name: if" + i + "\n  type: TAP\n  enabled: true\n");
      }
    }
    return 2 * n + 1;
  }

  /**
   * {@code n} veth pairs {@code a<i>}/{@code b<i>} in the agent's namespace, an address on each
   * {@code a<i>}, in vpp-agent's YAML format; returns the number of base values ({@code 2n}).
   */
  static int writeLinux(Path dir, int n) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(dir.resolve("veth.yaml"))) {
      w.write("# W9 (linux): " + n + " veth pairs, an address on one end of each\n");
      w.write("linuxConfig:\n  interfaces:\n");
      for (int i = 0; i < n; i++) {
        String address = "10." + (1 + i / 256) + "." + (i % 256) + ".1/24";
        w.write(
            "  - {name: a" + i + ", type: VETH, enabled: true, veth: {peerIfName: b" + i + "},");
        w.write(" ipAddresses: [" + address + "]}\n");
        w.write(
            "  - {name: b" + i + ", type: VETH, enabled: true, veth: {peerIfName: a" + i + "}}\n");
      }
    }
    return 2 * n;
  }

  /** The last pair: among the last values configured. */
  private static List<String> linuxProbe(int n) {
    int i = n - 1;
    return List.of(
        "config/linux/interfaces/v2/interface/a" + i, "config/linux/interfaces/v2/interface/b" + i);
  }

  /** The values of a {@code /scheduler/status} answer in a state that may still change. */
  static int countUnsettled(String body) {
    Matcher m =
        Pattern.compile("\"state\"\\s*:\\s*\"(PENDING|RETRYING|FAILED|MISSING|INVALID)\"")
            .matcher(body);
    int count = 0;
    while (m.find()) {
      count++;
    }
    return count;
  }

  /** The last interface and its binding: among the last values configured. */
  private static List<String> mockProbe(int n) {
    int i = n - 1;
    return List.of("config/mock/v1/interfaces/if" + i, "mock/bd/bd1/interface/if" + i);
  }

  private interface Check {
    boolean done() throws Exception;
  }

  /** Waits until {@code check} holds: the time it did, in {@link System#nanoTime()}. */
  private static long waitFor(Process agent, long deadline, Check check)
      throws InterruptedException {
    while (true) {
      try {
        if (check.done()) {
          return System.nanoTime();
        }
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        // not yet: the server is not up, or the value not there
      }
      if (!agent.isAlive()) {
        throw new IllegalStateException("W9: the agent exited with " + agent.exitValue());
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("W9: the agent did not get there within " + DEADLINE);
      }
      Thread.sleep(POLL_MS);
    }
  }

  private static boolean configured(HttpClient http, String base, String key) {
    String body = get(http, base + "/scheduler/status?key=" + key);
    return body != null && countConfigured(body) > 0;
  }

  /** The body of a 200 answer to {@code GET url}, or null. */
  private static String get(HttpClient http, String url) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60)).build(),
              HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      return r.statusCode() == 200 ? r.body() : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The CONFIGURED values (derived ones included) of a {@code /scheduler/status} answer. */
  static int countConfigured(String body) {
    if (body == null) {
      return 0;
    }
    Matcher m = Pattern.compile("\"state\"\\s*:\\s*\"CONFIGURED\"").matcher(body);
    int count = 0;
    while (m.find()) {
      count++;
    }
    return count;
  }

  /** The sum of the recorded transactions' durations (start to stop). */
  static double commitSeconds(String history) throws IOException {
    if (history == null) {
      throw new IllegalStateException("W9: no transaction history");
    }
    double sum = 0;
    for (JsonNode txn : JSON.readTree(history)) {
      OffsetDateTime s = OffsetDateTime.parse(txn.get("Start").asText());
      OffsetDateTime e = OffsetDateTime.parse(txn.get("Stop").asText());
      sum += Duration.between(s, e).toNanos() / 1e9;
    }
    return sum;
  }

  private static final Pattern SB_CALLS =
      Pattern.compile("(?m)^kvs_southbound_call_seconds_sum\\{[^}]*\\} ([0-9.eE+-]+)$");

  /** The time spent in southbound calls ({@code kvs_southbound_call_seconds_sum}, summed). */
  static double southboundSeconds(String metrics) {
    if (metrics == null) {
      throw new IllegalStateException("W9: no metrics");
    }
    double sum = 0;
    Matcher m = SB_CALLS.matcher(metrics);
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }

  private static final Pattern PARSED =
      Pattern.compile("file northbound: \\d+ values from \\d+ files .*read in (\\d+) ms");

  /** What the file northbound logged it took to read the directory at start. */
  static double parseSeconds(Path log) throws IOException {
    try (Stream<String> lines = Files.lines(log)) {
      return lines
          .map(PARSED::matcher)
          .filter(Matcher::find)
          .map(m -> Long.parseLong(m.group(1)) / 1e3)
          .findFirst()
          .orElseThrow(
              () -> new IllegalStateException("W9: the agent logged no read time in " + log));
    }
  }

  private static final Pattern LISTENING =
      Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d{3}) .*REST API listening on ");

  /** When the agent logged that its REST server listens (epoch milliseconds, today). */
  static long restListening(Path log) throws IOException {
    try (Stream<String> lines = Files.lines(log)) {
      LocalTime t =
          lines
              .map(LISTENING::matcher)
              .filter(Matcher::find)
              .map(m -> LocalTime.parse(m.group(1)))
              .findFirst()
              .orElseThrow(
                  () -> new IllegalStateException("W9: the agent logged no REST start in " + log));
      return t.atDate(LocalDate.now()).atZone(ZoneId.systemDefault()).toInstant().toEpochMilli();
    }
  }

  private static long lines(Path log) throws IOException {
    try (Stream<String> lines = Files.lines(log)) {
      return lines.count();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("kvs-bench: cannot delete " + dir + ": " + e.getMessage());
    }
  }
}
