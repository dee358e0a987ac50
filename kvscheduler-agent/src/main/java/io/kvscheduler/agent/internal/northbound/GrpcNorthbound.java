package io.kvscheduler.agent.internal.northbound;

import com.google.protobuf.Descriptors.FileDescriptor;
import io.grpc.ServerInterceptor;
import io.kvscheduler.agent.internal.metrics.GrpcRequestCounter;
import io.kvscheduler.agent.spi.ConfigDomain;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.agent.spi.NotificationHub;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.grpc.GrpcApi;
import io.kvscheduler.grpc.GrpcServer;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.util.List;

/**
 * The gRPC server as a northbound source: values given through it are data source {@code grpc} of
 * the orchestrator, one transaction per request. Starting gives no first resync (the source has no
 * values until a client sends some); closing stops the server gracefully.
 */
public final class GrpcNorthbound implements NorthboundSource {
  private final GrpcServer server;
  private AutoCloseable following;

  public GrpcNorthbound(
      GrpcSettings settings, KVScheduler kvs, ModelRegistry models, Northbound northbound) {
    this(settings, kvs, models, northbound, List.of());
  }

  /**
   * @param interceptors run for every call (e.g. a {@link GrpcRequestCounter})
   */
  public GrpcNorthbound(
      GrpcSettings settings,
      KVScheduler kvs,
      ModelRegistry models,
      Northbound northbound,
      List<ServerInterceptor> interceptors) {
    this(settings, kvs, models, northbound, interceptors, false, List.of(), List.of());
  }

  /**
   * @param interceptors run for every call (e.g. a {@link GrpcRequestCounter})
   * @param readOnly refuse every call that may change the configuration ({@code --read-only})
   * @param modelFiles the plugins' proto files (for reflection and the model list)
   * @param configDomains the plugins' own domains of the configurator's Config
   */
  public GrpcNorthbound(
      GrpcSettings settings,
      KVScheduler kvs,
      ModelRegistry models,
      Northbound northbound,
      List<ServerInterceptor> interceptors,
      boolean readOnly,
      List<FileDescriptor> modelFiles,
      List<ConfigDomain> configDomains) {
    this.server =
        new GrpcServer(
            settings,
            new GrpcApi(
                kvs,
                models,
                northbound,
                modelFiles,
                configDomains,
                settings.token(),
                GrpcApi.Limits.DEFAULT,
                readOnly),
            interceptors);
  }

  @Override
  public String name() {
    return "grpc";
  }

  @Override
  public void start() throws IOException {
    server.start();
  }

  /** The port listened on. */
  public int port() {
    return server.port();
  }

  /** The services (e.g. to publish notifications to {@code Notify}). */
  public GrpcApi api() {
    return server.api();
  }

  /** Streams the notifications the plugins publish into {@code hub} to {@code Notify}. */
  public synchronized GrpcNorthbound follow(NotificationHub hub) {
    following = server.api().follow(hub);
    return this;
  }

  @Override
  public synchronized void close() {
    try {
      if (following != null) {
        following.close();
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot stop following the plugins' notifications", e);
    } finally {
      server.close(); // stopped even when the notifications could not be left
    }
  }
}
