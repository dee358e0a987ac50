package io.kvscheduler.agent;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * Command line of the agent: {@code run [options]} starts the agent and runs until SIGTERM/SIGINT
 * (then stops cleanly and exits with 0); {@code scenario ...} runs the hands-on example's
 * scenarios.
 */
public final class AgentMain {
  private AgentMain() {}

  public static void main(String[] args) throws Exception {
    List<String> a = List.of(args);
    if (a.isEmpty() || a.get(0).equals("--help") || a.get(0).equals("-h")) {
      usage();
      System.exit(a.isEmpty() ? 2 : 0);
    }
    switch (a.get(0)) {
      case "run" -> run(a.subList(1, a.size()));
      default -> {
        System.err.println("kvs-agent: unknown command '" + a.get(0) + "'");
        usage();
        System.exit(2);
      }
    }
  }

  private static void run(List<String> args) throws Exception {
    if (args.contains("--help") || args.contains("-h")) {
      AgentOptions.commandLine(new AgentOptions()).usage(System.out);
      return;
    }
    AgentConfig cfg;
    try {
      cfg = AgentConfig.load(args, System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("kvs-agent: " + e.getMessage());
      System.exit(2);
      return;
    }
    // SIGTERM and SIGINT ask for a clean stop: the agent closes and the process exits with 0,
    // which supervisors count as success (the JVM's default for a signal is 143 or 130)
    CountDownLatch stop = new CountDownLatch(1);
    for (String signal : List.of("TERM", "INT")) {
      Signal.handle(new Signal(signal), s -> stop.countDown());
    }
    // (handled from before the start on: a signal during the start stops the agent once started)
    Agent agent;
    try {
      agent = Agent.start(cfg);
    } catch (IOException | IllegalArgumentException e) {
      System.err.println("kvs-agent: " + e.getMessage());
      System.exit(1);
      return;
    }
    // any other way out (System.exit elsewhere, a second signal after the handler) still closes
    Thread hook = new Thread(agent::close, "kvs-agent-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    stop.await();
    agent.close();
    System.exit(0);
  }

  private static void usage() {
    System.out.println(
        "usage: bin/kvs-agent run [options]   (bin/kvs-agent run --help: the options)");
    System.out.println("       bin/kvs-agent scenario --list | <name>... | all");
  }
}
