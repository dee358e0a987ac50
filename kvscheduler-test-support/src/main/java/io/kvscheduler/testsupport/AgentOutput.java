package io.kvscheduler.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** The output of an agent started as a process of its own, as a supervisor sees it. */
public final class AgentOutput {
  private AgentOutput() {}

  /** What the agent logs once it has started. */
  public static final String STARTED = "started with plugins";

  /**
   * Copies what {@code agent} prints into {@code lines} (synchronized on it) from a daemon thread,
   * and waits at most {@code limit} for the line saying the agent started; when none comes, ends
   * the process and fails with what it printed.
   */
  public static void awaitStarted(Process agent, List<String> lines, Duration limit)
      throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader out =
                  new BufferedReader(
                      new InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = out.readLine()) != null) {
                  synchronized (lines) {
                    lines.add(l);
                  }
                  if (l.contains(STARTED)) {
                    started.countDown();
                  }
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            "agent-output");
    reader.setDaemon(true);
    reader.start();
    if (!started.await(limit.toMillis(), TimeUnit.MILLISECONDS)) {
      agent.destroyForcibly();
      synchronized (lines) {
        throw new AssertionError(
            "the agent did not start within " + limit.toSeconds() + " s: " + lines);
      }
    }
  }
}
