package io.kvscheduler.bench;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.ResyncType;
import io.kvscheduler.api.Txn;
import io.kvscheduler.api.TxnOptions;
import io.kvscheduler.api.ValueState;
import java.io.BufferedReader;
import java.io.IOException;
import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scale harness: {@code bin/kvs-bench WORKLOAD --n N[,N...] [--repeat R] [--txns T] [--warmup W]
 * [--seed S] [--populate single|split] [--history on|off] [--parallelism P[,P...]] [--revert
 * on|off] [--via bare|descriptors]}. Prints one JSON object per result line on stdout and nothing
 * else; diagnostics go to stderr. Every run builds a fresh scheduler (no transaction log, default
 * history recording) with a no-op southbound ({@link MockModel}).
 *
 * <ul>
 *   <li><b>W1</b> – one NB transaction creating N interfaces plus one bridge domain listing all of
 *       them; the bridge domain derives N bindings, each depending on its interface. Reports the
 *       wall time of {@code commit()} ({@code seconds}) and the executed operations of the recorded
 *       transaction ({@code ops}, expected 2N+1). Then the bare baseline applies the same values
 *       ({@link BaselineApply}) as the first work of a fresh JVM started with this JVM's options,
 *       cold like the commit: {@code baseline_seconds} and {@code baseline_ratio} = {@code seconds
 *       / baseline_seconds}, the engine's overhead. {@code baseline_descriptors_seconds} and {@code
 *       baseline_descriptors_ratio}: the same through the mock descriptors' callbacks (key
 *       selectors, DerivedValues, Dependencies, Create), in a fresh JVM of its own, so the ratio
 *       leaves out what the descriptors cost any engine. {@code baseline_same_jvm_seconds} is one
 *       more bare apply in this JVM after the commit, for information: the JIT has compiled the
 *       library code the two share (hash maps, strings, lists) by then, so it is faster than a cold
 *       apply.
 *   <li><b>BASELINE</b> – the bare baseline alone, as the first work of a fresh JVM (cold, like
 *       W1): W1's values applied with hash maps and Kahn's algorithm, a no-op southbound and no
 *       engine ({@link BaselineApply}); {@code --via descriptors} goes through the mock
 *       descriptors' callbacks instead of the model's own types. Reports {@code seconds}, {@code
 *       ops} (2N+1) and {@code via}.
 *   <li><b>W2</b> – on the W1-populated graph, W (default 300,000) unmeasured warm-up transactions:
 *       enough for the JIT to finish compiling the one-value path (with 10,000 it was still
 *       compiling, and the figure was the compiler's as much as the engine's), then T (default
 *       1000) measured one-value transactions, each toggling {@code enabled} of a random interface
 *       (fixed seed). Reports {@code mean_us}, {@code p50_us}, {@code p99_us}, {@code max_us} of
 *       the time from {@code startNBTransaction()} to the return of the blocking {@code commit()}.
 *       {@code --populate split} builds the same graph with two transactions (interfaces first,
 *       then the bridge domain, so no binding is ever PENDING) instead of the single W1
 *       transaction. A full collection after populating settles the heap before the warm-up.
 *   <li><b>W3</b> – a full resync of the W1 values against a southbound that already holds them in
 *       one table per kind of value ({@link MockModel.Southbound}: each descriptor's Retrieve lists
 *       its own table, origin resolved by correlation): nothing may be executed. Reports {@code
 *       seconds} of the resync commit.
 *   <li><b>W4</b> – the heap retained per value after W1 ({@link RetainedHeap}): {@code
 *       bytes_per_value}, {@code retained_mb}, {@code heap_mb}; {@code --history off} builds the
 *       scheduler without history (default on).
 *   <li><b>W5</b> – a bridge domain growing by one member per transaction up to N members ({@link
 *       GrowingBridgeDomain}): {@code txn_ms}, {@code p50_ms}, {@code p99_ms} over the last 100
 *       transactions; {@code --history off} as for W4.
 *   <li><b>W6</b> – W1's values applied to a southbound whose every call takes 1 ms, by schedulers
 *       running up to 1, 4, 16 and 64 calls at once ({@code --parallelism P[,P...]}), parallelism 1
 *       first as the reference ({@link SlowSouthboundApply}): one line per level with {@code
 *       seconds}, {@code speedup}, {@code calls}, {@code limit_seconds}, {@code limit_ratio} and
 *       {@code records_identical}.
 *   <li><b>W7</b> – W2's one-value transactions on the W1 graph, first alone, then while a client
 *       fetches {@code GET /scheduler/status} (every value) from the agent's REST server in a loop
 *       ({@link RestReaderBench}). Reports {@code mean_us} (with the reader), {@code
 *       mean_us_no_reader}, their {@code ratio}, the reader's mean response time {@code status_ms},
 *       and for each series the engine thread's CPU time per transaction and where the process's
 *       CPU went (collector, JIT, the engine waiting for a core).
 *   <li><b>W8</b> – the Linux plugin on the real kernel, in a private network namespace (no root
 *       needed): N veth pairs with an address and a route each in one transaction, next to {@code
 *       ip -batch} doing the same ({@link LinuxWorkload}). Reports {@code seconds}, {@code ops},
 *       {@code per_op_ms} and {@code batch_seconds}.
 *   <li><b>W10</b> – plan and confirmed commit: {@code plan_ms}, a plan of a 10,000-value change
 *       against the graph of W1 with 100,000 interfaces, and {@code simulation_ms}, the simulation
 *       pass of the same change ({@link PlanWorkload}; {@code --n} does not change this half).
 *   <li><b>W11</b> – iptables rule chains on the real kernel: N rules in 100 chains across 10 named
 *       namespaces in one transaction, next to plain {@code iptables-restore} of the same ({@link
 *       IptablesWorkload}). Reports {@code seconds}, {@code restores} and {@code restore_seconds},
 *       one line per {@code --parallelism} level (default 1 and 16).
 *   <li><b>W12</b> – bridges on the real kernel: N bridges, each with an address and 10 veth pairs
 *       whose first end is a port of the bridge, in one transaction, next to {@code ip -batch}
 *       doing the same ({@link BridgeWorkload}). Reports {@code seconds}, {@code ops}, {@code
 *       per_op_ms}, {@code batch_seconds} and {@code ratio}.
 *   <li><b>W10</b> – a confirmed commit changing N values whose probe fails ({@link
 *       ConfirmedRollback}): {@code rollback_ms}, from the probe's failure to the rollback's
 *       transaction finished, every value back and CONFIGURED; and {@code commit_ms}.
 *   <li><b>W9</b> – the agent started as a separate process on a generated configuration directory
 *       holding W1's values, until every value is CONFIGURED over REST ({@link AgentStartup}).
 *       Reports {@code seconds} and its parts {@code rest_up_seconds}, {@code parse_seconds},
 *       {@code commit_seconds} and their sum {@code parts_seconds}.
 *   <li><b>W13</b> – a fleet: a 3-member etcd cluster of local processes and {@code --agents A}
 *       (default 50) agents in this JVM with N values each ({@link FleetWorkload}). Reports the
 *       etcd requests per agent at rest, {@code propagation_p50_ms} and {@code propagation_p99_ms}
 *       (an etcd put to the agent's CONFIGURED status seen through a watch), {@code all_seconds}
 *       (one change to every agent at once) and, the same while an etcd member is killed and
 *       restarted, {@code member_loss_all_seconds} and {@code lost}.
 * </ul>
 *
 * <p>For W1 and W3, {@code --warmup W} (default 0) runs the workload W times unmeasured, each on a
 * fresh scheduler with min(N, 100,000) interfaces, before the measured runs of each size (their
 * results go to stderr only): with the default, the first measured run is the first transaction of
 * the JVM (JIT compilation included, "cold"); with a warm-up it shows the compiled engine ("warm").
 * Both are reported in BENCHMARKS.md.
 *
 * <p>W2's long warm-up fills the history (300,000 transactions: the default count limit of 100,000
 * records is reached, and every revision of the last 24 hours is kept), so each measured
 * transaction also drops the oldest record, and whether a young collection falls in the measured
 * window is chance: read {@code gc_count}. {@code --txns} in the hundreds of thousands gives a long
 * run in which collections are part of the mean.
 *
 * <p>{@code engine_cpu_seconds} (W1, W3) and {@code engine_cpu_mean_us} (W2) are the CPU time of
 * the engine thread over the measured section: wall time minus waiting for a core, useful when the
 * machine is shared. {@code engine_alloc_mb} (W1, W3) and {@code engine_alloc_bytes_per_txn} (W2)
 * are the bytes the engine thread allocated over the same section (-1 where the JVM cannot tell);
 * what the committing thread allocates (the transaction it builds) is not included.
 *
 * <p>Common fields: {@code heap_mb} = heap used after a full GC with the populated scheduler still
 * reachable (retained size of the graph + history), {@code gc_count}/{@code gc_ms} = collections
 * during the measured section, {@code jit_ms} = time the JIT compilers spent compiling during the
 * measured section (summed over the compiler threads), {@code page_faults} = page faults of the
 * process during the measured section (Linux only: first touches of memory, such as heap the
 * collector committed and had not used yet), {@code steal_pct} = share of the machine's CPU time
 * taken by the hypervisor for other guests during the measured section (Linux only; on a shared
 * virtual machine, lines with a high figure measured the neighbours as much as the engine), {@code
 * java} = runtime version, {@code compilers} = the JIT compilers the JVM runs with ({@code C1+C2},
 * the JVM's default; {@code C1} with {@code -XX:TieredStopAtLevel=1} to 3, as {@code bin/kvs-bench}
 * runs W8, W11 and W12; {@code C2} without tiered compilation). W1 and W3 also report where the
 * process's CPU went during the commit: {@code cpu_all_seconds} (every thread), {@code
 * cpu_jit_seconds} (JIT compiler threads), {@code cpu_gc_seconds} (collector threads and the VM
 * thread) and {@code engine_wait_seconds} (time the engine thread was ready to run but had no core;
 * Linux only). On two cores, {@code cpu_all_seconds} near twice {@code seconds} means the machine
 * was saturated.
 */
