package io.kvscheduler.agent.internal;

import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.grpc.GrpcApi;
import io.kvscheduler.grpc.GrpcServer;
import io.kvscheduler.grpc.GrpcSettings;
import java.io.IOException;
import java.util.List;

/**
 * The gRPC server as a northbound source: values given through it are data source {@code grpc}
 * of the orchestrator, one transaction per request. Starting gives no first resync (the source
 * has no values until a client sends some); closing stops the server gracefully.
 */
public final class GrpcNorthbound implements NorthboundSource {
  private final GrpcServer server;

  public GrpcNorthbound(GrpcSettings settings, KVScheduler kvs, ModelRegistry models,
      Northbound northbound) {
    this.server = new GrpcServer(settings,
        new GrpcApi(kvs, models, northbound, List.of(), settings.token()));
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

  @Override
  public void close() {
    server.close();
  }
}
