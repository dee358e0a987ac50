package io.kvscheduler.grpc;

import io.grpc.Server;
import io.grpc.ServerInterceptor;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gRPC server of the agent (grpc-java on Netty): the {@link GrpcApi} services on the address of
 * {@link GrpcSettings}, with TLS when a certificate is given and the settings' message size limit.
 *
 * <p>{@link #close} stops gracefully: no new calls, open streams ended, then up to {@link
 * #GRACE_SECONDS} s for the calls running to finish before they are cancelled.
 */
public final class GrpcServer implements AutoCloseable {
  /** How long a stop waits for running calls. */
  public static final int GRACE_SECONDS = 5;

  private static final Logger LOG = LoggerFactory.getLogger(GrpcServer.class);

  private final GrpcSettings settings;
  private final GrpcApi api;
  private final List<ServerInterceptor> interceptors;
  private Server server;

  public GrpcServer(GrpcSettings settings, GrpcApi api) {
    this(settings, api, List.of());
  }

  /**
   * @param interceptors run for every call of every service, before the services' own ones (the
   *     first given runs first)
   */
  public GrpcServer(GrpcSettings settings, GrpcApi api, List<ServerInterceptor> interceptors) {
    this.settings = settings;
    this.api = api;
    this.interceptors = List.copyOf(interceptors);
  }

  /**
   * Starts listening.
   *
   * @throws IOException when the address cannot be bound (in use, unknown host)
   */
  public synchronized void start() throws IOException {
    InetSocketAddress at = settings.socketAddress();
    if (at.isUnresolved()) {
      at = new InetSocketAddress(at.getHostString(), at.getPort());
      if (at.isUnresolved()) {
        throw new IOException("gRPC address " + settings.address() + ": unknown host");
      }
    }
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(at).maxInboundMessageSize(settings.maxMessageBytes());
    if (settings.certFile() != null) {
      b.useTransportSecurity(settings.certFile().toFile(), settings.keyFile().toFile());
    }
    api.addTo(b);
    // the builder runs the interceptor added last first
    for (int i = interceptors.size() - 1; i >= 0; i--) {
      b.intercept(interceptors.get(i));
    }
    try {
      server = b.build().start();
    } catch (IOException e) {
      throw new IOException(
          "gRPC server cannot listen on " + settings.address() + ": " + e.getMessage(), e);
    }
    LOG.info(
        "gRPC server listening on {} ({}{})",
        server.getListenSockets(),
        settings.certFile() != null ? "TLS" : "plaintext",
        settings.token() != null ? ", bearer token required" : "");
    warnIfExposed(at);
  }

  /**
   * Warns when the server listens beyond loopback without a bearer token (anyone who reaches the
   * port may change the configuration), or with a token over plaintext (anyone on the path may read
   * the token).
   */
  private void warnIfExposed(InetSocketAddress at) {
    if (at.getAddress() != null && at.getAddress().isLoopbackAddress()) {
      return;
    }
    if (settings.token() == null) {
      LOG.warn(
          "gRPC server listens on {}, beyond loopback, without a bearer token: whoever reaches the"
              + " port can change the configuration (set one with --rest-token-file or"
              + " KVS_REST_TOKEN, or listen on loopback: --grpc :PORT)",
          settings.address());
    } else if (settings.certFile() == null) {
      LOG.warn(
          "gRPC server listens on {}, beyond loopback, in plaintext: the bearer token travels"
              + " unencrypted (give grpc.conf cert-file and key-file, or --rest-tls-cert and"
              + " --rest-tls-key)",
          settings.address());
    }
  }

  /** The port listened on (useful with port 0). */
  public synchronized int port() {
    if (server == null) {
      throw new IllegalStateException("gRPC server not started");
    }
    return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
  }

  /** The services. */
  public GrpcApi api() {
    return api;
  }

  @Override
  public synchronized void close() {
    if (server == null) {
      api.close();
      return;
    }
    server.shutdown();
    api.close();
    try {
      if (!server.awaitTermination(GRACE_SECONDS, TimeUnit.SECONDS)) {
        LOG.warn("gRPC calls still running after {} s are cancelled", GRACE_SECONDS);
        server.shutdownNow().awaitTermination(GRACE_SECONDS, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    LOG.info("gRPC server stopped");
  }
}
