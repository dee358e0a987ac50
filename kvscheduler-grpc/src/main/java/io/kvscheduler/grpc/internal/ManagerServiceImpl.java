package io.kvscheduler.grpc.internal;

import com.google.protobuf.Any;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.stub.StreamObserver;
import io.kvscheduler.agent.spi.Model;
import io.kvscheduler.agent.spi.ModelException;
import io.kvscheduler.api.BaseValueStatus;
import io.kvscheduler.api.KVScheduler;
import io.kvscheduler.api.KVWithMetadata;
import io.kvscheduler.api.KeySelector;
import io.kvscheduler.api.Plan;
import io.kvscheduler.api.PlannedOperation;
import io.kvscheduler.api.ValueState;
import io.kvscheduler.api.ValueStatus;
import io.kvscheduler.api.View;
import io.kvscheduler.grpc.proto.generic.ConfigItem;
import io.kvscheduler.grpc.proto.generic.Data;
import io.kvscheduler.grpc.proto.generic.DumpStateRequest;
import io.kvscheduler.grpc.proto.generic.DumpStateResponse;
import io.kvscheduler.grpc.proto.generic.GetConfigRequest;
import io.kvscheduler.grpc.proto.generic.GetConfigResponse;
import io.kvscheduler.grpc.proto.generic.Item;
import io.kvscheduler.grpc.proto.generic.ItemStatus;
import io.kvscheduler.grpc.proto.generic.ManagerServiceGrpc;
import io.kvscheduler.grpc.proto.generic.Notification;
import io.kvscheduler.grpc.proto.generic.SetConfigRequest;
import io.kvscheduler.grpc.proto.generic.SetConfigResponse;
import io.kvscheduler.grpc.proto.generic.StateItem;
import io.kvscheduler.grpc.proto.generic.SubscribeRequest;
import io.kvscheduler.grpc.proto.generic.SubscribeResponse;
import io.kvscheduler.grpc.proto.generic.UpdateItem;
import io.kvscheduler.grpc.proto.generic.UpdateResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code ligato.generic.ManagerService}: values of any registered model as {@code Item}s (model
 * name, instance name, the value in a {@code google.protobuf.Any}). SetConfig is one transaction of
 * the gRPC source (with the request metadata {@code dry-run}, its plan: {@link DryRun}); Subscribe
 * streams value-status changes (see {@link StatusStreams}).
 */
public final class ManagerServiceImpl extends ManagerServiceGrpc.ManagerServiceImplBase {
  private final KVScheduler kvs;
  private final ProtoModels models;
  private final GrpcSource source;
  private final StatusStreams streams;

  public ManagerServiceImpl(
      KVScheduler kvs, ProtoModels models, GrpcSource source, StatusStreams streams) {
    this.kvs = kvs;
    this.models = models;
    this.source = source;
    this.streams = streams;
  }

