package io.kvscheduler.ctl;

import io.kvscheduler.agent.AgentMain;
import io.kvscheduler.testsupport.EtcdFixture;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Real agents as processes of their own ({@code AgentMain run}) on a real etcd, each with its
 * label, status publishing and no REST server; their output is kept for failure messages.
 */
final class AgentProcesses implements AutoCloseable {
  private final EtcdFixture etcd;
  private final Path conf;
  private final List<Process> processes = new ArrayList<>();
  private final List<String> output = new ArrayList<>();

  AgentProcesses(EtcdFixture etcd, Path dir, int sessionTtlSeconds) throws IOException {
    this(
        etcd,
        Files.writeString(
            dir.resolve("etcd.conf"),
            "endpoints:\n  - \""
                + etcd.endpoint()
                + "\"\nsession-ttl: "
                + sessionTtlSeconds
                + "\ndial-timeout: 2s\noperation-timeout: 5s\n"));
  }

  /** Agents connecting with the etcd settings file {@code conf} (vpp-agent's etcd.conf). */
  AgentProcesses(EtcdFixture etcd, Path conf) {
    this.etcd = etcd;
    this.conf = conf;
  }

  /** Starts the agent of {@code label} (with status publishing). */
  Process start(String label) throws IOException {
    String classpath =
        Arrays.stream(
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"))
                    .split(File.pathSeparator))
            .filter(e -> !e.endsWith("test-classes"))
            .collect(Collectors.joining(File.pathSeparator));
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:TieredStopAtLevel=1",
            "-cp",
            classpath,
            AgentMain.class.getName(),
            "run",
            "--label",
            label,
            "--etcd-config",
            conf.toString(),
            "--rest",
            "off",
            "--status-publishing",
            "--quiet");
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    processes.add(p);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                  synchronized (output) {
                    output.add(label + ": " + l);
                  }
                }
              } catch (IOException e) {
                // ended
              }
            },
            "agent-output-" + label);
    reader.setDaemon(true);
    reader.start();
    return p;
  }

  /** Whether the agent of {@code label} has applied its configuration (its marker is written). */
  boolean ready(String label) {
    return etcd.get("/vnf-agent/" + label + "/check/status/v1/applied") != null;
  }

  /** What the agents printed so far. */
  String output() {
    synchronized (output) {
      return String.join("\n", output);
    }
  }

  /** Sends {@code signal} (STOP, CONT, ...) to {@code p}. */
  static void signal(Process p, String signal) throws Exception {
    Process k = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start();
    k.waitFor(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws Exception {
    for (Process p : processes) {
      signal(p, "CONT");
      p.destroy();
    }
    for (Process p : processes) {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
