package io.kvscheduler.agent;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Command line of the agent: {@code run [options]} starts the agent and runs until SIGTERM/SIGINT;
 * {@code scenario ...} runs the hands-on example's scenarios.
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
      usage();
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
    Agent agent;
    try {
      agent = Agent.start(cfg);
    } catch (IOException | IllegalArgumentException e) {
      System.err.println("kvs-agent: " + e.getMessage());
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      agent.close();
      stopped.countDown();
    }, "kvs-agent-shutdown"));
    stopped.await();
  }

  private static void usage() {
    System.out.println(String.join("\n",
        "usage: bin/kvs-agent run [--config FILE] [--label L] [--config-dir DIR] [--rest HOST:PORT|off]",
        "                         [--etcd ENDPOINTS] [--etcd-config FILE] [--status-publishing]",
        "                         [--quiet] [--operation-timeout DURATION] [--linux]",
        "                         [--file-settle-time DURATION]",
        "                         [--grpc HOST:PORT] [--grpc-config FILE] [--rest-token-file FILE]",
        "       bin/kvs-agent scenario --list | <name>... | all",
        "--linux enables the Linux networking plugin (configures the namespace the agent runs in).",
        "Environment: MICROSERVICE_LABEL, ETCD_ENDPOINTS, ETCD_CONFIG, ENABLE_STATUS_PUBLISHING,",
        "  KVS_LINUX, GRPC_CONFIG, KVS_REST_TOKEN.",
        "ETCD_CONFIG / --etcd-config: a YAML file as vpp-agent's etcd.conf (endpoints,",
        "  dial-timeout, operation-timeout, session-ttl, insecure-transport,",
        "  insecure-skip-tls-verify, cert-file, key-file, ca-file, username, password)."));
  }
}
