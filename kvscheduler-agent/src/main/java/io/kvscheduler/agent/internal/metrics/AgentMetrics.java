package io.kvscheduler.agent.internal.metrics;

import io.kvscheduler.agent.internal.northbound.NorthboundProblems;
import io.kvscheduler.agent.internal.northbound.SourceEvents;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVDescriptor;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.OperationListener;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.QueueFullException;
import io.kvscheduler.api.RecordedTxn;
import io.kvscheduler.api.RecordedTxnOp;
import io.kvscheduler.api.TransactionException;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The agent's metrics in a Micrometer Prometheus registry, served at {@code GET /metrics}. Gathered
 * from the scheduler's public API: each scrape first reads the transactions recorded since the last
 * one (counts, durations, operations, retries), the value states and the queue length; the
 * scheduler's operation listener ({@link #operationListener}) times the southbound calls as they
 * are made; the northbound wrapper of {@link #northbound} counts deliveries and how long a
 * transaction waited in the queue. Transactions are counted once each, as long as they are still in
 * the history when the next scrape comes (the history keeps 24 h by default).
 *
 * <p>Metric names (Prometheus conventions):
 *
 * <ul>
 *   <li>{@code kvs_transactions_total{type, resync, result}} — processed transactions; result
 *       {@code ok} or {@code error} (an operation failed);
 *   <li>{@code kvs_transaction_duration_seconds} — processing time (histogram);
 *   <li>{@code kvs_queue_length} — transactions waiting in the queue;
 *   <li>{@code kvs_queue_wait_seconds} — time a northbound transaction waited in the queue;
 *   <li>{@code kvs_commits_refused_total} — commits refused because the queue was full;
 *   <li>{@code kvs_operations_total{descriptor, operation, result}} — executed operations;
 *   <li>{@code kvs_southbound_call_seconds{descriptor, call}} — southbound calls (create, update,
 *       delete, retrieve) of every registered descriptor, failed and overrun ones included
 *       (histogram);
 *   <li>{@code kvs_values{state}} — values per state (base and derived);
 *   <li>{@code kvs_retries_scheduled_total} — operations that failed and were scheduled for a
 *       retry;
 *   <li>{@code kvs_northbound_deliveries_total{source, kind}} — deliveries (resync or change) per
 *       northbound source;
 *   <li>{@code kvs_northbound_rejected_values_total{source, reason}} and {@code
 *       kvs_northbound_reconnects_total{source}} — counted by the sources that report them through
 *       {@link #valueRejected} and {@link #reconnected};
 *   <li>{@code kvs_grpc_requests_total{rpc, code}} — gRPC requests by method and status code
 *       ({@link #grpcRequest}, fed by {@link GrpcRequestCounter});
 *   <li>{@code kvs_grpc_streams} — open gRPC {@code Notify} and {@code Subscribe} streams ({@link
 *       #grpcStreams});
 *   <li>{@code kvs_northbound_problems{source}} — the rejected or ignored input listed now at
 *       {@code GET /northbound/problems}, per source ({@link #northboundProblems}).
 *   <li>{@code kvs_confirmed_commits_total{outcome}} — confirmed commits that ended: {@code
 *       confirmed}, {@code rolled_back} (deadline, probe or request), by {@link #commitEnded};
 *   <li>{@code kvs_confirmed_commit_pending} — 1 while a confirmed commit waits for its
 *       confirmation ({@link #commitPending}).
 *   <li>the JVM's and the process's metrics of Micrometer's binders: {@code jvm_memory_*}, {@code
 *       jvm_gc_*}, {@code jvm_threads_*}, {@code jvm_classes_*}, {@code process_cpu_usage}, {@code
 *       system_cpu_*}, {@code process_uptime_seconds}, {@code process_start_time_seconds}, {@code
 *       process_files_*}.
 * </ul>
 */
public final class AgentMetrics implements SourceEvents {
  /** The scheduler (set once by {@link #attach}). */
  private volatile KVScheduler kvs;

  private final Clock clock;
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Timer duration;
  private final Timer queueWait;
  private final Counter refused;
  private final Counter retries;
  private final Map<ValueState, AtomicLong> states = new EnumMap<>(ValueState.class);

  /** The last transaction counted. */
  private long lastSeq = -1;

  /** Listens to the JVM's collections: closed with the agent. */
  private final JvmGcMetrics gcMetrics = new JvmGcMetrics();

  /** Metrics of {@code kvs}, which was built without {@link #operationListener}. */
  public AgentMetrics(KVScheduler kvs, Clock clock) {
    this(clock);
    attach(kvs);
  }

  /**
   * Metrics of a scheduler not built yet: build it with {@link #operationListener}, then {@link
   * #attach} it.
   */
  public AgentMetrics(Clock clock) {
    this.clock = clock;
    new JvmMemoryMetrics().bindTo(registry);
    gcMetrics.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    duration =
        Timer.builder("kvs_transaction_duration")
            .description("Time a transaction took to process")
            .publishPercentileHistogram()
            .register(registry);
    queueWait =
        Timer.builder("kvs_queue_wait")
            .description("Time a northbound transaction waited in the queue")
            .publishPercentileHistogram()
            .register(registry);
    refused =
        Counter.builder("kvs_commits_refused")
            .description("Commits refused because the transaction queue was full")
            .register(registry);
    retries =
        Counter.builder("kvs_retries_scheduled")
            .description("Failed operations scheduled for a retry")
            .register(registry);
    for (ValueState s : ValueState.values()) {
      if (s == ValueState.NONEXISTENT) {
        continue;
      }
      AtomicLong n = new AtomicLong();
      states.put(s, n);
      Gauge.builder("kvs_values", n, AtomicLong::get)
          .tag("state", s.name())
          .description("Values per state")
          .register(registry);
    }
  }

  /**
   * Reads the metrics of {@code scheduler} from now on (once).
   *
   * @throws IllegalStateException if a scheduler is attached already
   */
  public synchronized void attach(KVScheduler scheduler) {
    if (kvs != null) {
      throw new IllegalStateException("metrics read a scheduler already");
    }
    kvs = scheduler;
    Gauge.builder("kvs_queue_length", scheduler, KVScheduler::queueLength)
        .description("Transactions waiting in the queue")
        .register(registry);
  }

  /**
   * The scheduler's operation listener ({@link
   * io.kvscheduler.api.KVSchedulerBuilder#operationListener}): times each southbound call ({@code
   * kvs_southbound_call_seconds{descriptor, call}}).
   */
  public OperationListener operationListener() {
    return new OperationListener() {
      @Override
      public void southboundCall(SouthboundCall call) {
        Timer.builder("kvs_southbound_call")
            .description("Southbound calls of descriptors")
            .tag("descriptor", call.descriptor())
            .tag("call", call.call().name().toLowerCase(Locale.ROOT))
            .publishPercentileHistogram()
            .register(registry)
            .record(call.duration());
      }
    };
  }

  /** Stops listening to the JVM's collections. */
  public void close() {
    gcMetrics.close();
  }

  /** Exports {@code kvs_grpc_streams}: the open gRPC streams {@code open} counts. */
  /** {@code kvs_confirmed_commit_pending}: 1 while {@code pending} says one is pending. */
  public void commitPending(java.util.function.BooleanSupplier pending) {
    Gauge.builder("kvs_confirmed_commit_pending", pending, p -> p.getAsBoolean() ? 1 : 0)
        .description("1 while a confirmed commit waits for its confirmation")
        .strongReference(true)
        .register(registry);
  }

  /**
   * Counts a confirmed commit that ended, in {@code kvs_confirmed_commits_total{outcome}}: {@code
   * confirmed} or {@code rolled_back}.
   */
  public void commitEnded(String outcome) {
    Counter.builder("kvs_confirmed_commits")
        .description("Confirmed commits that ended, by outcome")
        .tag("outcome", outcome)
        .register(registry)
        .increment();
  }

  public void grpcStreams(IntSupplier open) {
    Gauge.builder("kvs_grpc_streams", open, IntSupplier::getAsInt)
        .description("Open gRPC Notify and Subscribe streams")
        .strongReference(true) // nothing else holds the supplier
        .register(registry);
  }

  /** Exports {@code kvs_northbound_problems{source}}: the current problems of each source. */
  public void northboundProblems(NorthboundProblems problems) {
    for (String source : List.of("file", "etcd", "rest", "grpc")) {
      Gauge.builder("kvs_northbound_problems", problems, p -> p.count(source))
          .tag("source", source)
          .description("Rejected or ignored northbound input listed now, per source")
          .register(registry);
    }
  }

  /** The Prometheus text exposition, after reading what happened since the last scrape. */
  public synchronized String scrape() {
    collect();
    return registry.scrape();
  }

  /** Counts the transactions recorded since the last call and the current value states. */
  synchronized void collect() {
    if (kvs == null) {
      return; // no scheduler yet
    }
    List<RecordedTxn> history = kvs.transactionHistory();
    for (RecordedTxn t : history) {
      if (t.seqNum() <= lastSeq) {
        continue;
      }
      lastSeq = t.seqNum();
      boolean failed = false;
      for (RecordedTxnOp op : t.executed()) {
        boolean error = !op.newError().isEmpty();
        failed |= error;
        if (op.newState() == ValueState.RETRYING) {
          retries.increment();
        }
        String descriptor = kvs.descriptorForKey(op.key()).map(KVDescriptor::name).orElse("");
        Counter.builder("kvs_operations")
            .description("Executed operations")
            .tag("descriptor", descriptor)
            .tag("operation", op.operation().name())
            .tag("result", error ? "error" : op.is(RecordedTxnOp.Flag.NOOP) ? "noop" : "ok")
            .register(registry)
            .increment();
      }
      Counter.builder("kvs_transactions")
          .description("Processed transactions")
          .tag("type", t.type().jsonName())
          .tag("resync", t.resyncType().jsonName())
          .tag("result", failed ? "error" : "ok")
          .register(registry)
          .increment();
      duration.record(Duration.between(t.start(), t.stop()));
    }
    Map<ValueState, Long> counts = new EnumMap<>(ValueState.class);
    kvs.forEachValueStatus(
        KeySelector.any(),
        s -> {
          counts.merge(s.state(), 1L, Long::sum);
          for (ValueStatus d : s.derived()) {
            counts.merge(d.state(), 1L, Long::sum);
          }
        });
    states.forEach((s, n) -> n.set(counts.getOrDefault(s, 0L)));
  }

  /**
   * Counts a value a northbound source rejected ({@code malformed}, {@code unknown-model}, {@code
   * duplicate}, {@code unreadable}, {@code too-large}, {@code outside-directory}).
   */
  @Override
  public void valueRejected(String source, String reason) {
    Counter.builder("kvs_northbound_rejected_values")
        .description("Values a northbound source rejected")
        .tag("source", source)
        .tag("reason", reason)
        .register(registry)
        .increment();
  }

  /** Counts a reconnect of a northbound source (etcd). */
  @Override
  public void reconnected(String source) {
    Counter.builder("kvs_northbound_reconnects")
        .description("Reconnects of a northbound source")
        .tag("source", source)
        .register(registry)
        .increment();
  }

  /**
   * Counts a gRPC request by its full method name (e.g. {@code
   * ligato.configurator.ConfiguratorService/Update}) and status code ({@code OK}, {@code
   * UNAUTHENTICATED}, ...), when it ends.
   */
  public void grpcRequest(String rpc, String code) {
    Counter.builder("kvs_grpc_requests")
        .description("gRPC requests by method and status code")
        .tag("rpc", rpc)
        .tag("code", code)
        .register(registry)
        .increment();
  }

  /**
   * {@code northbound} counting deliveries per source and kind, commits refused because the queue
   * was full, and the time each delivered transaction waited in the queue.
   */
  public Northbound northbound(Northbound northbound) {
    return new Northbound() {
      @Override
      public CompletableFuture<Long> resync(String source, Map<String, Object> values) {
        return observe(source, "resync", () -> northbound.resync(source, values));
      }

      @Override
      public CompletableFuture<Long> change(String source, Map<String, Object> changes) {
        return observe(source, "change", () -> northbound.change(source, changes));
      }

      @Override
      public CompletableFuture<Long> resync(
          String source, Map<String, Object> values, Map<String, Map<String, String>> labels) {
        return observe(source, "resync", () -> northbound.resync(source, values, labels));
      }

      @Override
      public CompletableFuture<Long> change(
          String source, Map<String, Object> changes, Map<String, Map<String, String>> labels) {
        return observe(source, "change", () -> northbound.change(source, changes, labels));
      }

      @Override
      public Map<String, String> labels(String key) {
        return northbound.labels(key);
      }

      @Override
      public Plan planResync(String source, Map<String, Object> values) {
        return northbound.planResync(source, values); // delivers nothing: nothing to count
      }

      @Override
      public Plan planChange(String source, Map<String, Object> changes) {
        return northbound.planChange(source, changes);
      }

      @Override
      public Map<String, Object> desired() {
        return northbound.desired();
      }
    };
  }

  private CompletableFuture<Long> observe(
      String source, String kind, Supplier<CompletableFuture<Long>> delivery) {
    Counter.builder("kvs_northbound_deliveries")
        .description("Deliveries per northbound source")
        .tag("source", source)
        .tag("kind", kind)
        .register(registry)
        .increment();
    Instant committed = clock.instant();
    CompletableFuture<Long> f;
    try {
      f = delivery.get();
    } catch (RuntimeException e) {
      if (isQueueFull(e)) {
        refused.increment();
      }
      throw e;
    }
    f.whenComplete(
        (seq, error) -> {
          if (error != null && isQueueFull(error)) {
            refused.increment();
          }
          long s =
              seq != null
                  ? seq
                  : error != null && error.getCause() instanceof TransactionException te
                      ? te.seqNum()
                      : -1;
          if (s >= 0) {
            kvs.recordedTransaction(s)
                .ifPresent(
                    t -> {
                      Duration waited = Duration.between(committed, t.start());
                      queueWait.record(waited.isNegative() ? Duration.ZERO : waited);
                    });
          }
        });
    return f;
  }

  private static boolean isQueueFull(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof QueueFullException) {
        return true;
      }
    }
    return false;
  }
}
