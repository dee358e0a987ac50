package io.kvscheduler.plugins.linux.linuxcalls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs a command (after a fixed prefix, e.g. {@code nsenter ...} to enter a sandbox) and returns
 * its output, bounded in time: a command that runs longer than the limit is killed and fails.
 */
final class CommandRunner {
  private final List<String> prefix;
  private final Duration limit;

  CommandRunner(List<String> prefix, Duration limit) {
    this.prefix = List.copyOf(prefix);
    this.limit = limit;
  }

  List<String> prefix() {
    return prefix;
  }

  /** The command line {@code argv} after the prefix. */
  List<String> commandLine(List<String> argv) {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(argv);
    return cmd;
  }

  /** Runs {@code argv} with {@code stdin} as its input (null for none); returns stdout. */
  String run(List<String> argv, String stdin) throws LinuxCallException {
    List<String> cmd = commandLine(argv);
    String shown = String.join(" ", argv);
    Process p;
    try {
      p = new ProcessBuilder(cmd).start();
    } catch (IOException e) {
      throw new LinuxCallException(shown, -1, "cannot run " + cmd.get(0) + ": " + e.getMessage());
    }
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
    try {
      if (stdin != null) {
        p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
      }
      p.getOutputStream().close();
    } catch (IOException e) {
      // the command ended before reading its input: its exit code and stderr tell why
    }
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
    try {
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new LinuxCallException(shown, -1, "'" + shown + "' did not finish within "
            + limit.toMillis() + " ms");
      }
      String stdout = out.get(limit.toMillis(), TimeUnit.MILLISECONDS);
      String stderr = err.get(limit.toMillis(), TimeUnit.MILLISECONDS).strip();
      if (p.exitValue() != 0) {
        throw new LinuxCallException(shown, p.exitValue(),
            stderr.isEmpty() ? "'" + shown + "' failed with exit code " + p.exitValue() : stderr);
      }
      return stdout;
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new LinuxCallException(shown, -1, "interrupted while running '" + shown + "'");
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      p.destroyForcibly();
      throw new LinuxCallException(shown, -1, "cannot read the output of '" + shown + "': " + e);
    }
  }

  /** Starts {@code argv} as a long-running process (stdout to read, stderr discarded). */
  Process start(List<String> argv) throws LinuxCallException {
    try {
      return new ProcessBuilder(commandLine(argv))
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      throw new LinuxCallException(String.join(" ", argv), -1, "cannot run " + argv.get(0) + ": "
          + e.getMessage());
    }
  }

  private static String read(InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }
}
