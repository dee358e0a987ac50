package io.kvscheduler.plugins.linux.linuxcalls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs a command (after a fixed prefix, e.g. {@code nsenter ...} to enter a sandbox) and returns
 * its output, bounded in time: a command that runs longer than the limit is killed and fails.
 */
final class CommandRunner {
  /**
   * Reads the error output of running commands, long-running ones included (a thread per reader:
   * each blocks until its command ends, so never the common pool).
   */
  static final ExecutorService READERS =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "ip-stderr-reader");
            t.setDaemon(true);
            return t;
          });

  /** Kills commands that overrun their limit; a cancelled kill leaves its queue at once. */
  private static final ScheduledExecutorService WATCHDOG = watchdog();

  private static ScheduledExecutorService watchdog() {
    ScheduledThreadPoolExecutor w =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "ip-watchdog");
              t.setDaemon(true);
              return t;
            });
    w.setRemoveOnCancelPolicy(true); // one kill per restore text: cancelled ones are not kept
    return w;
  }

  private final List<String> prefix;
  private final Duration limit;

  CommandRunner(List<String> prefix, Duration limit) {
    this.prefix = List.copyOf(prefix);
    this.limit = limit;
  }

  /** The command line {@code argv} after the prefix. */
  List<String> commandLine(List<String> argv) {
    List<String> cmd = new ArrayList<>(prefix);
    cmd.addAll(argv);
    return cmd;
  }

  /** What a finished command printed, and its exit code. */
  record Result(int exitCode, String stdout, String stderr) {}

  /**
   * Runs {@code argv} with {@code stdin} as its input (null for none); returns stdout.
   *
   * @throws LinuxCallException with the command's error output as message when it fails
   */
  String run(List<String> argv, String stdin) throws LinuxCallException {
    Result r = runForResult(argv, stdin);
    if (r.exitCode() != 0) {
      String shown = String.join(" ", argv);
      throw new LinuxCallException(
          shown,
          r.exitCode(),
          r.stderr().isEmpty()
              ? "'" + shown + "' failed with exit code " + r.exitCode()
              : r.stderr());
    }
    return r.stdout();
  }

  /** Runs {@code argv}; returns what it printed whatever its exit code. */
  Result runForResult(List<String> argv, String stdin) throws LinuxCallException {
    List<String> cmd = commandLine(argv);
    String shown = String.join(" ", argv);
    Process p;
    try {
      p = new ProcessBuilder(cmd).start();
    } catch (IOException e) {
      throw new LinuxCallException(shown, -1, "cannot run " + cmd.get(0) + ": " + e.getMessage());
    }
    Watchdog watchdog = killAfter(p, limit);
    Future<String> err = READERS.submit(() -> read(p.getErrorStream()));
    Future<String> in =
        stdin == null
            ? null
            : READERS.submit(
                () -> {
                  try (var o = p.getOutputStream()) {
                    o.write(stdin.getBytes(StandardCharsets.UTF_8));
                  } catch (IOException e) {
                    // the command ended before reading all its input: its exit code and stderr tell
                    // why
                  }
                  return "";
                });
    try {
      if (stdin == null) {
        p.getOutputStream().close();
      }
      String stdout = read(p.getInputStream());
      int code = p.waitFor();
      String stderr = err.get().strip();
      if (in != null) {
        in.get();
      }
      if (watchdog.fired()) {
        throw new LinuxCallException(
            shown, -1, "'" + shown + "' did not finish within " + limit.toMillis() + " ms");
      }
      return new Result(code, stdout, stderr);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new LinuxCallException(shown, -1, "interrupted while running '" + shown + "'");
    } catch (IOException | ExecutionException e) {
      p.destroyForcibly();
      throw new LinuxCallException(shown, -1, "cannot read the output of '" + shown + "': " + e);
    } finally {
      watchdog.cancel();
    }
  }

  /** Kills {@code p} after {@code limit} unless the returned watchdog is cancelled first. */
  static Watchdog killAfter(Process p, Duration limit) {
    return new Watchdog(p, limit);
  }

  /**
   * A kill of a process that overruns its limit. Whether it fired is a flag it sets before it
   * kills: a process that ended because of it always says so ({@link #fired}), even while the kill
   * is still running (when its future still counts as neither done nor cancelled).
   */
  static final class Watchdog {
    private final AtomicBoolean fired = new AtomicBoolean();
    private final ScheduledFuture<?> kill;

    private Watchdog(Process p, Duration limit) {
      kill =
          WATCHDOG.schedule(
              () -> {
                fired.set(true);
                p.destroyForcibly();
              },
              limit.toMillis(),
              TimeUnit.MILLISECONDS);
    }

    /** Whether the limit passed and the process was (or is being) killed. */
    boolean fired() {
      return fired.get();
    }

    /** Stops the watchdog if it has not fired. */
    void cancel() {
      kill.cancel(false);
    }
  }

  /** Starts {@code argv} as a long-running process with its input, output and errors piped. */
  Process startInteractive(List<String> argv) throws LinuxCallException {
    try {
      return new ProcessBuilder(commandLine(argv)).start();
    } catch (IOException e) {
      throw new LinuxCallException(
          String.join(" ", argv), -1, "cannot run " + argv.get(0) + ": " + e.getMessage());
    }
  }

  /** Starts {@code argv} as a long-running process (its error output merged into its output). */
  Process start(List<String> argv) throws LinuxCallException {
    try {
      return new ProcessBuilder(commandLine(argv)).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new LinuxCallException(
          String.join(" ", argv), -1, "cannot run " + argv.get(0) + ": " + e.getMessage());
    }
  }

  private static String read(InputStream in) throws IOException {
    return new String(in.readAllBytes(), StandardCharsets.UTF_8);
  }
}
