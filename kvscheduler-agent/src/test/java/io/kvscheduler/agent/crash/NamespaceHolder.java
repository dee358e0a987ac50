package io.kvscheduler.agent.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A process that owns a private network namespace (and a mount namespace with a private {@code
 * /run/netns}, so that named namespaces made inside stay inside) for as long as the test runs, so
 * that the kernel state outlives every agent process started in it.
 *
 * <p>Without root it takes a user namespace too ({@code unshare --user --map-root-user --net
 * --mount}); as root, where user namespaces may be refused, it falls back to {@code unshare --net
 * --mount}. Processes enter it with {@link #prefix()} ({@code nsenter --target <pid> ...}). The
 * holder ends when this JVM closes its standard input, so a test JVM that dies takes it along.
 */
final class NamespaceHolder implements AutoCloseable {
  private static final String SETUP =
      "mkdir -p /run/netns && mount -t tmpfs kvs-netns /run/netns && ip link set lo up"
          + " && echo ready && exec cat >/dev/null";

  private final Process holder;
  private final boolean userNamespace;

  private NamespaceHolder(Process holder, boolean userNamespace) {
    this.holder = holder;
    this.userNamespace = userNamespace;
  }

  /**
   * Starts a holder.
   *
   * @throws IOException naming why neither way works here (the kernel or the system refuses
   *     namespaces)
   */
  static NamespaceHolder start() throws IOException {
    List<String> refusals = new ArrayList<>();
    try {
      return new NamespaceHolder(
          spawn(
              List.of(
                  "unshare",
                  "--user",
                  "--map-root-user",
                  "--net",
                  "--mount",
                  "--propagation",
                  "private")),
          true);
    } catch (IOException e) {
      refusals.add(e.getMessage());
    }
    if (isRoot()) {
      try {
        return new NamespaceHolder(
            spawn(List.of("unshare", "--net", "--mount", "--propagation", "private")), false);
      } catch (IOException e) {
        refusals.add(e.getMessage());
      }
    }
    throw new IOException(String.join("; ", refusals));
  }

  /**
   * Starts a holder for a test: asserts that each of {@code tools} is on the PATH (the message
   * names {@code packages}, what installs them), then aborts the test as skipped where the kernel
   * or the system refuses private network namespaces.
   */
  static NamespaceHolder startForTest(List<String> tools, String packages) {
    for (String tool : tools) {
      assertThat(onPath(tool))
          .as("'%s' is needed (bin/test installs it: %s)", tool, packages)
          .isTrue();
    }
    try {
      return start();
    } catch (IOException e) {
      Assumptions.abort(
          "the kernel or the system refuses private network namespaces here: " + e.getMessage());
      throw new AssertionError(e); // not reached: abort throws
    }
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  private static boolean isRoot() {
    try {
      Process p = new ProcessBuilder("id", "-u").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      return p.waitFor() == 0 && out.equals("0");
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static Process spawn(List<String> unshare) throws IOException {
    List<String> cmd = new ArrayList<>(unshare);
    cmd.addAll(List.of("sh", "-c", SETUP));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if ("ready".equals(line)) {
      return p;
    }
    StringBuilder all = new StringBuilder(line == null ? "" : line);
    try {
      p.waitFor(2, TimeUnit.SECONDS);
      all.append(' ').append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    p.destroyForcibly();
    throw new IOException(String.join(" ", unshare) + ": " + all.toString().strip());
  }

  /** Whether the namespace has a user namespace of its own (no root needed). */
  boolean userNamespace() {
    return userNamespace;
  }

  /** The command prefix that runs a command inside the namespace. */
  List<String> prefix() {
    List<String> p = new ArrayList<>(List.of("nsenter", "--target", Long.toString(holder.pid())));
    if (userNamespace) {
      p.addAll(List.of("--user", "--preserve-credentials"));
    }
    p.addAll(List.of("--net", "--mount"));
    return p;
  }

  /** The command line {@code argv} run inside. */
  List<String> inside(List<String> argv) {
    List<String> cmd = new ArrayList<>(prefix());
    cmd.addAll(argv);
    return cmd;
  }

  /** Runs {@code argv} inside (bounded); returns its output or throws with its error output. */
  String run(String... argv) {
    try {
      Process p = new ProcessBuilder(inside(List.of(argv))).start();
      p.getOutputStream().close();
      CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
      String out = read(p.getInputStream());
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", argv) + " did not finish in 30 s");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", argv) + " failed (" + p.exitValue() + "): " + err.get().strip());
      }
      return out;
    } catch (IOException | ExecutionException e) {
      throw new IllegalStateException(String.join(" ", argv) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static String read(InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
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
