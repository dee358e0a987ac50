package io.kvscheduler.grpc;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.grpc.ServerBuilder;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.kvscheduler.agent.spi.ConfigDomain;
import io.kvscheduler.agent.spi.ConfirmedCommits;
import io.kvscheduler.agent.spi.ModelRegistry;
import io.kvscheduler.agent.spi.Northbound;
import io.kvscheduler.agent.spi.NotificationHub;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.grpc.internal.BearerToken;
import io.kvscheduler.grpc.internal.ConfiguratorServiceImpl;
import io.kvscheduler.grpc.internal.ConfirmWithinHeader;
import io.kvscheduler.grpc.internal.DryRun;
import io.kvscheduler.grpc.internal.GrpcSource;
import io.kvscheduler.grpc.internal.ManagerServiceImpl;
import io.kvscheduler.grpc.internal.MetaServiceImpl;
import io.kvscheduler.grpc.internal.NotificationBuffer;
import io.kvscheduler.grpc.internal.PluginDomains;
import io.kvscheduler.grpc.internal.ProtoModels;
import io.kvscheduler.grpc.internal.ReadOnly;
import io.kvscheduler.grpc.internal.SeqNumHeader;
import io.kvscheduler.grpc.internal.StatusStreams;
import io.kvscheduler.grpc.proto.configurator.Notification;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's gRPC services, ready to be added to a server: {@code
 * ligato.configurator.ConfiguratorService}, {@code ligato.generic.ManagerService} and {@code
 * MetaService}, and server reflection (v1 and v1alpha). Values given through them are delivered to
 * the northbound as data source {@value GrpcSource#NAME}, one transaction per request.
 *
 * <p>Plugins' domains ({@link ConfigDomain}, such as the mock plugins' {@code mock_config = 100})
 * are fields of {@code ligato.configurator.Config} that the wire contract does not declare: the
 * configurator reads them from requests and writes them into answers at the plugins' numbers, and
 * reflection describes {@code ligato/configurator/configurator.proto} with them declared (Config
 * with the plugins' fields, importing the plugins' files), as if the contract had them.
 *
 * <p>Close it to end the open streams ({@code Notify}, {@code Subscribe}).
 */
