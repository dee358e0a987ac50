package io.kvscheduler.plugins.linux.linuxcalls;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One long-running {@code iptables-restore --noflush --verbose} for one namespace and address
 * family, fed table blocks over its standard input: each {@code COMMIT} applies its block when it
 * is read, so the process serves every change of the namespace, as {@code ip -batch} does for
 * links.
 *
 * <p>iptables-restore prints nothing when a block succeeds, but in verbose mode it echoes each
 * comment line it reads (and flushes it). So each text fed is followed by a comment of its own, a
 * mark: when the mark comes back on the process's output, every line before it was handled, the
 * blocks committed. A block iptables rejects ends the process with iptables' message (the output
 * ends before the mark); the next block starts a new one. A text not handled within the limit kills
 * the process. {@link #echoesMarks} checks that the installed iptables echoes marks at once.
 */
final class RestoreSession implements AutoCloseable {
  /** The comment that ends each text fed; its number tells one text's mark from another's. */
  private static final String MARK = "#kvs-restore-";

  private final CommandRunner runner;
  private final List<String> argv;
  private final Duration limit;

  private Process process;
  private OutputStream input;
  private BufferedReader output;

  /** Lines the process read before the text being applied (iptables counts from its start). */
  private long linesBefore;

  /** Marks written so far. */
  private long marks;

  private CompletableFuture<String> errors;

  RestoreSession(CommandRunner runner, List<String> argv, Duration limit) {
    this.runner = runner;
    this.argv = List.copyOf(argv);
    this.limit = limit;
  }

  /**
   * Whether {@code argv} (an {@code iptables-restore --verbose} command) echoes a comment line as
   * soon as it reads it, within {@code limit}: what a session needs to see a text's end.
   */
  static boolean echoesMarks(CommandRunner runner, List<String> argv, Duration limit) {
    try (RestoreSession probe = new RestoreSession(runner, argv, limit)) {
      return probe.probe(limit);
    } catch (LinuxCallException e) {
      return false;
    }
  }

  /**
   * Starts the process, when it is not running, and checks that it echoes a mark within {@code
   * limit}: true when it does (the session is ready for texts), false when it stays silent (it is
   * killed). A process that ends instead fails with its message, which may tell why (a namespace
   * that is not there, an iptables that does not know {@code --verbose}).
   */
  synchronized boolean probe(Duration limit) throws LinuxCallException {
    return switch (feed("", limit)) {
      case HANDLED -> true;
      case SILENT -> false;
      case ENDED -> throw ended(String.join(" ", argv));
    };
  }

  /** Feeds {@code text} (whole table blocks) and waits until the process has handled it. */
  synchronized void apply(String text) throws LinuxCallException {
    Fed fed = feed(text, limit);
    if (fed == Fed.HANDLED) {
      return;
    }
    String shown = String.join(" ", argv);
    if (fed == Fed.SILENT) {
      throw new LinuxCallException(
          shown, -1, "'" + shown + "' did not finish within " + limit.toMillis() + " ms");
    }
    throw ended(shown);
  }

  /** What became of a text fed to the process. */
  private enum Fed {
    /** Its mark came back: every line of it was handled. */
    HANDLED,
    /** Its mark did not come back within the limit: the process was killed. */
    SILENT,
    /** The process ended before its mark came back. */
    ENDED
  }

  private Fed feed(String text, Duration limit) throws LinuxCallException {
    start();
    String mark = MARK + ++marks;
    long lines = 1; // the mark's own
    for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
      lines++;
    }
    CommandRunner.Watchdog watchdog = CommandRunner.killAfter(process, limit);
    boolean handled = false;
    try {
      input.write(text.getBytes(StandardCharsets.UTF_8));
      input.write((mark + "\n").getBytes(StandardCharsets.UTF_8));
      input.flush();
    } catch (IOException e) {
      // the process ended: its exit code and error output say why
    }
    String line;
    while (!handled && (line = readLine()) != null) {
      handled = line.equals(mark);
    }
    watchdog.cancel();
    if (handled) {
      linesBefore += lines;
      if (watchdog.fired()) {
        stop(); // handled at the last moment: the next text starts a new process
      }
      return Fed.HANDLED;
    }
    if (watchdog.fired()) {
      stop();
      return Fed.SILENT;
    }
    return Fed.ENDED;
  }

  /** The next line the process printed; null when its output ended. */
  private String readLine() {
    try {
      return output.readLine();
    } catch (IOException e) {
      return null;
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

  private void start() throws LinuxCallException {
    if (process != null && process.isAlive()) {
      return;
    }
    stop();
    linesBefore = 0;
    Process p = runner.startInteractive(argv);
    output = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    InputStream err = p.getErrorStream();
    errors =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(err.readAllBytes(), StandardCharsets.UTF_8);
              } catch (IOException e) {
                return "";
              }
            },
            CommandRunner.READERS); // blocks until the process ends: not on the common pool
    process = p;
    input = p.getOutputStream();
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
