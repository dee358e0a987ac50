package io.kvscheduler.plugins.linux.linuxcalls;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One long-running {@code ip -d -json -force -batch -} process for one namespace, fed one command
 * at a time over its standard input: the cost of starting {@code ip} is paid once, not per call.
 *
 * <p>Each command is followed by a marker line that {@code ip} refuses at once ({@code Object
 * "kvs-sync-N" is unknown}) without asking the kernel. {@code ip} reports errors on its error
 * output in order, so what it printed there before the marker's refusal belongs to the command:
 * with {@code -force} a failed command is followed by {@code Command failed -:LINE}, and the lines
 * before that are the kernel's answer, kept verbatim. A command that reads prints one JSON document
 * on the standard output (flushed when the command ends), read by a thread of its own so that a
 * large answer never blocks {@code ip}: a reading command prints one document when it succeeds (an
 * empty array when it finds nothing) and none when it fails. A session that runs {@code link show}
 * stays switched to links for the commands after it: {@code ip link} commands still work, address
 * and route commands do not.
 *
 * <p>A command that does not finish within the limit kills the process; so does a broken pipe. The
 * next command starts a new one.
 */
final class IpSession implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MARKER = "kvs-sync-";

  /**
   * Commands sent before their answers are read: what ip prints on its error output for them (a few
   * lines each at most) stays well below what a pipe holds.
   */
  private static final int CHUNK = 100;

  /** Put in the output queue when {@code ip}'s standard output ends. */
  private static final JsonNode END = MissingNode.getInstance();

  private final CommandRunner runner;
  private final List<String> argv;
  private final Duration limit;
  private final Runnable onChange;

  private Process process;
  private Writer input;
  private BufferedReader errors;
  private BlockingQueue<JsonNode> documents;
  private long sequence;

  /**
   * A session running {@code ip} with {@code argv} (without {@code -batch -}); {@code onChange}
   * runs before and after each exchange that holds a command that does not only read.
   */
  IpSession(CommandRunner runner, List<String> argv, Duration limit, Runnable onChange) {
    this.runner = runner;
    this.argv = List.copyOf(argv);
    this.limit = limit;
    this.onChange = onChange;
  }

  /** What one command came to: the kernel's answer when it failed, else its JSON document. */
  record Answer(String command, String failure, JsonNode document) {
    /** The document, or the failure as an exception. */
    JsonNode orThrow() throws LinuxCallException {
      if (failure != null) {
        throw new LinuxCallException(command, 1, failure);
      }
      return document;
    }
  }

  /** Runs {@code command}, which prints nothing. */
  void run(String command) throws LinuxCallException {
    runAll(List.of(command)).get(0).orThrow();
  }

  /** Runs {@code command}, which prints one JSON document, and returns the document. */
  JsonNode query(String command) throws LinuxCallException {
    return runAll(List.of(command)).get(0).orThrow();
  }

  /**
   * Runs {@code commands} one after the other, sent together (one exchange with {@code ip}, not one
   * per command; a hundred at a time when there are more); every command runs whatever became of
   * those before it. A reading command ({@code ... show}, {@code ... list}) prints one JSON
   * document when it succeeds and none when it fails.
   *
   * <p>When the kernel answers that a link's index is gone ({@code No such device}, {@code Device
   * not found}), that command and those after it are sent again to a new process: {@code ip}
   * remembers the index of each link name it looked up, and a link deleted or renamed since leaves
   * that memory stale; a new process looks the name up afresh (and says {@code Cannot find device}
   * if it is really gone). The commands before it are not run twice.
   */
  synchronized List<Answer> runAll(List<String> commands) throws LinuxCallException {
    boolean changes = !commands.stream().allMatch(IpSession::reads);
    if (changes) {
      onChange.run();
    }
    try {
      return exchange(commands);
    } finally {
      if (changes) {
        onChange.run();
      }
    }
  }

  private List<Answer> exchange(List<String> commands) throws LinuxCallException {
    List<Answer> out = new ArrayList<>();
    List<List<String>> said = send(commands);
    int stale = 0;
    while (stale < said.size() && said.get(stale).stream().noneMatch(IpSession::staleIndex)) {
      stale++;
    }
    out.addAll(answers(commands.subList(0, stale), said.subList(0, stale)));
    if (stale < commands.size()) {
      // a reading command may even say so and succeed, with or without an answer: start afresh
      stop();
      List<String> rest = commands.subList(stale, commands.size());
      out.addAll(answers(rest, send(rest)));
    }
    return out;
  }

  /** The answers to {@code commands}, given what ip said on its error output for each. */
  private List<Answer> answers(List<String> commands, List<List<String>> said)
      throws LinuxCallException {
    List<Answer> out = new ArrayList<>();
    for (int i = 0; i < commands.size(); i++) {
      String command = commands.get(i);
      if (said.get(i).stream().anyMatch(l -> l.startsWith("Command failed"))) {
        String msg = kernelAnswer(said.get(i));
        out.add(new Answer(command, msg.isEmpty() ? "'ip " + command + "' failed" : msg, null));
      } else {
        out.add(new Answer(command, null, reads(command) ? nextDocument(command) : null));
      }
    }
    return out;
  }

  /** Whether ip's error line says a link index is gone (ENODEV, with or without extack text). */
  private static boolean staleIndex(String line) {
    return line.contains("No such device") || line.contains("Device not found");
  }

  /** Whether {@code command} reads ({@code addr show ...}, {@code netns list}). */
  private static boolean reads(String command) {
    String[] words = command.split(" ", 3);
    return words.length > 1 && (words[1].equals("show") || words[1].equals("list"));
  }

  private JsonNode nextDocument(String command) throws LinuxCallException {
    try {
      JsonNode doc = documents.poll(limit.toMillis(), TimeUnit.MILLISECONDS);
      if (doc == null || doc == END) {
        stop();
        throw new LinuxCallException(command, -1, "ip printed no answer to '" + command + "'");
      }
      return doc;
    } catch (InterruptedException e) {
      stop();
      Thread.currentThread().interrupt();
      throw new LinuxCallException(command, -1, "interrupted while running '" + command + "'");
    }
  }

  /**
   * Sends each command followed by its marker; returns, for each, what ip said on its error output:
   * for fewer commands when ip exited at a stale link index (some commands exit rather than fail),
   * the last entry being that command's.
   */
  private List<List<String>> send(List<String> commands) throws LinuxCallException {
    for (String command : commands) {
      if (command.indexOf('\n') >= 0 || command.indexOf('#') >= 0 || command.indexOf('\0') >= 0) {
        throw new IllegalArgumentException(
            "not one line of ip -batch (see BatchLine): " + BatchLine.shown(command));
      }
    }
    start();
    documents.clear(); // left over from a command that printed although it failed
    String shown =
        commands.size() <= 3
            ? String.join("; ", commands)
            : commands.get(0) + "; ... (" + commands.size() + " commands)";
    var watchdog = CommandRunner.killAfter(process, limit);
    List<List<String>> all = new ArrayList<>();
    List<String> said = new ArrayList<>();
    try {
      // a chunk at a time: ip's error output for all of thousands of commands fills its pipe, and
      // ip would wait for it to be read while this waits for ip to read its input
      for (int from = 0; from < commands.size(); from += CHUNK) {
        List<String> markers = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        for (String command : commands.subList(from, Math.min(commands.size(), from + CHUNK))) {
          String marker = MARKER + (++sequence);
          markers.add(marker);
          text.append(command).append('\n').append(BatchLine.of(marker)).append('\n');
        }
        input.write(text.toString());
        input.flush();
        for (String marker : markers) {
          said = new ArrayList<>();
          all.add(said);
          String line;
          while ((line = errors.readLine()) != null && !line.contains('"' + marker + '"')) {
            said.add(line);
          }
          if (line == null || errors.readLine() == null) {
            throw new IOException("ip ended");
          }
        }
      }
      return all;
    } catch (IOException e) {
      if (all.isEmpty()) {
        // the process ended before it read a command (nsenter could not enter the namespace, a
        // process that is gone): what it printed says why
        said = lastWords();
      }
      stop();
      if (said.stream().anyMatch(IpSession::staleIndex)) {
        return all; // ip gave up on a stale index (some commands exit): the rest is sent again
      }
      if (watchdog.fired()) {
        throw new LinuxCallException(
            shown, -1, "'ip " + shown + "' did not finish within " + limit.toMillis() + " ms");
      }
      throw new LinuxCallException(
          shown,
          -1,
          said.isEmpty()
              ? "ip ended while running '" + shown + "'"
              : String.join("\n", said).strip());
    } finally {
      watchdog.cancel();
    }
  }

  /** What {@code ip -batch} printed on its error output, without its "Command failed" lines. */
  static String kernelAnswer(List<String> errorLines) {
    return errorLines.stream()
        .filter(l -> !l.isBlank() && !l.startsWith("Command failed"))
        .map(String::strip)
        .collect(Collectors.joining("\n"));
  }

  private void start() throws LinuxCallException {
    if (process != null && process.isAlive()) {
      return;
    }
    stop();
    List<String> cmd = new ArrayList<>(argv);
    cmd.addAll(List.of("-force", "-batch", "-"));
    Process p = runner.startInteractive(cmd);
    BlockingQueue<JsonNode> docs = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              // from a reader: a parser on bytes waits for 4 of them to guess the encoding, and
              // "[]" is 3
              try (JsonParser parser =
                  JSON.createParser(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                while (parser.nextToken() != null) {
                  docs.add(parser.readValueAsTree());
                }
              } catch (IOException | RuntimeException e) {
                // ip ended or printed something that is not JSON: the session restarts
                p.destroyForcibly();
              } finally {
                docs.add(END);
              }
            },
            "ip-session-output");
    reader.setDaemon(true);
    reader.start();
    process = p;
    documents = docs;
    input = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
    errors = new BufferedReader(new InputStreamReader(p.getErrorStream(), StandardCharsets.UTF_8));
  }

  /** Ends the process; the next command starts a new one. */
  synchronized void restart() {
    stop();
  }

  /** What the process printed on its error output, when it ended at once; else nothing. */
  private List<String> lastWords() {
    List<String> out = new ArrayList<>();
    try {
      if (process.waitFor(200, TimeUnit.MILLISECONDS)) {
        for (String line; (line = errors.readLine()) != null; ) {
          out.add(line);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      // nothing more to read
    }
    return out;
  }

  private void stop() {
    if (process != null) {
      process.destroyForcibly();
      process = null;
    }
  }

  /** Ends the process (closing its input ends {@code ip -batch}). */
  @Override
  public synchronized void close() {
    if (process != null) {
      try {
        input.close();
      } catch (IOException e) {
        // ending anyway
      }
      try {
        if (!process.waitFor(1, TimeUnit.SECONDS)) {
          process.destroyForcibly();
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
      process = null;
    }
  }
}