public final class GrpcApi implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GrpcApi.class);

  /** The fields of {@code Notification} by the full name of their domain's message. */
  private static final Map<String, FieldDescriptor> DOMAINS =
      Notification.getDescriptor().getFields().stream()
          .filter(f -> f.getJavaType() == FieldDescriptor.JavaType.MESSAGE)
          .collect(Collectors.toMap(f -> f.getMessageType().getFullName(), Function.identity()));

  /** Notifications kept for {@code Notify} to replay (as vpp-agent). */
  public static final int NOTIFICATION_BUFFER = 10_000;

  /** Status changes waiting for a {@code Subscribe} client before its stream is ended. */
  public static final int SUBSCRIBE_QUEUE_LIMIT = 10_000;

  /**
   * Bounds of the streams.
   *
   * @param notificationBuffer notifications kept for {@code Notify} to replay
   * @param subscribeQueue status changes waiting for a {@code Subscribe} client before its stream
   *     is ended with {@code RESOURCE_EXHAUSTED}
   */
  public record Limits(int notificationBuffer, int subscribeQueue) {
    /** vpp-agent's replay buffer, and as many changes waiting per subscriber. */
    public static final Limits DEFAULT = new Limits(NOTIFICATION_BUFFER, SUBSCRIBE_QUEUE_LIMIT);

    public Limits {
      if (notificationBuffer < 1 || subscribeQueue < 1) {
        throw new IllegalArgumentException("stream limits must be positive");
      }
    }
  }

  private final NotificationBuffer notifications;
  private final StatusStreams statusStreams;
  private final ExecutorService streamExecutor;
  private final ConfiguratorServiceImpl configurator;
  private final ManagerServiceImpl manager;
  private final MetaServiceImpl meta;
  private final PluginDomains domains;
  private final GrpcSource source;
  private final List<ServerInterceptor> interceptors = new ArrayList<>();
  private final Set<String> unplaced = ConcurrentHashMap.newKeySet();

  /**
   * @param kvs the scheduler (value states, dumps)
   * @param registry the models
   * @param northbound where requests' values are delivered
   * @param modelFiles proto files of the plugins' messages ({@link
   *     io.kvscheduler.agent.spi.AgentPlugin#protoFiles}), for reflection and the model list
   * @param token bearer token calls must carry, or null
   */
  public GrpcApi(
      KVScheduler kvs,
      ModelRegistry registry,
      Northbound northbound,
      List<FileDescriptor> modelFiles,
      String token) {
    this(kvs, registry, northbound, modelFiles, token, Limits.DEFAULT);
  }

  /** Services with the stream bounds of {@code limits}. */
  public GrpcApi(
      KVScheduler kvs,
      ModelRegistry registry,
      Northbound northbound,
      List<FileDescriptor> modelFiles,
      String token,
      Limits limits) {
    this(kvs, registry, northbound, modelFiles, token, limits, false);
  }

  /**
   * Services with the stream bounds of {@code limits}, read-only when {@code readOnly}: every call
   * that may change the configuration ({@code ConfiguratorService.Update} and {@code Delete},
   * {@code ManagerService.SetConfig}) is refused with {@code PERMISSION_DENIED} naming the flag
   * {@code --read-only}; reads (get, dump, notify, subscribe, models, reflection) are served.
   */
  public GrpcApi(
      KVScheduler kvs,
      ModelRegistry registry,
      Northbound northbound,
      List<FileDescriptor> modelFiles,
      String token,
      Limits limits,
      boolean readOnly) {
    this(kvs, registry, northbound, modelFiles, List.of(), token, limits, readOnly);
  }

  /**
   * Services that also read and write the plugins' domains of the configurator's Config.
   *
   * @param configDomains the plugins' domains ({@link
   *     io.kvscheduler.agent.spi.AgentPlugin#configDomain})
   * @throws IllegalArgumentException when a domain's field number or name is one of Config's or of
   *     another domain
   * @see #GrpcApi(KVScheduler, ModelRegistry, Northbound, List, String, Limits, boolean)
   */
  public GrpcApi(
      KVScheduler kvs,
      ModelRegistry registry,
      Northbound northbound,
      List<FileDescriptor> modelFiles,
      List<ConfigDomain> configDomains,
      String token,
      Limits limits,
      boolean readOnly) {
    this.domains = new PluginDomains(configDomains);
    this.notifications = new NotificationBuffer(limits.notificationBuffer());
    ProtoModels models =
        new ProtoModels(
            registry,
            Stream.concat(
                    modelFiles.stream(), configDomains.stream().map(d -> d.configData().getFile()))
                .toList());
    this.source = new GrpcSource(northbound);
    this.streamExecutor =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "kvs-grpc-stream");
              t.setDaemon(true);
              return t;
            });
    this.statusStreams =
        new StatusStreams(kvs, northbound::desired, limits.subscribeQueue(), streamExecutor);
    this.configurator = new ConfiguratorServiceImpl(kvs, models, domains, source, notifications);
    this.manager = new ManagerServiceImpl(kvs, models, source, statusStreams);
    this.meta = new MetaServiceImpl(models);
    interceptors.add(new SeqNumHeader());
    interceptors.add(new DryRun());
    interceptors.add(new ConfirmWithinHeader());
    if (readOnly) {
      interceptors.add(new ReadOnly()); // after the token check: a caller is known first
    }
    if (token != null) {
      interceptors.add(new BearerToken(token)); // added last: runs first
    }
  }

  /**
   * Takes the requests that change values ({@code SetConfig}, {@code Update}, {@code Delete}) with
   * the request metadata {@code confirm-within} (our extension; {@code 30s}, at most {@code 1h}) as
   * confirmed commits of {@code confirmations}: applied at once, rolled back unless confirmed in
   * time. Without it, such a request is refused with {@code INVALID_ARGUMENT}. Call before the
   * server starts.
   */
  public GrpcApi confirmations(ConfirmedCommits confirmations) {
    source.confirmations(confirmations);
    return this;
  }

  /**
   * Adds the services (and reflection) to {@code server}. Reflection describes the configurator
   * with the plugins' domains in Config.
   */
  public <T extends ServerBuilder<T>> T addTo(T server) {
    ServerInterceptor[] chain = interceptors.toArray(ServerInterceptor[]::new);
    server.addService(
        ServerInterceptors.intercept(
            describedBy(configurator.bindService(), domains.file()), chain));
    server.addService(ServerInterceptors.intercept(manager, chain));
    server.addService(ServerInterceptors.intercept(meta, chain));
    server.addService(ServerInterceptors.intercept(ProtoReflectionServiceV1.newInstance(), chain));
    @SuppressWarnings("deprecation") // v1alpha: what vpp-agent's clients (agentctl) ask
    var alpha = ProtoReflectionService.newInstance();
    server.addService(ServerInterceptors.intercept(alpha, chain));
    return server;
  }

  /** {@code service} with reflection describing it by {@code file} (which defines it too). */
  private static ServerServiceDefinition describedBy(
      ServerServiceDefinition service, FileDescriptor file) {
    ServiceDescriptor original = service.getServiceDescriptor();
    ServiceDescriptor.Builder described =
        ServiceDescriptor.newBuilder(original.getName())
            .setSchemaDescriptor((ProtoFileDescriptorSupplier) () -> file);
    original.getMethods().forEach(described::addMethod);
    ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(described.build());
    service.getMethods().forEach(m -> addMethod(out, m));
    return out.build();
  }

  private static <Q, R> void addMethod(
      ServerServiceDefinition.Builder out, ServerMethodDefinition<Q, R> method) {
    out.addMethod(method);
  }

  /**
   * Publishes a notification to the {@code Notify} streams (kept in the replay buffer): a {@code
   * ligato.configurator.Notification}, or a domain's notification (such as {@code
   * ligato.linux.Notification}) that is put in the field of its message type. A notification of a
   * type without a field is not streamed (logged once per type).
   */
  public void publish(Message notification) {
    if (notification instanceof Notification n) {
      notifications.publish(n);
      return;
    }
    String type = notification.getDescriptorForType().getFullName();
    FieldDescriptor field = DOMAINS.get(type);
    if (field == null) {
      if (unplaced.add(type)) {
        LOG.warn(
            "notifications of {} are not streamed: ligato.configurator.Notification has no field"
                + " of that type",
            type);
      }
      return;
    }
    Notification.Builder n = Notification.newBuilder();
    Message.Builder domain = n.newBuilderForField(field);
    if (domain.getDefaultInstanceForType().getClass().isInstance(notification)) {
      n.setField(field, notification);
    } else {
      try { // the same message type from another class (e.g. a DynamicMessage)
        n.setField(field, domain.mergeFrom(notification.toByteString()).build());
      } catch (InvalidProtocolBufferException e) {
        throw new IllegalArgumentException("cannot read the notification " + type, e);
      }
    }
    notifications.publish(n.build());
  }

  /**
   * Streams the notifications published into {@code hub} (the plugins' notification sink) to {@code
   * Notify}; close the returned handle to stop.
   */
  public AutoCloseable follow(NotificationHub hub) {
    return hub.subscribe(this::publish);
  }

  /** Open {@code Notify} and {@code Subscribe} streams. */
  public int openStreams() {
    return notifications.streams() + statusStreams.streams();
  }

  /** Ends the open streams with {@code UNAVAILABLE}. */
  @Override
  public void close() {
    notifications.close();
    statusStreams.close();
    streamExecutor.shutdown();
  }
}
