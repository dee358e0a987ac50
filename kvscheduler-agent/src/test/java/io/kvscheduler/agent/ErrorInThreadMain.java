package io.kvscheduler.agent;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code AgentMain} with one more thread, which dies of an {@link Error} once the file named by the
 * system property {@value #TRIGGER} exists (the test creates it when the agent has started).
 */
final class ErrorInThreadMain {
  static final String TRIGGER = "kvs.test.error-trigger";

  private ErrorInThreadMain() {}

  public static void main(String[] args) throws Exception {
    Path trigger = Path.of(System.getProperty(TRIGGER));
    Thread dying =
        new Thread(
            () -> {
              while (!Files.exists(trigger)) {
                try {
                  Thread.sleep(20);
                } catch (InterruptedException e) {
                  return;
                }
              }
              throw new OutOfMemoryError("thrown by the test");
            },
            "dying-of-an-error");
    dying.setDaemon(true);
    dying.start();
    AgentMain.main(args);
  }
}
