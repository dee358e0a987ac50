package io.kvscheduler.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Waits, before a timed phase of a kernel workload, until the machine's CPUs are idle: tearing down
 * a network namespace that held thousands of links or rules goes on in the kernel for about a
 * second after its last process ended, and whichever phase comes next (the agent's commit or the
 * plain tool it is compared with) would pay for it. Measured on 2 cores: {@code ip -batch} of W8's
 * 1,000 pairs took 1.39–1.43 s right after such a teardown and 1.09–1.13 s after it settled.
 */
final class QuietMachine {
  private QuietMachine() {}

  /** At least this share of the machine's CPU time idle over one window counts as quiet. */
  static final double IDLE_SHARE = 0.9;

  static final long WINDOW_MS = 100;
  static final long MAX_WAIT_MS = 5_000;

  /**
   * Returns once one window of {@value #WINDOW_MS} ms saw the CPUs idle for at least {@link
   * #IDLE_SHARE} of the time, or after {@value #MAX_WAIT_MS} ms; at once where {@code /proc/stat}
   * cannot be read.
   */
  static void await() {
    long deadline = System.nanoTime() + MAX_WAIT_MS * 1_000_000;
    long[] before = read();
    while (before != null && System.nanoTime() - deadline < 0) {
      try {
        Thread.sleep(WINDOW_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      long[] now = read();
      if (now == null) {
        return;
      }
      long total = now[1] - before[1];
      if (total > 0 && (double) (now[0] - before[0]) / total >= IDLE_SHARE) {
        return;
      }
      before = now;
    }
  }

  /** {idle + iowait, total} in clock ticks so far, or null. */
  private static long[] read() {
    try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/stat"))) {
      String line = r.readLine(); // "cpu  user nice system idle iowait irq softirq steal ..."
      if (line == null || !line.startsWith("cpu ")) {
        return null;
      }
      String[] f = line.substring(4).trim().split("\\s+");
      long total = 0;
      for (int i = 0; i < 8; i++) {
        total += Long.parseLong(f[i]);
      }
      return new long[] {Long.parseLong(f[3]) + Long.parseLong(f[4]), total};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
