package io.kvscheduler.plugins.linux;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.plugins.linux.linuxcalls.IpRoute2Calls;
import io.kvscheduler.plugins.linux.linuxcalls.NetnsSandbox;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.Assertions;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;

/**
 * A scheduler with the Linux plugin driving the real kernel inside a private network namespace
 * (with private named namespaces), plus methods to look at the kernel with {@code ip -json} and to
 * change it by hand. Closing it ends the namespace and everything in it.
 */
final class KernelFixture implements AutoCloseable {
  static final String AGENT_PREFIX = "/vnf-agent/test/";
  private static final ObjectMapper JSON = new ObjectMapper();

  final NetnsSandbox sandbox;
  final IpRoute2Calls calls;
  KVScheduler kvs;
  LinuxPlugin plugin;

  /** The desired NB values (what a full resync sends). */
  final Map<String, Object> desired = new LinkedHashMap<>();

  /** Southbound calls at a time of the fixture's schedulers. */
  private final int parallelism;

  private KernelFixture(NetnsSandbox sandbox, int parallelism) {
    this.sandbox = sandbox;
    this.parallelism = parallelism;
    this.calls = new IpRoute2Calls(sandbox.prefix(), Duration.ofSeconds(10));
    startAgent();
  }

  /** A fixture, or the test is skipped when the kernel forbids private namespaces. */
  static KernelFixture start() {
    return start(1);
  }

  /**
   * {@link #start()} with a scheduler running up to {@code parallelism} southbound calls at once.
   */
  static KernelFixture start(int parallelism) {
    try {
      return new KernelFixture(NetnsSandbox.start(), parallelism);
    } catch (IOException e) {
      Assumptions.abort(
          "the kernel or the system forbids private network namespaces here: " + e.getMessage());
      throw new AssertionError(e);
    }
  }

  /** A scheduler and the plugin over the sandbox (the "agent"). */
  void startAgent() {
    kvs =
        KVScheduler.builder()
            .printTxnSummary(false)
            .threadName("kvs-linux-test")
            .parallelism(parallelism)
            .build();
    plugin = LinuxPlugin.register(kvs, calls, AGENT_PREFIX);
    try {
      plugin.startWatching();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Stops the "agent" (the kernel keeps what it configured) and starts a fresh one. */
  void restartAgent() {
    plugin.close();
    kvs.close();
    calls.close(); // a new agent starts its own ip processes
    startAgent();
  }

  /** Commits {@code values} (null = delete) as one NB change; records them as desired. */
  long change(Map<String, Object> values) {
    return change(values, TxnOptions.defaults());
  }

  long change(Map<String, Object> values, TxnOptions options) {
    Txn t = kvs.startNBTransaction();
    values.forEach(
        (k, v) -> {
          t.setValue(k, v);
          if (v == null) {
            desired.remove(k);
          } else {
            desired.put(k, v);
          }
        });
    try {
      return t.commit(options);
    } catch (TransactionException e) {
      return e.seqNum();
    }
  }

  /** Sets one value. */
  long put(String key, Object value) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put(key, value);
    return change(m);
  }

  /** A full resync with the desired values; returns the transaction's record. */
  RecordedTxn fullResync() {
    Txn t = kvs.startNBTransaction();
    desired.forEach(t::setValue);
    long seq;
    try {
      seq = t.commit(TxnOptions.builder().resync(ResyncType.FULL).build());
    } catch (TransactionException e) {
      seq = e.seqNum();
    }
    return kvs.recordedTransaction(seq).orElseThrow();
  }

  /** A downstream resync (the kernel read again, the NB intent re-applied); its record. */
  RecordedTxn downstreamResync() {
    long seq;
    try {
      seq =
          kvs.startNBTransaction()
              .commit(TxnOptions.builder().resync(ResyncType.DOWNSTREAM).build());
    } catch (TransactionException e) {
      seq = e.seqNum();
    }
    return kvs.recordedTransaction(seq).orElseThrow();
  }

  /** The operations a transaction executed that called a descriptor. */
  static List<String> sbOperations(RecordedTxn txn) {
    List<String> out = new ArrayList<>();
    for (RecordedTxnOp op : txn.executed()) {
      if (!op.is(RecordedTxnOp.Flag.NOOP) && !op.is(RecordedTxnOp.Flag.PROPERTY)) {
        out.add(op.operation() + " " + op.key());
      }
    }
    return out;
  }

  BaseValueStatus status(String key) {
    return kvs.valueStatus(key);
  }

  ValueState state(String key) {
    return kvs.valueStatus(key).state();
  }

  /** Waits until {@code key} is in {@code state} (watcher events arrive asynchronously). */
  void await(String key, ValueState state) {
    Awaitility.await()
        .atMost(10, TimeUnit.SECONDS)
        .pollInterval(Duration.ofMillis(20))
        .untilAsserted(
            () -> Assertions.assertThat(state(key)).as("state of %s", key).isEqualTo(state));
  }

  /** Runs {@code argv} inside the sandbox; returns stdout or fails the test with stderr. */
  String sh(String... argv) {
    Result r = run(argv);
    if (r.code != 0) {
      throw new AssertionError(String.join(" ", argv) + " failed (" + r.code + "): " + r.err);
    }
    return r.out;
  }

  /** The result of a command run inside the sandbox. */
  record Result(int code, String out, String err) {}

  Result run(String... argv) {
    List<String> cmd = new ArrayList<>(sandbox.prefix());
    cmd.addAll(List.of(argv));
    try {
      Process p = new ProcessBuilder(cmd).start();
      p.getOutputStream().close();
      CompletableFuture<String> err =
          CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
      String out = readAll(p.getInputStream());
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(String.join(" ", argv) + " did not finish");
      }
      return new Result(p.exitValue(), out, err.get());
    } catch (IOException | InterruptedException | ExecutionException e) {
      throw new AssertionError(e);
    }
  }

