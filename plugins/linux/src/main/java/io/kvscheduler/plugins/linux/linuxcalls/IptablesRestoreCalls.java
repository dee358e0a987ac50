package io.kvscheduler.plugins.linux.linuxcalls;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * {@link IptablesCalls} through the {@code iptables-save} and {@code iptables-restore} commands (or
 * their {@code ip6tables} twins), run in a named namespace through {@code nsenter
 * --net=/run/netns/NAME} (or {@code --net=PATH} for a namespace given by its file). With the
 * nf_tables backend, one long-running {@code iptables-restore} per namespace and family takes every
 * restore ({@link RestoreSession}); else one call is one process. Every call is bounded in time.
 */
public final class IptablesRestoreCalls implements IptablesCalls, AutoCloseable {
  private final CommandRunner runner;
  private final Duration limit;
  private final AtomicLong restores = new AtomicLong();

  /** The long-running restores, by namespace and family ({@link RestoreSession}). */
  private final ConcurrentMap<List<Object>, RestoreSession> sessions = new ConcurrentHashMap<>();

  /** How long the check that a restore echoes its marks waits for the echo. */
  private static final Duration PROBE_LIMIT = Duration.ofSeconds(2);

  /**
   * Whether long-running restores are used ({@link #sessionsWork(String, boolean)}), once known.
   */
  private volatile Boolean sessionsWork;

  /** Calls the commands directly, each call bounded to {@code limit}. */
  public IptablesRestoreCalls(Duration limit) {
    this(List.of(), limit);
  }

  /**
   * Calls the commands after {@code prefix} (e.g. the {@code nsenter} command of a {@link
   * NetnsSandbox}), each call bounded to {@code limit}.
   */
  public IptablesRestoreCalls(List<String> prefix, Duration limit) {
    this.runner = new CommandRunner(prefix, limit);
    this.limit = limit;
  }

  /**
   * Whether a long-running restore can serve a namespace: the nf_tables backend (the legacy one
   * holds the xtables lock for as long as it runs), and an iptables-restore that echoes the marks
   * ending each text at once ({@link RestoreSession}). Found out by the first restore, on its own
   * session in {@code namespace} (no process of its own for the check); when that session's process
   * ends instead, a check in the agent's namespace tells an iptables that cannot serve a session
   * from a namespace that is not there.
   */
  private boolean sessionsWork(String namespace, boolean v6) {
    Boolean known = sessionsWork;
    if (known != null) {
      return known;
    }
    synchronized (sessions) {
      if (sessionsWork == null) {
        sessionsWork = nfTables() && echoes(namespace, v6);
      }
      return sessionsWork;
    }
  }

  private boolean nfTables() {
    try {
      return runner.run(List.of("iptables-restore", "--version"), null).contains("nf_tables");
    } catch (LinuxCallException e) {
      return false;
    }
  }

  private boolean echoes(String namespace, boolean v6) {
    RestoreSession first = session(namespace, v6);
    boolean ended = false;
    try {
      if (first.probe(PROBE_LIMIT)) {
        return true;
      }
    } catch (LinuxCallException e) {
      ended = true;
    }
    sessions.remove(List.of(namespace, v6), first);
    first.close();
    // a process that ended may only say that its namespace is not there: ask in the agent's own
    return ended && RestoreSession.echoesMarks(runner, restoreCommand("", false), PROBE_LIMIT);
  }

  /** The command of a restore in {@code namespace}, kept running by a session. */
  private static List<String> restoreCommand(String namespace, boolean v6) {
    return in(namespace, tool(v6, "restore"), "--noflush", "--verbose", "-w", "5");
  }

  private static String tool(boolean v6, String what) {
    return (v6 ? "ip6tables-" : "iptables-") + what;
  }

  private static List<String> in(String namespace, String... argv) {
    List<String> cmd = new ArrayList<>();
    if (!namespace.isEmpty()) {
      cmd.add("nsenter");
      cmd.add("--net=" + (namespace.startsWith("/") ? namespace : "/run/netns/" + namespace));
      cmd.add("--");
    }
    cmd.addAll(List.of(argv));
    return cmd;
  }

  @Override
  public String save(String namespace, boolean v6) throws LinuxCallException {
    return runner.run(in(namespace, tool(v6, "save")), null);
  }

  @Override
  public void restore(String namespace, boolean v6, String input) throws LinuxCallException {
    if (sessionsWork(namespace, v6)) {
      RestoreSession session = session(namespace, v6);
      try {
        session.apply(input);
      } catch (LinuxCallException e) {
        sessions.remove(List.of(namespace, v6), session); // the process ended
        throw new LinuxCallException(tool(v6, "restore"), e.exitCode(), e.getMessage());
      }
      return;
    }
    restores.incrementAndGet();
    CommandRunner.Result r =
        runner.runForResult(in(namespace, tool(v6, "restore"), "--noflush", "-w", "5"), input);
    if (r.exitCode() != 0) {
      throw new LinuxCallException(tool(v6, "restore"), r.exitCode(), message(r, v6));
    }
  }

  /** The long-running restore of {@code namespace} and family, made (not started) when missing. */
  private RestoreSession session(String namespace, boolean v6) {
    return sessions.computeIfAbsent(
        List.of(namespace, v6),
        k -> {
          restores.incrementAndGet();
          return new RestoreSession(runner, restoreCommand(namespace, v6), limit);
        });
  }

  @Override
  public String canonical(boolean v6, String input) throws LinuxCallException {
    restores.incrementAndGet();
    String script = tool(v6, "restore") + " -w 5 && exec " + tool(v6, "save");
    CommandRunner.Result r =
        runner.runForResult(List.of("unshare", "--net", "sh", "-c", script), input);
    if (r.exitCode() != 0) {
      throw new LinuxCallException(tool(v6, "restore"), r.exitCode(), message(r, v6));
    }
    return r.stdout();
  }

  /** What iptables printed, without its advice to read the help. */
  private static String message(CommandRunner.Result r, boolean v6) {
    String msg =
        r.stderr()
            .lines()
            .map(String::strip)
            .filter(l -> !l.isEmpty() && !l.startsWith("Try `"))
            .collect(Collectors.joining("\n"));
    return msg.isEmpty()
        ? "'" + tool(v6, "restore") + "' failed with exit code " + r.exitCode()
        : msg;
  }

  @Override
  public long restores() {
    return restores.get();
  }

  /** Ends the long-running restores. */
  @Override
  public void close() {
    sessions.values().forEach(RestoreSession::close);
    sessions.clear();
  }

  @Override
  public void closeNamespace(String namespace) {
    for (boolean v6 : new boolean[] {false, true}) {
      RestoreSession s = sessions.remove(List.of(namespace, v6));
      if (s != null) {
        s.close();
      }
    }
  }
}
