package io.kvscheduler.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The machine's CPU time so far (all cores, in clock ticks), from the first line of {@code
 * /proc/stat}: {@code cpu user nice system idle iowait irq softirq steal ...}.
 *
 * @param idle idle and iowait
 * @param steal time the hypervisor gave to other guests
 * @param total the first eight columns together
 */
record CpuTicks(long idle, long steal, long total) {

  /** The ticks so far, or null where {@code /proc/stat} cannot be read (not Linux). */
  static CpuTicks read() {
    try (BufferedReader r = Files.newBufferedReader(Path.of("/proc/stat"))) {
      String line = r.readLine();
      if (line == null || !line.startsWith("cpu ")) {
        return null;
      }
      String[] f = line.substring(4).trim().split("\\s+");
      long total = 0;
      for (int i = 0; i < 8; i++) {
        total += Long.parseLong(f[i]);
      }
      return new CpuTicks(Long.parseLong(f[3]) + Long.parseLong(f[4]), Long.parseLong(f[7]), total);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
