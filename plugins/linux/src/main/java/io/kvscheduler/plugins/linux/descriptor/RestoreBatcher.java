package io.kvscheduler.plugins.linux.descriptor;

import io.kvscheduler.plugins.linux.linuxcalls.IptablesCalls;
import io.kvscheduler.plugins.linux.linuxcalls.LinuxCallException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Feeds the chain changes of one namespace and address family to {@code iptables-restore --noflush}
 * together: every change waiting when a restore starts goes into that one process, each as a table
 * block of its own ({@code *table}, its lines, {@code COMMIT}). Changes asked for while a restore
 * runs wait for it and go into the next one together, so calls made at the same time (a scheduler
 * running calls in parallel) share a process; calls made one after the other get one each, never
 * one per rule.
 *
 * <p>When iptables rejects a line, the blocks before it are applied (each {@code COMMIT} stands on
 * its own), the block holding the line fails with iptables' message and the line, and the blocks
 * after it go to a new restore.
 */
final class RestoreBatcher {
  /**
   * One chain's change: the table, and the lines of its block between {@code *table} and COMMIT.
   */
  record Change(String table, List<String> lines, boolean deleting) {}

  private static final Pattern LINE =
      Pattern.compile("(?:Error occurred at line: |line )(\\d+)", Pattern.CASE_INSENSITIVE);

  private final IptablesCalls iptables;
  private final Map<List<Object>, Queue> queues = new ConcurrentHashMap<>();

  /** Calls inside {@link #apply} now, over all namespaces. */
  private final AtomicInteger active = new AtomicInteger();

  RestoreBatcher(IptablesCalls iptables) {
    this.iptables = iptables;
  }

  private static final class Pending {
    final Change change;
    volatile boolean done;
    volatile LinuxCallException failure;

    Pending(Change change) {
      this.change = change;
    }
  }

  private static final class Queue {
    final ReentrantLock running = new ReentrantLock();
    final List<Pending> waiting = new ArrayList<>();
  }

  /** Applies {@code change} in {@code namespace}, with others waiting at the same time. */
  void apply(String namespace, boolean v6, Change change) throws LinuxCallException {
    Queue q = queues.computeIfAbsent(List.of(namespace, v6), k -> new Queue());
    Pending mine = new Pending(change);
    active.incrementAndGet();
    try {
      synchronized (q) {
        q.waiting.add(mine);
      }
      q.running.lock();
      try {
        if (!mine.done) {
          if (active.get() > 1) {
            Thread.sleep(1); // others are on their way: let them join this restore
          }
          List<Pending> batch;
          synchronized (q) {
            batch = new ArrayList<>(q.waiting);
            q.waiting.clear();
          }
          run(namespace, v6, batch);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new LinuxCallException("iptables-restore", -1, "interrupted");
      } finally {
        q.running.unlock();
      }
    } finally {
      active.decrementAndGet();
    }
    if (mine.failure != null) {
      throw mine.failure;
    }
  }

  /** The restore input of {@code batch}, and the first input line of each block. */
  static String input(List<Change> batch, int[] firstLines) {
    StringBuilder in = new StringBuilder();
    int line = 1;
    for (int i = 0; i < batch.size(); i++) {
      Change c = batch.get(i);
      firstLines[i] = line;
      in.append('*').append(c.table()).append('\n');
      for (String l : c.lines()) {
        in.append(l).append('\n');
      }
      in.append("COMMIT\n");
      line += c.lines().size() + 2;
    }
    return in.toString();
  }

  private void run(String namespace, boolean v6, List<Pending> batch) {
    List<Pending> rest = batch;
    while (!rest.isEmpty()) {
      List<Change> changes = rest.stream().map(p -> p.change).toList();
      int[] first = new int[changes.size()];
      String in = input(changes, first);
      try {
        iptables.restore(namespace, v6, in);
        finish(rest, 0, rest.size(), null);
        return;
      } catch (LinuxCallException e) {
        Optional<Integer> line = failedLine(e.getMessage());
        int culprit = -1;
        if (line.isPresent()) {
          for (int i = 0; i < first.length; i++) {
            if (line.get() >= first[i]) {
              culprit = i;
            }
          }
        }
        if (culprit < 0 || rest.size() == 1) {
          if (rest.size() == 1) {
            finish(rest, 0, 1, failure(rest.get(0).change, e, line.orElse(0)));
            return;
          }
          // no line to go by: each block on its own finds which ones iptables rejects
          for (Pending p : rest) {
            run(namespace, v6, List.of(p));
          }
          return;
        }
        finish(rest, 0, culprit, null); // applied before the rejected block
        Pending bad = rest.get(culprit);
        finish(rest, culprit, culprit + 1, failure(bad.change, e, line.get() - first[culprit] + 1));
        rest = rest.subList(culprit + 1, rest.size());
      }
    }
  }

  private void finish(List<Pending> ps, int from, int to, LinuxCallException failure) {
    for (Pending p : ps.subList(from, to)) {
      p.failure = failure;
      p.done = true;
    }
  }

  /**
   * The failure of one block: iptables' message, and the line of the block it points at ({@code
   * blockLine} 1 is the {@code *table} line). Deleting a chain that is gone already is no failure.
   */
  private static LinuxCallException failure(Change c, LinuxCallException e, int blockLine) {
    String msg = e.getMessage();
    if (c.deleting() && msg.contains("No chain/target/match by that name")) {
      return null;
    }
    if (blockLine >= 2 && blockLine - 2 < c.lines().size()) {
      msg = msg + "\nin the line: " + c.lines().get(blockLine - 2);
    }
    return new LinuxCallException(e.command(), e.exitCode(), msg);
  }

  /** The input line iptables names in {@code message}, if it names one. */
  static Optional<Integer> failedLine(String message) {
    Matcher m = LINE.matcher(message == null ? "" : message);
    return m.find() ? Optional.of(Integer.parseInt(m.group(1))) : Optional.empty();
  }
}
