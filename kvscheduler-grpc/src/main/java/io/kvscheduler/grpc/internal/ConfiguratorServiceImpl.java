package io.kvscheduler.grpc.internal;

import io.grpc.stub.StreamObserver;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.View;
import io.kvscheduler.grpc.proto.configurator.ConfiguratorServiceGrpc;
import io.kvscheduler.grpc.proto.configurator.DeleteRequest;
import io.kvscheduler.grpc.proto.configurator.DeleteResponse;
import io.kvscheduler.grpc.proto.configurator.DumpRequest;
import io.kvscheduler.grpc.proto.configurator.DumpResponse;
import io.kvscheduler.grpc.proto.configurator.GetRequest;
import io.kvscheduler.grpc.proto.configurator.GetResponse;
import io.kvscheduler.grpc.proto.configurator.NotifyRequest;
import io.kvscheduler.grpc.proto.configurator.NotifyResponse;
import io.kvscheduler.grpc.proto.configurator.UpdateRequest;
import io.kvscheduler.grpc.proto.configurator.UpdateResponse;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code ligato.configurator.ConfiguratorService}: the configuration by domain. Update and Delete
 * are one transaction each of the gRPC source, with the response header {@code seqnum} (Update with
 * the request metadata {@code dry-run} plans instead: {@link DryRun}); Get lists the desired values
 * of every source; Dump reads the southbound through the descriptors' Retrieve; Notify streams the
 * buffered and live notifications.
 */
public final class ConfiguratorServiceImpl
    extends ConfiguratorServiceGrpc.ConfiguratorServiceImplBase {
  private final KVScheduler kvs;
  private final ProtoModels models;
  private final GrpcSource source;
  private final ConfigLayout layout;
  private final NotificationBuffer notifications;

  /**
   * @param domains Config with the plugins' domains, where their values are read and written
   */
  public ConfiguratorServiceImpl(
      KVScheduler kvs,
      ProtoModels models,
      PluginDomains domains,
      GrpcSource source,
      NotificationBuffer notifications) {
    this.kvs = kvs;
    this.models = models;
    this.source = source;
    this.layout = new ConfigLayout(models, domains);
    this.notifications = notifications;
  }

  @Override
  public void get(GetRequest request, StreamObserver<GetResponse> out) {
    Calls.unary(
        out,
        () ->
            GetResponse.newBuilder()
                .setConfig(layout.config(source.northbound().desired()))
                .build());
  }

  @Override
  public void update(UpdateRequest request, StreamObserver<UpdateResponse> out) {
    Calls.unary(out, () -> update(request));
  }

  private UpdateResponse update(UpdateRequest request) {
    Map<String, Object> values = layout.values(request.getUpdate(), "update");
    if (DryRun.requested()) {
      // the plan goes in the response headers: the response has no field for it
      DryRun.answer(
          request.getFullResync() ? source.planResync(values) : source.planChange(values));
      return UpdateResponse.getDefaultInstance();
    }
    long seq =
        Calls.await(
            request.getFullResync()
                ? source.resync(values, Map.of())
                : source.change(values, Map.of()));
    SeqNumHeader.record(seq);
    if (request.getWaitDone()) {
      Calls.waitDone(kvs, values.keySet());
    }
    return UpdateResponse.getDefaultInstance();
  }

  @Override
  public void delete(DeleteRequest request, StreamObserver<DeleteResponse> out) {
    Calls.unary(out, () -> delete(request));
  }

  private DeleteResponse delete(DeleteRequest request) {
    Map<String, Object> removals = new LinkedHashMap<>();
    layout.values(request.getDelete(), "delete").keySet().forEach(k -> removals.put(k, null));
    long seq = Calls.await(source.change(removals, Map.of()));
    SeqNumHeader.record(seq);
    if (request.getWaitDone()) {
      Calls.waitDone(kvs, removals.keySet());
    }
    return DeleteResponse.getDefaultInstance();
  }

  @Override
  public void dump(DumpRequest request, StreamObserver<DumpResponse> out) {
    Calls.unary(out, this::dump);
  }

  private DumpResponse dump() {
    Map<String, Object> running = new LinkedHashMap<>();
    for (Model<?> m : models.registry().models()) {
      if (layout.place(m).isEmpty()) {
        continue;
      }
      List<KVWithMetadata<Object, Object>> found;
      try {
        found = kvs.dumpValuesByKeyPrefix(m.keyPrefix(), View.SB);
      } catch (IllegalArgumentException e) {
        continue; // no descriptor for the model, or one without Retrieve
      }
      Map<String, Object> mine = new HashMap<>();
      found.forEach(
          kv -> {
            if (kv.value() != null && m.valueClass().isInstance(kv.value())) {
              mine.put(kv.key(), kv.value());
            }
          });
      running.putAll(new TreeMap<>(mine));
    }
    return DumpResponse.newBuilder().setDump(layout.config(running)).build();
  }

  @Override
  public void notify(NotifyRequest request, StreamObserver<NotifyResponse> out) {
    notifications.open(request, out);
  }
}
