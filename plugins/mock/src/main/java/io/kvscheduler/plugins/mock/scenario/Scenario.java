package io.kvscheduler.plugins.mock.scenario;

import java.util.List;

/**
 * One scenario of the hands-on example.
 *
 * @param name command-line name, e.g. {@code pending-after-resync}
 * @param title one-line summary
 * @param explanation what the scenario shows, printed before it runs
 * @param next where to look after it ran
 * @param body the steps
 */
public record Scenario(
    String name, String title, List<String> explanation, List<String> next, Body body) {

  /** The steps of a scenario. */
  @FunctionalInterface
  public interface Body {
    void run(ScenarioContext ctx) throws Exception;
  }
}
