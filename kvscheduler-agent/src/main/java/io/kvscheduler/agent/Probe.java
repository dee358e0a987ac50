package io.kvscheduler.agent;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A check run after a confirmed commit applies ({@code probes:} in the settings): the first that
 * fails rolls the commit back at once; when every probe passes, the commit is confirmed. Without
 * probes, a confirmed commit is confirmed by hand only.
 *
 * <ul>
 *   <li>{@link #command}: a program with its arguments (run without a shell), optionally inside a
 *       named network namespace ({@code ip netns exec <netns> ...}); passes when it exits with 0;
 *   <li>{@link #tcp}: a TCP connection to {@code host:port}; passes when it is accepted;
 *   <li>{@link #http}: a GET of a URL; passes on a 2xx answer.
 * </ul>
 *
 * Each is bounded by its {@code timeout}: one that does not finish in time fails.
 *
 * @param name how the probe is named in the rollback's record and the log
 * @param kind what it checks
 * @param command the program and its arguments ({@link Kind#COMMAND}), else empty
 * @param netns the named network namespace the command runs in, or null
 * @param target {@code host:port} ({@link Kind#TCP}) or the URL ({@link Kind#HTTP}), else null
 * @param timeout how long it may take
 */
public record Probe(
    String name, Kind kind, List<String> command, String netns, String target, Duration timeout) {

  /** What a probe checks. */
  public enum Kind {
    COMMAND,
    TCP,
    HTTP
  }

  /** The timeout of a probe whose settings give none. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  public Probe {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("a probe needs a name");
    }
    Objects.requireNonNull(kind, "kind");
    command = List.copyOf(command);
    timeout = timeout == null ? DEFAULT_TIMEOUT : timeout;
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("probe '" + name + "': the timeout must be positive");
    }
    if (kind == Kind.COMMAND && command.isEmpty()) {
      throw new IllegalArgumentException("probe '" + name + "': the command is empty");
    }
    if (kind != Kind.COMMAND && (target == null || target.isBlank())) {
      throw new IllegalArgumentException(
          "probe '" + name + "': no " + kind.name().toLowerCase() + " target");
    }
  }

  /** Runs {@code command} (in {@code netns} when not null); passes when it exits with 0. */
  public static Probe command(String name, List<String> command, String netns, Duration timeout) {
    return new Probe(name, Kind.COMMAND, command, netns, null, timeout);
  }

  /** Connects to {@code hostPort} ({@code host:port}); passes when the connection is accepted. */
  public static Probe tcp(String name, String hostPort, Duration timeout) {
    return new Probe(name, Kind.TCP, List.of(), null, hostPort, timeout);
  }

  /** GETs {@code url}; passes on a 2xx answer. */
  public static Probe http(String name, String url, Duration timeout) {
    return new Probe(name, Kind.HTTP, List.of(), null, url, timeout);
  }

  /** What it runs, for the log: {@code ping -c 1 10.0.2.1 (in ns1)}, {@code tcp 10.0.0.1:22}. */
  public String describe() {
    return switch (kind) {
      case COMMAND -> String.join(" ", command) + (netns != null ? " (in " + netns + ")" : "");
      case TCP -> "tcp " + target;
      case HTTP -> "GET " + target;
    };
  }
}
