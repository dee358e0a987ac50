package io.kvscheduler.plugins.linux.linuxcalls;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One long-running {@code iptables-restore --noflush} for one namespace and address family, fed
 * table blocks over its standard input: each {@code COMMIT} applies its block when it is read, so
 * the process serves every change of the namespace, as {@code ip -batch} does for links.
 *
 * <p>iptables-restore prints nothing when a block succeeds, so the end of a block is seen in {@code
 * /proc}: the process is waiting again in {@code read} on its standard input (its input buffer is
 * empty, every line before was handled) after blocking at least once since the block was written
 * (it woke to read it). A block iptables rejects ends the process with iptables' message; the next
 * block starts a new one. A block not handled within the limit kills the process.
 */
final class RestoreSession implements AutoCloseable {
  private final CommandRunner runner;
  private final List<String> argv;
  private final Duration limit;

  private Process process;
  private OutputStream input;

  /** Lines the process read before the text being applied (iptables counts from its start). */
  private long linesBefore;

  private CompletableFuture<String> errors;

  RestoreSession(CommandRunner runner, List<String> argv, Duration limit) {
    this.runner = runner;
    this.argv = List.copyOf(argv);
    this.limit = limit;
  }

  /** Whether {@code /proc} shows what a session needs to see about its process. */
  static boolean supported() {
    return Files.isReadable(Path.of("/proc/self/syscall"))
        && Files.isReadable(Path.of("/proc/self/status"));
  }

  /** Feeds {@code text} (whole table blocks) and waits until the process has handled it. */
  synchronized void apply(String text) throws LinuxCallException {
    start();
    long pid = process.pid();
    long before = switches(pid);
    long lines = text.chars().filter(ch -> ch == '\n').count();
    String shown = String.join(" ", argv);
    try {
      input.write(text.getBytes(StandardCharsets.UTF_8));
      input.flush();
    } catch (IOException e) {
      // the process ended: its exit code and error output say why
    }
    long deadline = System.nanoTime() + limit.toNanos();
    long pause = 20_000; // ns
    while (true) {
      if (!process.isAlive()) {
        throw ended(shown);
      }
      if (waitingForInput(pid) && switches(pid) > before) {
        linesBefore += lines;
        return;
      }
      if (System.nanoTime() > deadline) {
        stop();
        throw new LinuxCallException(
            shown, -1, "'" + shown + "' did not finish within " + limit.toMillis() + " ms");
      }
      try {
        TimeUnit.NANOSECONDS.sleep(pause);
      } catch (InterruptedException e) {
        stop();
        Thread.currentThread().interrupt();
        throw new LinuxCallException(shown, -1, "interrupted while running '" + shown + "'");
      }
      pause = Math.min(pause * 2, 250_000);
    }
  }

  private LinuxCallException ended(String shown) {
    Process p = process;
    process = null;
    String msg;
    int code;
    try {
      p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
      code = p.exitValue();
      msg = errors.get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      p.destroyForcibly();
      code = -1;
      msg = "";
    }
    msg =
        msg.lines()
            .map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("Try `"))
            .map(this::ownLineNumbers)
            .collect(Collectors.joining("\n"));
    return new LinuxCallException(
        shown, code, msg.isEmpty() ? "'" + shown + "' ended with exit code " + code : msg);
  }

  private static final Pattern LINE =
      Pattern.compile("(Error occurred at line: |line )(\\d+)", Pattern.CASE_INSENSITIVE);

  /** {@code line} with the line numbers iptables printed counted in the text being applied. */
  private String ownLineNumbers(String line) {
    Matcher m = LINE.matcher(line);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      long n = Long.parseLong(m.group(2)) - linesBefore;
      m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + n));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** The process's voluntary context switches (how often it blocked), -1 when unknown. */
  private static long switches(long pid) {
    try {
      for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (l.startsWith("voluntary_ctxt_switches:")) {
          return Long.parseLong(l.substring(l.indexOf(':') + 1).strip());
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone
    }
    return -1;
  }

  /** Whether the process is blocked in {@code read} on its standard input (syscall 0, fd 0). */
  private static boolean waitingForInput(long pid) {
    try {
      String s = Files.readString(Path.of("/proc/" + pid + "/syscall")).strip();
      return s.startsWith("0 0x0 ");
    } catch (IOException e) {
      return false;
    }
  }

  private void start() throws LinuxCallException {
    if (process != null && process.isAlive()) {
      return;
    }
    stop();
    linesBefore = 0;
    Process p = runner.startInteractive(argv);
    closeQuietly(p.getInputStream()); // it prints nothing on its output
    InputStream err = p.getErrorStream();
    errors =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(err.readAllBytes(), StandardCharsets.UTF_8);
              } catch (IOException e) {
                return "";
              }
            });
    process = p;
    input = p.getOutputStream();
  }

  private static void closeQuietly(InputStream in) {
    try {
      in.close();
    } catch (IOException e) {
      // nothing to read anyway
    }
  }

  private void stop() {
    if (process != null) {
      process.destroyForcibly();
      process = null;
    }
  }

  /** Ends the process (closing its input ends iptables-restore). */
  @Override
  public synchronized void close() {
    if (process != null) {
      try {
        input.close();
        if (!process.waitFor(1, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (IOException e) {
        process.destroyForcibly();
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
      process = null;
    }
  }
}
