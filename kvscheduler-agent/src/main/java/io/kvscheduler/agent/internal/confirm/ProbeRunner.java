package io.kvscheduler.agent.internal.confirm;

import io.kvscheduler.agent.Probe;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a {@link Probe}: whether it passed, and what it said. */
@FunctionalInterface
public interface ProbeRunner {
  /** Characters of a probe's output kept for the rollback's record, at most (the last ones). */
  int MAX_OUTPUT = 300;

  /**
   * The outcome of one run.
   *
   * @param passed whether the probe passed
   * @param output what it said (its output, the answer or the error), on one line, shortened
   */
  record Outcome(boolean passed, String output) {}

  /** Runs {@code probe} within its timeout. Never throws: a probe that cannot run fails. */
  Outcome run(Probe probe);

  /** Runs the probes for real: processes, sockets, HTTP. */
  static ProbeRunner system() {
    return ProbeRunner::runForReal;
  }

  /**
   * Checks that the program of each command probe exists (on the {@code PATH}, or the file named),
   * and {@code ip} for one in a network namespace.
   *
   * @throws IllegalArgumentException naming the probe and the program
   */
  static void checkPrograms(List<Probe> probes, Map<String, String> env) {
    for (Probe p : probes) {
      if (p.kind() != Probe.Kind.COMMAND) {
        continue;
      }
      List<String> needed = new ArrayList<>();
      if (p.netns() != null) {
        needed.add("ip");
      }
      needed.add(p.command().get(0));
      for (String program : needed) {
        if (!exists(program, env.getOrDefault("PATH", ""))) {
          throw new IllegalArgumentException(
              "probe '"
                  + p.name()
                  + "': the command '"
                  + program
                  + "' does not exist"
                  + (program.contains("/") ? "" : " on the PATH")
                  + " (the settings' probes: are checked at start)");
        }
      }
    }
  }

  private static boolean exists(String program, String path) {
    if (program.contains("/")) {
      return Files.isExecutable(Path.of(program));
    }
    for (String dir : path.split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }

  private static Outcome runForReal(Probe probe) {
    try {
      return switch (probe.kind()) {
        case COMMAND -> command(probe);
        case TCP -> tcp(probe);
        case HTTP -> http(probe);
      };
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Outcome(false, "interrupted");
    } catch (Exception e) {
      return new Outcome(false, oneLine(String.valueOf(e)));
    }
  }

  private static Outcome command(Probe probe) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>();
    if (probe.netns() != null) {
      argv.addAll(List.of("ip", "netns", "exec", probe.netns()));
    }
    argv.addAll(probe.command());
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    p.getOutputStream().close();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = p.getInputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // the process went: what was read is kept
              }
            },
            "kvs-probe-output");
    reader.setDaemon(true);
    reader.start();
    if (!p.waitFor(probe.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      return new Outcome(
          false, "timed out after " + probe.timeout().toMillis() + "ms" + tail(out, reader));
    }
    String said = tail(out, reader);
    return p.exitValue() == 0
        ? new Outcome(true, "exit 0" + said)
        : new Outcome(false, "exit " + p.exitValue() + said);
  }

  private static String tail(ByteArrayOutputStream out, Thread reader) throws InterruptedException {
    reader.join(200);
    String text;
    synchronized (out) {
      text = out.toString(StandardCharsets.UTF_8);
    }
    text = oneLine(text);
    return text.isEmpty() ? "" : ": " + text;
  }

  private static Outcome tcp(Probe probe) throws IOException {
    String target = probe.target();
    int colon = target.lastIndexOf(':');
    if (colon < 0) {
      return new Outcome(false, "not host:port: " + target);
    }
    String host = target.substring(0, colon).replace("[", "").replace("]", "");
    int port = Integer.parseInt(target.substring(colon + 1));
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), (int) probe.timeout().toMillis());
      return new Outcome(true, "connected to " + target);
    }
  }

  private static Outcome http(Probe probe) throws IOException, InterruptedException {
    HttpClient client = HttpClient.newBuilder().connectTimeout(probe.timeout()).build();
    HttpResponse<String> r =
        client.send(
            HttpRequest.newBuilder(URI.create(probe.target()))
                .timeout(probe.timeout())
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    String said = "HTTP " + r.statusCode() + (r.body().isBlank() ? "" : ": " + oneLine(r.body()));
    return new Outcome(r.statusCode() / 100 == 2, said);
  }

  /** {@code text} on one line, its last {@link #MAX_OUTPUT} characters. */
  static String oneLine(String text) {
    String t = text.strip().replaceAll("\\s*\\R\\s*", " | ");
    return t.length() <= MAX_OUTPUT ? t : "…" + t.substring(t.length() - MAX_OUTPUT);
  }
}
