package io.kvscheduler.plugins.linux.linuxcalls;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A private network namespace, with private named namespaces, that needs no root: a child process
 * started with {@code unshare --user --map-root-user --net --mount} holds it, with a fresh {@code
 * /run/netns} of its own so that {@code ip netns add} inside never touches the host's. {@link
 * #prefix()} is the {@code nsenter} command that runs a command inside; closing the sandbox (or the
 * end of this JVM) ends the process, and with it every link, address and route made inside.
 */
public final class NetnsSandbox implements AutoCloseable {
  private final Process holder;

  private NetnsSandbox(Process holder) {
    this.holder = holder;
  }

  /**
   * Starts a sandbox.
   *
   * @throws IOException when the kernel or the system refuses namespaces (the message says why)
   */
  public static NetnsSandbox start() throws IOException {
    Process p =
        new ProcessBuilder(
                "unshare",
                "--user",
                "--map-root-user",
                "--net",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                "mkdir -p /run/netns && mount -t tmpfs kvs-netns /run/netns && ip link set lo up"
                    + " && echo ready && exec cat >/dev/null") // ends when this JVM's end of stdin
            // closes
            .redirectErrorStream(true)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (!"ready".equals(line)) {
      StringBuilder all = new StringBuilder(line == null ? "" : line);
      try {
        p.waitFor(2, TimeUnit.SECONDS);
        all.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      p.destroyForcibly();
      throw new IOException(
          "cannot create a private network namespace with unshare: " + all.toString().strip());
    }
    return new NetnsSandbox(p);
  }

  /** The process holding the namespaces. */
  public long pid() {
    return holder.pid();
  }

  /** The command prefix that runs a command inside the sandbox. */
  public List<String> prefix() {
    return List.of(
        "nsenter",
        "--target",
        Long.toString(holder.pid()),
        "--user",
        "--net",
        "--mount",
        "--preserve-credentials");
  }

  @Override
  public void close() {
    holder.destroy();
    try {
      if (!holder.waitFor(5, TimeUnit.SECONDS)) {
        holder.destroyForcibly();
      }
    } catch (InterruptedException e) {
      holder.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
