package io.kvscheduler.agent;

import io.kvscheduler.agent.internal.config.SettingsLoader;
import io.kvscheduler.agent.internal.etcd.LabelClaim;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * Command line of the agent: {@code run [options]} starts the agent and runs until SIGTERM/SIGINT
 * (then stops cleanly and exits with 0); {@code scenario ...} runs the hands-on example's
 * scenarios.
 *
 * <p>With etcd, an agent whose label another agent holds exits with 1, naming the holder (see
 * {@link LabelClaim}); a standby waiting for its label exits with 0 on SIGTERM/SIGINT.
 *
 * <p>A thread that dies of an {@link Error} (an {@link OutOfMemoryError}, say) ends the process
 * with exit code {@value #EXIT_ON_ERROR}, without the shutdown hooks (which may need what is
 * exhausted): an agent with a dead thread does not go on half-working, and a supervisor restarts
 * it. The launchers also run the JVM with {@code -XX:+ExitOnOutOfMemoryError}, for the errors that
 * some thread catches (see {@link #launcherJvmOptions()}).
 */
public final class AgentMain {
  private AgentMain() {}

  /** Exit code of a process whose thread died of an {@link Error}. */
  static final int EXIT_ON_ERROR = 70;

  /** Ends the process when a thread dies of an {@link Error}; other throwables are printed. */
  static void exitOnUncaughtError() {
    Thread.setDefaultUncaughtExceptionHandler(
        (thread, t) -> {
          try {
            System.err.println("kvs-agent: thread '" + thread.getName() + "' died of " + t);
            if (!(t instanceof Error)) {
              t.printStackTrace();
            }
          } catch (Throwable ignored) {
            // printing may fail for the same reason: the exit must not
          } finally {
            if (t instanceof Error) {
              Runtime.getRuntime().halt(EXIT_ON_ERROR);
            }
          }
        });
  }

  /**
   * The JVM options the launchers ({@code bin/kvs-agent}, the installed {@code kvs-agent}) give the
   * agent before {@code JAVA_OPTS}: the lines of the resource {@code jvm.options} beside this class
   * that are neither blank nor comments ({@code #}).
   */
  public static List<String> launcherJvmOptions() {
    try (InputStream in = AgentMain.class.getResourceAsStream("jvm.options")) {
      if (in == null) {
        throw new IllegalStateException("jvm.options is missing beside " + AgentMain.class);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8)
          .lines()
          .map(String::strip)
          .filter(l -> !l.isEmpty() && !l.startsWith("#"))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

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
    exitOnUncaughtError();
    if (args.contains("--help") || args.contains("-h")) {
      SettingsLoader.usage(System.out);
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
      // a standby waiting for its label gives up when asked to stop
      agent =
          Agent.start(
              cfg,
              () -> stop.getCount() == 0,
              held -> {
                // found after the start (etcd did not answer the first claim): as at start
                System.err.println("kvs-agent: " + held.getMessage());
                Thread exit = new Thread(() -> System.exit(1), "kvs-agent-label-held");
                exit.start();
              });
    } catch (IOException | IllegalArgumentException | LabelClaim.HeldException e) {
      System.err.println("kvs-agent: " + e.getMessage());
      System.exit(1);
      return;
    } catch (InterruptedException e) {
      System.err.println("kvs-agent: " + e.getMessage());
      System.exit(0);
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
