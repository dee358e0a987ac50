package io.kvscheduler.ctl;

import io.kvscheduler.agent.Agent;
import io.kvscheduler.agent.AgentConfig;
import io.kvscheduler.agent.RestSecurity;
import io.kvscheduler.agent.internal.northbound.RestNorthbound;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine;

/** A real agent with the mock plugins and its REST API on a free loopback port. */
final class RunningAgent implements AutoCloseable {
  final Agent agent;
  final String url;

  private RunningAgent(Agent agent) {
    this.agent = agent;
    int port =
        agent.sources().stream()
            .filter(RestNorthbound.class::isInstance)
            .map(RestNorthbound.class::cast)
            .findFirst()
            .orElseThrow()
            .port();
    this.url = "http://127.0.0.1:" + port;
  }

  /** An agent with REST only. */
  static RunningAgent start() throws Exception {
    return start((Path) null);
  }

  /** An agent with REST and, when not null, the file northbound on {@code configDir}. */
  static RunningAgent start(Path configDir) throws Exception {
    return new RunningAgent(
        Agent.start(
            AgentConfig.builder()
                .configDir(configDir)
                .restAddress("127.0.0.1:0")
                .printTxnSummary(false)
                .build()));
  }

  /** An agent with REST only, with {@code security}. */
  static RunningAgent start(RestSecurity security) throws Exception {
    return new RunningAgent(
        Agent.start(
            AgentConfig.builder()
                .restAddress("127.0.0.1:0")
                .printTxnSummary(false)
                .restSecurity(security)
                .build()));
  }

  /** What one kvsctl run printed and returned. */
  record Run(int exit, String out, String err) {}

  /** Runs kvsctl against this agent (its {@code --agent} added) with {@code env}. */
  Run ctl(Map<String, String> env, String... args) {
    Map<String, String> e = new HashMap<>(env);
    e.putIfAbsent("KVS_AGENT", url);
    return run(e, args);
  }

  Run ctl(String... args) {
    return ctl(Map.of(), args);
  }

  /** Runs kvsctl with {@code env} only. */
  static Run run(Map<String, String> env, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = KvsCtl.commandLine(env);
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @Override
  public void close() {
    agent.close();
  }
}
