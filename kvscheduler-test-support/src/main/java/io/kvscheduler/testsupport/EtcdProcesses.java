package io.kvscheduler.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the etcd fixtures ({@link EtcdFixture}, {@link EtcdCluster}) do with processes and files.
 */
final class EtcdProcesses {
  private EtcdProcesses() {}

  /** What a command printed (output and errors together) and its exit code; -1 if it timed out. */
  record Result(int exit, String output) {
    /** This result; fails unless the command exited with 0. */
    Result checked() {
      if (exit != 0) {
        throw new IllegalStateException("etcdctl failed (" + exit + "): " + output);
      }
      return this;
    }
  }

  /** Runs {@code cmd} (an {@code etcdctl} command, API v3) with no input, within {@code limit}. */
  static Result run(List<String> cmd, Duration limit) {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("ETCDCTL_API", "3");
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, cmd.get(0) + " timed out");
      }
      return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The last 20 lines of {@code log}, for a message saying why etcd did not start. */
  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  /** Deletes {@code dir} and everything in it, as far as it can. */
  static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }

  /** A free loopback port not in {@code taken}, which it joins. */
  static int freePort(Collection<Integer> taken) throws IOException {
    while (true) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        int port = s.getLocalPort();
        if (taken.add(port)) {
          return port;
        }
      }
    }
  }
}
