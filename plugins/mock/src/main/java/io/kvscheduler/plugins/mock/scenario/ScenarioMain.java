package io.kvscheduler.plugins.mock.scenario;

import java.util.List;
import java.util.Optional;

/**
 * Command line of the scenarios: {@code scenario --list}, {@code scenario <name>}, {@code scenario
 * all} (every scenario but perf).
 */
public final class ScenarioMain {
  private ScenarioMain() {}

  public static void main(String[] args) throws Exception {
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "kvs-scenario-logback.xml");
    }
    System.exit(run(List.of(args)));
  }

  /** Runs the command; returns the exit status. */
  static int run(List<String> args) throws Exception {
    if (args.isEmpty() || args.contains("--help") || args.contains("-h")) {
      usage();
      return args.isEmpty() ? 2 : 0;
    }
    if (args.get(0).equals("--list")) {
      for (Scenario s : Scenarios.all()) {
        System.out.printf("  %-24s %s%n", s.name(), s.title());
      }
      System.out.println("Run one with: bin/kvs-agent scenario <name>   (or 'all')");
      return 0;
    }
    if (args.get(0).equals("all")) {
      for (Scenario s : Scenarios.all()) {
        if (!s.name().equals("perf")) {
          ScenarioRunner.run(s, System.out, b -> {}, c -> {});
          System.out.println();
        }
      }
      return 0;
    }
    int status = 0;
    for (String name : args) {
      Optional<Scenario> s = Scenarios.byName(name);
      if (s.isEmpty()) {
        System.err.println(
            "unknown scenario '"
                + name
                + "'; known: "
                + Scenarios.all().stream().map(Scenario::name).toList());
        status = 2;
        continue;
      }
      ScenarioRunner.run(s.get(), System.out, b -> {}, c -> {});
    }
    return status;
  }

  private static void usage() {
    System.out.println("usage: bin/kvs-agent scenario --list | <name>... | all");
    System.out.println("Runs the hands-on example's scenarios over the mock southbound.");
  }
}