  private static String readAll(InputStream in) {
    try {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /** {@code ip -json} in namespace {@code ns} ("" = the sandbox's own). */
  JsonNode ipJson(String ns, String... args) {
    List<String> argv = new ArrayList<>(List.of("ip"));
    if (!ns.isEmpty()) {
      argv.addAll(List.of("-n", ns));
    }
    argv.add("-json");
    argv.addAll(List.of(args));
    String out = sh(argv.toArray(String[]::new));
    try {
      return JSON.readTree(out.isBlank() ? "[]" : out);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** The link {@code name} of {@code ns} as {@code ip -json link show} reports it, or null. */
  JsonNode link(String ns, String name) {
    for (JsonNode l : ipJson(ns, "link", "show")) {
      if (l.path("ifname").asText().equals(name)) {
        return l;
      }
    }
    return null;
  }

  /** Names of the links of {@code ns}. */
  List<String> linkNames(String ns) {
    List<String> out = new ArrayList<>();
    ipJson(ns, "link", "show").forEach(l -> out.add(l.path("ifname").asText()));
    return out;
  }

  /** The addresses ({@code ip/prefix}) of link {@code name} of {@code ns}, link-local left out. */
  List<String> addresses(String ns, String name) {
    List<String> out = new ArrayList<>();
    for (JsonNode l : ipJson(ns, "addr", "show", "dev", name)) {
      for (JsonNode a : l.path("addr_info")) {
        if (!"link".equals(a.path("scope").asText())) {
          out.add(a.path("local").asText() + "/" + a.path("prefixlen").asInt());
        }
      }
    }
    return out;
  }

  /** Whether a ping from namespace {@code ns} to {@code ip} gets an answer. */
  boolean ping(String ns, String ip) {
    return run("ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "2", ip).code == 0;
  }

  @Override
  public void close() {
    try {
      plugin.close();
      kvs.close();
    } finally {
      calls.close();
      sandbox.close();
    }
  }
}