public final class ScaleHarness {
  private ScaleHarness() {}

  /** W2's default number of unmeasured warm-up transactions. */
  static final int DEFAULT_W2_WARMUP = 300_000;

  /** W1/W3 warm-up runs use a graph of at most this many interfaces. */
  static final int WARMUP_SIZE = 100_000;

  public static void main(String[] args) {
    try {
      System.exit(run(args));
    } catch (IllegalArgumentException e) {
      System.err.println("kvs-bench: " + e.getMessage());
      System.err.println(usage());
      System.exit(2);
    }
  }

  static String usage() {
    return "usage: kvs-bench BASELINE|W1|W2|W3|W4|W5|W6|W7|W8|W9|W10|W11|W12|W13 --n N[,N...]"
        + " [--repeat R] [--txns T]"
        + " [--warmup W] [--seed S] [--populate single|split] [--history on|off]"
        + " [--parallelism P[,P...]] [--revert on|off] [--via bare|descriptors]"
        + " [--plugin mock|linux] [--agents A]";
  }

  static int run(String[] args) {
    if (args.length == 0 || args[0].startsWith("-")) {
      throw new IllegalArgumentException("missing workload");
    }
    String workload = args[0].toUpperCase(Locale.ROOT);
    if (!List.of(
            "BASELINE",
            "W1",
            "W2",
            "W3",
            "W4",
            "W5",
            "W6",
            "W7",
            "W8",
            "W9",
            "W10",
            "W11",
            "W12",
            "W13")
        .contains(workload)) {
      throw new IllegalArgumentException("unknown workload " + args[0]);
    }
    List<Integer> sizes = new ArrayList<>();
    int repeat = 1;
    int txns = 1000;
    int warmup = -1; // per workload: see below
    long seed = 42;
    boolean splitPopulate = false;
    Boolean recordHistory = null; // --history: W4, W5 only
    List<Integer> levels = new ArrayList<>(); // --parallelism: W6 only
    boolean revert = false; // --revert: W6 only
    boolean revertGiven = false;
    Boolean viaDescriptors = null; // --via: BASELINE only
    boolean linux = false; // --plugin: W9 only
    boolean pluginGiven = false;
    int fleetAgents = 50; // --agents: W13 only
    for (int i = 1; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException("option " + a + " needs a value");
      }
      String v = args[++i];
      switch (a) {
        case "--n" -> {
          for (String s : v.split(",")) {
            sizes.add(parseCount(s));
          }
        }
        case "--repeat" -> repeat = parseInt(v, 1);
        case "--agents" -> {
          if (!workload.equals("W13")) {
            throw new IllegalArgumentException("--agents applies to W13");
          }
          fleetAgents = parseInt(v, 1);
        }
        case "--txns" -> txns = parseInt(v, 1);
        case "--warmup" -> warmup = parseInt(v, 0);
        case "--seed" -> seed = Long.parseLong(v);
        case "--populate" -> {
          switch (v) {
            case "single" -> splitPopulate = false;
            case "split" -> splitPopulate = true;
            default -> throw new IllegalArgumentException("--populate single|split, got " + v);
          }
        }
        case "--history" -> {
          switch (v) {
            case "on" -> recordHistory = true;
            case "off" -> recordHistory = false;
            default -> throw new IllegalArgumentException("--history on|off, got " + v);
          }
        }
        case "--parallelism" -> {
          for (String s : v.split(",")) {
            levels.add(parseInt(s, 1));
          }
        }
        case "--via" -> {
          switch (v) {
            case "bare" -> viaDescriptors = false;
            case "descriptors" -> viaDescriptors = true;
            default -> throw new IllegalArgumentException("--via bare|descriptors, got " + v);
          }
        }
        case "--plugin" -> {
          pluginGiven = true;
          switch (v) {
            case "mock" -> linux = false;
            case "linux" -> linux = true;
            default -> throw new IllegalArgumentException("--plugin mock|linux, got " + v);
          }
        }
        case "--revert" -> {
          revertGiven = true;
          switch (v) {
            case "on" -> revert = true;
            case "off" -> revert = false;
            default -> throw new IllegalArgumentException("--revert on|off, got " + v);
          }
        }
        default -> throw new IllegalArgumentException("unknown option " + a);
      }
    }
    if (sizes.isEmpty()) {
      throw new IllegalArgumentException("--n is required");
    }
    boolean w2 = workload.equals("W2") || workload.equals("W7");
    boolean w1w3 = workload.equals("W1") || workload.equals("W3");
    boolean historyOption = workload.equals("W4") || workload.equals("W5");
    if (recordHistory != null && !historyOption) {
      throw new IllegalArgumentException("--history applies to W4 and W5");
    }
    if (!levels.isEmpty() && !workload.equals("W6") && !workload.equals("W11")) {
      throw new IllegalArgumentException("--parallelism applies to W6 and W11");
    }
    if (revertGiven && !workload.equals("W6")) {
      throw new IllegalArgumentException("--revert applies to W6");
    }
    if (pluginGiven && !workload.equals("W9")) {
      throw new IllegalArgumentException("--plugin applies to W9");
    }
    if (viaDescriptors != null && !workload.equals("BASELINE")) {
      throw new IllegalArgumentException("--via applies to BASELINE");
    }
    if (levels.isEmpty()) {
      levels.addAll(
          workload.equals("W11")
              ? IptablesWorkload.DEFAULT_LEVELS
              : SlowSouthboundApply.DEFAULT_LEVELS);
    }
    if (warmup >= 0
        && List.of("BASELINE", "W4", "W5", "W6", "W9", "W10", "W11", "W13").contains(workload)) {
      throw new IllegalArgumentException("--warmup does not apply to " + workload);
    }
    boolean history = recordHistory == null || recordHistory;
    if (warmup < 0) {
      warmup = workload.equals("W7") ? RestReaderBench.DEFAULT_WARMUP : w2 ? DEFAULT_W2_WARMUP : 0;
    }
    for (int n : sizes) {
      if (w1w3) {
        // unmeasured runs, reported on stderr only: the JIT compiles the workload's paths
        for (int w = 0; w < warmup; w++) {
          Map<String, Object> r =
              workload.equals("W1") ? w1(Math.min(n, WARMUP_SIZE)) : w3(Math.min(n, WARMUP_SIZE));
          System.err.println("kvs-bench: warm-up " + (w + 1) + "/" + warmup + ": " + toJson(r));
          System.gc();
        }
      }
      for (int r = 0; r < repeat; r++) {
        List<Map<String, Object>> results =
            switch (workload) {
              case "BASELINE" -> List.of(BaselineApply.run(n, Boolean.TRUE.equals(viaDescriptors)));
              case "W1" -> List.of(withBaseline(w1(n), n));
              case "W2" -> List.of(w2(n, txns, warmup, seed, splitPopulate));
              case "W3" -> List.of(w3(n));
              case "W4" -> List.of(RetainedHeap.run(n, history));
              case "W5" -> List.of(GrowingBridgeDomain.run(n, history));
              case "W6" -> SlowSouthboundApply.run(n, levels, revert);
              case "W7" -> List.of(RestReaderBench.run(n, txns, warmup, seed));
              case "W8" -> List.of(LinuxWorkload.run(n));
              case "W11" -> IptablesWorkload.run(n, levels);
              case "W12" -> List.of(BridgeWorkload.run(n));
              case "W13" -> List.of(fleet(fleetAgents, n));
              case "W9" -> List.of(linux ? AgentStartup.runLinux(n) : AgentStartup.run(n));
              case "W10" -> List.of(w10(n));
              default -> throw new IllegalArgumentException("unknown workload " + args[0]);
            };
        for (Map<String, Object> result : results) {
          Map<String, Object> line = new LinkedHashMap<>();
          line.put("workload", workload);
          line.put("n", n);
          line.put("run", r + 1);
          if (w1w3) {
            line.put("warmup_runs", warmup);
          }
          line.putAll(result);
          line.put("java", System.getProperty("java.version"));
          line.put("compilers", compilers());
          line.put(
              "load_avg",
              round(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(), 2));
          System.out.println(toJson(line));
          System.out.flush();
        }
        System.gc();
      }
    }
    return 0;
  }

  /** The JIT compilers this JVM runs with: {@code C1+C2}, {@code C1} or {@code C2}. */
  static String compilers() {
    HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    if (vm == null) {
      return "unknown";
    }
    if (!Boolean.parseBoolean(vm.getVMOption("TieredCompilation").getValue())) {
      return "C2";
    }
    return Integer.parseInt(vm.getVMOption("TieredStopAtLevel").getValue()) < 4 ? "C1" : "C1+C2";
  }

  private static int parseCount(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT).replace("_", "");
    int mult = 1;
    if (t.endsWith("k")) {
      mult = 1000;
      t = t.substring(0, t.length() - 1);
    } else if (t.endsWith("m")) {
      mult = 1_000_000;
      t = t.substring(0, t.length() - 1);
    }
    return Math.multiplyExact(parseInt(t, 1), mult);
  }

  private static Map<String, Object> fleet(int agents, int n) {
    try {
      return FleetWorkload.run(agents, n);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (Exception e) {
      throw new IllegalStateException("W13: " + e, e);
    }
  }

  private static int parseInt(String s, int min) {
    int v;
    try {
      v = Integer.parseInt(s.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a number: " + s);
    }
    if (v < min) {
      throw new IllegalArgumentException("value must be >= " + min + ": " + s);
    }
    return v;
  }

  // ---------------------------------------------------------------------------------------------

  static Map<String, Object> w1(int n) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (KVScheduler kvs = MockModel.newScheduler()) {
      Txn txn = MockModel.populateTxn(kvs, n);
      long seq = measured(txn::commit, out);
      out.put("ops", executedOps(kvs, seq));
      checkPopulated(kvs, n);
      out.put("heap_mb", retainedHeapMb());
    }
    return out;
  }

  /**
   * Adds the bare baseline to W1's {@code result}: {@code baseline_seconds}, one apply of the same
   * values by {@link BaselineApply} as the first work of a fresh JVM ({@link #coldBaselineNanos}),
   * so that both sides of {@code baseline_ratio} = W1's {@code seconds} ÷ {@code baseline_seconds}
   * are cold; and {@code baseline_same_jvm_seconds}, one apply in this JVM after W1's commit.
   *
   * <p>Why a fresh JVM: in the JVM that ran the commit, the baseline finds the hash map, string and
   * list code it shares with the engine compiled already, and its JIT and collector work is not the
   * cold one the commit had. It then measured faster than in a JVM of its own (W1 at 100k, fresh
   * JVMs: by about a fifth in the calmer runs, up to half), which overstated the engine's overhead.
   */
  static Map<String, Object> withBaseline(Map<String, Object> result, int n) {
    System.gc(); // the collector settles W1's garbage before, not during, the baseline
    long sameJvm = BaselineApply.applyNanos(n);
    long cold = coldBaselineNanos(n, false);
    long coldDescriptors = coldBaselineNanos(n, true);
    double seconds = ((Number) result.get("seconds")).doubleValue();
    result.put("baseline_seconds", round(cold / 1e9, 4));
    result.put("baseline_ratio", round(seconds / (cold / 1e9), 2));
    result.put("baseline_same_jvm_seconds", round(sameJvm / 1e9, 4));
    result.put("baseline_descriptors_seconds", round(coldDescriptors / 1e9, 4));
    result.put("baseline_descriptors_ratio", round(seconds / (coldDescriptors / 1e9), 2));
    return result;
  }

  /**
   * W10: the plan half ({@link PlanWorkload}: {@code plan_ms} against {@code simulation_ms}) and
   * the confirmed-commit half ({@link ConfirmedRollback}: {@code rollback_ms} at {@code n} values),
   * in one line; the halves' {@code commit_ms} are told apart as {@code plan_commit_ms} and {@code
   * rollback_commit_ms}.
   */
  private static Map<String, Object> w10(int n) {
    Map<String, Object> out = new LinkedHashMap<>();
    PlanWorkload.run().forEach((k, v) -> out.put(k.equals("commit_ms") ? "plan_commit_ms" : k, v));
    ConfirmedRollback.run(n)
        .forEach((k, v) -> out.putIfAbsent(k.equals("commit_ms") ? "rollback_commit_ms" : k, v));
    return out;
  }

  /**
   * JVM options not passed on to the baseline's JVM: those that write files or attach a debugger (a
   * flight recording, a log file, a debug agent), which the child would clobber or block on.
   */
  static final List<String> NOT_INHERITED =
      List.of("-XX:StartFlightRecording", "-XX:FlightRecorderOptions", "-Xlog", "-agentlib:jdwp");

  /**
   * The {@code seconds} of {@code BASELINE --n n --via bare|descriptors} run in a fresh JVM with
   * this JVM's runtime, class path and options (less {@link #NOT_INHERITED}), in nanoseconds. Its
   * stderr is passed through.
   */
  static long coldBaselineNanos(int n, boolean viaDescriptors) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (NOT_INHERITED.stream().noneMatch(option::startsWith)) {
        cmd.add(option);
      }
    }
    cmd.addAll(
        List.of(
            "-cp",
            System.getProperty("java.class.path"),
            ScaleHarness.class.getName(),
            "BASELINE",
            "--n",
            Integer.toString(n),
            "--via",
            viaDescriptors ? "descriptors" : "bare"));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String json = null;
      try (BufferedReader out = p.inputReader()) {
        for (String line; (line = out.readLine()) != null; ) {
          if (line.startsWith("{")) {
            json = line; // the JVM may print more (e.g. -XX:+CITime): the JSON line is ours
          }
        }
      }
      int exit = p.waitFor();
      Matcher m = json == null ? null : Pattern.compile("\"seconds\":([0-9.eE+-]+)").matcher(json);
      if (exit != 0 || m == null || !m.find()) {
        throw new IllegalStateException(
            "baseline JVM failed (exit " + exit + "): " + (json == null ? "no result" : json));
      }
      return Math.round(Double.parseDouble(m.group(1)) * 1e9);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start the baseline JVM: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while the baseline JVM ran", e);
    }
  }

  /**
   * W3: a full resync of {@code n} interfaces plus the bridge domain (and its {@code n} derived
   * bindings) against a southbound that already holds exactly these values: Retrieve returns them
   * all, nothing needs to be executed.
   */
  static Map<String, Object> w3(int n) {
    Map<String, Object> out = new LinkedHashMap<>();
    MockModel.Southbound sb = new MockModel.Southbound();
    MockModel.fillSouthbound(sb, n);
    try (KVScheduler kvs = MockModel.newRetrievingScheduler(sb)) {
      Txn txn = MockModel.populateTxn(kvs, n);
      long seq =
          measured(() -> txn.commit(TxnOptions.builder().resync(ResyncType.FULL).build()), out);
      Object ops = executedOps(kvs, seq);
      if (!Long.valueOf(0).equals(ops) && !Integer.valueOf(0).equals(ops)) {
        throw new IllegalStateException("W3 expected no executed operation, got " + ops);
      }
      out.put("ops", ops);
      checkPopulated(kvs, n);
      out.put("heap_mb", retainedHeapMb());
    }
    return out;
  }

  /**
   * Runs one commit (W1, W3) and puts its measures into {@code out}: {@code seconds}, the engine
   * thread's CPU and allocation, collections, JIT time and page faults, all read when the commit
   * returns (before the callers' checks, which build the transaction's record for the reader).
   * Returns the commit's sequence number.
   */
  private static long measured(LongSupplier commit, Map<String, Object> out) {
    ProcessCounters counters = new ProcessCounters();
    EngineCpu cpu = new EngineCpu();
    long t0 = System.nanoTime();
    long seq = commit.getAsLong();
    long t1 = System.nanoTime();
    out.put("seconds", round((t1 - t0) / 1e9, 3));
    long engineCpuNs = cpu.elapsedNanos();
    long engineAlloc = cpu.allocatedBytes();
    out.put("engine_cpu_seconds", engineCpuNs < 0 ? -1 : round(engineCpuNs / 1e9, 3));
    out.put("engine_alloc_mb", engineAlloc < 0 ? -1 : round(engineAlloc / 1048576.0, 1));
    counters.putInto(out);
    return seq;
  }

  /**
   * What the whole process did between construction and {@link #putInto}: collections, JIT time,
   * page faults, steal and CPU time by kind of thread ({@link GcCounter}, {@link JitCounter},
   * {@link FaultCounter}, {@link StealCounter}, {@link ThreadCpu}, in this order).
   */
  static final class ProcessCounters {
    private final GcCounter gc = new GcCounter();
    private final JitCounter jit = new JitCounter();
    private final FaultCounter faults = new FaultCounter();
    private final StealCounter steal = new StealCounter();
    private final ThreadCpu threads = new ThreadCpu();

    void putInto(Map<String, Object> out) {
      gc.putInto(out);
      jit.putInto(out);
      faults.putInto(out);
      steal.putInto(out);
      threads.putInto(out);
    }
  }

  static Map<String, Object> w2(int n, int txns, int warmup, long seed, boolean split) {
    Map<String, Object> out = new LinkedHashMap<>();
    try (KVScheduler kvs = MockModel.newScheduler()) {
      long p0 = System.nanoTime();
      if (split) {
        MockModel.populateInterfacesTxn(kvs, n).commit();
        MockModel.populateBridgeDomainTxn(kvs, n).commit();
      } else {
        MockModel.populateTxn(kvs, n).commit();
      }
      out.put("populate", split ? "split" : "single");
      out.put("populate_seconds", round((System.nanoTime() - p0) / 1e9, 3));
      checkPopulated(kvs, n);
      // settle the heap: without this, the collector digests the bulk load (a concurrent cycle
      // over the whole old generation) while the first measured transactions run
      System.gc();

      boolean[] enabled = new boolean[n];
      Arrays.fill(enabled, true);
      Random rnd = new Random(seed);
      for (int i = 0; i < warmup; i++) {
        toggle(kvs, rnd, enabled);
      }
      long[] ns = new long[txns];
      long lastSeq = -1;
      GcCounter gc = new GcCounter();
      JitCounter jit = new JitCounter();
      FaultCounter faults = new FaultCounter();
      StealCounter steal = new StealCounter();
      EngineCpu cpu = new EngineCpu();
      for (int i = 0; i < txns; i++) {
        long t0 = System.nanoTime();
        lastSeq = toggle(kvs, rnd, enabled);
        ns[i] = System.nanoTime() - t0;
      }
      long engineCpuNs = cpu.elapsedNanos();
      long engineAlloc = cpu.allocatedBytes();
      gc.putInto(out);
      jit.putInto(out);
      faults.putInto(out);
      steal.putInto(out);
      Arrays.sort(ns);
      double sum = 0;
      for (long x : ns) {
        sum += x;
      }
      out.put("txns", txns);
      out.put("warmup", warmup);
      out.put("mean_us", round(sum / txns / 1e3, 1));
      out.put("p50_us", round(percentile(ns, 0.50) / 1e3, 1));
      out.put("p99_us", round(percentile(ns, 0.99) / 1e3, 1));
      out.put("max_us", round(ns[ns.length - 1] / 1e3, 1));
      out.put("engine_cpu_mean_us", engineCpuNs < 0 ? -1 : round(engineCpuNs / 1e3 / txns, 1));
      out.put("engine_alloc_bytes_per_txn", engineAlloc < 0 ? -1 : engineAlloc / txns);
      out.put("ops_per_txn", executedOps(kvs, lastSeq));
      out.put("heap_mb", retainedHeapMb());
    }
    return out;
  }

  static long toggle(KVScheduler kvs, Random rnd, boolean[] enabled) {
    int i = rnd.nextInt(enabled.length);
    enabled[i] = !enabled[i];
    return kvs.startNBTransaction()
        .setValue(MockModel.ifKey(i), MockModel.iface(i, enabled[i]))
        .commit();
  }

  /** Nearest-rank percentile of sorted samples. */
  static long percentile(long[] sorted, double p) {
    int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  static Object executedOps(KVScheduler kvs, long seq) {
    return kvs.recordedTransaction(seq)
        .map(RecordedTxn::executed)
        .map(List::size)
        .map(Object.class::cast)
        .orElse("unrecorded");
  }

  /** Sanity check: the BD and its last binding are CONFIGURED. */
  static void checkPopulated(KVScheduler kvs, int n) {
    var st = kvs.valueStatus(MockModel.BD_KEY);
    String last = MockModel.bindingKey(MockModel.BD_NAME, MockModel.ifName(n - 1));
    var bindingState = st.derivedStatus(last).map(s -> s.state()).orElse(ValueState.NONEXISTENT);
    if (st.state() != ValueState.CONFIGURED || bindingState != ValueState.CONFIGURED) {
      System.err.println(
          "kvs-bench: WARNING: graph not fully configured: BD "
              + st.state()
              + ", "
              + last
              + " "
              + bindingState);
    }
  }

  static long retainedHeapMb() {
    System.gc();
    long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    return Math.round(used / (1024.0 * 1024.0));
  }

  static double round(double v, int decimals) {
    double f = Math.pow(10, decimals);
    return Math.round(v * f) / f;
  }

  /**
   * CPU time consumed by the scheduler's engine thread (named {@link MockModel#ENGINE_THREAD})
   * since construction; less sensitive than wall time to other load on the machine. -1 when the JVM
   * cannot measure thread CPU time.
   */
  static final class EngineCpu {
    private final ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    private final long threadId;
    private final long start;
    private final long alloc0;

    EngineCpu() {
      long id = -1;
      for (Thread t : Thread.getAllStackTraces().keySet()) {
        if (t.getName().equals(MockModel.ENGINE_THREAD)) {
          id = t.getId();
        }
      }
      threadId = id;
      start = id < 0 || !mx.isThreadCpuTimeSupported() ? -1 : mx.getThreadCpuTime(id);
      alloc0 =
          id >= 0
                  && mx instanceof com.sun.management.ThreadMXBean
                  && ((com.sun.management.ThreadMXBean) mx).isThreadAllocatedMemorySupported()
              ? ((com.sun.management.ThreadMXBean) mx).getThreadAllocatedBytes(id)
              : -1;
    }

    long elapsedNanos() {
      if (start < 0) {
        return -1;
      }
      long now = mx.getThreadCpuTime(threadId);
      return now < 0 ? -1 : now - start;
    }

    /** Bytes allocated by the engine thread since construction, or -1. */
    long allocatedBytes() {
      if (threadId < 0 || alloc0 < 0) {
        return -1;
      }
      long now = ((com.sun.management.ThreadMXBean) mx).getThreadAllocatedBytes(threadId);
      return now < 0 ? -1 : now - alloc0;
    }
  }

  /** GC collections and time between construction and {@link #putInto}. */
  static final class GcCounter {
    private final long count0;
    private final long ms0;

    GcCounter() {
      long[] s = sample();
      count0 = s[0];
      ms0 = s[1];
    }

    private static long[] sample() {
      long c = 0;
      long t = 0;
      for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
        c += Math.max(0, b.getCollectionCount());
        t += Math.max(0, b.getCollectionTime());
      }
      return new long[] {c, t};
    }

    void putInto(Map<String, Object> out) {
      long[] s = sample();
      out.put("gc_count", s[0] - count0);
      out.put("gc_ms", s[1] - ms0);
    }
  }

  /**
   * Time the JIT compilers spent compiling (all compiler threads together, so it can exceed the
   * wall time) between construction and {@link #putInto}; -1 when the JVM does not measure it.
   */
  private static final class JitCounter {
    private final long ms0 = totalMs();

    static long totalMs() {
      CompilationMXBean b = ManagementFactory.getCompilationMXBean();
      return b == null || !b.isCompilationTimeMonitoringSupported()
          ? -1
          : b.getTotalCompilationTime();
    }

    long elapsedMs() {
      return ms0 < 0 ? -1 : totalMs() - ms0;
    }

    void putInto(Map<String, Object> out) {
      out.put("jit_ms", elapsedMs());
    }
  }

  /**
   * Page faults of the whole process (minor + major, from {@code /proc/self/stat}) between
   * construction and {@link #putInto}: each is the first touch of a page of memory, e.g. of heap
   * the collector committed but never used. Omitted where {@code /proc} is not available.
   */
  private static final class FaultCounter {
    private final long faults0 = total();

    /** Minor + major faults of this process so far, or -1. */
    static long total() {
      try {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        // fields after the command name (which is in parentheses and may contain spaces)
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[7]) + Long.parseLong(f[9]); // minflt, majflt (fields 10, 12)
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }

    void putInto(Map<String, Object> out) {
      long now = total();
      if (faults0 >= 0 && now >= 0) {
        out.put("page_faults", now - faults0);
      }
    }
  }

  /**
   * CPU time of the process's threads by kind between construction and {@link #putInto}, from
   * {@code /proc/self/task/TID/schedstat} (nanoseconds on a core, then nanoseconds runnable but
   * waiting for one): {@code cpu_all_seconds} (every thread), {@code cpu_jit_seconds} (the JIT's
   * compiler threads), {@code cpu_gc_seconds} (the collector's threads and the VM thread, which
   * runs the pauses) and {@code engine_wait_seconds}, the time the engine thread was ready to run
   * but had no core. Together they show when the measured section had the machine to itself and
   * when the engine shared its cores with the JIT and the collector. Linux only; nothing is
   * reported where the files cannot be read. A thread that ended during the section is not counted.
   */
  static final class ThreadCpu {
    private final Map<String, long[]> start = read();

    /** Thread name (as the kernel keeps it) of each thread id, with its {cpu ns, wait ns}. */
    private static Map<String, long[]> read() {
      Map<String, long[]> out = new LinkedHashMap<>();
      Path tasks = Path.of("/proc/self/task");
      try (var dirs = Files.newDirectoryStream(tasks)) {
        for (Path d : dirs) {
          try {
            String name = Files.readString(d.resolve("comm")).trim();
            String[] f = Files.readString(d.resolve("schedstat")).trim().split(" ");
            out.put(
                d.getFileName() + " " + name,
                new long[] {Long.parseLong(f[0]), Long.parseLong(f[1])});
          } catch (IOException | RuntimeException e) {
            // the thread ended while listed: not counted
          }
        }
      } catch (IOException | RuntimeException e) {
        return null;
      }
      return out;
    }

    private static boolean isJit(String name) {
      return name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre");
    }

    private static boolean isGc(String name) {
      return name.startsWith("GC Thread")
          || name.startsWith("G1 ")
          || name.equals("VM Thread")
          || name.startsWith("ParGC");
    }

    void putInto(Map<String, Object> out) {
      Map<String, long[]> now = read();
      if (start == null || now == null) {
        return;
      }
      String engine =
          MockModel.ENGINE_THREAD.substring(
              0, Math.min(15, MockModel.ENGINE_THREAD.length())); // the kernel keeps 15 characters
      long all = 0;
      long jit = 0;
      long gc = 0;
      long engineWait = -1;
      for (Map.Entry<String, long[]> e : now.entrySet()) {
        long[] before = start.getOrDefault(e.getKey(), new long[2]); // new thread: from zero
        long cpu = e.getValue()[0] - before[0];
        String name = e.getKey().substring(e.getKey().indexOf(' ') + 1);
        all += cpu;
        if (isJit(name)) {
          jit += cpu;
        } else if (isGc(name)) {
          gc += cpu;
        } else if (name.equals(engine)) {
          engineWait = e.getValue()[1] - before[1];
        }
      }
      out.put("cpu_all_seconds", round(all / 1e9, 3));
      out.put("cpu_jit_seconds", round(jit / 1e9, 3));
      out.put("cpu_gc_seconds", round(gc / 1e9, 3));
      if (engineWait >= 0) {
        out.put("engine_wait_seconds", round(engineWait / 1e9, 3));
      }
    }
  }

  /**
   * The share of the machine's CPU time (all cores) that the hypervisor gave to other guests over
   * the measured section: {@code steal} of {@code /proc/stat} against the sum of its first eight
   * columns. Linux only; nothing is reported where the file cannot be read.
   */
  static final class StealCounter {
    private final CpuTicks start = CpuTicks.read();

    void putInto(Map<String, Object> out) {
      CpuTicks now = CpuTicks.read();
      if (start != null && now != null) {
        long total = now.total() - start.total();
        out.put(
            "steal_pct",
            total <= 0 ? 0.0 : round(100.0 * (now.steal() - start.steal()) / total, 1));
      }
    }
  }

  // ---------------------------------------------------------------------------------------------

  static String toJson(Map<String, Object> m) {
    StringBuilder sb = new StringBuilder("{");
    boolean first = true;
    for (Map.Entry<String, Object> e : m.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      quote(sb, e.getKey());
      sb.append(':');
      Object v = e.getValue();
      if (v instanceof Double d) {
        sb.append(
            d == Math.rint(d) && Math.abs(d) < 1e15
                ? String.valueOf(d.longValue())
                : String.format(Locale.ROOT, "%s", d));
      } else if (v instanceof Number || v instanceof Boolean) {
        sb.append(v);
      } else {
        quote(sb, String.valueOf(v));
      }
    }
    return sb.append('}').toString();
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
