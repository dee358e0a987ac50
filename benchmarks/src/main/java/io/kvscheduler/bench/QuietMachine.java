package io.kvscheduler.bench;

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
    CpuTicks before = CpuTicks.read();
    while (before != null && System.nanoTime() - deadline < 0) {
      try {
        Thread.sleep(WINDOW_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      CpuTicks now = CpuTicks.read();
      if (now == null) {
        return;
      }
      long total = now.total() - before.total();
      if (total > 0 && (double) (now.idle() - before.idle()) / total >= IDLE_SHARE) {
        return;
      }
      before = now;
    }
  }
}
