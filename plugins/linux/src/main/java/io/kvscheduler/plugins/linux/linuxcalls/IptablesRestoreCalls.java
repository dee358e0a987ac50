package io.kvscheduler.plugins.linux.linuxcalls;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * {@link IptablesCalls} through the {@code iptables-save} and {@code iptables-restore} commands (or
 * their {@code ip6tables} twins), run in a named namespace through {@code nsenter
 * --net=/run/netns/NAME}. One call is one process, bounded in time.
 */
public final class IptablesRestoreCalls implements IptablesCalls {
  private final CommandRunner runner;
  private final AtomicLong restores = new AtomicLong();

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
  }

  private static String tool(boolean v6, String what) {
    return (v6 ? "ip6tables-" : "iptables-") + what;
  }

  private static List<String> in(String namespace, String... argv) {
    List<String> cmd = new ArrayList<>();
    if (!namespace.isEmpty()) {
      cmd.add("nsenter");
      cmd.add("--net=/run/netns/" + namespace);
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
    restores.incrementAndGet();
    CommandRunner.Result r =
        runner.runForResult(in(namespace, tool(v6, "restore"), "--noflush", "-w", "5"), input);
    if (r.exitCode() != 0) {
      throw new LinuxCallException(tool(v6, "restore"), r.exitCode(), message(r, v6));
    }
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
}
