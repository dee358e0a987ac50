package io.kvscheduler.agent.internal.rest;

import com.sun.management.ThreadMXBean;
import io.kvscheduler.api.Dependency;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.KeyValuePair;
import io.kvscheduler.api.Txn;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What one {@code GET /scheduler/status} answer for every value costs the server, without HTTP: a
 * graph shaped like the W1 workload's ({@code n} interfaces, one bridge domain listing them all and
 * one derived binding per interface) is built on a no-op southbound, then the answer's body is
 * written {@code reads} times into a stream that only counts bytes, on the calling thread. Prints
 * one JSON line per answer: {@code cpu_ms} (CPU time of the thread that wrote it), {@code alloc_mb}
 * (bytes it allocated) and {@code body_mb} (bytes written). CPU time and allocation hardly depend
 * on what else runs on the machine, so the line is comparable between builds on a busy machine.
 *
 * <p>A plain program in the REST server's test sources rather than a benchmark of the benchmarks
 * module: the JSON writers it measures are internal to the agent.
 *
 * <pre>
 * ./mvnw -B -q -pl kvscheduler-agent -am test-compile dependency:build-classpath \
 *     -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
 * java -cp "kvscheduler-agent/target/test-classes:kvscheduler-agent/target/classes:$(cat \
 *     kvscheduler-agent/target/test-classpath.txt)" \
 *     io.kvscheduler.agent.internal.rest.StatusAnswerProbe 100000 15
 * </pre>
 */
public final class StatusAnswerProbe {
  private static final String IF_PREFIX = "config/mock/v1/interfaces/";
  private static final String BD_PREFIX = "config/mock/v1/bridge-domain/";
  private static final String BINDING_PREFIX = "mock/bd/";

  private record Interface(String name, String type, boolean enabled) {}

  private record BridgeDomain(String name, List<String> interfaces) {}

  private record Binding(String bridgeDomain, String iface) {}

  private StatusAnswerProbe() {}

  public static void main(String[] args) throws IOException {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int reads = args.length > 1 ? Integer.parseInt(args[1]) : 15;
    ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long self = Thread.currentThread().getId();
    long[] bytes = {0};
    OutputStream counting =
        new OutputStream() {
          @Override
          public void write(int b) {
            bytes[0]++;
          }

          @Override
          public void write(byte[] b, int off, int len) {
            bytes[0] += len;
          }
        };
    try (KVScheduler kvs = newScheduler()) {
      populate(kvs, n).commit();
      System.gc();
      Response answer =
          Response.jsonStream(
              200,
              json ->
                  SchedulerJson.writeStatuses(
                      json, each -> kvs.forEachValueStatus(KeySelector.any(), each)));
      for (int i = 1; i <= reads; i++) {
        bytes[0] = 0;
        long cpu0 = mx.getThreadCpuTime(self);
        long alloc0 = mx.getThreadAllocatedBytes(self);
        answer.body().writeTo(counting);
        long cpu = mx.getThreadCpuTime(self) - cpu0;
        long alloc = mx.getThreadAllocatedBytes(self) - alloc0;
        System.out.printf(
            Locale.ROOT,
            "{\"n\":%d,\"read\":%d,\"cpu_ms\":%.1f,\"alloc_mb\":%.1f,\"body_mb\":%.1f}%n",
            n,
            i,
            cpu / 1e6,
            alloc / 1e6,
            bytes[0] / 1e6);
      }
    }
  }

  /** A scheduler with the three descriptors of the W1 graph; every southbound call does nothing. */
  private static KVScheduler newScheduler() {
    KVScheduler kvs = KVScheduler.builder().printTxnSummary(false).build();
    kvs.registerDescriptors(
        KVDescriptor.builder("mock-interface", Interface.class)
            .nbKeyPrefix(IF_PREFIX)
            .create((key, v) -> null)
            .update((key, oldV, newV, meta) -> meta)
            .delete((key, v, meta) -> {})
            .build(),
        KVDescriptor.builder("mock-bridge-domain", BridgeDomain.class)
            .nbKeyPrefix(BD_PREFIX)
            .create((key, v) -> null)
            .update((key, oldV, newV, meta) -> meta)
            .delete((key, v, meta) -> {})
            .derivedValues(
                (key, bd) -> {
                  List<KeyValuePair> out = new ArrayList<>(bd.interfaces().size());
                  for (String name : bd.interfaces()) {
                    out.add(
                        KeyValuePair.of(
                            BINDING_PREFIX + bd.name() + "/interface/" + name,
                            new Binding(bd.name(), name)));
                  }
                  return out;
                })
            .build(),
        KVDescriptor.builder("mock-bd-interface", Binding.class)
            .keySelector(KeySelector.prefix(BINDING_PREFIX))
            .create((key, v) -> null)
            .delete((key, v, meta) -> {})
            .dependencies((key, b) -> List.of(Dependency.onKey("interface", IF_PREFIX + b.iface())))
            .build());
    return kvs;
  }

  /** {@code n} interfaces (enabled) plus the bridge domain listing them all. */
  private static Txn populate(KVScheduler kvs, int n) {
    Txn txn = kvs.startNBTransaction();
    List<String> names = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      String name = "if" + i;
      txn.setValue(IF_PREFIX + name, new Interface(name, "SOFTWARE_LOOPBACK", true));
      names.add(name);
    }
    txn.setValue(BD_PREFIX + "bd1", new BridgeDomain("bd1", List.copyOf(names)));
    return txn;
  }
}