  @Override
  public void setConfig(SetConfigRequest request, StreamObserver<SetConfigResponse> out) {
    Calls.unary(out, () -> setConfig(request));
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private SetConfigResponse setConfig(SetConfigRequest request) {
    List<String> unknown = ProtoModels.unknownFields(request, "");
    if (!unknown.isEmpty()) {
      throw Calls.invalid(
          "the request has fields this agent does not know: " + String.join(", ", unknown));
    }
    Map<String, Object> changes = new LinkedHashMap<>();
    Map<String, Map<String, String>> labels = new LinkedHashMap<>();
    Map<String, Item.ID> ids = new LinkedHashMap<>();
    for (int i = 0; i < request.getUpdatesCount(); i++) {
      UpdateItem u = request.getUpdates(i);
      String at = "updates[" + i + "]";
      Item item = u.getItem();
      String key;
      Object value;
      Model model;
      if (item.getData().hasAny()) {
        Any any = item.getData().getAny();
        String type = ProtoModels.typeName(any);
        model =
            models
                .modelForMessage(type)
                .orElseThrow(
                    () ->
                        Calls.invalid(
                            at
                                + ": no registered model has values of "
                                + type
                                + " (type URL '"
                                + any.getTypeUrl()
                                + "')"));
        if (!item.getId().getModel().isEmpty() && !item.getId().getModel().equals(model.name())) {
          throw Calls.invalid(
              at
                  + ": id.model is '"
                  + item.getId().getModel()
                  + "' but the"
                  + " data is a "
                  + type
                  + " of model "
                  + model.name());
        }
        value = decode(model, any, at);
        key = model.key(value);
        if (!item.getId().getName().isEmpty()
            && !item.getId().getName().equals(model.instanceName(value))) {
          throw Calls.invalid(
              at
                  + ": id.name is '"
                  + item.getId().getName()
                  + "' but the data's name is '"
                  + model.instanceName(value)
                  + "'");
        }
      } else {
        model =
            models
                .model(item.getId().getModel())
                .orElseThrow(
                    () ->
                        Calls.invalid(
                            at
                                + ": unknown model '"
                                + item.getId().getModel()
                                + "' (known: "
                                + models.registry().models().stream().map(Model::name).toList()
                                + ")"));
        if (model.named() && item.getId().getName().isEmpty()) {
          throw Calls.invalid(at + ": a removal needs id.name (model " + model.name() + ")");
        }
        key = model.named() ? model.keyPrefix() + item.getId().getName() : model.keyPrefix();
        value = null;
      }
      changes.put(key, value);
      labels.put(key, u.getLabelsMap());
      ids.put(
          key,
          Item.ID
              .newBuilder()
              .setModel(model.name())
              .setName(model.named() ? key.substring(model.keyPrefix().length()) : "")
              .build());
    }
    if (DryRun.requested()) {
      return planned(request.getOverwriteAll(), changes, ids);
    }
    long seq;
    if (request.getOverwriteAll()) {
      Map<String, Object> values = new LinkedHashMap<>(changes);
      values.values().removeIf(v -> v == null);
      seq = Calls.await(source.resync(values, labels));
    } else {
      seq = Calls.await(source.change(changes, labels));
    }
    SetConfigResponse.Builder out = SetConfigResponse.newBuilder();
    ids.forEach(
        (key, id) ->
            out.addResults(
                UpdateResult.newBuilder()
                    .setId(id)
                    .setKey(key)
                    .setStatus(status(kvs.valueStatus(key).value()))));
    out.addResults(
        UpdateResult.newBuilder()
            .setKey("seqnum")
            .setStatus(
                ItemStatus.newBuilder()
                    .setStatus(ValueState.NONEXISTENT.name())
                    .setMessage(Long.toString(seq))));
    return out.build();
  }

  /**
   * A dry run ({@link DryRun}): one result per planned operation, in execution order, with its key
   * (and the request's id of it), its predicted state and its error or details; no {@code seqnum}
   * result, as no transaction ran.
   */
  private SetConfigResponse planned(
      boolean overwriteAll, Map<String, Object> changes, Map<String, Item.ID> ids) {
    Plan plan;
    if (overwriteAll) {
      Map<String, Object> values = new LinkedHashMap<>(changes);
      values.values().removeIf(v -> v == null);
      plan = source.planResync(values);
    } else {
      plan = source.planChange(changes);
    }
    DryRun.answer(plan);
    SetConfigResponse.Builder out = SetConfigResponse.newBuilder();
    for (PlannedOperation op : plan.operations()) {
      UpdateResult.Builder r =
          UpdateResult.newBuilder()
              .setKey(op.key())
              .setStatus(
                  ItemStatus.newBuilder()
                      .setStatus(op.state().name())
                      .setMessage(
                          !op.error().isEmpty() ? op.error() : String.join(", ", op.details())));
      Item.ID id = ids.get(op.key());
      if (id != null) {
        r.setId(id);
      }
      out.addResults(r);
    }
    return out.build();
  }

  private Object decode(Model<?> model, Any any, String at) {
    Descriptor d = models.descriptor(model).orElseThrow();
    DynamicMessage m;
    try {
      m = DynamicMessage.parseFrom(d, any.getValue());
    } catch (InvalidProtocolBufferException e) {
      throw Calls.invalid(at + ": data is not a valid " + d.getFullName() + ": " + e.getMessage());
    }
    List<String> unknown = ProtoModels.unknownFields(m, at + ".data");
    if (!unknown.isEmpty()) {
      throw Calls.invalid("fields this agent does not know: " + String.join(", ", unknown));
    }
    try {
      return models.toValue(model, m);
    } catch (ModelException e) {
      throw Calls.invalid(at + ": " + e.getMessage());
    }
  }

  /** A value's state as an {@code ItemStatus}: the state's name, and its error or details. */
  static ItemStatus status(ValueStatus s) {
    return ItemStatus.newBuilder()
        .setStatus(s.state().name())
        .setMessage(!s.error().isEmpty() ? s.error() : String.join(", ", s.details()))
        .build();
  }

  @Override
  public void getConfig(GetConfigRequest request, StreamObserver<GetConfigResponse> out) {
    Calls.unary(out, () -> getConfig(request));
  }

  private GetConfigResponse getConfig(GetConfigRequest request) {
    if (request.getIdsCount() > 0 && request.getLabelsCount() > 0) {
      throw Calls.invalid("give ids or labels, not both");
    }
    GetConfigResponse.Builder out = GetConfigResponse.newBuilder();
    source
        .northbound()
        .desired()
        .forEach(
            (key, value) -> {
              Optional<Item> item = item(key, value);
              if (item.isEmpty()) {
                return;
              }
              Map<String, String> labels = source.labels(key);
              if (request.getIdsCount() > 0 && !request.getIdsList().contains(item.get().getId())) {
                return;
              }
              if (!labelsMatch(request.getLabelsMap(), labels)) {
                return;
              }
              out.addItems(
                  ConfigItem.newBuilder()
                      .setItem(item.get())
                      .setStatus(status(kvs.valueStatus(key).value()))
                      .putAllLabels(labels));
            });
    return out.build();
  }

  /**
   * Whether {@code labels} satisfy {@code filter}: each {@code key: value} must be present (with
   * that value, or any when the value is empty), each {@code !key} absent.
   */
  static boolean labelsMatch(Map<String, String> filter, Map<String, String> labels) {
    for (Map.Entry<String, String> f : filter.entrySet()) {
      if (f.getKey().startsWith("!")) {
        if (labels.containsKey(f.getKey().substring(1))) {
          return false;
        }
      } else if (!labels.containsKey(f.getKey())
          || !f.getValue().isEmpty() && !f.getValue().equals(labels.get(f.getKey()))) {
        return false;
      }
    }
    return true;
  }

  /** The item of {@code key} with {@code value}, when a model with a definition has it. */
  Optional<Item> item(String key, Object value) {
    Optional<Model<?>> model = models.registry().forKey(key);
    if (model.isEmpty()) {
      return Optional.empty();
    }
    Model<?> m = model.get();
    Item.Builder item =
        Item.newBuilder()
            .setId(
                Item.ID
                    .newBuilder()
                    .setModel(m.name())
                    .setName(m.named() ? key.substring(m.keyPrefix().length()) : ""));
    if (value != null) {
      Optional<Any> any = models.toAny(m, value);
      if (any.isEmpty()) {
        return Optional.empty();
      }
      item.setData(Data.newBuilder().setAny(any.get()));
    }
    return Optional.of(item.build());
  }

  @Override
  public void dumpState(DumpStateRequest request, StreamObserver<DumpStateResponse> out) {
    Calls.unary(out, () -> dumpState(request));
  }

  private DumpStateResponse dumpState(DumpStateRequest request) {
    DumpStateResponse.Builder out = DumpStateResponse.newBuilder();
    for (Model<?> m : models.registry().models()) {
      List<KVWithMetadata<Object, Object>> found;
      try {
        found = kvs.dumpValuesByKeyPrefix(m.keyPrefix(), View.CACHED);
      } catch (IllegalArgumentException e) {
        continue; // no descriptor has the model's prefix
      }
      for (KVWithMetadata<Object, Object> kv : found) {
        if (kv.value() == null || !m.valueClass().isInstance(kv.value())) {
          continue;
        }
        item(kv.key(), kv.value())
            .ifPresent(
                item -> {
                  if (request.getIdsCount() == 0 || request.getIdsList().contains(item.getId())) {
                    out.addItems(StateItem.newBuilder().setItem(item));
                  }
                });
      }
    }
    return out.build();
  }

  @Override
  public void subscribe(SubscribeRequest request, StreamObserver<SubscribeResponse> out) {
    List<KeySelector> selectors = new ArrayList<>();
    for (int i = 0; i < request.getSubscriptionsCount(); i++) {
      Item.ID id = request.getSubscriptions(i).getId();
      Optional<Model<?>> m = models.model(id.getModel());
      if (m.isEmpty()) {
        out.onError(
            Calls.invalid(
                "subscriptions["
                    + i
                    + "]: unknown model '"
                    + id.getModel()
                    + "' (known: "
                    + models.registry().models().stream().map(Model::name).toList()
                    + ")"));
        return;
      }
      String prefix = m.get().keyPrefix();
      selectors.add(
          id.getName().isEmpty()
              ? m.get()::isKey
              : KeySelector.exact(m.get().named() ? prefix + id.getName() : prefix));
    }
    KeySelector selector =
        selectors.isEmpty()
            ? key -> models.registry().forKey(key).isPresent()
            : key -> selectors.stream().anyMatch(s -> s.test(key));
    streams.open(selector, out, this::notification);
  }

  private Notification notification(BaseValueStatus s, Map<String, Object> desired) {
    Notification.Builder n = Notification.newBuilder().setStatus(status(s.value()));
    item(s.key(), desired.get(s.key())).ifPresent(n::setItem);
    return n.build();
  }
}
