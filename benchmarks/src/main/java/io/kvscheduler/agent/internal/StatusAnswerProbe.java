package io.kvscheduler.agent.internal;

import com.sun.management.ThreadMXBean;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.bench.MockModel;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * What one {@code GET /scheduler/status} answer for every value costs the server, without HTTP: the
 * W1 graph of {@code n} interfaces is built, then the answer's body is written {@code reads} times
 * into a stream that only counts bytes, on the calling thread. Prints one JSON line per answer:
 * {@code cpu_ms} (CPU time of the thread that wrote it), {@code alloc_mb} (bytes it allocated) and
 * {@code body_mb} (bytes written). CPU time and allocation hardly depend on what else runs on the
 * machine, so the line is comparable between builds on a busy machine. In the REST server's
 * package: the JSON writers are internal.
 *
 * <pre>
 * java -cp 'benchmarks/target/classes:benchmarks/target/lib/*' \
 *     io.kvscheduler.agent.internal.StatusAnswerProbe 100000 15
 * </pre>
 */
public final class StatusAnswerProbe {
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
    try (KVScheduler kvs = MockModel.newScheduler()) {
      MockModel.populateTxn(kvs, n).commit();
      System.gc();
      RestServer.Response answer =
          RestServer.Response.jsonStream(
              200,
              g ->
                  SchedulerJson.writeStatuses(
                      g, each -> kvs.forEachValueStatus(KeySelector.any(), each)));
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
}
